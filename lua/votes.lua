-- votes.lua: reads one user's votes on several articles. Uses lua/lib/
openStore(KEYS, 'r')
local scoreKey = KEYS[1] -- the store's slot, for routing
local user, articlePrefix, votedPrefix, exists = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- exists: '1' to tell an article that does not exist from one whose
-- voting closed (VoteOf), '0' not to (VotesOf, which reads both as no
-- vote, and runs this script only on a connection that cannot pipeline:
-- it reads the same with plain commands, votes.go). ARGV[5..]: the ids.
-- Reply: {OK, votes}: votes holds one byte per id: '+' up, '-' down, '0'
-- none (no field, or '0': a vote taken back), 'n' (with exists '1') the
-- article does not exist, 'c' the user's field in the voter record
-- holds no value a vote writes.
-- One command per id: a voter record exists only while its article does
-- and its voting is open, so a vote found says the article exists, and
-- only an id without one needs the article looked up, when asked.
local out = {}
for i = 5, #ARGV do
  local v = redis.call('HGET', votedPrefix .. ARGV[i], user)
  local s = voteSign(v) -- a shadow vote as its voter sees it (lib/record.lua)
  if s then
    v = s
  elseif v then
    v = 'c'
  elseif exists == '1' and missing(articlePrefix .. ARGV[i]) then
    v = 'n'
  else
    v = '0'
  end
  out[i - 4] = v
end
return {OK, join(out)}
