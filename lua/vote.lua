-- vote.lua: decides one vote (lib/ballot.lua vote: window, previous vote,
-- counters, orderings, group caches). Uses lua/lib.
local storeKey, storeIdentity, _, mod = openStore(KEYS, 'n')
local scoreKey = KEYS[1]
local id, user, new, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- new: '1', '-1' or '0' (cancel); now: the store's clock, Unix seconds.
-- ARGV[5], ARGV[6]: the prefixes of articles and voter records; ARGV[7]:
-- the prefixes of the groups of articles, the orderings, the group caches
-- and the TopSince buckets, newline-separated (lib/ballot.lua fill);
-- ARGV[8]: moderation, the vote's line in the voter's vote log
-- (WithVoteLog; layout.LogEntry's Line, lib/moderation.lua logVote), or
-- '' (a cancel, a store without the log) or none; ARGV[9]:
-- the prefix of upvoted pages (WithUserPages), or '' or none for a store
-- without them; ARGV[10..14]: the vote rules (lib/rules.lua readRules),
-- for a store that has them. k is made whole in one constructor: a field
-- added later grows the table, which costs a vote more than the field.
-- mod: the vote log and the events, which the store's identity names
-- (lib/base.lua moderationIn), or false.
local k = {score = scoreKey, article = ARGV[5], voted = ARGV[6], more = ARGV[7],
  upvoted = ARGV[9] ~= '' and ARGV[9] or nil, rules = readRules(ARGV, 10), mod = mod, logLine = ARGV[8]}
-- Reply: '<previous> <score> <up> <down>' | {NOT_FOUND} | {CLOSED} |
-- {NOT_ALLOWED} | {RATE_LIMITED, ms}: a vote done is the one reply that
-- is not {status, ...}, but one string, which the client reads as one
-- value (vote.go parseVote).
-- The store's identity is checked by vote itself (lib/base.lua checkStore),
-- where it knows the vote changes something.
local r = vote(k, id, user, new, now, storeKey, storeIdentity)
if r[1] ~= OK then
  return r
end
return string.format('%d %s %d %d', r[2], r[3], r[4], r[5])
