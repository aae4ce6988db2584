-- reconfigure.lua: one step of Reconfigure (identity.go). Uses lua/lib.
-- Its identity check is off (lib/base.lua identity, mode 'n'): it does its own.
local storeKey, storeIdentity = openStore(KEYS, 'n')
local seqKey, timeKey, backfillKey = KEYS[1], KEYS[2], KEYS[3]
local phase, articlePrefix, linkPrefix, step = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local cseqKey, movingKey = ARGV[5], ARGV[6]
local k = {comment = ARGV[7], body = ARGV[8], kids = ARGV[9]}
local rulesKey, want = ARGV[10], ARGV[11]
-- phase 'record' records this store's identity (storeIdentity) in place of
-- the recorded one, which must be of the same layout, or of layout 3, 4
-- or 5, which it so migrates: one of layout 3 has no comments, and
-- nothing else moves; one of layout 4 with comments gets movingKey, '0',
-- which phase 'comments' moves them under. It records the rules record
-- of the rules on (want, this process's words, lib/rules.lua
-- mergeRules): each rule with its numbers in the record, or in the
-- recorded identity where it is of layout 3 to 5, whose words carried
-- them, else this process's; none where no rule is on. A store with data and no
-- record is adopted where its newest article is a record of this
-- layout. Where the new identity has uniquelinks and the recorded one
-- had not, it starts the backfill of the links: backfillKey, '0', and
-- where the new one has not, it ends one. Reply: {OK, recorded ('' for
-- none), backfill ('' for none), moving (1 while comments are to move),
-- 0}; or, where the new identity keeps the vote log and the recorded
-- one does not, {OK, '', '', 0, 1} and nothing recorded, unless ARGV[12]
-- says the logs were dropped (phase 'logs').
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
  elseif not ({[layout] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1})[string.match(got, '^%d+')] then
    return error('voting: incompatible store: ' .. string.match(got, '^[^\n]*') .. ' | ' .. storeIdentity .. ' |', 0)
  end
  -- The vote log turned on (ARGV[12] 'keep'): the logs kept while it
  -- was on before go first (phase 'logs', while no process writes one),
  -- and this call records nothing.
  if ARGV[12] == 'keep' and got and keepsLog(storeIdentity) and not keepsLog(got) then
    return {OK, '', '', 0, 1}
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
  -- so after the identity (MOVING), the one way the calls learn it
  -- (lib/base.lua identity); moderation: the latest end of the
  -- suspensions, which the record carries after a newline
  -- (lib/moderation.lua), stays.
  local mv = redis.call('EXISTS', movingKey) == 1 and MOVING or ''
  redis.call('SET', storeKey, storeIdentity .. mv .. (got and string.match(got, '\n.*$') or ''))
  if rules then
    redis.call('SET', rulesKey, rules)
  else
    redis.call('DEL', rulesKey)
  end
  local was = got and string.match(got, '^[^\n]*') or ''
  if string.sub(was, -#MOVING) == MOVING then
    was = string.sub(was, 1, -#MOVING - 1)
  end
  return {OK, was, redis.call('GET', backfillKey) or '', redis.call('EXISTS', movingKey), 0}
end

-- phase 'links' and 'comments': only for the identity recorded, while
-- the comments move or not.
local recorded = redis.call('GET', storeKey)
local got = recorded and string.match(recorded, '^[^\n]*') -- less the suspensions' end (lib/moderation.lua)
if got ~= storeIdentity and got ~= storeIdentity .. MOVING then
  return error('voting: incompatible store: ' .. (got or '') .. ' | ' .. storeIdentity .. ' |', 0)
end

if phase == 'comments' then
  local cursor = redis.call('GET', movingKey)
  if not cursor then
    if got ~= storeIdentity then -- the cursor gone by hand
      redis.call('SET', storeKey, storeIdentity .. string.sub(recorded, #got + 1))
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
    -- The move is over: the record is the identity again.
    redis.call('SET', storeKey, storeIdentity .. string.sub(recorded, #got + 1))
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
