-- page.lua: reads one page of articles in score or time order.
--
-- KEYS[1] the ordering zset (score or time)  KEYS[2] score zset
-- ARGV[1] article key prefix  ARGV[2] start  ARGV[3] stop (ranks, inclusive)
-- ARGV[4] "1" for descending, "0" for ascending
--
-- Reply: the page's rows (rows.lua).
local ids
if ARGV[4] == '1' then
  ids = redis.call('ZREVRANGE', KEYS[1], ARGV[2], ARGV[3])
else
  ids = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3])
end
return rows(ARGV[1], KEYS[2], ids, {})
