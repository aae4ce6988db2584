-- top_since.lua: reads one page of the articles posted at or after a
-- cutoff, by net votes, ties by id newest first. Uses lib.lua.
local topKey, timeKey = KEYS[1], KEYS[2]
local articlePrefix, bucketPrefix = ARGV[1], ARGV[2]
local cutoff, start, stop = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
-- start, stop: ranks, inclusive.
-- Reply: {OK, the page's rows}.
--
-- When the period starts before the oldest article, the top zset is the
-- answer. Otherwise the period is covered by sources, each in net-vote
-- order: the members of the cutoff's 10-minute bucket posted at or after
-- the cutoff (at most one bucket's worth), the 10-minute buckets up to
-- the next day, the day buckets up to the next 30-day bucket, and 30-day
-- buckets up to the newest article. A heap merges their heads until the
-- page is out; each source is read in chunks, so the work is bounded by
-- the number of sources (at most 143 + 29 + one per 30 days: 185 for a
-- year) and the page's depth (at most MaxTopSince). A script
-- call costs microseconds, so the edge takes two and the merge keeps its
-- state in flat tables, comparing heads inline.
local out = {OK}
local oldest = redis.call('ZRANGE', timeKey, 0, 0, 'WITHSCORES')
if not oldest[1] then
  return out
end
if cutoff <= tonumber(oldest[2]) then
  return rows(articlePrefix, redis.call('ZREVRANGE', topKey, start, stop), out)
end
local newest = tonumber(redis.call('ZREVRANGE', timeKey, 0, 0, 'WITHSCORES')[2])
if cutoff > newest then
  return out
end

local small = BUCKETS[1]
local need = stop + 1
-- Source s is a zset, key[s], read from the top in chunks: off[s] is
-- the next chunk's offset, size[s] its size, done[s] is set once the
-- zset is read to its end. buf[s] holds the last chunk as ZREVRANGE
-- WITHSCORES gives it (member, value, member, value...), pos[s] the index
-- of the head's member in it; hm[s] and hv[s] are the head's member and
-- value.
local key, off, size, done, buf, pos, hm, hv = {}, {}, {}, {}, {}, {}, {}, {}
local n = 0
local t = math.floor(cutoff / small) * small
if t < cutoff then
  -- The edge: the cutoff's 10-minute bucket, without the members posted
  -- before the cutoff; it is read whole.
  local keep, edge = {}, {}
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', timeKey, cutoff, '(' .. (t + small))) do
    keep[m] = true
  end
  local r = redis.call('ZREVRANGE', bucket(bucketPrefix, small, t), 0, -1, 'WITHSCORES')
  for i = 1, #r, 2 do
    if keep[r[i]] then
      edge[#edge + 1] = r[i]
      edge[#edge + 1] = r[i + 1]
    end
  end
  n = 1
  buf[n], pos[n], done[n] = edge, 1, true
  t = t + small
end
-- Each size of bucket up to where the next size's buckets start.
for level, size in ipairs(BUCKETS) do
  local larger = BUCKETS[level + 1]
  while t <= newest and (larger == nil or t % larger ~= 0) do
    n = n + 1
    key[n] = bucket(bucketPrefix, size, t)
    t = t + size
  end
end

-- head sets the head of source s at pos[s], reading the source's next
-- chunk when its buffer is spent; it returns false when the source is.
local function head(s)
  local b, p = buf[s], pos[s]
  if b == nil or p > #b then
    if done[s] then
      return false
    end
    local o, c = off[s] or 0, size[s] or math.min(4, need)
    b = redis.call('ZREVRANGE', key[s], o, o + c - 1, 'WITHSCORES')
    off[s], size[s], done[s] = o + c, math.min(c * 4, 256, need), #b < 2 * c
    buf[s], pos[s], p = b, 1, 1
    if #b == 0 then
      return false
    end
  end
  hm[s], hv[s] = b[p], tonumber(b[p + 1])
  return true
end

-- A binary heap of the sources that have a head, the first head on top:
-- the higher value, then the higher id. Members compare as their ids do,
-- since their first letter is their digit count.
local heap, len = {}, 0
for s = 1, n do
  if head(s) then
    len = len + 1
    heap[len] = s
  end
end
local function down(i)
  local s = heap[i]
  local v, m = hv[s], hm[s]
  while true do
    local l = 2 * i
    if l > len then break end
    local c = heap[l]
    local cv, cm = hv[c], hm[c]
    if l < len then
      local r = heap[l + 1]
      local rv = hv[r]
      if rv > cv or (rv == cv and hm[r] > cm) then
        l, c, cv, cm = l + 1, r, rv, hm[r]
      end
    end
    if cv > v or (cv == v and cm > m) then
      heap[i] = c
      i = l
    else
      break
    end
  end
  heap[i] = s
end
for i = math.floor(len / 2), 1, -1 do down(i) end

local members = {}
for rank = 0, stop do
  if len == 0 then break end
  local s = heap[1]
  if rank >= start then
    members[#members + 1] = hm[s]
  end
  pos[s] = pos[s] + 2
  if not head(s) then
    heap[1] = heap[len]
    heap[len] = nil
    len = len - 1
  end
  if len > 0 then down(1) end
end
return rows(articlePrefix, members, out)
