-- base.lua: what every helper and script stands on: the reply statuses,
-- the orderings' names, members and ids, numbers for replies, the type
-- check of a key, and the check of the store's identity.
--
-- lua/lib/ holds the helpers the scripts share, one concern a file. They
-- are read as one text in this order (scripts.go libFiles), and a file
-- uses only the files before it:
--   base, record, cache, pages, rules, moderation, ballot, tree, removal,
--   purge, walk, reversal
-- (no file here shares a name with a script of lua/).
-- scripts.go puts them in front of each script: all of them in the
-- Functions library, and the ones a script uses in its EVALSHA form
-- (functions.go). A script whose header says "Uses lua/lib" calls them.
-- Needs: nothing.
--
-- Replies: every script replies {status, ...}; the statuses are those of
-- reply.go. Failures are raised as strings, error(msg, 0): miniredis
-- would print an error_reply table as "table: 0x...", losing the message.
local OK, NOT_FOUND, CLOSED, DUPLICATE, BUILDING, LIMIT, CORRUPT = 0, 1, 2, 3, 4, 5, 6

-- The orderings an article can be in besides score and time (the
-- optional orders), every ordering, and the sizes in seconds of the
-- TopSince buckets.
local ORDERS = {'top', 'hot', 'best', 'controversial'}
local ALL = {'score', 'time', 'top', 'hot', 'best', 'controversial'}
local BUCKETS = {600, 86400, 2592000} -- 10 minutes, a day, 30 days; each divides the next

-- member returns the sorted-set member of an article id: its digit count
-- as a letter, then the id, so that members sort by id as numbers ("a9" <
-- "b10"); idof reverses it.
local function member(id) return string.char(96 + #id) .. id end
local function idof(m) return string.sub(m, 2) end

-- join concatenates the strings of list, at most 240 at a time: gopher-lua
-- (miniredis) holds every piece of a table.concat on its registry, which
-- overflows at a few thousand.
local function join(list)
  if #list <= 240 then
    return table.concat(list)
  end
  local parts = {}
  for i = 1, #list, 240 do
    parts[#parts + 1] = table.concat(list, '', i, math.min(i + 239, #list))
  end
  return join(parts)
end

-- mgetAt returns the keys prefix .. id(e) of the elements e of list (at
-- least one) and the strings there, read with one MGET.
local function mgetAt(prefix, list, id)
  local keys = {}
  for i, e in ipairs(list) do
    keys[i] = prefix .. id(e)
  end
  return keys, redis.call('MGET', unpack(keys))
end

-- num formats a score for ZADD and for the reply without losing precision:
-- with %.17g, or with %d for whole numbers (what a whole vote weight
-- makes), which prints them the same and faster.
local function num(x)
  if x == math.floor(x) and x > -1e15 and x < 1e15 then
    return string.format('%d', x)
  end
  return string.format('%.17g', x)
end

-- must returns r, a reply of redis.pcall, or raises it where it is an
-- error: for a write whose key the script checked (expect), where a
-- first write unchecked takes the reply apart.
local function must(r)
  if type(r) == 'table' and r.err then
    return error(r.err, 0)
  end
  return r
end

-- expect fails the script, before it writes anything, when key holds a
-- value of another type than want (a foreign value at one of the store's
-- keys), so no script leaves half its writes behind; else it reports
-- whether key holds a value.
local function expect(key, want)
  local t = redis.call('TYPE', key)
  t = t.ok or t
  if t ~= 'none' and t ~= want then
    return error('voting: key ' .. key .. ' holds a ' .. t .. ', not a ' .. want, 0)
  end
  return t ~= 'none'
end

-- identity checks the store's record before a script's own code runs
-- (identity.go; docs/LAYOUT.md, "The store's identity"). Every script is sent
-- with the fence last in KEYS, whose name is the record's key, a colon
-- and this store's identity, "<layout>[ <option>...]" (keys.go fence),
-- so the check costs the script no argument. mode is 'w' for a script
-- that writes, 'r' for a read, 'n' for none (Drop). A read passes where
-- the recorded layout is this store's, whatever the options; a write
-- only where the record is this store's identity. An empty store (no
-- record, no id counter) passes, and identity reports it unrecorded:
-- Post records it with its first write. A store with data but no record
-- was written before layouts were recorded. A refusal is raised before
-- anything is written: "voting: incompatible store: <recorded> | <this
-- store's> |", which identity.go reads.
-- It returns the record's key, this store's identity, and whether the
-- store is unrecorded and empty.
-- fences holds the parts of each fence the scripts have met, {record's
-- key, identity}, parsed once per fence where the scripts run as a
-- library, which keeps its locals between calls (a pattern match costs a
-- vote more than the record's GET); fenceOf parses one. The prefix has
-- no brace, so the key is what runs to the first colon after the hash
-- tag's. Every script starts with the check (openStore, below): its
-- fast path, the record equal to this store's identity, is one table
-- index and one GET. A vote checks later
-- (vote's store and want), where it knows it changes something: a vote
-- that changes nothing, a click on the arrow already lit, skips the GET.
local fences = {}

-- storeMoving is set, for the call, by the identity check of a store
-- whose comments of layout 4 Reconfigure is moving (identity), which
-- records MOVING after the identity; its calls about comments refuse
-- with MOVING_ERROR (identity.go movingPrefix).
local storeMoving = false
local MOVING = ' moving'
local MOVING_ERROR = 'voting: comments moving: Reconfigure has not moved every comment of layout 4 yet'

-- storeLogsMoving is the record's key, for the call, where the identity
-- check found a store whose vote logs of layout 6 Reconfigure is moving
-- into journals (reconfigure.lua, phase 'movelogs'), which records
-- LOGS_MOVING after the identity (and after MOVING, where both are on);
-- else false. The calls about the logs (mode 'rl', 'wl': VotesBy,
-- ReverseVotes) refuse with LOGS_MOVING_ERROR (identity.go
-- logsMovingPrefix); a vote learns it here and keeps a log not moved yet
-- the way layout 6 did (lib/moderation.lua logVote). The error's words
-- name no helper that MOVING_ERROR's do not: a script carries every
-- helper its text names (scripts.go trimLib), 'vote' the whole ballot.
local storeLogsMoving = false
local LOGS_MOVING = ' logs moving'
local LOGS_MOVING_ERROR = 'voting: logs moving: Reconfigure has not moved every log of layout 6 yet'

-- unmarked returns head, the first line of a record, less the marks of
-- the migrations under way that follow the identity (the logs' last),
-- and whether each is on: the comments' (MOVING), the logs'
-- (LOGS_MOVING).
local function unmarked(head)
  local logs = string.sub(head, -#LOGS_MOVING) == LOGS_MOVING
  if logs then
    head = string.sub(head, 1, -#LOGS_MOVING - 1)
  end
  local comments = string.sub(head, -#MOVING) == MOVING
  if comments then
    head = string.sub(head, 1, -#MOVING - 1)
  end
  return head, comments, logs
end

-- A fence's third part is what the store keeps for the moderators, as
-- its identity names it (identity.go; the words are layout.OptionVoteLog's
-- and layout.OptionEvents'), or false for none: log, the prefix of the
-- vote logs (WithVoteLog), events, the stream's key, and maxLen, its
-- length (WithVoteEvents). The keys are the record's siblings in its
-- hash tag (keys.go; TestModerationKeys). Read in the fence, they cost a
-- vote no argument: three cost it ~6,500 of its ~110,000 instructions
-- (lib/moderation.lua).
-- An option's word follows the layout's number and a space.
local function moderationIn(record, identity)
  local words = identity .. ' '
  local log = string.find(words, ' votelog ', 1, true)
  local n = string.match(words, ' events=(%d+) ')
  if not (log or n) then
    return false
  end
  local tag = string.sub(record, 1, -6)
  return {log = log and tag .. 'ulog:' or nil, events = n and tag .. 'events' or nil, maxLen = n}
end

local function fenceOf(fence)
  local f = {string.match(fence, '^({[^}]*}:[^:]*):(.*)$')}
  f[3] = f[2] and moderationIn(f[1], f[2])
  fences[fence] = f
  return f
end

-- identity is the check's slow path, for a record that is not this
-- store's identity (want) at key: it returns whether the store is empty
-- and unrecorded, or raises the refusal.
local function identity(key, want, mode)
  local got = redis.pcall('GET', key)
  if got == want then
    return false
  end
  -- moderation: the record of a store with suspensions carries the
  -- latest end of them after a newline (lib/moderation.lua).
  if type(got) == 'string' and string.sub(got, 1, #want + 1) == want .. '\n' then
    return false
  end
  -- The one way into a migration: while Reconfigure moves the comments
  -- of a store of layout 4 (reconfigure.lua, phase 'comments'), the
  -- record is this identity and ' moving'; while it moves the vote logs
  -- of layout 6 (phase 'movelogs'), this identity and ' logs moving'
  -- (after ' moving' where both are on). The calls about comments (mode
  -- 'wc', 'rc') refuse during the first, those about the logs ('wl',
  -- 'rl') during the second; the others pass, and learn it (storeMoving,
  -- storeLogsMoving) for the comments they would reach (Delete's,
  -- Prune's) and the logs they write (a vote's).
  local head = type(got) == 'string' and string.match(got, '^[^\n]*')
  local id, comments, logs
  if head then
    id, comments, logs = unmarked(head)
  end
  if id == want and (comments or logs) then
    if comments and string.sub(mode, 2, 2) == 'c' then
      return error(MOVING_ERROR, 0)
    elseif logs and string.sub(mode, 2, 2) == 'l' then
      return error(LOGS_MOVING_ERROR, 0)
    end
    storeMoving, storeLogsMoving = comments, logs and key
    return false
  end
  if type(got) == 'table' then
    expect(key, 'string')
    return error(got.err, 0)
  end
  if not got then
    -- The id counter is the record's sibling in the same hash tag
    -- (keys.go), read before any write. A store has data when it holds
    -- an id; a foreign value there is left to the script's own checks.
    local t = redis.call('TYPE', string.sub(key, 1, -6) .. 'seq')
    if (t.ok or t) ~= 'string' then
      return true
    end
    got = ''
  elseif string.sub(mode, 1, 1) == 'r' and string.match(got, '^%d+') == string.match(want, '^%d+') then
    -- A read of other options: the logs a move has yet to fill refuse
    -- it as they refuse this identity's.
    if logs and string.sub(mode, 2, 2) == 'l' then
      return error(LOGS_MOVING_ERROR, 0)
    end
    return false
  end
  return error('voting: incompatible store: ' .. string.match(got, '^[^\n]*') .. ' | ' .. want .. ' |', 0)
end

-- checkStore is the check: it passes where the record at key is this
-- store's identity (want), with one GET, and takes the slow path
-- (identity) where it is not; it returns whether the store is empty and
-- unrecorded.
local function checkStore(key, want, mode)
  if redis.pcall('GET', key) ~= want then
    return identity(key, want, mode)
  end
  return false
end

-- openStore opens the store for a script whose keys are keys (KEYS, the
-- fence last), as the first line of every script: it returns the
-- record's key, this store's identity and whether the store is empty and
-- unrecorded, having checked the record in mode (scripts.go scriptTable
-- names each script's): 'w' for a write, 'r' for a read, 'wc' and 'rc'
-- for those about comments, which refuse while Reconfigure moves the
-- comments of layout 4 (identity), 'wl' and 'rl' for those about the
-- vote logs, which refuse while it moves the logs of layout 6, 'n' for none (a vote, which checks
-- where it knows it writes; Drop, Reconfigure and the restores of
-- votectl, which need no identity or record their own). Its fourth
-- value is what the store keeps for the moderators (moderationIn), or
-- false.
local function openStore(keys, mode)
  storeMoving, storeLogsMoving = false, false
  local f = fences[keys[#keys]] or fenceOf(keys[#keys])
  if mode == 'n' then
    return f[1], f[2], false, f[3]
  end
  return f[1], f[2], checkStore(f[1], f[2], mode), f[3]
end
