-- top_since.lua: reads one page of the articles posted at or after a
-- cutoff, by net votes, ties by id newest first. Uses lib.lua.
local topKey, timeKey, scoreKey = KEYS[1], KEYS[2], KEYS[3]
local articlePrefix, bucketPrefix = ARGV[1], ARGV[2]
local cutoff, start, stop = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
-- start, stop: ranks, inclusive.
-- Reply: {OK, the page's rows}.
--
-- When the period starts before the oldest article, the top zset is the
-- answer. Otherwise the period is covered by sources, each in net-vote
-- order: the members of the cutoff's 10-minute bucket posted at or after
-- the cutoff (sorted here, at most one bucket's worth), the 10-minute
-- buckets up to the next day, and the day buckets up to the newest
-- article. A heap merges their heads until the page is out; each source
-- is read in chunks, so the work is bounded by the number of sources
-- (about 144 plus one a day) and the page's depth (at most MaxTopSince).
local out = {OK}
local oldest = redis.call('ZRANGE', timeKey, 0, 0, 'WITHSCORES')
if not oldest[1] then
  return out
end
if cutoff <= tonumber(oldest[2]) then
  return rows(articlePrefix, scoreKey, redis.call('ZREVRANGE', topKey, start, stop), out)
end
local newest = tonumber(redis.call('ZREVRANGE', timeKey, 0, 0, 'WITHSCORES')[2])
if cutoff > newest then
  return out
end

local small, day = BUCKETS[1], BUCKETS[2]
local need = stop + 1
local sources = {}
local t = math.floor(cutoff / small) * small
if t < cutoff then
  local edge = {}
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', timeKey, cutoff, '(' .. (t + small))) do
    local v = redis.call('ZSCORE', topKey, m)
    if v then
      edge[#edge + 1] = {tonumber(v), m}
    end
  end
  sources[1] = {buf = edge, pos = 1, done = true}
  t = t + small
end
while t % day ~= 0 and t <= newest do
  sources[#sources + 1] = {key = bucket(bucketPrefix, small, t)}
  t = t + small
end
while t <= newest do
  sources[#sources + 1] = {key = bucket(bucketPrefix, day, t)}
  t = t + day
end

-- before orders two entries {value, member}: higher value first, then
-- the higher id (members of more digits, then greater ones).
local function before(a, b)
  if a[1] ~= b[1] then return a[1] > b[1] end
  if #a[2] ~= #b[2] then return #a[2] > #b[2] end
  return a[2] > b[2]
end
if sources[1] and sources[1].done then
  table.sort(sources[1].buf, before)
end

-- head returns a source's next entry, reading its next chunk when needed.
local function head(s)
  if s.buf and s.pos <= #s.buf then
    return s.buf[s.pos]
  end
  if s.done then
    return nil
  end
  s.off = s.off or 0
  s.chunk = s.chunk and math.min(s.chunk * 4, 256, need) or math.min(4, need)
  local r = redis.call('ZREVRANGE', s.key, s.off, s.off + s.chunk - 1, 'WITHSCORES')
  s.off = s.off + s.chunk
  s.buf, s.pos = {}, 1
  for i = 1, #r, 2 do
    s.buf[#s.buf + 1] = {tonumber(r[i + 1]), r[i]}
  end
  s.done = #r < 2 * s.chunk
  return s.buf[1]
end

-- A binary heap of the sources that have entries, by their heads.
local heap = {}
local function less(i, j) return before(head(heap[i]), head(heap[j])) end
local function swap(i, j) heap[i], heap[j] = heap[j], heap[i] end
local function down(i)
  while true do
    local l, r, best = 2 * i, 2 * i + 1, i
    if l <= #heap and less(l, best) then best = l end
    if r <= #heap and less(r, best) then best = r end
    if best == i then return end
    swap(i, best)
    i = best
  end
end
for _, s in ipairs(sources) do
  if head(s) then heap[#heap + 1] = s end
end
for i = math.floor(#heap / 2), 1, -1 do down(i) end

local members = {}
for rank = 0, stop do
  if #heap == 0 then break end
  local s = heap[1]
  if rank >= start then
    members[#members + 1] = head(s)[2]
  end
  s.pos = s.pos + 1
  if not head(s) then
    heap[1] = heap[#heap]
    heap[#heap] = nil
  end
  down(1)
end
return rows(articlePrefix, scoreKey, members, out)
