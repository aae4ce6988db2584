-- comment_vote.lua: decides one vote on a comment, as lib/ballot.lua vote
-- decides one on an article. Uses lua/lib.
local storeKey, storeIdentity, _, mod = openStore(KEYS, 'n')
local key = KEYS[1]
local cid, user, vs, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local k = {comment = ARGV[5], cvoted = ARGV[6], kids = ARGV[7], rules = readRules(ARGV, 9)}
local logLine = ARGV[8]
-- vs: '1', '-1' or '0' (cancel); now: the store's clock, Unix seconds;
-- ARGV[8]: moderation, the vote's line in the voter's vote log
-- (WithVoteLog; layout.LogEntry's Line, lib/moderation.lua logVote), or
-- '' (a cancel, a store without the log); mod: the
-- log and the events, which the store's identity names (lib/base.lua
-- moderationIn), or false; ARGV[9..13]: the vote rules (lib/rules.lua
-- readRules), for a store that has them.
-- Reply: '<previous> <points> <up> <down>' (vote.go parseVote) |
-- {NOT_FOUND} | {CLOSED} | {CORRUPT} | {NOT_ALLOWED} | {RATE_LIMITED, ms}.
--
-- The comment's voter record is the article's, k.cvoted .. aid, a hash
-- of "<cid>:<user>" -> '1' | '-1' | '0' (none), or a logged vote's
-- '<vote>@<offset>' (lib/moderation.lua logVote). The poster's own
-- upvote is implied: no field until they change it ('-1', or '0' for
-- their own vote cancelled), and '1' when they upvote once more. Others
-- have a field from their first vote, '0' once they take it back: no
-- field is deleted while the record lives (lib/ballot.lua VOTES says
-- why).
-- The record's head (lib/tree.lua CREC), parsed into locals: a
-- table would cost the vote more. The counts and deleted are at their
-- fixed places; the meta is matched from its own (C_META). A deleted
-- comment, kept for its replies, takes no votes.
local rec = redis.pcall('GETRANGE', key, 0, HEAD - 1)
if type(rec) == 'table' then
  -- Not a string: a store of another layout is incompatible; else fetch
  -- raises what the key holds.
  checkStore(storeKey, storeIdentity, 'w')
  rec = fetch(key, 'GETRANGE', 0, HEAD - 1)
end
local aid, parent, posted, closes, orders, weight, np, at = string.match(rec, VOTE_HEAD, C_META + 1)
local up, down = tonumber(string.sub(rec, 1, COUNT_DIGITS)), tonumber(string.sub(rec, C_DOWN + 1, C_DOWN + COUNT_DIGITS))
-- A store of another layout is incompatible, not closed or not found.
if not (at and up and down) or string.byte(rec, C_DELETED + 1) == 49 then -- 49: '1'
  checkStore(storeKey, storeIdentity, 'w')
  if rec ~= '' and not (at and up and down) then
    return error('voting: key ' .. key .. ' holds no comment', 0)
  end
  return {NOT_FOUND}
end
if parent == '0' then parent = nil end
np = tonumber(np)
if at + np - 1 > #rec then -- a head longer than HEAD, which no Comment writes
  return error('voting: key ' .. key .. ' holds no comment', 0)
end
local poster = string.sub(rec, at, at + np - 1)
if notBefore(now, closes) then
  checkStore(storeKey, storeIdentity, 'w')
  return {CLOSED}
end
local votedKey, field = k.cvoted .. aid, cid .. ':' .. user
local r = redis.call('HMGET', votedKey, '', field)
if not voterOpen(r[1], cid) then
  checkStore(storeKey, storeIdentity, 'w')
  return {CLOSED}
end
local new = VOTES[vs]
-- The poster's own upvote is implied; moderation: shown, a shadow vote
-- of the user's, which counts nowhere (lib/ballot.lua priorVote).
local prev, shown, off = user == poster and 1 or 0, nil, nil -- a first vote calls nothing
if r[2] then
  prev, shown, off = priorVote(r[2], prev)
end
if prev == nil then
  return {CORRUPT}
end
local was = shown or prev -- the previous vote, as the user sees it
local up0, down0 = up, down
if new == was then
  local tu, td = told(up, down, shown)
  return string.format('%d %d %d %d', was, tu - td, tu, td)
end
-- The store's identity (checkStore), deferred to here, where the vote
-- writes, as lib/ballot.lua vote defers it; moderation: with the voter's
-- suspension, read with it (voterCheck).
local mode, left = voterCheck(storeKey, storeIdentity, user, now)
local refused, stored, done = nil, vs, nil -- a voter neither suspended nor shadowed calls nothing
if mode or shown then
  refused, new, shown, stored, done = moderate(mode, left, prev, new, vs, votedKey, field)
end
if refused then
  return refused
elseif done then
  local tu, td = told(up, down, shown)
  return string.format('%d %d %d %d', was, tu - td, tu, td)
end
if prev == 1 then up = up - 1 elseif prev == -1 then down = down - 1 end
if new == 1 then up = up + 1 elseif new == -1 then down = down + 1 end
if up > MAX_COUNT or down > MAX_COUNT then -- before any write (karmaRules')
  return error('voting: comment ' .. cid .. ' has as many votes as its record holds', 0)
end

-- Every key written below is the record and the voter record, read
-- above, or the parent's orderings, whose writes come first: a foreign
-- value at the first fails the vote before it writes anything, and one
-- at another fails it after the first is put back (as lib/ballot.lua
-- does). A store with rules writes their keys first (karmaRules, which
-- checks them), so it checks the orderings before.
local keys, ords
if orders == '' then
  keys, ords = {k.kids .. (parent or 'a' .. aid)}, NO_ORDERS
else
  keys, ords = kidsKeys(k, {a = aid, p = parent, o = orders})
end
if mod then -- moderation: the vote log, the events (lib/moderation.lua)
  expectModerated(mod, user, true)
end
if k.rules then
  for _, kk in ipairs(keys) do
    expect(kk, 'zset')
  end
  local refused = karmaRules(k, poster, user, prev, new)
  if refused then
    return refused
  end
end
placeComment(keys, ords, cid, tonumber(posted), tonumber(weight) or 0, up, down, up0, down0)
redis.call('SETRANGE', key, C_UP, string.format(COUNTS, up, down))
-- moderation: a vote that counts as none before and after (a shadow
-- vote cancelled once its suspension ended) changes no log entry and
-- adds no event. The voter's vote log comes before the voter record,
-- whose field carries the new line's offset.
if mod and mod.log and prev ~= new then
  -- A poster's upvote back on their own comment is logged, as one on
  -- their own article is: the comment's first upvote alone is the
  -- item's (docs/OPERATIONS.md, "Moderation").
  local r, at = logVote(mod.log, user, true, cid, new, prev, off, logLine)
  must(r)
  if at then
    stored = loggedValue(vs, at) -- the line's offset; a vote that counts
  end
end
-- The vote's value, a shadowed voter's (moderation) or a logged one's,
-- '0' for none; a poster's upvote cast again is an explicit '1', which
-- reads as their implied one does.
redis.call('HSET', votedKey, field, stored)
if mod and mod.events and prev ~= new then -- moderation: the vote events; the vote counted from prev to new
  must(addEvent(mod.events, mod.maxLen, 'vote', user, cid, true, prev, new, now .. '000'))
end
local tu, td = told(up, down, shown)
return string.format('%d %d %d %d', was, tu - td, tu, td)
