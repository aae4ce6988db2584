-- votes.lua: reads one user's votes on several articles.
--
-- KEYS[2i-1] article hash of the i-th id  KEYS[2i] its voter hash
-- ARGV[1] user
--
-- Reply: one integer per id: 1 up, -1 down, 0 none, 2 when the article
-- does not exist.
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    out[#out + 1] = 2
  else
    out[#out + 1] = tonumber(redis.call('HGET', KEYS[i + 1], ARGV[1]) or 0)
  end
end
return out
