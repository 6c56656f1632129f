-- RedisRankIndex: moves the generation on (NEXT_GENERATION_LUA in redis-rank-index.ts).
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current == tonumber(ARGV[1]) then current = redis.call('INCR', KEYS[1]) end
return current
