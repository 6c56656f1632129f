-- The counted B+-trees of the Redis rank index (redis-order-tree.ts explains the layout).
-- Loaded once by lua-scripts.ts, which puts CAPACITY, RIGHT_FILL, MERGE_BELOW and MERGE_UPTO
-- (from the node capacity) in front of it; every script of the index starts with it.

local function cmp_site(s, pos, k)
  local a, u = struct.unpack('>I6I7', s, pos)
  if a ~= k[1] then return a < k[1] and -1 or 1 end
  if u ~= k[2] then return u < k[2] and -1 or 1 end
  return 0
end
local function cmp_track(s, pos, k)
  local a1, a2, t, u = struct.unpack('>I4I4I6I7', s, pos)
  if a1 ~= k[1] then return a1 < k[1] and -1 or 1 end
  if a2 ~= k[2] then return a2 < k[2] and -1 or 1 end
  if t ~= k[3] then return t < k[3] and -1 or 1 end
  if u ~= k[4] then return u < k[4] and -1 or 1 end
  return 0
end

-- An order's record layout: width, compare(record string, 1-based position, key), pack, unpack.
local KINDS = {
  s = { width = 13, cmp = cmp_site,
        pack = function(k) return struct.pack('>I6I7', k[1], k[2]) end,
        unpack = function(s, pos) local a, u = struct.unpack('>I6I7', s, pos); return {a, u} end },
  t = { width = 21, cmp = cmp_track,
        pack = function(k) return struct.pack('>I4I4I6I7', k[1], k[2], k[3], k[4]) end,
        unpack = function(s, pos) local a1, a2, t, u = struct.unpack('>I4I4I6I7', s, pos); return {a1, a2, t, u} end },
}

-- Two keys (tables of numbers) of one order compared: -1, 0 or 1.
local function compare_keys(kind, a, b) return kind.cmp(kind.pack(a), 1, b) end

-- Records (tables of numbers) as one flat list of their numbers, for a script's reply.
local function flatten(records)
  local out = {}
  for _, record in ipairs(records) do
    for _, number in ipairs(record) do out[#out + 1] = number end
  end
  return out
end

local function node_key(tree, id) return tree .. ':' .. id end
-- A node the tree points at must exist: a missing one (evicted, deleted by hand) is damage, which
-- the caller answers with a clean rebuild (redis-rank-index.ts).
local function get_node(tree, id)
  local s = redis.call('GET', node_key(tree, id))
  if not s then error('rank tree damaged: ' .. node_key(tree, id) .. ' is missing') end
  return s
end
local function set_node(tree, id, s) redis.call('SET', node_key(tree, id), s) end
local function new_node(tree) return redis.call('HINCRBY', tree, 'n', 1) end

-- The last entry (0-based) of an inner node whose separator is <= k; entry 0 when none is.
local function route(kind, s, k)
  local E = kind.width + 8
  local lo, hi, found = 1, #s / E - 1, 0
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if kind.cmp(s, mid * E + 9, k) <= 0 then found = mid; lo = mid + 1 else hi = mid - 1 end
  end
  return found
end

-- Entries under the inner node's entries 0 .. i - 1.
local function count_before(kind, s, i)
  local E, sum = kind.width + 8, 0
  for j = 0, i - 1 do sum = sum + struct.unpack('>I4', s, j * E + 5) end
  return sum
end

-- The first record (0-based) of a leaf that is >= k.
local function lower_bound(kind, s, k)
  local W = kind.width
  local lo, hi = 0, #s / W
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if kind.cmp(s, mid * W + 1, k) < 0 then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- From the root to k's leaf: the inner nodes passed ({id, s, i}), the leaf's id and records, and
-- (when 'counted') the records in the leaves before it. nil when the tree does not exist.
local function descend(tree, kind, k, counted)
  local meta = redis.call('HMGET', tree, 'r', 'h')
  if not meta[1] then return nil end
  local id, height = tonumber(meta[1]), tonumber(meta[2])
  local path, before, E = {}, 0, kind.width + 8
  for _ = height, 2, -1 do
    local s = get_node(tree, id)
    local i = route(kind, s, k)
    if counted then before = before + count_before(kind, s, i) end
    path[#path + 1] = { id = id, s = s, i = i }
    id = struct.unpack('>I4', s, i * E + 1)
  end
  return path, id, get_node(tree, id), before
end

-- Records below k.
local function tree_count_below(tree, kind, k)
  local path, _, leaf, before = descend(tree, kind, k, true)
  if not path then return 0 end
  return before + lower_bound(kind, leaf, k)
end

-- Records below k, and whether k is there.
local function tree_find(tree, kind, k)
  local path, _, leaf, before = descend(tree, kind, k, true)
  if not path then return 0, false end
  local pos = lower_bound(kind, leaf, k)
  return before + pos, pos < #leaf / kind.width and kind.cmp(leaf, pos * kind.width + 1, k) == 0
end

local function tree_size(tree)
  return tonumber(redis.call('HGET', tree, 'c') or '0')
end

-- Splits a node string of n units of 'unit' bytes: the left part keeps 'keep' units.
local function halves(s, unit, keep)
  return string.sub(s, 1, keep * unit), string.sub(s, keep * unit + 1)
end

-- Adds k; false when it is there already. Then (when 'counted') the records below k.
local function tree_insert(tree, kind, k, counted)
  local W, E = kind.width, kind.width + 8
  local path, leaf_id, leaf, before = descend(tree, kind, k, counted)
  if not path then
    local id = new_node(tree)
    set_node(tree, id, kind.pack(k))
    redis.call('HSET', tree, 'r', id, 'h', 1, 'c', 1)
    return true, 0
  end
  local pos = lower_bound(kind, leaf, k)
  local n = #leaf / W
  if pos < n and kind.cmp(leaf, pos * W + 1, k) == 0 then return false, before + pos end
  redis.call('HINCRBY', tree, 'c', 1)
  leaf = string.sub(leaf, 1, pos * W) .. kind.pack(k) .. string.sub(leaf, pos * W + 1)
  n = n + 1
  -- At the tree's right end (an ordered load appends there) a split leaves the left part nearly full.
  local rightmost = pos == n - 1
  for _, p in ipairs(path) do
    if p.i ~= #p.s / E - 1 then rightmost = false end
  end
  -- split: the new right sibling's (id, entries, separator) for the parent, and the left's entries.
  local added, left_count = nil, nil
  if n > CAPACITY then
    local keep = rightmost and RIGHT_FILL or math.floor(n / 2)
    local left, right = halves(leaf, W, keep)
    local right_id = new_node(tree)
    set_node(tree, leaf_id, left)
    set_node(tree, right_id, right)
    added = struct.pack('>I4I4', right_id, n - keep) .. string.sub(right, 1, W)
    left_count = keep
  else
    set_node(tree, leaf_id, leaf)
  end
  for l = #path, 1, -1 do
    local p = path[l]
    local s, at = p.s, p.i * E
    local child, count = struct.unpack('>I4I4', s, at + 1)
    if not added then
      -- The common case: one more record under this entry, written in place.
      redis.call('SETRANGE', node_key(tree, p.id), at + 4, struct.pack('>I4', count + 1))
    else
      s = string.sub(s, 1, at) .. struct.pack('>I4I4', child, left_count) .. string.sub(s, at + 9, at + E) .. added
        .. string.sub(s, at + E + 1)
      added = nil
      local entries = #s / E
      if entries > CAPACITY then
        local keep = rightmost and RIGHT_FILL or math.floor(entries / 2)
        local left, right = halves(s, E, keep)
        local right_id = new_node(tree)
        set_node(tree, p.id, left)
        set_node(tree, right_id, right)
        left_count = count_before(kind, left, keep)
        added = struct.pack('>I4I4', right_id, count_before(kind, right, entries - keep)) .. string.sub(right, 9, E)
      else
        set_node(tree, p.id, s)
      end
    end
  end
  if added then
    -- The root split: a new root above it.
    local meta = redis.call('HMGET', tree, 'r', 'h')
    local root = new_node(tree)
    set_node(tree, root, struct.pack('>I4I4', tonumber(meta[1]), left_count) .. string.rep('\0', W) .. added)
    redis.call('HSET', tree, 'r', root, 'h', tonumber(meta[2]) + 1)
  end
  return true, before + pos
end

-- A node changed by a delete, written once its parent has decided: either new contents ('s'),
-- or its stored contents ('s') with one entry's count lowered by one ('patch': the entry's byte
-- offset, 'count': the new count), which is written in place.
local function pending_contents(node)
  if not node.patch then return node.s end
  return string.sub(node.s, 1, node.patch + 4) .. struct.pack('>I4', node.count) .. string.sub(node.s, node.patch + 9)
end
local function write_pending(tree, node)
  if node.patch then
    redis.call('SETRANGE', node_key(tree, node.id), node.patch + 4, struct.pack('>I4', node.count))
  else
    set_node(tree, node.id, node.s)
  end
end

-- Removes k; false when it is not there.
local function tree_delete(tree, kind, k)
  local W, E = kind.width, kind.width + 8
  local path, leaf_id, leaf = descend(tree, kind, k)
  if not path then return false end
  local pos = lower_bound(kind, leaf, k)
  if pos >= #leaf / W or kind.cmp(leaf, pos * W + 1, k) ~= 0 then return false end
  redis.call('HINCRBY', tree, 'c', -1)
  local child = { id = leaf_id, s = string.sub(leaf, 1, pos * W) .. string.sub(leaf, (pos + 1) * W + 1), unit = W }
  for l = #path, 1, -1 do
    local p = path[l]
    local s, i = p.s, p.i
    local at = i * E
    local count = struct.unpack('>I4', s, at + 5) - 1
    local rebuilt = nil
    if #child.s == 0 then
      redis.call('DEL', node_key(tree, child.id))
      rebuilt = string.sub(s, 1, at) .. string.sub(s, at + E + 1)
    else
      -- A small child is merged with its right neighbour (the left one for the last child) when both fit.
      local units = #child.s / child.unit
      local entries = #s / E
      if units < MERGE_BELOW and entries > 1 then
        local j = (i + 1 < entries) and i + 1 or i - 1
        local other_id, other_count = struct.unpack('>I4I4', s, j * E + 1)
        local other = get_node(tree, other_id)
        if units + #other / child.unit <= MERGE_UPTO then
          local left = math.min(i, j)
          local left_id = struct.unpack('>I4', s, left * E + 1)
          local right_id = struct.unpack('>I4', s, (left + 1) * E + 1)
          local left_s, right_s = pending_contents(child), other
          if j < i then left_s, right_s = other, left_s end
          if child.unit == E then
            -- An inner node's first separator is never read; in the merged node it is: the parent's one.
            right_s = string.sub(right_s, 1, 8) .. string.sub(s, (left + 1) * E + 9, (left + 2) * E)
              .. string.sub(right_s, E + 1)
          end
          set_node(tree, left_id, left_s .. right_s)
          redis.call('DEL', node_key(tree, right_id))
          rebuilt = string.sub(s, 1, left * E) .. struct.pack('>I4I4', left_id, count + other_count)
            .. string.sub(s, left * E + 9, (left + 1) * E) .. string.sub(s, (left + 2) * E + 1)
        end
      end
      if not rebuilt then write_pending(tree, child) end
    end
    if rebuilt then
      child = { id = p.id, s = rebuilt, unit = E }
    else
      child = { id = p.id, s = s, unit = E, patch = at, count = count }
    end
  end
  if #child.s == 0 then
    -- Every record went: the tree is one empty leaf again.
    if child.unit == E then
      redis.call('DEL', node_key(tree, child.id))
      local id = new_node(tree)
      set_node(tree, id, '')
      redis.call('HSET', tree, 'r', id, 'h', 1)
    else
      set_node(tree, child.id, '')
    end
    return true
  end
  write_pending(tree, child)
  -- A root with one child hands the root down.
  local height = #path + 1
  while height > 1 and #child.s == E do
    local below = struct.unpack('>I4', child.s, 1)
    redis.call('DEL', node_key(tree, child.id))
    height = height - 1
    redis.call('HSET', tree, 'r', below, 'h', height)
    child = { id = below, s = height > 1 and get_node(tree, below) or '' }
  end
  return true
end

-- The records at positions from .. from + count - 1 (0-based), unpacked, in order.
local function tree_range(tree, kind, from, count)
  local out = {}
  local size = tree_size(tree)
  if count <= 0 or from >= size then return out end
  if from + count > size then count = size - from end
  local W, E = kind.width, kind.width + 8
  local meta = redis.call('HMGET', tree, 'r', 'h')
  local root, height = tonumber(meta[1]), tonumber(meta[2])
  local at = from
  while #out < count do
    local id, p = root, at
    for _ = height, 2, -1 do
      local s = get_node(tree, id)
      local entries = #s / E
      for j = 0, entries - 1 do
        local child, c = struct.unpack('>I4I4', s, j * E + 1)
        if p < c or j == entries - 1 then id = child; break end
        p = p - c
      end
    end
    local leaf = get_node(tree, id)
    local n = #leaf / W
    if p >= n then error('rank tree damaged: the counts of ' .. tree .. ' do not match its leaves') end
    while p < n and #out < count do
      out[#out + 1] = kind.unpack(leaf, p * W + 1)
      p = p + 1
      at = at + 1
    end
  end
  return out
end
