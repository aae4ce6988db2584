-- walk.lua: a group's page from its cache (group_read.lua,
-- group_page.lua): reading a complete cache, and walking an ordering to
-- fill one being built.
-- Needs: record.lua (range), cache.lua (cmpFront).

-- cacheComplete reports whether the cached page of a group at cacheKey is
-- complete: its marker, at rank 0, is "#" (group_page.lua says how a
-- cache is built). A missing cache is not.
local function cacheComplete(cacheKey)
  return redis.call('ZRANGE', cacheKey, 0, 0)[1] == '#'
end

-- cachePage returns the members at ranks start..stop (from the top when
-- desc is '1') of a complete group cache, without its marker: the marker
-- is rank 0, so ascending ranks skip it, and a descending page may end
-- with it.
local function cachePage(cacheKey, start, stop, desc)
  if desc == '1' then
    local members = range(cacheKey, start, stop, desc)
    if members[#members] == '#' then
      members[#members] = nil
    end
    return members
  end
  return range(cacheKey, start + 1, stop + 1, desc)
end

-- frontRank returns the rank, in the ordering at key read from the top
-- when desc is '1', of the first member past the frontier f, where a
-- walk resumes. f's member may have moved or gone since the walk passed
-- it; then the rank is found from f's value: the members before it
-- (ZCOUNT), then a binary search, one rank per probe, of those tied at
-- it, which an ordering such as top, best or controversial has by the
-- thousand.
local function frontRank(key, f, desc)
  local v = redis.call('ZSCORE', key, f.m)
  if v and tonumber(v) == tonumber(f.v) then -- where the walk left it
    if desc == '1' then
      return redis.call('ZREVRANK', key, f.m) + 1
    end
    return redis.call('ZRANK', key, f.m) + 1
  end
  local lo
  if desc == '1' then
    lo = redis.call('ZCOUNT', key, '(' .. f.v, '+inf')
  else
    lo = redis.call('ZCOUNT', key, '-inf', '(' .. f.v)
  end
  local hi = lo + redis.call('ZCOUNT', key, f.v, f.v)
  -- Ties run by member, descending from the top: find the first past f.m.
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = range(key, mid, mid, desc)[1]
    if (desc == '1' and x < f.m) or (desc ~= '1' and x > f.m) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end

-- cacheWalk walks on the ordering at key (from the top when desc is
-- '1') from the first member past the frontier front (from the start
-- without one) for the group cache at cacheKey: it copies the group's
-- members it meets (SMISMEMBER on batches) with their values into the
-- cache, and moves the frontier to the last member examined, until it
-- has spent budget (a member examined costs 1, one copied 1 more), or
-- want(front), the members the caller still wants walked, is 0. other is
-- the frontier of the other direction, or nil. It returns the frontier,
-- what it spent, and true when every member of the ordering has now been
-- walked (the end of the ordering, or the other frontier, was reached).
local WALK_BATCH = 1000 -- members per ZRANGE and SMISMEMBER; unpack takes up to 8,000
local function cacheWalk(groupKey, cacheKey, key, desc, front, other, budget, share, want)
  local r = 0
  if front then
    r = frontRank(key, front, desc)
  end
  local spent, n, seen, hits = 0, want(front), 0, 0
  local sign = desc == '1' and 1 or -1
  while spent < budget do
    -- As many as the work left pays for, each with its copy by the
    -- density met so far, or the group's share before any.
    local density = share
    if seen > 0 then
      density = math.max(density, hits / seen)
    end
    n = math.max(1, math.min(n, WALK_BATCH, math.floor((budget - spent) / (1 + density))))
    -- The values of the group's members alone (ZMSCORE), not of every
    -- member examined (WITHSCORES): Redis formats each value it replies.
    local ms = range(key, r, r + n - 1, desc)
    local got = #ms
    if got == 0 then
      return front, spent, true
    end
    local inGroup = redis.call('SMISMEMBER', groupKey, unpack(ms))
    local found = {}
    for i = 1, got do
      if inGroup[i] == 1 then
        found[#found + 1] = ms[i]
      end
    end
    if #found > 0 then
      local vs = redis.call('ZMSCORE', key, unpack(found))
      local args = {}
      for i, m in ipairs(found) do
        args[2 * i - 1] = vs[i]
        args[2 * i] = m
      end
      redis.call('ZADD', cacheKey, unpack(args))
    end
    front = {v = redis.call('ZSCORE', key, ms[got]), m = ms[got]}
    r, seen, hits = r + got, seen + got, hits + #found
    spent = spent + got + #found
    if got < n or (other and sign * cmpFront(front.v, front.m, other) <= 0) then
      return front, spent, true
    end
    n = want(front)
    if n == 0 then
      break
    end
  end
  return front, spent, false
end
