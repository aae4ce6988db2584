-- vote_batch.lua: decides several votes in order, each as vote.lua does.
-- Uses lua/lib.
local storeKey, storeIdentity, _, mod = openStore(KEYS, 'w')
local scoreKey = KEYS[1]
local now = ARGV[1] -- the store's clock, Unix seconds
local k = {score = scoreKey, article = ARGV[2], voted = ARGV[3], more = ARGV[4]}
-- ARGV[4]: the prefixes a vote splits when it needs them (lib/ballot.lua fill);
-- ARGV[5]: the prefix of upvoted pages (WithUserPages), or ''.
if ARGV[5] ~= '' then k.upvoted = ARGV[5] end
-- moderation: the vote log and the events, which the store's identity
-- names (lib/base.lua moderationIn), or false; ARGV[6]: the tail of a
-- vote's line in a vote log (WithVoteLog; layout.LogTail), or ''.
k.mod, k.logTail = mod, ARGV[6]
-- ARGV[7]: n, 0 for a store without vote rules, then ARGV[8..7+n]: the
-- vote rules (lib/rules.lua readRules).
local n = tonumber(ARGV[7])
if n > 0 then
  k.rules = readRules(ARGV, 8)
end
-- moderation: the suspensions, where one may be on (lib/moderation.lua).
k.suspended = liveSuspensions(storeKey, storeIdentity, now)
-- ARGV[8+n..]: id, user, vote ('1', '-1' or '0'), for each ballot.
-- Reply: {OK, one vote.lua reply per ballot}; a ballot that fails (a
-- foreign value at one of its article's keys) gets the error reply
-- vote.lua would fail with, and the others go on.
local out = {OK}
for i = 8 + n, #ARGV, 3 do
  local ok, r = pcall(vote, k, ARGV[i], ARGV[i + 1], ARGV[i + 2], now)
  if not ok and (type(r) ~= 'table' or not r.err) then
    r = redis.error_reply(tostring(r))
  end
  out[#out + 1] = r
end
return out
