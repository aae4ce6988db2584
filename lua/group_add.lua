-- group_add.lua: adds an article to groups.
--
-- KEYS[1] article hash  KEYS[2] set of the article's groups
-- KEYS[3..] one group set per group, in the order of ARGV[2..]
-- ARGV[1] id  ARGV[2..] group names
--
-- Reply: 1, or 0 when the article does not exist. Cached group pages are
-- left alone: an addition shows once they expire.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
for i = 2, #ARGV do
  redis.call('SADD', KEYS[i + 1], ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[i])
end
return 1
