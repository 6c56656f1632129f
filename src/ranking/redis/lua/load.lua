-- RedisRankIndex: versioned writes of many entries (LOAD_LUA in redis-rank-index.ts); runs after upsert.lua.
if redis.call('HGET', KEYS[1], 'db') ~= ARGV[1] then return -3 end
local entries = (#KEYS - 1) / 2
local op = ARGV[2]
local width = (op == 'site' and 4) or (op == 'track' and 6) or 3
local top, top_at = -1, nil
for i = 1, entries do
  local tree, store = KEYS[2 * i], KEYS[2 * i + 1]
  local at = 3 + (i - 1) * width
  local uid, field, version = tonumber(ARGV[at]), ARGV[at + 1], tonumber(ARGV[at + 2])
  if op == 'site' then
    upsert(tree, store, field, SITE, version, key_at(SITE, at + 3, uid), false)
  elseif op == 'track' then
    upsert(tree, store, field, TRACK, version, key_at(TRACK, at + 3, uid), false)
  else
    remove(tree, store, field, op == 'unsite' and SITE or TRACK, version, uid)
  end
  if version > top then top, top_at = version, at end
end
if top_at and (op == 'site' or op == 'unsite') then
  mark(KEYS[1], ARGV[top_at + 2], ARGV[top_at], op == 'unsite' and '1' or '0')
end
return entries
