-- delete.lua: removes an article and every trace of it.
--
-- KEYS[1] article hash  KEYS[2] voter hash  KEYS[3] set of the article's groups
-- KEYS[4] score zset    KEYS[5] time zset
-- ARGV[1] id  ARGV[2] group key prefix
-- ARGV[3] score cache key prefix  ARGV[4] time cache key prefix
--
-- The group and cache keys are built here from their prefixes, which carry
-- the store's hash tag, so they share the slot of KEYS.
-- Reply: 1, or 0 when the article does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
for _, g in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  redis.call('SREM', ARGV[2] .. g, ARGV[1])
  redis.call('ZREM', ARGV[3] .. g, ARGV[1])
  redis.call('ZREM', ARGV[4] .. g, ARGV[1])
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
