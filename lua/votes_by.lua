-- votes_by.lua: reads a page of a user's vote log (Store.VotesBy,
-- lib/moderation.lua), newest first. Uses lua/lib.
openStore(KEYS, 'r')
local logKey = KEYS[1]
local afterScore, afterItem, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local articlePrefix, commentPrefix = ARGV[4], ARGV[5]
-- afterScore, afterItem: the cursor, the last entry of the page before
-- ('' for the first page). limit: the most entries to read.
-- Reply: {OK, nextScore, nextItem, item, score, ...}: the cursor of the
-- next page, the last entry read ('' '' where the log holds no more),
-- then the entries; those whose item is gone (deleted, pruned) are left
-- out, so a page may hold fewer than limit.
expect(logKey, 'zset')

-- below reports whether a sorts before b byte by byte, as a zset orders
-- the members of one score (Lua's < follows the server's locale).
local function below(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

local start = 0 -- the rank the page starts at
if afterScore == '' then
  start = 0
elseif redis.call('ZSCORE', logKey, afterItem) == afterScore then
  start = redis.call('ZREVRANK', logKey, afterItem) + 1
else
  -- The cursor's entry moved or went: on from where it stood. The
  -- entries of its score (the user's votes of one second in one
  -- direction) hold the ranks lo .. hi - 1, newest first, so their
  -- members in reverse byte order: the first of them below the cursor's
  -- item is found by halving (a few ZREVRANGEs at any size), so that
  -- none shown before comes again and none after is skipped.
  local lo = redis.call('ZCOUNT', logKey, '(' .. afterScore, '+inf')
  local hi = lo + redis.call('ZCOUNT', logKey, afterScore, afterScore)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if below(redis.call('ZREVRANGE', logKey, mid, mid)[1], afterItem) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  start = lo
end
local list = redis.call('ZREVRANGE', logKey, start, start + limit - 1, 'WITHSCORES')
local out = {OK, '', ''}
if #list == 2 * limit then
  out[2], out[3] = list[#list], list[#list - 1]
end
for i = 1, #list, 2 do
  local item = list[i]
  local comment, id = loggedItem(item)
  local key = (comment and commentPrefix or articlePrefix) .. id
  if redis.call('EXISTS', key) == 1 then
    out[#out + 1], out[#out + 2] = item, list[i + 1]
  end
end
return out
