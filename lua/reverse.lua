-- reverse.lua: one step of Store.ReverseVotes: takes back the newest
-- votes of a user's vote log (lib/moderation.lua), each as
-- lib/reversal.lua says, and marks their lines taken back. Uses lua/lib.
local _, _, _, mod = openStore(KEYS, 'wl')
local logKey = KEYS[1]
local user, now, step, budget, walk = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local k = {score = ARGV[6], article = ARGV[7], voted = ARGV[8], more = ARGV[9],
  upvoted = ARGV[10] ~= '' and ARGV[10] or nil, comment = ARGV[11], cvoted = ARGV[12], kids = ARGV[13],
  rules = readRules(ARGV, 14)}
local events, maxLen = mod and mod.events, mod and mod.maxLen
-- now: the store's clock, Unix seconds; step: the most lines of votes
-- to take back;
-- budget: the most work (lib/reversal.lua reverseWork) a step starts on;
-- walk: where the walk is, '<cursor> <floor> <top>' as the step before
-- replied, '' to start one: it takes back the lines from cursor down to
-- floor, newest first, those of [0, floor) taken back before, and top
-- the log's length when this pass began; ARGV[6..13]: the score ordering
-- and the prefixes a vote and a comment vote take; the vote events
-- (WithVoteEvents; lib/base.lua moderationIn), where the store keeps
-- them, get a 'reversed' entry for each vote taken back; ARGV[14..]:
-- the vote rules (lib/rules.lua readRules), for a store that has them:
-- their limit is off, as a reversal is no vote.
-- Reply: {OK, taken, walk}: the votes taken back (a line whose item is
-- gone, or whose vote was cancelled, takes none), and the walk of the
-- next step, '' where the log holds no more: then every line is taken
-- back, and the log is removed. A pass walks the lines the log held when
-- it began; a vote cast meanwhile is taken back by a pass after it.
-- A line's item is taken back whole before the next is read: a foreign
-- value at one of its keys fails the step before the item's first
-- write, with the lines before it taken back, so a call again resumes
-- where it failed.
if k.rules then
  -- Read once here, so that the votes below (lib/ballot.lua vote,
  -- karmaRules) find them loaded with the limit off: a reversal is no
  -- vote a limit counts or refuses.
  loadRules(k.rules).limit = nil
end
expect(logKey, 'string')
if events then
  expect(events, 'stream')
end
local len = redis.call('STRLEN', logKey)
local cursor, floor, top = len, 0, len
local c, f, t = string.match(walk, '^(%d+) (%d+) (%d+)$')
c, f, t = tonumber(c), tonumber(f), tonumber(t)
-- A walk past the log (another call's reversal removed it, or
-- Reconfigure) starts again: a line taken back is passed over.
if c and f <= c and c <= t and t <= len then
  cursor, floor, top = c, f, t
end
-- The voter's karma before the refunds, where the store keeps karma.
local karmaBefore = k.rules and k.rules.karma and redis.call('ZSCORE', k.rules.karma, user)
local taken, work, read = 0, 0, 0 -- read: the lines of votes read, at most step
-- The log read back from cursor in parts of a few lines, each taken
-- back newest first, until the step's work or lines are spent: a step
-- parses about the lines it takes back.
while cursor > floor and work < budget and read < step do
  local lines, starts, start = logLinesBefore(logKey, floor, cursor, LOG_CHUNK)
  if #lines == 0 then
    cursor = start -- no line the store writes: passed over
  end
  for i = #lines, 1, -1 do
    if work >= budget or read == step then
      break
    end
    local sign, item = string.match(lines[i], LOG_LINE)
    local logged = sign and LOG_VOTES[sign]
    if logged then
      read = read + 1
      local done, w, prev
      local comment, id = loggedItem(item)
      if comment then
        done, w, prev = reverseComment(k, id, user, logged, now)
      else
        done, w, prev = reverseArticle(k, id, user, logged, now)
      end
      work = work + w
      redis.call('SETRANGE', logKey, starts[i], LOG_DEAD)
      if done and events then
        must(addEvent(events, maxLen, 'reversed', user, id, comment, prev, 0, now .. '000'))
      end
      if done then
        taken = taken + 1
      end
    end
    cursor = starts[i]
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
-- The pass is done at floor: every line below top is taken back. The
-- log goes where no vote came meanwhile; else a pass over those that
-- did follows.
if cursor == floor then
  if len == top then
    redis.call('DEL', logKey)
    return {OK, taken, ''}
  end
  cursor, floor, top = len, top, len
end
return {OK, taken, cursor .. ' ' .. floor .. ' ' .. top}
