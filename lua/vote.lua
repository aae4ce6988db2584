-- vote.lua: decides one vote (lib.lua vote: window, previous vote,
-- counters, orderings, group caches). Uses lib.lua.
local scoreKey = KEYS[1] -- the store's slot, for routing; vote() reaches it by k.by
local id, user, new, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local k = {article = ARGV[5], voted = ARGV[6], groups = ARGV[7],
  by = ARGV[8], cache = ARGV[9], bucket = ARGV[10]}
-- ARGV[11]: the prefix of upvoted pages (WithUserPages), or '' or none
-- for a store without them; ARGV[12..23]: the vote rules (lib.lua
-- readRules), for a store that has them.
if ARGV[11] and ARGV[11] ~= '' then k.upvoted = ARGV[11] end
k.rules = readRules(ARGV, 12)
-- Reply: {OK, previous, score, up, down} | {NOT_FOUND} | {CLOSED} |
-- {NOT_ALLOWED} | {RATE_LIMITED, ms}.
return vote(k, id, user, new, now)
