-- top_since.lua: reads one page of the articles posted at or after a
-- cutoff, by net votes, ties by id newest first. Uses lua/lib.
openStore(KEYS, 'r')
local topKey, timeKey = KEYS[1], KEYS[2]
local articlePrefix, bucketPrefix = ARGV[1], ARGV[2]
local cutoff, start, stop = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local work, given = tonumber(ARGV[6]), ARGV[7] == '1'
local votedPrefix, user = ARGV[8], ARGV[9]
-- start, stop: ranks, inclusive. work: the members of the edge (below)
-- one call may read. given: '1' when ARGV[10..] are the edge's first
-- members, found by top_since_edge.lua's steps; '' for none. votedPrefix
-- and user: the voter records' prefix and the user whose votes the reply
-- carries (TopSinceFor), or '' and '' for none.
-- Reply: {OK, the page's rows} | {OK, the page's rows, votes} with a user
-- (lib/record.lua withVotes) | {BUILDING} when the edge needs more than
-- work: the caller finds its first members in steps and calls again
-- with them.
--
-- When the period starts before the oldest article, the top zset is the
-- answer. Otherwise the period is covered by sources, each in net-vote
-- order: the members of the cutoff's 10-minute bucket posted at or after
-- the cutoff (the edge), the 10-minute buckets up to the next day, the
-- day buckets up to the next 30-day bucket, and 30-day buckets up to the
-- newest article. A heap merges their heads until the page is out; each
-- source is read in chunks, so the work is bounded by the number of
-- sources (at most 143 + 29 + one per 30 days: 185 for a year), the
-- page's depth (at most MaxTopSince) and work. A script call costs
-- microseconds, so the merge keeps its state in flat tables, comparing
-- heads inline.
--
-- The edge bucket may hold any number of articles (24,000 at 40 posts a
-- second), so it is never read whole. When at most work of them were
-- posted at or after the cutoff (ZCOUNT of the time ordering), those are
-- read by time and each is a source of one. Otherwise the bucket is read
-- in net-vote order, in chunks, keeping the members whose post time
-- (ZMSCORE of the time ordering) is in the period; while its next chunk
-- is unread the edge's head stands for it, as the last member read,
-- above everything unread, so that it is read only when the merge
-- reaches it. If that needs more than work members, the call replies
-- BUILDING and the caller finds the edge's first members in steps.
-- page returns the reply of the page of members.
local function page(members)
  return withVotes(rows(articlePrefix, members, {OK}), 2, votedPrefix, user)
end
local oldest = redis.call('ZRANGE', timeKey, 0, 0, 'WITHSCORES')
if not oldest[1] then
  return page({})
end
if cutoff <= tonumber(oldest[2]) then
  return page(redis.call('ZREVRANGE', topKey, start, stop))
end
local newest = tonumber(redis.call('ZREVRANGE', timeKey, 0, 0, 'WITHSCORES')[2])
if cutoff > newest then
  return page({})
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
-- The edge, when there is one, comes first: the given members or those
-- posted in the period, each a source of one (no buf, done, its head
-- set), or source edge, the bucket read by net votes from offset eoff in
-- chunks of chunk, spent members read so far: its head stands for the
-- unread part while virtual is set, as (fv, fm), the last member read.
local edge, edgeKey, virtual, fv, fm, eoff, chunk, spent = nil, nil, false, math.huge, '', 0, 32, 0
-- one adds the members ms with their values vs (ZMSCORE's reply) as
-- sources of one; members without a value are not in the bucket.
local function one(ms, vs)
  for i = 1, #ms do
    if vs[i] then
      n = n + 1
      hm[n], hv[n], pos[n], done[n] = ms[i], tonumber(vs[i]), 1, true
    end
  end
end
-- zmscore returns ZMSCORE of key for the members ms, 1,000 at a time
-- (unpack's limit).
local function zmscore(zset, ms)
  local out = {}
  for lo = 1, #ms, 1000 do
    local part = redis.call('ZMSCORE', zset, unpack(ms, lo, math.min(lo + 999, #ms)))
    for i = 1, #part do
      out[lo + i - 1] = part[i]
    end
  end
  return out
end
if t < cutoff then
  edgeKey = bucket(bucketPrefix, small, t)
  if given then
    local ms = {}
    for i = 10, #ARGV do
      ms[#ms + 1] = ARGV[i]
    end
    one(ms, zmscore(edgeKey, ms))
  elseif redis.call('ZCOUNT', timeKey, cutoff, '(' .. (t + small)) <= work then
    local ms = redis.call('ZRANGEBYSCORE', timeKey, cutoff, '(' .. (t + small))
    one(ms, zmscore(edgeKey, ms))
  else
    n, edge = 1, 1
  end
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
    if s == edge then
      virtual, hm[s], hv[s] = true, fm, fv
      return true
    end
    local o, c = off[s] or 0, size[s] or math.min(4, need)
    b = redis.call('ZREVRANGE', key[s], o, o + c - 1, 'WITHSCORES')
    off[s], size[s], done[s] = o + c, math.min(c * 4, 256, need), #b < 2 * c
    buf[s], pos[s], p = b, 1, 1
    if #b == 0 then
      return false
    end
  end
  if s == edge then
    virtual = false
  end
  hm[s], hv[s] = b[p], tonumber(b[p + 1])
  return true
end

-- readEdge reads the edge bucket's next chunk in net-vote order into the
-- edge's buffer, keeping the members posted in the period; it returns
-- false, reading nothing, once work members were read.
local function readEdge()
  local c = math.min(chunk, work - spent)
  if c <= 0 then
    return false
  end
  local r = redis.call('ZREVRANGE', edgeKey, eoff, eoff + c - 1, 'WITHSCORES')
  spent, eoff, chunk = spent + c, eoff + c, math.min(chunk * 2, 1024)
  local b = {}
  if #r > 0 then
    local ms = {}
    for i = 1, #r, 2 do
      ms[#ms + 1] = r[i]
    end
    local times = redis.call('ZMSCORE', timeKey, unpack(ms))
    for i = 1, #ms do
      if times[i] and tonumber(times[i]) >= cutoff then
        local j = #b
        b[j + 1], b[j + 2] = ms[i], r[2 * i]
      end
    end
    fm, fv = r[#r - 1], tonumber(r[#r])
  end
  buf[edge], pos[edge], done[edge] = b, 1, #r < 2 * c
  return true
end

-- A binary heap of the sources that have a head, the first head on top:
-- the higher value, then the higher id. Members compare as their ids do,
-- since their first letter is their digit count.
local heap, len = {}, 0
for s = 1, n do
  if hm[s] or head(s) then
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

local members, rank = {}, 0
while rank <= stop and len > 0 do
  local s = heap[1]
  if s == edge and virtual then
    if not readEdge() then
      return {BUILDING}
    end
  else
    if rank >= start then
      members[#members + 1] = hm[s]
    end
    rank = rank + 1
    pos[s] = pos[s] + 2
  end
  if not head(s) then
    heap[1] = heap[len]
    heap[len] = nil
    len = len - 1
  end
  if len > 0 then down(1) end
end
return page(members)
