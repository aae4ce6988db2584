-- votes.lua: reads one user's votes on several articles. Uses lib.lua.
local scoreKey = KEYS[1] -- the store's slot, for routing
local user, articlePrefix, votedPrefix = ARGV[1], ARGV[2], ARGV[3]
-- ARGV[4..]: the ids.
-- Reply: {OK, then per id: status, vote}: OK and 1 up, -1 down or 0 none;
-- NOT_FOUND and 0 when the article does not exist; CORRUPT and 0 when the
-- user's voter record holds anything but 1 or -1.
local out = {OK}
for i = 4, #ARGV do
  local id = ARGV[i]
  local st, v = OK, 0
  if missing(articlePrefix .. id) then
    st = NOT_FOUND
  else
    v = redis.call('HGET', votedPrefix .. id, user)
    if v == '1' or v == '-1' then
      v = tonumber(v)
    elseif v then
      st, v = CORRUPT, 0
    else
      v = 0
    end
  end
  out[#out + 1] = st
  out[#out + 1] = v
end
return out
