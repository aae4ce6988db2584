-- post.lua: posts an article and records the poster's own upvote.
--
-- KEYS[1] id counter          KEYS[2] score zset       KEYS[3] time zset
-- ARGV[1] article key prefix  ARGV[2] voter key prefix
-- ARGV[3] poster  ARGV[4] title  ARGV[5] link
-- ARGV[6] now (Unix seconds)  ARGV[7] vote window (seconds)  ARGV[8] weight
--
-- The article and voter keys are built here from their prefixes, which
-- carry the store's hash tag, so they share the slot of KEYS.
-- Reply: {id, score}, the score as a string.
local id = tostring(redis.call('INCR', KEYS[1]))
local now = tonumber(ARGV[6])
local score = string.format('%.17g', now + tonumber(ARGV[8]))
local voted = ARGV[2] .. id
redis.call('HSET', ARGV[1] .. id,
  'title', ARGV[4], 'link', ARGV[5], 'poster', ARGV[3],
  'posted', ARGV[6], 'up', 1, 'down', 0)
redis.call('ZADD', KEYS[2], score, id)
redis.call('ZADD', KEYS[3], ARGV[6], id)
redis.call('HSET', voted, ARGV[3], 1)
redis.call('EXPIRE', voted, ARGV[7])
return {id, score}
