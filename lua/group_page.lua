-- group_page.lua: reads one page of a group in one ordering from the
-- group's cache: the complete cache, or, while the cache is missing or
-- being built, the part of it that a walk of the store's ordering has
-- passed. A call that cannot serve the page walks on from where the last
-- one stopped, or does a step of the cache's build, whichever promises
-- the page in fewer calls; every call does bounded work and moves the
-- cache toward complete. Uses lua/lib.
openStore(KEYS, 'r')
local groupKey, cacheKey, orderingKey = KEYS[1], KEYS[2], KEYS[3]
local articlePrefix, start, stop, desc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local ttl, step, walk = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local votedPrefix, user = ARGV[8], ARGV[9]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down;
-- ttl: the cache's expiry in ms, renewed by every read (0: none); step:
-- the SSCAN COUNT of one build step; walk: the work of one call's walk
-- of the ordering, a member examined costing 1 and one copied 1 more (0:
-- no walk, the build alone); votedPrefix and user, optional: the voter
-- records' prefix and the user whose votes the page's reply carries
-- (GroupArticlesFor).
-- Reply: {OK, the page's rows} | {OK, the page's rows, votes} with a user
-- (lib/record.lua withVotes) | {BUILDING}: a step was done, call again.
--
-- The cache and its marker (the one place that defines them). The cache
-- holds members of the group with their values in the ordering, and, at
-- score -inf (rank 0), one marker member:
--   "#"  the cache is complete: it holds exactly the group's members
--        that are in the ordering, with their values, so any page may be
--        read from it;
--   "#<cursor>|<top>|<bottom>"  it is being built: <cursor> is the SSCAN
--        cursor of the group where the next build step resumes ("0"
--        before the first); <top> and <bottom> are the frontiers of the
--        walks from the top and from the bottom of the ordering, each
--        "<value> <member>" of the last member the walk examined, or
--        empty for a direction not walked. ("#<cursor>", which an older
--        version wrote, is a build without frontiers.) Such a cache is
--        never read as complete.
-- A key without a marker is not a cache of this store's making. Only
-- this script writes the marker.
--
-- What holds while a cache is built: every member in the cache is in the
-- group and has its current value, as mutations keep every existing
-- cache current (lib/vote.lua vote, group_add, group_remove, delete); and
-- every member of the group at or above the top frontier (in descending
-- order: value, then member, as ZREVRANGE sorts ties), or at or below
-- the bottom one (ascending), is in the cache: the walk copies those it
-- passes, and a vote that lifts a member over the top frontier, or drops
-- one under the bottom one, adds it (lib/cache.lua cacheVote). So a page whose
-- last row is in a walked part is exact: when the cache's (stop + 1)-th
-- entry from the top is at or above the top frontier, no member of the
-- group above it can be missing. A walk that reaches the end of the
-- ordering, or the other frontier, has seen every member, as has a build
-- whose SSCAN is done: the cache is then complete. Concurrent readers
-- share one cache, its walks and its build.
local BUILD_TTL = 10000 -- ms: the least a cache being built lives after a step
-- page returns the reply of the page of members.
local function page(members)
  return withVotes(rows(articlePrefix, members, {OK}), 2, votedPrefix, user)
end
if redis.call('EXISTS', groupKey) == 0 then
  return page({})
end
expect(cacheKey, 'zset')

local marker = redis.call('ZRANGE', cacheKey, 0, 0)[1]
if marker == '#' then
  if ttl > 0 then
    redis.call('PEXPIRE', cacheKey, ttl)
  end
  return page(cachePage(cacheKey, start, stop, desc))
end
-- A cold cache: every key the build reads is checked before its first
-- write.
expect(groupKey, 'set')
expect(orderingKey, 'zset')
local cursor, top, bottom = '0', nil, nil
if marker and string.sub(marker, 1, 1) == '#' then
  cursor, top, bottom = cacheMarker(marker)
else
  if marker then
    redis.call('UNLINK', cacheKey) -- not a cache of this store's making
  end
  -- The marker goes in first: ascending ranks of the cache count it.
  marker = '#0||'
  redis.call('ZADD', cacheKey, '-inf', marker)
end

local down = desc == '1'
local front, other, sign = bottom, top, -1
if down then
  front, other, sign = top, bottom, 1
end
local need = stop + 1
local size, total = redis.call('SCARD', groupKey), redis.call('ZCARD', orderingKey)
local share = math.min(1, size / math.max(total, 1))

-- beyond returns how many members of the cache are at or before the
-- frontier f, in the page's direction: the group's members the walk has
-- found. Ties at f's value count, by member: an ordering such as top
-- ties most of a walk at one value.
local function beyond(f)
  if down then
    return frontRank(cacheKey, f, desc)
  end
  return frontRank(cacheKey, f, desc) - 1 -- the marker
end

-- lacking returns 0 when the page's last row is in the part walked up to
-- f, and else about how many more members of the ordering the walk has
-- to examine to reach it, by the group's share.
local function lacking(f)
  local have = 0
  if f then
    local e
    if down then
      e = redis.call('ZREVRANGE', cacheKey, stop, stop, 'WITHSCORES')
    else
      e = redis.call('ZRANGE', cacheKey, stop + 1, stop + 1, 'WITHSCORES')
    end
    if e[1] and string.sub(e[1], 1, 1) ~= '#' and sign * cmpFront(e[2], e[1], f) >= 0 then
      return 0
    end
    have = beyond(f)
  end
  return math.ceil(math.max(need - have, 1) / share * 1.25) + 16
end

-- rank returns the rank where a walk from the frontier f resumes.
local function rank(f)
  if f then
    return frontRank(orderingKey, f, desc)
  end
  return 0
end

local served = front ~= nil and lacking(front) == 0
local spent, complete, walked = 0, false, false
if not served and walk > 0 then
  -- Walk, or build? The calls each needs to reach the page: the walk's
  -- from the density of the group in the part walked (with one member's
  -- worth of the group's share as a prior, so a walk that finds none
  -- learns it), the build's from the members the cache lacks.
  local r, have = rank(front), 0
  if front then
    have = beyond(front)
  end
  local density = (have + 1) / (r + 1 / share)
  local left = math.min(total - r, math.max(need - have, 1) / density)
  local walks = math.ceil(left * (1 + density) / walk)
  local builds = math.ceil(math.max(size - redis.call('ZCARD', cacheKey) + 1, 1) / step)
  if walks <= builds then
    walked = true
    front, spent, complete = cacheWalk(groupKey, cacheKey, orderingKey, desc, front, other, walk, share, lacking)
    served = not complete and lacking(front) == 0
  end
end
local members
if served then
  members = cachePage(cacheKey, start, stop, desc)
end

-- buildStep copies the next members of the group (SSCAN COUNT count)
-- into the cache, with their values (ZMSCORE, then one ZADD per few
-- hundred), and moves the cursor; it returns true when the cache is
-- complete.
local function buildStep(count)
  local r = redis.call('SSCAN', groupKey, cursor, 'COUNT', count)
  local ms = r[2]
  for lo = 1, #ms, 500 do
    local part = {}
    for i = lo, math.min(lo + 499, #ms) do
      part[#part + 1] = ms[i]
    end
    local vs = redis.call('ZMSCORE', orderingKey, unpack(part))
    local args = {}
    for i, m in ipairs(part) do
      if vs[i] then
        args[#args + 1] = vs[i]
        args[#args + 1] = m
      end
    end
    if #args > 0 then
      redis.call('ZADD', cacheKey, unpack(args))
    end
  end
  cursor = r[1]
  return cursor == '0'
end

-- Every call moves the cache toward complete: one that neither served
-- the page nor walked builds a step; one that did spends what is left of
-- its walk's work, between a tenth and half of it, on the walk or the
-- build, whichever promises to complete the cache in fewer calls. A
-- member the build copies costs about BUILD_COST members walked (SSCAN,
-- ZMSCORE and a ZADD at a random place of a large cache, against
-- members read in a row and added in order).
local BUILD_COST = 6
if not complete then
  if walk == 0 or not (served or walked) then
    complete = buildStep(step)
  else
    local work = math.max(math.floor(walk / 10), math.min(math.floor(walk / 2), walk - spent))
    local walks = (total - rank(front)) * (1 + share) / walk
    local builds = math.max(size - redis.call('ZCARD', cacheKey) + 1, 1) / step
    if walks < builds then
      local _
      front, _, complete = cacheWalk(groupKey, cacheKey, orderingKey, desc, front, other, work, share,
        function() return WALK_BATCH end)
    else
      complete = buildStep(math.min(step, math.max(1, math.floor(work / BUILD_COST))))
    end
  end
end
if down then
  top = front
else
  bottom = front
end
local function part(f)
  if f then
    return f.v .. ' ' .. f.m
  end
  return ''
end
redis.call('ZREM', cacheKey, marker)
if complete then
  redis.call('ZADD', cacheKey, '-inf', '#')
else
  redis.call('ZADD', cacheKey, '-inf', '#' .. cursor .. '|' .. part(top) .. '|' .. part(bottom))
end
if ttl > 0 then
  -- A cache being built lives at least BUILD_TTL after its last step,
  -- so a TTL shorter than the pause between two steps cannot make
  -- every step start the build over; the complete cache gets ttl.
  if complete then
    redis.call('PEXPIRE', cacheKey, ttl)
  else
    redis.call('PEXPIRE', cacheKey, math.max(ttl, BUILD_TTL))
  end
end
if members then
  return page(members)
end
if complete then
  return page(cachePage(cacheKey, start, stop, desc))
end
return {BUILDING}
