-- group_add.lua: adds an article to groups, and to the cached pages those
-- groups have (built or being built), so group pages stay exact.
-- Uses lua/lib.
openStore(KEYS, 'w')
local scoreKey = KEYS[1] -- the store's slot, for routing
local id, limit = ARGV[1], tonumber(ARGV[2])
local k = {article = ARGV[3], groups = ARGV[4], group = ARGV[5], by = ARGV[6], cache = ARGV[7],
  voted = ARGV[8]}
-- ARGV[9..]: the group names, repeats allowed.
-- Reply: {OK} | {NOT_FOUND} | {LIMIT} when the article would be in more
-- than limit groups.
--
-- Its work is bounded by the groups the article joins, at most limit,
-- whatever the names given: a group it is in already is left as it is
-- (its caches hold the article), a repeated name counts once. Everything
-- it writes is checked before its first write: each joined group's set
-- and caches (TYPE, once each), and the orderings of the caches that
-- exist, each read once (ZSCORE), so that a foreign value at any of them
-- fails the call with nothing changed.
local groupsKey, votedKey, meta = groupKeys(k, id)
if not groupsKey then
  return {NOT_FOUND}
end
local m = member(id)
local new, current = groupChange(groupsKey, ARGV, 9, true)
if #new == 0 then
  return {OK}
end
if current + #new > limit then
  return {LIMIT}
end
-- The caches that exist, each with its ordering, and the article's value
-- in each ordering they need, read once.
local caches, orderingOf = groupCaches(k, new)
local values = {}
for _, o in ipairs(orderingOf) do
  if values[o] == nil then
    values[o] = redis.call('ZSCORE', k.by .. o, m)
  end
end

for _, g in ipairs(new) do
  redis.call('SADD', k.group .. g, m)
end
redis.call('SADD', groupsKey, unpack(new))
for i, cache in ipairs(caches) do
  local v = values[orderingOf[i]]
  if v then
    redis.call('ZADD', cache, v, m)
  end
end
countGroups(groupsKey, votedKey, meta)
return {OK}
