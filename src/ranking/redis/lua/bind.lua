-- RedisRankIndex: binds a generation to a database (BIND_LUA in redis-rank-index.ts).
local bound = redis.call('HGET', KEYS[1], 'db')
if bound and bound ~= ARGV[1] then return bound end
redis.call('HSET', KEYS[1], 'db', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'rid', ARGV[2]) end
return ARGV[1]
