-- vote_batch.lua: decides several votes in order, each as vote.lua does.
-- Uses lib.lua.
local scoreKey = KEYS[1] -- the store's slot, for routing
local now = tonumber(ARGV[1])
local k = {article = ARGV[2], voted = ARGV[3], groups = ARGV[4],
  by = ARGV[5], cache = ARGV[6], bucket = ARGV[7]}
-- ARGV[8]: the prefix of upvoted pages (WithUserPages), or ''.
if ARGV[8] ~= '' then k.upvoted = ARGV[8] end
-- ARGV[9]: n, 0 for a store without vote rules, then ARGV[10..9+n]: the
-- vote rules (lib.lua readRules).
local n = tonumber(ARGV[9])
if n > 0 then
  k.rules = readRules(ARGV, 10)
end
-- ARGV[10+n..]: id, user, vote, for each ballot.
-- Reply: {OK, one vote.lua reply per ballot}; a ballot that fails (a
-- foreign value at one of its article's keys) gets the error reply
-- vote.lua would fail with, and the others go on.
local out = {OK}
for i = 10 + n, #ARGV, 3 do
  local ok, r = pcall(vote, k, ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), now)
  if not ok and (type(r) ~= 'table' or not r.err) then
    r = redis.error_reply(tostring(r))
  end
  out[#out + 1] = r
end
return out
