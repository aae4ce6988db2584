-- group_add.lua: adds an article to groups, and to the cached pages those
-- groups have (built or being built), so group pages stay exact.
-- Uses lib.lua.
local scoreKey = KEYS[1] -- the store's slot, for routing
local id, limit = ARGV[1], tonumber(ARGV[2])
local k = {article = ARGV[3], groups = ARGV[4], group = ARGV[5], by = ARGV[6], cache = ARGV[7],
  voted = ARGV[8]}
-- ARGV[9..]: the group names.
-- Reply: {OK} | {NOT_FOUND} | {LIMIT} when the article would be in more
-- than limit groups.
local groupsKey, votedKey, meta = groupKeys(k, id)
if not groupsKey then
  return {NOT_FOUND}
end
local m = member(id)
local n = redis.call('SCARD', groupsKey)
local new = {}
for i = 9, #ARGV do
  local g = ARGV[i]
  expect(k.group .. g, 'set')
  if redis.call('SISMEMBER', groupsKey, g) == 0 and not new[g] then
    new[g] = true
    n = n + 1
  end
end
if n > limit then
  return {LIMIT}
end
for i = 9, #ARGV do
  local g = ARGV[i]
  redis.call('SADD', k.group .. g, m)
  redis.call('SADD', groupsKey, g)
  eachCache(k.cache, g, ALL, function(cache, o)
    if redis.call('EXISTS', cache) == 1 then
      local v = redis.call('ZSCORE', k.by .. o, m)
      if v then
        redis.pcall('ZADD', cache, v, m)
      end
    end
  end)
end
countGroups(groupsKey, votedKey, meta)
return {OK}
