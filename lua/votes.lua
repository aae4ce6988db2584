-- votes.lua: reads one user's votes on several articles. Uses lib.lua.
local scoreKey = KEYS[1] -- the store's slot, for routing
local user, articlePrefix, votedPrefix = ARGV[1], ARGV[2], ARGV[3]
-- ARGV[4..]: the ids.
-- Reply: {OK, then per id: status, vote}: OK and 1 up, -1 down or 0 none;
-- NOT_FOUND and 0 when the article does not exist. A voter record that
-- holds anything but 1 or -1 fails the script.
local out = {OK}
for i = 4, #ARGV do
  local id = ARGV[i]
  local st, v = OK, 0
  if missing(articlePrefix .. id) then
    st = NOT_FOUND
  else
    v = redis.call('HGET', votedPrefix .. id, user)
    if v ~= false and v ~= '1' and v ~= '-1' then
      return redis.error_reply('voting: corrupt voter record ' .. votedPrefix .. id .. ' for ' .. user)
    end
    v = tonumber(v or 0)
  end
  out[#out + 1] = st
  out[#out + 1] = v
end
return out
