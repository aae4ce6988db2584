-- group_remove.lua: removes an article from groups and from their cached
-- pages, so it never shows in those groups' pages again. Uses lua/lib.
openStore(KEYS, 'w')
local scoreKey = KEYS[1] -- the store's slot, for routing
local id = ARGV[1]
local k = {article = ARGV[2], groups = ARGV[3], group = ARGV[4], cache = ARGV[5], voted = ARGV[6]}
-- ARGV[7..]: the group names, repeats allowed.
-- Reply: {OK} | {NOT_FOUND}.
--
-- Its work is bounded by the groups the article leaves, at most
-- MaxArticleGroups, whatever the names given: a group it is not in is
-- left as it is (no cache of it holds the article), a repeated name
-- counts once. Everything it writes is checked before its first write:
-- each left group's set and caches (TYPE, once each), so that a foreign
-- value at any of them fails the call with nothing changed.
local groupsKey, votedKey, meta = groupKeys(k, id)
if not groupsKey then
  return {NOT_FOUND}
end
local m = member(id)
local gone = groupChange(groupsKey, ARGV, 7, false)
if #gone == 0 then
  return {OK}
end
local caches = groupCaches(k, gone)

for _, g in ipairs(gone) do
  redis.call('SREM', k.group .. g, m)
end
redis.call('SREM', groupsKey, unpack(gone))
for _, cache in ipairs(caches) do
  redis.call('ZREM', cache, m)
end
countGroups(groupsKey, votedKey, meta)
return {OK}
