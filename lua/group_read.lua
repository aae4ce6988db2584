-- group_read.lua: reads one page of a group from its complete cached
-- page and writes nothing, so it runs on a replica (EVALSHA_RO), for a
-- store with a read pool. Building a cache and renewing its TTL are
-- writes, left to the primary (group_page.lua, group_renew.lua).
-- Uses lua/lib.
local groupKey, cacheKey = KEYS[1], KEYS[2]
local articlePrefix, start, stop, desc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down.
-- Reply: {OK, pttl, the page's rows}: pttl is the cache's PTTL in ms
-- (-1: kept for good; -2: an empty group, which has no cache), for the
-- store to renew it on the primary | {BUILDING}: the cache is missing or
-- incomplete here; read the page on the primary, which builds it.
if redis.call('EXISTS', groupKey) == 0 then
  return {OK, -2}
end
expect(cacheKey, 'zset')
if not cacheComplete(cacheKey) then
  return {BUILDING}
end
return rows(articlePrefix, cachePage(cacheKey, start, stop, desc), {OK, redis.call('PTTL', cacheKey)})
