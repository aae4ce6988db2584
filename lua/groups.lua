-- groups.lua: lists the groups an article is in.
--
-- KEYS[1] article hash  KEYS[2] set of the article's groups
--
-- Reply: the group names (unordered), or nil when the article does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
return redis.call('SMEMBERS', KEYS[2])
