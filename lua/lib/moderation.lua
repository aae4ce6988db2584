-- moderation.lua: what a vote keeps and checks for the moderators
-- (moderation.go): the voter's vote log (WithVoteLog), the voter's
-- suspension, and the vote events (WithVoteEvents). vote() (lib/ballot.lua),
-- comment_vote.lua, vote_batch.lua, post.lua, comment.lua, reverse.lua
-- and suspend.lua call it at their marked hook points ("moderation:").
-- Needs: base.lua (expect, checkStore, num, unmarked, storeLogsMoving;
-- openStore's moderation), rules.lua (NOT_ALLOWED).

-- A user's vote log (WithVoteLog) is a string at mod.log .. user, a
-- journal of one line a vote, oldest first (layout.LogEntry):
--   <sign><item> <at>\n
-- sign '+' (up), '-' (down) or 'x' (taken back); item "a<id>" for an
-- article, "c<cid>" for a comment; at the vote's time (Unix s, the
-- store's clock) in base 36, in the line's tail, which the store sends
-- with each vote (layout.LogTail). A vote appends its line, and its voter record's
-- field carries the line's offset, '1@<offset>' (layout.LoggedVoteValue),
-- so that the vote that changes it marks the line taken back in place:
-- the log costs about 20 bytes a vote at any length. The vote outlives
-- the item's voter record, for a reversal of a vote on a closed item.
-- Post's and Comment's own upvote is no entry: it is the item's, not a
-- vote the user cast.

-- logItem returns the item of a line, "c<cid>" for a comment (comment
-- true) and "a<id>" for an article (layout.LogEntry's Member);
-- loggedItem reads one back: whether it is a comment's, and its id.
local function logItem(comment, id)
  return (comment and 'c' or 'a') .. id
end

local function loggedItem(item)
  return string.byte(item) == 99, string.sub(item, 2) -- 99: 'c'
end

-- LOG_SIGNS are the votes as a line's sign; LOG_DEAD a line's taken back.
local LOG_SIGNS = {[1] = '+', [-1] = '-'}
local LOG_DEAD = 'x'
local LOG_VOTES = {['+'] = 1, ['-'] = -1}

-- LOG_PAGE_BYTES is what a read of the log (votes_by.lua, reverse.lua)
-- takes of it for each line it may return: more than the longest line,
-- 35 bytes (an id of 19 digits, a time of 12 characters), so that every
-- read holds a whole line, and about twice and a half a usual one.
local LOG_PAGE_BYTES = 40

-- LOG_CHUNK is what a reversal's step (reverse.lua) reads of the log at
-- a time: a few lines, so that it parses about those it takes back.
local LOG_CHUNK = 16 * LOG_PAGE_BYTES

-- logLinesBefore reads the lines of the journal at key that end at or
-- before cursor, a line's start, from at most bytes before it and not
-- before floor, another line's start: the lines (their newlines left
-- off) and where each starts, oldest first, and where the part read
-- starts. The part's first bytes, where it starts after floor, end a
-- line that starts before it, which the next part reads (bytes above
-- the longest line, LOG_PAGE_BYTES, make sure of one line).
local function logLinesBefore(key, floor, cursor, bytes)
  local start = math.max(floor, cursor - bytes)
  local text = redis.call('GETRANGE', key, start, cursor - 1)
  local lines, starts, from = {}, {}, 1
  if start > floor then
    from = (string.find(text, '\n', 1, true) or #text) + 1
  end
  while from <= #text do
    local nl = string.find(text, '\n', from, true)
    if not nl then
      return error('voting: key ' .. key .. ' holds no vote log', 0) -- a log ends in a newline
    end
    lines[#lines + 1], starts[#starts + 1] = string.sub(text, from, nl - 1), start + from - 1
    from = nl + 1
  end
  return lines, starts, start
end

-- LOG_LINE matches a line, its newline left off: sign, item, at.
local LOG_LINE = '^([-+x])([ac]%d+) (-?[%da-z]+)$'

-- base36 writes the integer n in base 36, as strconv.FormatInt(n, 36)
-- does (a line's time, layout.LogTail), for the lines the store writes
-- from a number (reconfigure.lua's move of layout 6's logs);
-- fromBase36 reads one back (Lua's tonumber(s, 36) reads no sign).
local B36 = '0123456789abcdefghijklmnopqrstuvwxyz'
local function base36(n)
  local sign, digits = '', {}
  if n < 0 then
    sign, n = '-', -n
  end
  repeat
    local d = n % 36
    table.insert(digits, 1, string.sub(B36, d + 1, d + 1))
    n = (n - d) / 36
  until n == 0
  return sign .. table.concat(digits)
end

local function fromBase36(s)
  if string.byte(s) == 45 then -- '-'
    return -tonumber(string.sub(s, 2), 36)
  end
  return tonumber(s, 36)
end

-- logTail is the tail of the line of a vote at at (Unix s), ' <at>\n',
-- at in base 36 (layout.LogTail), for a line the store writes from a
-- number (reconfigure.lua's move); a vote's the store sends.
local function logTail(at)
  return ' ' .. base36(at) .. '\n'
end

-- Layout 6 kept a user's log in a sorted set at log6Key of the record's
-- key store and the user (layout.UserVotes6), of the items at score6:
-- twice the vote's time (Unix s), plus 1 for an upvote (layout.LogEntry
-- Score), which fromScore6 reads back as the time and the vote.
-- Reconfigure moves them into journals (reconfigure.lua, phase
-- 'movelogs'); a vote meanwhile keeps one not moved yet (logVote6).
local function log6Key(store, user)
  return string.sub(store, 1, -6) .. 'uvotes:' .. user
end

local function score6(at, vote)
  if vote == 1 then
    return 2 * at + 1
  end
  return 2 * at
end

local function fromScore6(score)
  local at = math.floor(score / 2)
  return at, score - 2 * at == 1 and 1 or -1
end

-- loggedValue is the value of a logged vote vs ('1' or '-1') in its
-- voter record, its line at offset at: '<vote>@<offset>'
-- (layout.LoggedVoteValue); loggedVote reads it back.
local function loggedValue(vs, at)
  return vs .. '@' .. at
end

-- loggedVote reads a voter record's value v of a logged vote,
-- '<vote>@<offset>', as its vote (1 or -1) and the offset of its line;
-- nil for any other value.
local function loggedVote(v)
  local vote, off = string.match(v, '^(-?1)@(%d+)$')
  if vote then
    return tonumber(vote), tonumber(off)
  end
end

-- logHead is the start of the line of a vote (1 or -1) on item, up to
-- its time: what tells that vote's line from another's at its offset.
local function logHead(vote, item)
  return LOG_SIGNS[vote] .. item .. ' '
end

-- logKill marks taken back the line of the vote old (1 or -1) on item at
-- offset off of the journal at key, where that line is there (a log
-- dropped by Reconfigure, and begun again, holds another). It returns
-- the reply of redis.pcall: an error where key holds another type.
local function logKill(key, off, old, item)
  local head = logHead(old, item)
  local got = redis.pcall('GETRANGE', key, off, off + #head - 1)
  if got == head then
    return redis.pcall('SETRANGE', key, off, LOG_DEAD)
  end
  return got
end

-- logVote6 is logVote (below) while Reconfigure moves the vote logs of
-- layout 6 into journals (lib/base.lua storeLogsMoving, the record's
-- key), for a user whose log of layout 6 (log6Key) is still there. Such
-- a vote is kept there as layout 6 kept it, and its voter record's value
-- plain, so that the move carries it into the journal at key after the
-- votes before it; a vote logged in the journal already (off) has its
-- line marked taken back. It returns nil where the user has no log of
-- layout 6 (the journal takes the vote), else what logVote returns: the
-- reply of redis.pcall, an error reply, before any write, where either
-- key holds another type, and no offset.
local function logVote6(key, user, item, new, prev, off, line)
  local old = log6Key(storeLogsMoving, user)
  local t = redis.call('TYPE', old)
  t = t.ok or t
  if t == 'none' then
    return nil
  elseif t ~= 'zset' then
    return {err = 'voting: key ' .. old .. ' holds a ' .. t .. ', not a zset'}
  end
  local r = 0
  if off then
    r = logKill(key, off, prev, item)
    if type(r) == 'table' and r.err then
      return r
    end
  end
  if new == 0 then
    redis.call('ZREM', old, item)
  else
    local _, _, at = string.match(string.sub(line, 1, -2), LOG_LINE) -- the line's time (layout.LogTail)
    redis.call('ZADD', old, num(score6(fromBase36(at), new)), item)
  end
  return r
end

-- logVote moves the entry of an item, the comment (comment true) or
-- article id, in user's journal (at log .. user) from the vote prev, logged at
-- offset off (nil for none logged), to the user's new vote (1, -1, or 0
-- for none), whose line is line (layout.LogEntry's Line, which the
-- store sends with each vote: building it costs a vote in Lua a tenth of
-- what the log adds). It returns the reply of redis.pcall, an error
-- where key holds another type, and the offset of the new line (nil
-- for none), which the voter record's field carries. Its caller checked
-- key (expect) and raises an error (must), or wrote it first unchecked
-- and puts its writes back (lib/ballot.lua vote): its first command on
-- key fails before it writes.
local function logVote(log, user, comment, id, new, prev, off, line)
  local key = log .. user
  if storeLogsMoving then -- a migration under way (logVote6), on no other vote's way
    local r = logVote6(key, user, logItem(comment, id), new, prev, off, line)
    if r then
      return r
    end
  end
  local at, r
  if new ~= 0 then
    r = redis.pcall('APPEND', key, line)
    if type(r) ~= 'number' then
      return r
    end
    at = r - #line
  end
  if off then
    r = logKill(key, off, prev, logItem(comment, id))
  end
  return r, at
end

-- Suspensions (Store.Suspend): a hash at <tag>suspended of each
-- suspended user -> '<mode> <until>', mode 'r' (Refuse) or 's'
-- (Shadow) and until the end in ms on the store's clock. While the hash
-- holds any, the store's record (lib/base.lua identity) carries, after
-- its identity and a newline, the latest end of them: a vote reads it
-- with the GET that checks the record, so that a store that never
-- suspended anyone, or whose suspensions have all ended, reads no more
-- than before (voterCheck). The hash is the record's sibling in its hash
-- tag (keys.go), named once per record key where the scripts run as a
-- library (as fences).
local suspendedKeys = {}
local function suspendedKeyOf(store)
  local key = suspendedKeys[store]
  if not key then
    key = string.sub(store, 1, -6) .. 'suspended'
    suspendedKeys[store] = key
  end
  return key
end

-- A shadowed user's vote (Shadow) is kept in the voter record as the
-- vote and an 's', '1s' or '-1s': the user's reads show it, and no count,
-- ordering, karma, page or log has it.
local SHADOW = {['1s'] = 1, ['-1s'] = -1}

-- suspensionOf returns the mode and the ms left of user's suspension
-- in the hash at key, at now (Unix s), or nil where none is on.
local function suspensionOf(key, user, now)
  local s = redis.call('HGET', key, user)
  if not s then
    return nil
  end
  local mode, ends = string.match(s, '^([rs]) (%d+)$')
  local left = mode and tonumber(ends) - tonumber(now) * 1000
  if left and left > 0 then
    return mode, left
  end
end

-- lastEnd returns the latest end of the suspensions that the record got
-- carries after this store's identity want, or nil for a record without
-- one.
local function lastEnd(got, want)
  if type(got) == 'string' and #got > #want + 1 then
    -- The identity, or the identity marked while Reconfigure moves the
    -- comments of layout 4 or the vote logs of layout 6 (lib/base.lua
    -- unmarked), then the end.
    local head, tail = string.match(got, '^([^\n]*)\n(%d+)$')
    if head == want or head and unmarked(head) == want then
      return tonumber(tail)
    end
  end
end

-- liveSuspensions returns the hash of the suspensions of the store whose
-- record's key is store, this store's identity want, where one may be on
-- at now (Unix s), or nil: one GET, for a script that checked the store
-- apart (vote_batch.lua, post.lua, comment.lua).
local function liveSuspensions(store, want, now)
  local last = lastEnd(redis.pcall('GET', store), want)
  if last and last > tonumber(now) * 1000 then
    return suspendedKeyOf(store)
  end
end

-- voterCheck is a vote's check before its first write: the store's
-- identity (checkStore) at store, this store's being want, and the
-- voter's suspension at now (Unix s), from the one GET of the record
-- where no suspension is on. It returns the suspension's mode and ms
-- left, or nil.
local function voterCheck(store, want, user, now)
  local got = redis.pcall('GET', store)
  if got == want then
    return nil
  end
  local last = lastEnd(got, want)
  if not last then
    checkStore(store, want, 'w') -- raises, or passes an empty store or one a migration marks
    return nil
  elseif string.byte(got, #want + 1) ~= 10 then -- 10: '\n'
    -- Marked by a migration under way: the identity check learns which
    -- (lib/base.lua identity, storeLogsMoving).
    checkStore(store, want, 'w')
  end
  if last > tonumber(now) * 1000 then
    return suspensionOf(suspendedKeyOf(store), user, now)
  end
end

-- refused returns the reply of a refused call of a user suspended with
-- Refuse (posts, comments, votes): {NOT_ALLOWED, ms left}, or nil.
local function refused(hash, user, now)
  if not hash then
    return nil
  end
  local mode, left = suspensionOf(hash, user, now)
  if mode == 'r' then
    return {NOT_ALLOWED, num(left)}
  end
end

-- told returns what a shadowed voter is told of a vote v on an item with
-- the counts up and down: the counts with v in them.
local function told(up, down, v)
  if v == 1 then
    return up + 1, down
  elseif v == -1 then
    return up, down + 1
  end
  return up, down
end

-- Vote events (WithVoteEvents): a Redis Stream of the store, capped at
-- about its length (XADD MAXLEN ~), of every vote that changes
-- something, every vote a reversal takes back, and every suspension and
-- its end, each added in the script of the change, at the stream's key
-- and length the store's identity names (lib/base.lua moderationIn);
-- every entry has the same fields (docs/OPERATIONS.md, "Moderation"):
--   kind ('vote', 'reversed', 'suspend', 'unsuspend'), user, target (the
--   item's id; the mode, 'refuse' or 'shadow', of a suspension),
--   comment ('1' for a comment's), from, to (the votes '1', '-1', '0'),
--   at (the store's clock, Unix ms)

-- expectModerated checks, before a vote's first write, the keys it
-- writes for the moderators where the store keeps them (mod, from
-- lib/base.lua openStore): the voter's vote log and the events; where
-- all is false, the events only where the log comes first (a vote writes
-- the first unchecked, and puts its writes back where that fails:
-- lib/ballot.lua vote).
local function expectModerated(mod, user, all)
  if mod.log and all then
    expect(mod.log .. user, 'string')
    if storeLogsMoving then -- and the log of layout 6 a move has yet to take (logVote6)
      expect(log6Key(storeLogsMoving, user), 'zset')
    end
  end
  if mod.events and (all or mod.log) then
    expect(mod.events, 'stream')
  end
end

-- EVENT_VOTES are the votes 1, -1 and 0 as an event's from and to hold
-- them: looked up, as tostring of a number formats it as a float, which
-- cost a vote with events about 8,000 of its ~110,000 instructions
-- (BENCHMARKS.md, "Moderation").
local EVENT_VOTES = {[1] = '1', [-1] = '-1', [0] = '0'}

-- addEvent adds one entry to the stream at key, of length n; at is ms.
-- It returns the reply of redis.pcall, as logVote does.
local function addEvent(key, n, kind, user, target, comment, from, to, atMs)
  return redis.pcall('XADD', key, 'MAXLEN', '~', n, '*', 'kind', kind, 'user', user, 'target', target,
    'comment', comment and '1' or '0', 'from', EVENT_VOTES[from], 'to', EVENT_VOTES[to], 'at', atMs)
end
