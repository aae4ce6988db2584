-- group_remove.lua: removes an article from groups, and from their cached
-- pages, so a removed article never shows in a group page.
--
-- KEYS[1] article hash  KEYS[2] set of the article's groups
-- KEYS[3i .. 3i+2] for the i-th group: its set, its score cache, its time cache
-- ARGV[1] id  ARGV[2..] group names, in the order of the key triples
--
-- Reply: 1, or 0 when the article does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
for i = 2, #ARGV do
  local k = 3 * (i - 1)
  redis.call('SREM', KEYS[k], ARGV[1])
  redis.call('ZREM', KEYS[k + 1], ARGV[1])
  redis.call('ZREM', KEYS[k + 2], ARGV[1])
  redis.call('SREM', KEYS[2], ARGV[i])
end
return 1
