-- group_page.lua: reads one page of a group, building its cached ordering
-- first when it is missing. Check, build, expire and read are one atomic
-- step: concurrent readers of a cold group cost one build, and the cache
-- key never exists without its expiry.
--
-- KEYS[1] group set  KEYS[2] the group's cache for this ordering
-- KEYS[3] the ordering zset (score or time)  KEYS[4] score zset
-- ARGV[1] article key prefix  ARGV[2] start  ARGV[3] stop (ranks, inclusive)
-- ARGV[4] "1" for descending, "0" for ascending  ARGV[5] cache TTL (ms)
--
-- Reply: {built, rows...}: built is 1 when this call built the cache, then
-- the page's rows (rows.lua).
local built = 0
if redis.call('EXISTS', KEYS[2]) == 0 then
  -- WEIGHTS 0 1: the group set's own member scores add nothing, so the
  -- cache holds the ordering's real scores. The expiry is set even on an
  -- empty result: Redis stores none, but miniredis keeps an empty key.
  redis.call('ZINTERSTORE', KEYS[2], 2, KEYS[1], KEYS[3], 'WEIGHTS', 0, 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
  built = 1
end
local ids
if ARGV[4] == '1' then
  ids = redis.call('ZREVRANGE', KEYS[2], ARGV[2], ARGV[3])
else
  ids = redis.call('ZRANGE', KEYS[2], ARGV[2], ARGV[3])
end
return rows(ARGV[1], KEYS[4], ids, {built})
