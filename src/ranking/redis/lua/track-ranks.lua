-- RedisRankIndex: one player's ranks on several charts (TRACK_RANKS_LUA in redis-index-scripts.ts); runs after upsert.lua.
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HGET', KEYS[3], 'db') ~= ARGV[2] then return -3 end
local uid = tonumber(ARGV[1])
local aheads = {}
for i = 1, #KEYS - 3 do
  local at = 3 + (i - 1) * 5
  local tree = KEYS[3 + i]
  local key = key_at(TRACK, at + 2, uid)
  local _, own, below = upsert(tree, KEYS[2], ARGV[at], TRACK, tonumber(ARGV[at + 1]), key, true)
  aheads[i] = below or ahead(tree, TRACK, key, own)
end
return aheads
