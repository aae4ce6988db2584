-- cache.lua: the group caches as writes keep them: each cache of a
-- group, the marker of a cache being built and its frontiers, and a
-- vote's move of a member in a cache (group_page.lua says how a cache is
-- built; walk.lua walks it).
-- Needs: base.lua (expect, ALL).

-- eachCache calls fn(cacheKey, ordering) for the cached page of group g in
-- each of the orderings, whether it exists or not.
local function eachCache(cachePrefix, g, orderings, fn)
  for _, o in ipairs(orderings) do
    fn(cachePrefix .. o .. ':' .. g, o)
  end
end

-- groupCaches returns the cached pages of groups that exist (built or
-- being built), in every ordering, and the ordering of each, after
-- checking each group's set and each of its caches (expect): a group
-- change calls it before its first write.
local function groupCaches(k, groups)
  local caches, orderingOf = {}, {}
  for _, g in ipairs(groups) do
    expect(k.group .. g, 'set')
    eachCache(k.cache, g, ALL, function(cache, o)
      if expect(cache, 'zset') then
        local i = #caches + 1
        caches[i], orderingOf[i] = cache, o
      end
    end)
  end
  return caches, orderingOf
end

-- The marker of a group cache being built and its frontiers
-- (group_page.lua defines them). They stand here, before vote.lua,
-- whose vote keeps a walked part exact (cacheVote), and walk.lua, which
-- walks: a Lua local is seen only below its definition.

-- cacheMarker returns the SSCAN cursor and the top and bottom frontiers
-- ({v = value, m = member}, nil for a direction not walked: cacheFront
-- reads one) of the marker of a cache being built; a marker
-- "#<cursor>" has no frontiers.
local function cacheFront(part)
  local v, m = string.match(part, '^(%S+) (%S+)$')
  if v then
    return {v = v, m = m}
  end
end
local function cacheMarker(marker)
  local cursor, top, bottom = string.match(marker, '^#([^|]*)|([^|]*)|(.*)$')
  if not cursor then
    return string.sub(marker, 2), nil, nil
  end
  return cursor, cacheFront(top), cacheFront(bottom)
end

-- cmpFront compares (value v, member m) with the frontier f in an
-- ordering's ascending order, value then member as ZRANGE sorts ties:
-- -1 before f, 0 at f, 1 after f. Values compare as numbers; both sides
-- are Redis's or num's text of a double, which reads back exactly.
-- Members are a lowercase letter and digits, which Lua's comparison
-- (strcoll, under the server's locale) orders as ZRANGE does, bytewise,
-- in C and the usual UTF-8 locales.
local function cmpFront(v, m, f)
  local a, b = tonumber(v), tonumber(f.v)
  if a ~= b then
    return a < b and -1 or 1
  end
  if m == f.m then
    return 0
  end
  return m < f.m and -1 or 1
end

-- walked reports whether (v, m) is in the part of the ordering a walk has
-- passed: at or above the top frontier, or at or below the bottom one.
local function walked(v, m, top, bottom)
  return (top ~= nil and cmpFront(v, m, top) >= 0) or (bottom ~= nil and cmpFront(v, m, bottom) <= 0)
end

-- cacheVote moves group member m to value v in the group's cache at key
-- when the cache holds it (XX). Else (CH counts 0: no such member, no
-- cache, or the same value), a cache being built gets m when v puts it
-- in a walked part, which holds every group member there with its
-- value: a vote may lift a member the walk has yet to reach over the top
-- frontier, or drop one under the bottom one. A foreign value at key
-- fails the reads of that page, not the vote.
local function cacheVote(key, v, m)
  if redis.pcall('ZADD', key, 'XX', 'CH', v, m) ~= 0 then
    return -- moved, or a foreign value (an error reply)
  end
  local marker = redis.call('ZRANGE', key, 0, 0)[1]
  if marker and marker ~= '#' and string.sub(marker, 1, 1) == '#' then
    local _, top, bottom = cacheMarker(marker)
    if walked(v, m, top, bottom) then
      redis.call('ZADD', key, v, m)
    end
  end
end
