-- RedisRankIndex: one upload's write and ranks (SYNC_AND_RANK_LUA in redis-rank-index.ts); runs after upsert.lua.
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HGET', KEYS[5], 'db') ~= ARGV[10] then return -3 end
local uid = tonumber(ARGV[1])
local site, track = -1, -1
if ARGV[4] ~= '' then
  local key = key_at(SITE, 4, uid)
  local _, own, below = upsert(KEYS[2], KEYS[3], ARGV[2], SITE, tonumber(ARGV[3]), key, true)
  site = below or ahead(KEYS[2], SITE, key, own)
  mark(KEYS[5], ARGV[3], ARGV[1], '0')
end
if ARGV[5] ~= '' then
  local key = key_at(TRACK, 7, uid)
  local _, own, below = upsert(KEYS[4], KEYS[3], ARGV[5], TRACK, tonumber(ARGV[6]), key, true)
  track = below or ahead(KEYS[4], TRACK, key, own)
end
return {site, track}
