-- group_remove.lua: removes an article from groups and from their cached
-- pages, so it never shows in those groups' pages again. Uses lib.lua.
local scoreKey = KEYS[1] -- the store's slot, for routing
local id = ARGV[1]
local k = {article = ARGV[2], groups = ARGV[3], group = ARGV[4], cache = ARGV[5], voted = ARGV[6]}
-- ARGV[7..]: the group names.
-- Reply: {OK} | {NOT_FOUND}.
local groupsKey, votedKey, meta = groupKeys(k, id)
if not groupsKey then
  return {NOT_FOUND}
end
local m = member(id)
for i = 7, #ARGV do
  expect(k.group .. ARGV[i], 'set')
end
for i = 7, #ARGV do
  local g = ARGV[i]
  redis.call('SREM', k.group .. g, m)
  redis.call('SREM', groupsKey, g)
  eachCache(k.cache, g, ALL, function(cache) redis.pcall('ZREM', cache, m) end)
end
countGroups(groupsKey, votedKey, meta)
return {OK}
