-- RedisRankIndex: a window, read only (WINDOW_LUA in redis-rank-index.ts); runs after order-tree.lua.
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HGET', KEYS[3], 'db') ~= ARGV[#ARGV] then return -3 end
local kind = KINDS[ARGV[1]]
local n = ARGV[1] == 's' and 2 or 4
local key = {}
for i = 1, n do key[i] = tonumber(ARGV[1 + i]) end
local rank, found = tree_find(KEYS[2], kind, key)
if not found then return -1 end
local from = math.max(0, rank - tonumber(ARGV[n + 2]))
return {rank, flatten(tree_range(KEYS[2], kind, from, rank - from)), flatten(tree_range(KEYS[2], kind, rank + 1, tonumber(ARGV[n + 3])))}
