-- RedisRankIndex: versioned entries (UPSERT_LUA in redis-rank-index.ts); runs after order-tree.lua.
local SITE, TRACK = KINDS.s, KINDS.t
local function stored_entry(store, field, kind, uid)
  local value = redis.call('HGET', store, field)
  if not value then return -1, nil end
  local version = struct.unpack('>I6', value)
  if #value == 6 then return version, nil end
  if kind == SITE then return version, {struct.unpack('>I6', value, 7), uid} end
  local a1, a2, t = struct.unpack('>I4I4I6', value, 7)
  return version, {a1, a2, t, uid}
end
local function without_uid(kind, key)
  if kind == SITE then return struct.pack('>I6', key[1]) end
  return struct.pack('>I4I4I6', key[1], key[2], key[3])
end
-- Returns the player's entry after the write: its version and key (nil: removed), and when the
-- write applied and 'counted' is set, the records below the key.
local function upsert(tree, store, field, kind, version, key, counted)
  local stored_version, stored_key = stored_entry(store, field, kind, key[#key])
  if version <= stored_version then return stored_version, stored_key, nil end
  if stored_key and compare_keys(kind, stored_key, key) ~= 0 then tree_delete(tree, kind, stored_key) end
  local _, below = tree_insert(tree, kind, key, counted)
  redis.call('HSET', store, field, struct.pack('>I6', version) .. without_uid(kind, key))
  return version, key, counted and below or nil
end
-- The records ahead of key, the player's own stored record (own, after an upsert) left out.
local function ahead(tree, kind, key, own)
  local below = tree_count_below(tree, kind, key)
  if own and compare_keys(kind, own, key) < 0 then below = below - 1 end
  return below
end
local function remove(tree, store, field, kind, version, uid)
  local stored_version, stored_key = stored_entry(store, field, kind, uid)
  if version <= stored_version then return end
  if stored_key then tree_delete(tree, kind, stored_key) end
  redis.call('HSET', store, field, struct.pack('>I6', version))
end
-- The binding (redis-index-binding.ts) keeps the highest site version written and whose it was.
-- version and uid are the ARGV strings, removal '0' or '1'.
local function mark(binding, version, uid, removal)
  if tonumber(version) > tonumber(redis.call('HGET', binding, 'v') or '-1') then
    redis.call('HSET', binding, 'v', version, 'u', uid, 'r', removal)
  end
end
-- A site key (a, uid) or chart key (a1, a2, t, uid) from ARGV[at ..].
local function key_at(kind, at, uid)
  if kind == SITE then return {tonumber(ARGV[at]), uid} end
  return {tonumber(ARGV[at]), tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), uid}
end
