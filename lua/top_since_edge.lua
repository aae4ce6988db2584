-- top_since_edge.lua: one step of TopSince's read of its edge, when the
-- edge holds more members than one call of top_since.lua reads: the
-- members of the edge bucket posted in the period, read in the order of
-- the time ordering, up to count of them a call. Uses lua/lib.
openStore(KEYS, 'r')
local timeKey, edgeKey = KEYS[1], KEYS[2]
local from, to = tonumber(ARGV[1]), tonumber(ARGV[2])
local afterTime, afterMember, count = ARGV[3], ARGV[4], tonumber(ARGV[5])
local overValue, overMember = ARGV[6], ARGV[7]
-- from, to: the edge's post times, [from, to). afterTime, afterMember:
-- the last member the previous step read, '' for the first step.
-- overValue, overMember: only members whose net votes and member come
-- after them in TopSince's order (higher value, then higher member) are
-- replied; '' for all.
-- Reply: {OK, done, last time, last member, then member, value for each
-- member read}: done is '1' once the edge is read to its end; last time
-- and last member are the step's afterTime and afterMember for the next.
--
-- A step resumes at afterMember's rank in the time ordering; if it is
-- gone (deleted), after the members posted before afterTime and those
-- posted at afterTime whose member is not above it.
local rank, skip
if afterMember == '' then
  rank = redis.call('ZCOUNT', timeKey, '-inf', '(' .. from)
else
  rank = redis.call('ZRANK', timeKey, afterMember)
  if rank then
    rank = rank + 1
  else
    rank, skip = redis.call('ZCOUNT', timeKey, '-inf', '(' .. afterTime), tonumber(afterTime)
  end
end
local r = redis.call('ZRANGE', timeKey, rank, rank + count - 1, 'WITHSCORES')
local done, lastTime, lastMember = #r < 2 * count, afterTime, afterMember
local ms = {}
for i = 1, #r, 2 do
  local posted = tonumber(r[i + 1])
  if posted >= to then
    done = true
    break
  end
  lastTime, lastMember = r[i + 1], r[i]
  if posted >= from and not (posted == skip and r[i] <= afterMember) then
    ms[#ms + 1] = r[i]
  end
end
local out = {OK, done and '1' or '0', lastTime, lastMember}
local over = tonumber(overValue)
for lo = 1, #ms, 1000 do
  local part = redis.call('ZMSCORE', edgeKey, unpack(ms, lo, math.min(lo + 999, #ms)))
  for i = 1, #part do
    local v, m = part[i], ms[lo + i - 1]
    if v then
      local x = tonumber(v)
      if not over or x > over or (x == over and m > overMember) then
        out[#out + 1] = m
        out[#out + 1] = v
      end
    end
  end
end
return out
