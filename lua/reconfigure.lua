-- reconfigure.lua: one step of Reconfigure (identity.go). Uses lua/lib.
-- Its identity check is off (lib/base.lua identity, mode 'n'): it does its own.
local storeKey, storeIdentity = openStore(KEYS, 'n')
local seqKey, timeKey, backfillKey = KEYS[1], KEYS[2], KEYS[3]
local phase, articlePrefix, linkPrefix, step = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local cseqKey, movingKey = ARGV[5], ARGV[6]
local k = {comment = ARGV[7], body = ARGV[8], kids = ARGV[9]}
local rulesKey, want = ARGV[10], ARGV[11]
-- phase 'record' records this store's identity (storeIdentity) in place of
-- the recorded one, which must be of the same layout, or of layout 3, 4,
-- 5 or 6, which it so migrates: one of layout 3 has no comments, and
-- nothing else moves; one of layout 4 with comments gets movingKey, '0',
-- which phase 'comments' moves them under; one of layout 6 that keeps
-- the vote log, where this identity keeps it too, gets the record's
-- mark LOGS_MOVING, which phase 'movelogs' moves the logs under, and
-- which a record of this layout so marked keeps. It records the rules record
-- of the rules on (want, this process's words, lib/rules.lua
-- mergeRules): each rule with its numbers in the record, or in the
-- recorded identity where it is of layout 3 to 5, whose words carried
-- them, else this process's; none where no rule is on. A store with data and no
-- record is adopted where its newest article is a record of this
-- layout. Where the new identity has uniquelinks and the recorded one
-- had not, it starts the backfill of the links: backfillKey, '0', and
-- where the new one has not, it ends one. Reply: {OK, recorded ('' for
-- none; its marks left off), backfill ('' for none), moving (1 while
-- comments are to move), 0, logs (1 while vote logs are to move)}; or,
-- where the new identity keeps the vote log and the recorded one does
-- not, {OK, '', '', 0, 1, 0} and nothing recorded, unless ARGV[12] says
-- the logs were dropped (phase 'logs').
-- ARGV[12]: 'keep', or 'dropped' once phase 'logs' removed the logs.
-- phase 'comments' moves up to step comments of layout 4, by id, from
-- the cursor at movingKey (the last id done), into this layout: each
-- record, a hash, and its body, a string of its own, become one string
-- (lib/tree.lua CREC), and its places in its parent's best and top
-- orderings move into their bands of the parent's replies. Reply: {OK,
-- done}, done 1 when every comment moved, and movingKey is gone.
-- phase 'links' indexes the links of up to step articles, oldest first,
-- from the cursor at backfillKey, "<post time> <member>" of the last
-- article done: a live article's link key is set to it where no live
-- article has the link, and kept for good (PERSIST) where one has.
-- Reply: {OK, done}, done 1 when the backfill is over.
-- phase 'movelogs' moves the vote logs of layout 6 (sorted sets, of
-- members "a<id>" and "c<cid>" at twice the vote's time plus 1 for an
-- upvote: layout.LogEntry Member and Score) into the journals of this
-- layout (lib/moderation.lua), about step entries a step: from the keys
-- of a SCAN from the cursor ARGV[13] over the pattern of their keys,
-- ARGV[14], it takes each log's oldest entries, appends their lines to
-- the user's journal in that order, points the voter record's value of
-- each at its line where the record still holds that vote plain
-- (ARGV[15], ARGV[16]: the prefixes of articles' and comments' voter
-- records), and removes them from the log, which goes once empty. A
-- step that ends with an entry of the SCAN's keys left replies the
-- cursor it started from, so that the next SCAN finds them again (the
-- moved are gone); the last takes the record's mark off. Only while
-- the record carries the mark: without it the move is over. Reply:
-- {OK, the next cursor, done}, done 1 at the end.
-- phase 'logs' removes the vote logs (WithVoteLog) among about step
-- keys of a SCAN from the cursor ARGV[13] over the pattern of their
-- keys, ARGV[14]; only while the recorded identity keeps no log, so that
-- no process writes one (reconfigure.go dropVoteLogs). Reply: {OK, the
-- next cursor, '0' at the end}.
expect(storeKey, 'string')
expect(backfillKey, 'string')
-- keepsLog reports whether the identity in id, a record's value (nil
-- for none) or this store's identity, keeps the vote log (lib/base.lua
-- moderationIn).
local function keepsLog(id)
  local mod = id and moderationIn(storeKey, string.match(id, '^[^\n]*'))
  return mod and mod.log ~= nil
end
if phase == 'logs' then
  if keepsLog(redis.call('GET', storeKey)) then
    return error('voting: vote logs: the recorded identity keeps them', 0)
  end
  local r = redis.call('SCAN', ARGV[13], 'MATCH', ARGV[14], 'COUNT', step)
  if #r[2] > 0 then
    redis.call('UNLINK', unpack(r[2]))
  end
  return {OK, r[1]}
end
if phase == 'record' then
  local got = redis.call('GET', storeKey)
  local layout = string.match(storeIdentity, '^%d+')
  if not got then
    expect(seqKey, 'string')
    expect(timeKey, 'zset')
    if redis.call('EXISTS', seqKey) == 1 then
      -- Data without a record: adopted only where its newest article is
      -- a record of this layout.
      local newest = redis.call('ZREVRANGE', timeKey, 0, 0)[1]
      local t = newest and redis.call('TYPE', articlePrefix .. idof(newest))
      t = t and (t.ok or t)
      local s = t == 'string' and redis.call('GET', articlePrefix .. idof(newest))
      if not s or not string.match(s, RECORD) then
        return error('voting: incompatible store:  | ' .. storeIdentity .. ' |', 0)
      end
    end
  elseif not ({[layout] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1})[string.match(got, '^%d+')] then
    return error('voting: incompatible store: ' .. string.match(got, '^[^\n]*') .. ' | ' .. storeIdentity .. ' |', 0)
  end
  -- The vote log turned on (ARGV[12] 'keep'): the logs kept while it
  -- was on before go first (phase 'logs', while no process writes one),
  -- and this call records nothing.
  if ARGV[12] == 'keep' and got and keepsLog(storeIdentity) and not keepsLog(got) then
    return {OK, '', '', 0, 1, 0}
  end
  expect(movingKey, 'string')
  expect(rulesKey, 'string')
  local rules, lacking
  if want ~= '' then
    rules, lacking = mergeRules(want, (got or '') .. ' ' .. (redis.call('GET', rulesKey) or ''))
    if lacking then
      return error('voting: rules: no numbers for ' .. lacking .. ' to record: give its option', 0)
    end
  end
  if got and string.match(got, '^%d+') == '4' then
    expect(cseqKey, 'string')
    if redis.call('EXISTS', cseqKey) == 1 then
      redis.call('SET', movingKey, '0')
    end
  end
  local function unique(s) return s and string.find(' ' .. s .. ' ', ' uniquelinks ', 1, true) ~= nil end
  if unique(storeIdentity) and not unique(got) then
    redis.call('SET', backfillKey, '0')
  elseif not unique(storeIdentity) then
    redis.call('DEL', backfillKey)
  end
  -- While comments of layout 4 are to move (movingKey), the record says
  -- so after the identity (MOVING), and while vote logs of layout 6 are,
  -- after that (LOGS_MOVING): the one way the calls learn it
  -- (lib/base.lua identity). The logs move where the store kept them in
  -- layout 6, or was moving them, and this identity keeps them (turned
  -- off, reconfigure.go removes them). moderation: the latest end of the
  -- suspensions, which the record carries after a newline
  -- (lib/moderation.lua), stays.
  local was, logsMarked = '', false
  if got then
    local _
    was, _, logsMarked = unmarked(string.match(got, '^[^\n]*'))
  end
  local logsMove = keepsLog(storeIdentity) and keepsLog(got) and (string.match(was, '^%d+') == '6' or logsMarked)
  local mv = redis.call('EXISTS', movingKey) == 1 and MOVING or ''
  redis.call('SET', storeKey, storeIdentity .. mv .. (logsMove and LOGS_MOVING or '') ..
    (got and string.match(got, '\n.*$') or ''))
  if rules then
    redis.call('SET', rulesKey, rules)
  else
    redis.call('DEL', rulesKey)
  end
  return {OK, was, redis.call('GET', backfillKey) or '', redis.call('EXISTS', movingKey), 0, logsMove and 1 or 0}
end

-- phase 'links', 'comments' and 'movelogs': only for the identity
-- recorded, while the comments or the logs move or not.
local recorded = redis.call('GET', storeKey)
local got = recorded and string.match(recorded, '^[^\n]*') -- less the suspensions' end (lib/moderation.lua)
local id, commentsMarked, logsMarked
if got then
  id, commentsMarked, logsMarked = unmarked(got)
end
if id ~= storeIdentity then
  return error('voting: incompatible store: ' .. (got or '') .. ' | ' .. storeIdentity .. ' |', 0)
end

-- unmark sets the record to storeIdentity with the marks of the moves
-- still under way (comments, logs), and the rest of the record after
-- its first line as it was.
local function unmark(comments, logs)
  redis.call('SET', storeKey, storeIdentity .. (comments and MOVING or '') .. (logs and LOGS_MOVING or '') ..
    string.sub(recorded, #got + 1))
end

if phase == 'movelogs' then
  if not logsMarked then
    return {OK, '0', 1}
  end
  local cursor, pattern, votedPrefix, cvotedPrefix = ARGV[13], ARGV[14], ARGV[15], ARGV[16]
  -- The logs of layout 6 (lib/moderation.lua log6Key) and the journals,
  -- as this identity, which keeps them while the record is so marked,
  -- names them (lib/base.lua moderationIn).
  local from, to = log6Key(storeKey, ''), moderationIn(storeKey, storeIdentity).log
  local scan = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', step)
  -- A SCAN may name a key twice (while the keyspace rehashes), which
  -- the plan, read before any write, would move twice: each once.
  local logs, seen = {}, {}
  for _, key in ipairs(scan[2]) do
    if not seen[key] then
      seen[key] = true
      logs[#logs + 1] = key
    end
  end
  -- Every key written below is checked, and every value read, before
  -- the first write: plan holds each log's part to move, its journal,
  -- lines and the voter records' fields that take their offsets. work
  -- counts a log 1 and an entry 1.
  local plan, work, whole = {}, 0, true
  for _, key in ipairs(logs) do
    if work >= step then
      whole = false
      break
    end
    expect(key, 'zset')
    local user = string.sub(key, #from + 1)
    local p = {key = key, journal = to .. user, lines = {}, fields = {}}
    expect(p.journal, 'string')
    local n = step - work
    local list = redis.call('ZRANGE', key, 0, n - 1, 'WITHSCORES')
    if #list == 2 * n then
      whole = false -- the budget ran out on this log: it may hold more
    end
    work = work + 1 + #list / 2
    local size = 0 -- the bytes of the lines before this one
    for i = 1, #list, 2 do
      local item, score = list[i], tonumber(list[i + 1])
      local kind, itemID = string.match(item, '^([ac])([1-9]%d*)$')
      if not kind or not score or score ~= math.floor(score) then
        return error('voting: key ' .. key .. ' holds no vote log of layout 6: ' .. item .. ' at ' .. list[i + 1], 0)
      end
      local at, vote = fromScore6(score)
      local line = LOG_SIGNS[vote] .. item .. logTail(at) -- layout.LogEntry Line
      p.lines[#p.lines + 1] = line
      -- The voter record's field where it still holds this vote, plain
      -- (a layout 6 value, or one a vote kept so during the move), or,
      -- on a comment of the user's, holds none with the log's upvote:
      -- the poster's upvote cast again (comment_vote.lua), which this
      -- layout keeps as a field of its line.
      local votedKey, field, plain = nil, user, vote == 1 and '1' or '-1'
      local v
      if kind == 'a' then
        votedKey = votedPrefix .. itemID
        expect(votedKey, 'hash')
        v = redis.call('HGET', votedKey, field)
      else
        local c = readHead(k.comment .. itemID)
        if c then
          votedKey, field = cvotedPrefix .. c.a, itemID .. ':' .. user
          expect(votedKey, 'hash')
          local r = redis.call('HMGET', votedKey, '', field)
          v = r[2]
          if not v and vote == 1 and user == c.n and voterOpen(r[1], itemID) then
            v = plain
          end
        end
      end
      if v == plain then
        p.fields[#p.fields + 1] = {votedKey, field, plain, size}
      end
      size = size + #line
    end
    plan[#plan + 1] = p
  end
  for _, p in ipairs(plan) do
    if #p.lines > 0 then
      local text = join(p.lines)
      local base = redis.call('APPEND', p.journal, text) - #text
      for _, f in ipairs(p.fields) do
        redis.call('HSET', f[1], f[2], loggedValue(f[3], base + f[4]))
      end
      redis.call('ZREMRANGEBYRANK', p.key, 0, #p.lines - 1)
    end
  end
  if not whole then
    return {OK, cursor, 0}
  end
  if scan[1] ~= '0' then
    return {OK, scan[1], 0}
  end
  -- The move is over: the record is the identity again, but for a move
  -- of comments still under way.
  unmark(commentsMarked, false)
  return {OK, '0', 1}
end

if phase == 'comments' then
  local cursor = redis.call('GET', movingKey)
  if not cursor then
    if commentsMarked then -- the cursor gone by hand
      unmark(false, logsMarked)
    end
    return {OK, 1}
  end
  expect(cseqKey, 'string')
  local last = tonumber(redis.call('GET', cseqKey) or '0')
  -- A record of layout 4: a hash of u, d (the counts), m ("<aid>
  -- <parent, 0 for none> <posted> <closes> <depth> <orders> <weight>", as
  -- CREC's meta), n (the poster), r (live descendants), x ('1' once
  -- deleted), f, l, nx, pv (the links, absent for none).
  local META4 = '^(%d+) (%d+) (%S+) (%S+) (%d+) (%S*) (%S*)$'
  -- The work of a step: a comment moved costs 8 of 8 * step, an id
  -- without one (removed, or moved already) 1.
  local plan, n, work = {}, tonumber(cursor), 0
  while n < last and work < 8 * step do
    n = n + 1
    local cid = tostring(n)
    local key = k.comment .. cid
    local t = redis.call('TYPE', key)
    t = t.ok or t
    work = work + 1
    if t ~= 'none' and t ~= 'string' and t ~= 'hash' then
      return error('voting: key ' .. key .. ' holds a ' .. t .. ', not a comment', 0)
    end
    if t == 'hash' then
      work = work + 7
      local v = redis.call('HMGET', key, 'u', 'd', 'm', 'n', 'r', 'x', 'f', 'l', 'nx', 'pv')
      local a, p, posted, closes, h, o, w = string.match(v[3] or '', META4)
      if not a then
        return error('voting: key ' .. key .. ' holds no comment of layout 4', 0)
      end
      local c = {u = v[1] or 0, d = v[2] or 0, n = v[4] or '', r = v[5] or 0, x = v[6] == '1' and '1' or nil,
        f = v[7] or nil, l = v[8] or nil, nx = v[9] or nil, pv = v[10] or nil,
        a = a, p = p ~= '0' and p or nil, t = posted, c = closes, h = h, o = o ~= '' and o or nil, w = w ~= '' and w or nil}
      expect(k.body .. cid, 'string')
      c.body = c.x and '' or (redis.call('GET', k.body .. cid) or '')
      c.keys, c.ords = kidsKeys(k, c)
      expect(c.keys[1], 'zset')
      local old = k.kids .. 'best:' .. parentName(c)
      expect(old, 'zset')
      expect(k.kids .. 'top:' .. parentName(c), 'zset')
      plan[#plan + 1] = {cid, c}
    end
  end
  for _, e in ipairs(plan) do
    local cid, c = e[1], e[2]
    local up, down = tonumber(c.u), tonumber(c.d)
    redis.call('DEL', k.comment .. cid, k.body .. cid)
    redis.call('SET', k.comment .. cid, commentRecord(c, c.body))
    placeAt(c.keys, c.ords, 1, cid, tonumber(c.t), tonumber(c.w) or 0, up, down)
    local name = parentName(c)
    redis.call('ZREM', k.kids .. 'best:' .. name, member(cid))
    redis.call('ZREM', k.kids .. 'top:' .. name, member(cid))
  end
  if n >= last then
    redis.call('DEL', movingKey)
    -- The move is over: the record is the identity again, but for a
    -- move of the logs still under way.
    unmark(false, logsMarked)
    return {OK, 1}
  end
  redis.call('SET', movingKey, tostring(n))
  return {OK, 0}
end

local cursor = redis.call('GET', backfillKey)
if not cursor then
  return {OK, 1}
end
expect(timeKey, 'zset')
local start = 0
if cursor ~= '0' then
  local posted, m = string.match(cursor, '^(%S+) (%S+)$')
  local rank = redis.call('ZRANK', timeKey, m)
  if rank then
    start = rank + 1
  else
    -- Deleted meanwhile: from the first article posted at its time,
    -- again, which is harmless.
    start = redis.call('ZCOUNT', timeKey, '-inf', '(' .. posted)
  end
end
local list = redis.call('ZRANGE', timeKey, start, start + step - 1, 'WITHSCORES')
-- Every key is checked before the first write.
local todo = {}
for i = 1, #list, 2 do
  local id = idof(list[i])
  local a = record(articlePrefix .. id)
  if a and a.link ~= '' then
    local key = linkPrefix .. a.link
    expect(key, 'string')
    todo[#todo + 1] = {key, id}
  end
end
for _, t in ipairs(todo) do
  local other = redis.call('GET', t[1])
  if other and other ~= t[2] and redis.call('EXISTS', articlePrefix .. other) == 1 then
    redis.call('PERSIST', t[1])
  else
    redis.call('SET', t[1], t[2])
  end
end
if #list < 2 * step then
  redis.call('DEL', backfillKey)
  return {OK, 1}
end
redis.call('SET', backfillKey, list[#list] .. ' ' .. list[#list - 1])
return {OK, 0}
