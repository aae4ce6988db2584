-- reverse.lua: one step of Store.ReverseVotes: takes back the newest
-- votes of a user's vote log (lib/moderation.lua), each as
-- lib/reversal.lua says, and removes their entries. Uses lua/lib.
local _, _, _, mod = openStore(KEYS, 'w')
local logKey = KEYS[1]
local user, now, step, budget = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local k = {score = ARGV[5], article = ARGV[6], voted = ARGV[7], more = ARGV[8],
  upvoted = ARGV[9] ~= '' and ARGV[9] or nil, comment = ARGV[10], cvoted = ARGV[11], kids = ARGV[12],
  rules = readRules(ARGV, 13)}
local events, maxLen = mod and mod.events, mod and mod.maxLen
-- now: the store's clock, Unix seconds; step: the most entries to take;
-- budget: the most work (lib/reversal.lua reverseWork) a step starts on;
-- ARGV[5..12]: the score ordering and the prefixes a vote and a comment
-- vote take; the vote events (WithVoteEvents; lib/base.lua
-- moderationIn), where the store keeps them, get a 'reversed' entry for
-- each vote taken back; ARGV[13..]: the vote rules (lib/rules.lua readRules), for a
-- store that has them: their limit is off, as a reversal is no vote.
-- Reply: {OK, taken, left}: the votes taken back (an entry whose item is
-- gone, or whose vote was cancelled, takes none), and '1' where the log
-- may hold more.
-- An entry's item is taken back whole before the next is read: a
-- foreign value at one of its keys fails the step before the item's
-- first write, with the entries before it taken and removed, so a call
-- again resumes where it failed.
if k.rules then
  -- Read once here, so that the votes below (lib/ballot.lua vote,
  -- karmaRules) find them loaded with the limit off: a reversal is no
  -- vote a limit counts or refuses.
  loadRules(k.rules).limit = nil
end
expect(logKey, 'zset')
if events then
  expect(events, 'stream')
end
-- The voter's karma before the refunds, where the store keeps karma.
local karmaBefore = k.rules and k.rules.karma and redis.call('ZSCORE', k.rules.karma, user)
local list = redis.call('ZREVRANGE', logKey, 0, step - 1, 'WITHSCORES')
local taken, work, more = 0, 0, #list == 2 * step
for i = 1, #list, 2 do
  if work >= budget then
    more = true
    break
  end
  local item = list[i]
  local logged = -1
  if tonumber(string.sub(list[i + 1], -1)) % 2 == 1 then
    logged = 1
  end
  local done, w, prev
  local comment, id = loggedItem(item)
  if comment then
    done, w, prev = reverseComment(k, id, user, logged, now)
  else
    done, w, prev = reverseArticle(k, id, user, logged, now)
  end
  work = work + w
  redis.call('ZREM', logKey, item)
  if done and events then
    must(addEvent(events, maxLen, 'reversed', user, id, comment, prev, 0, now .. '000'))
  end
  if done then
    taken = taken + 1
  end
end
-- A voter whose karma the refunds bring to 0 leaves the karma
-- ordering, as one who never voted (TopUsers lists no such user); one
-- listed at 0 before, whose karma the votes never moved (no vote cost),
-- stays.
if taken > 0 and karmaBefore and tonumber(karmaBefore) ~= 0 then
  local left = redis.call('ZSCORE', k.rules.karma, user)
  if left and tonumber(left) == 0 then
    redis.call('ZREM', k.rules.karma, user)
  end
end
local left = '0'
if more then
  left = '1'
end
return {OK, taken, left}
