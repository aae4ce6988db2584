-- group_read.lua: reads one page of a group from its complete cached
-- page and writes nothing, so it runs on a replica (EVALSHA_RO), for a
-- store with a read pool. Building a cache and renewing its TTL are
-- writes, left to the primary (group_page.lua, group_renew.lua).
-- Uses lua/lib.
openStore(KEYS, 'r')
local groupKey, cacheKey = KEYS[1], KEYS[2]
local articlePrefix, start, stop, desc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local votedPrefix, user = ARGV[5], ARGV[6]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down;
-- votedPrefix and user, optional: the voter records' prefix and the user
-- whose votes the reply carries after the rows (GroupArticlesFor;
-- lib/record.lua withVotes).
-- Reply: {OK, pttl, the page's rows}: pttl is the cache's PTTL in ms
-- (-1: kept for good; -2: an empty group, which has no cache), for the
-- store to renew it on the primary | {BUILDING}: the cache is missing or
-- incomplete here; read the page on the primary, which builds it.
if redis.call('EXISTS', groupKey) == 0 then
  return withVotes({OK, -2}, 3, votedPrefix, user)
end
expect(cacheKey, 'zset')
if not cacheComplete(cacheKey) then
  return {BUILDING}
end
return withVotes(rows(articlePrefix, cachePage(cacheKey, start, stop, desc), {OK, redis.call('PTTL', cacheKey)}), 3,
  votedPrefix, user)
