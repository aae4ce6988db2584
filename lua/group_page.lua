-- group_page.lua: reads one page of a group in one ordering, from the
-- group's cached page, which it builds in bounded steps when missing.
-- Uses lib.lua.
local groupKey, cacheKey, orderingKey, scoreKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local articlePrefix, start, stop, desc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local ttl, step = tonumber(ARGV[5]), ARGV[6]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down;
-- ttl: the cache's expiry in ms, renewed by every read (0: none); step:
-- the SSCAN COUNT of one build step.
-- Reply: {OK, the page's rows} | {BUILDING}: a step was done, call again.
--
-- The cache holds the group's members with their values in the ordering,
-- and, at score -inf (rank 0), a marker: "#" when the cache is complete,
-- "#<cursor>" while a build is under way, the SSCAN cursor of the group
-- where the next step resumes. Mutations keep every existing cache
-- current (lib.lua vote, group_add, group_remove, delete), so members the
-- scan has passed stay exact, and members it has yet to reach are copied
-- with their values of that moment. Concurrent readers share one build.
local BUILD_TTL = 10000 -- ms: the least a cache being built lives after a step
if redis.call('EXISTS', groupKey) == 0 then
  return {OK}
end
expect(cacheKey, 'zset')
local marker = redis.call('ZRANGE', cacheKey, 0, 0)[1]
if marker ~= '#' then
  local cursor = '0'
  if marker and string.sub(marker, 1, 1) == '#' then
    cursor = string.sub(marker, 2)
    redis.call('ZREM', cacheKey, marker)
  elseif marker then
    redis.call('UNLINK', cacheKey) -- not a cache of this store's making
  end
  local r = redis.call('SSCAN', groupKey, cursor, 'COUNT', step)
  for _, m in ipairs(r[2]) do
    local v = redis.call('ZSCORE', orderingKey, m)
    if v then
      redis.call('ZADD', cacheKey, v, m)
    end
  end
  cursor = r[1]
  if cursor == '0' then cursor = '' end
  redis.call('ZADD', cacheKey, '-inf', '#' .. cursor)
  if ttl > 0 then
    -- A cache being built lives at least BUILD_TTL after its last step,
    -- so a TTL shorter than the pause between two steps cannot make
    -- every step start the build over; the complete cache gets ttl.
    if cursor ~= '' then
      redis.call('PEXPIRE', cacheKey, math.max(ttl, BUILD_TTL))
    else
      redis.call('PEXPIRE', cacheKey, ttl)
    end
  end
  if cursor ~= '' then
    return {BUILDING}
  end
elseif ttl > 0 then
  redis.call('PEXPIRE', cacheKey, ttl)
end
-- The marker is rank 0: ascending ranks skip it, a descending page may
-- end with it.
local members
if desc == '1' then
  members = range(cacheKey, start, stop, desc)
  if members[#members] == '#' then
    members[#members] = nil
  end
else
  members = range(cacheKey, start + 1, stop + 1, desc)
end
return rows(articlePrefix, scoreKey, members, {OK})
