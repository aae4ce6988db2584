-- group_page.lua: reads one page of a group in one ordering, from the
-- group's cached page when it is complete; while it is missing or being
-- built, from a walk of the store's ordering when the group is dense
-- enough, and else from the cache once built; each call also does one
-- bounded step of the build. Uses lib.lua.
local groupKey, cacheKey, orderingKey, scoreKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local articlePrefix, start, stop, desc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local ttl, step, walk = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
-- start, stop: ranks, inclusive; desc: '1' from the highest value down;
-- ttl: the cache's expiry in ms, renewed by every read (0: none); step:
-- the SSCAN COUNT of one build step; walk: the most members of the
-- ordering one call examines to serve the page without the cache (0:
-- none; the caller passes 0 after a BUILDING reply, so a walk that did
-- not reach the page is not tried again in the same read).
-- Reply: {OK, the page's rows} | {BUILDING}: a step was done, call again.
--
-- The cache and its marker (the one place that defines them). The cache
-- holds the group's members with their values in the ordering, and, at
-- score -inf (rank 0), one marker member:
--   "#"          the cache is complete: it holds exactly the group's
--                members that are in the ordering, with their values, so
--                a page may be read from it;
--   "#<cursor>"  a build is under way: <cursor> is the SSCAN cursor of
--                the group where the next step resumes. Such a cache is
--                never read as complete.
-- A key without a marker is not a cache of this store's making. Only
-- this script writes the marker. Mutations keep every existing cache
-- current (lib.lua vote, group_add, group_remove, delete), so members the
-- build has passed stay exact, and members it has yet to reach are copied
-- with their values of that moment. Concurrent readers share one build.
--
-- The walk: the page of the group is the first stop + 1 members of the
-- ordering that are in the group (SMISMEMBER on batches), in one script,
-- so it is exactly the page the complete cache would give. It is tried
-- when the group's share of the ordering (SCARD against ZCARD) promises
-- to reach the page within walk members; a sparse group's cache is built
-- instead, in few steps. A walk that reaches neither the page nor the end
-- of the ordering within walk members replies BUILDING.
local BUILD_TTL = 10000 -- ms: the least a cache being built lives after a step
local BATCH = 1000      -- ordering members per ZRANGE and SMISMEMBER of the walk
if redis.call('EXISTS', groupKey) == 0 then
  return {OK}
end
expect(cacheKey, 'zset')

local marker = redis.call('ZRANGE', cacheKey, 0, 0)[1]
if marker == '#' then
  if ttl > 0 then
    redis.call('PEXPIRE', cacheKey, ttl)
  end
  return rows(articlePrefix, cachePage(cacheKey, start, stop, desc), {OK})
end

-- walkPage returns the page's members from the ordering, and how many
-- members of the ordering it examined; no page when it examined walk
-- members without reaching the page or the ordering's end.
local function walkPage(size, total)
  local hits, seen, need = {}, 0, stop + 1
  while #hits < need do
    local left = walk - seen
    if left <= 0 then
      return nil, seen
    end
    -- Enough members, by the group's share, to reach the page, and a few
    -- more.
    local n = math.ceil((need - #hits) * total / size * 1.25) + 16
    n = math.min(n, BATCH, left)
    local ms = range(orderingKey, seen, seen + n - 1, desc)
    if #ms == 0 then
      break
    end
    seen = seen + #ms
    local inGroup = redis.call('SMISMEMBER', groupKey, unpack(ms))
    for i = 1, #ms do
      if inGroup[i] == 1 then
        hits[#hits + 1] = ms[i]
        if #hits == need then
          break
        end
      end
    end
    if #ms < n then
      break -- the end of the ordering
    end
  end
  local members = {}
  for i = start + 1, #hits do
    members[#members + 1] = hits[i]
  end
  return members, seen
end

-- buildStep copies the next members of the group (SSCAN COUNT count)
-- into the cache, with their values (ZMSCORE, then one ZADD per few
-- hundred), and moves the marker; it returns true when the cache is
-- complete.
local function buildStep(count)
  local cursor = '0'
  if marker and string.sub(marker, 1, 1) == '#' then
    cursor = string.sub(marker, 2)
    redis.call('ZREM', cacheKey, marker)
  elseif marker then
    redis.call('UNLINK', cacheKey) -- not a cache of this store's making
  end
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
  return cursor == ''
end

local members, seen = nil, 0
if walk > 0 then
  local size, total = redis.call('SCARD', groupKey), redis.call('ZCARD', orderingKey)
  if size > 0 and (stop + 1) * total <= size * walk then
    members, seen = walkPage(size, total)
  end
end
-- After a walk, the build step takes what is left of the call's work,
-- a copied member costing about two examined ones, and at least a tenth
-- of a step, so the build always moves on.
local count = step
if walk > 0 then
  count = math.max(math.floor(step / 10), math.min(step, math.floor((walk - seen) / 2)))
end
local complete = buildStep(count)
if members then
  return rows(articlePrefix, members, {OK})
end
if complete then
  return rows(articlePrefix, cachePage(cacheKey, start, stop, desc), {OK})
end
return {BUILDING}
