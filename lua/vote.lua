-- vote.lua: decides one vote. Everything happens here, atomically: the
-- article must exist and its window be open; the user's previous vote is
-- replaced by the new one; counters, score and voter record follow.
--
-- KEYS[1] article hash  KEYS[2] voter hash (user -> 1 or -1)  KEYS[3] score zset
-- ARGV[1] id  ARGV[2] user  ARGV[3] vote (1, -1 or 0 to cancel)
-- ARGV[4] now (Unix seconds)  ARGV[5] vote window (seconds)  ARGV[6] weight
--
-- Reply: {0, previous, score, upvotes, downvotes} when the vote is applied
-- (or was already in place), {1} when the article does not exist, {2} when
-- its voting window has closed. The score is a string.
local f = redis.call('HMGET', KEYS[1], 'posted', 'up', 'down')
if not f[1] then
  return {1}
end
local posted, up, down = tonumber(f[1]), tonumber(f[2]), tonumber(f[3])
local now, window = tonumber(ARGV[4]), tonumber(ARGV[5])
if now >= posted + window then
  return {2}
end

local new = tonumber(ARGV[3])
local prev = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or 0)
if new ~= prev then
  if prev == 1 then up = up - 1 elseif prev == -1 then down = down - 1 end
  if new == 1 then up = up + 1 elseif new == -1 then down = down + 1 end
  redis.call('HSET', KEYS[1], 'up', up, 'down', down)
  if new == 0 then
    redis.call('HDEL', KEYS[2], ARGV[2])
  else
    redis.call('HSET', KEYS[2], ARGV[2], new)
    -- The record may have been emptied and deleted by cancels, so the
    -- expiry is set again on every write: it always ends with the window.
    redis.call('EXPIRE', KEYS[2], posted + window - now)
  end
  -- The score is recomputed, not incremented, so it never drifts from
  -- posted + weight * (up - down), whatever the weight.
  local score = string.format('%.17g', posted + tonumber(ARGV[6]) * (up - down))
  redis.call('ZADD', KEYS[3], score, ARGV[1])
  return {0, prev, score, up, down}
end
return {0, prev, redis.call('ZSCORE', KEYS[3], ARGV[1]), up, down}
