-- ballot.lua: the vote itself, which vote.lua and vote_batch.lua apply.
-- Needs: base.lua (the statuses, member, num, expect, checkStore),
-- record.lua (COUNTS, VOTE_META, record, badValue, missing, value, eachIndex,
-- expectIndexes), cache.lua (eachCache, cacheVote), pages.lua (votePage,
-- pageVote), rules.lua (karmaRules), moderation.lua (logVote, voterCheck,
-- suspensionOf, SHADOW, told).

-- NONE is an empty list that is never written to: the groups of a vote
-- on an article in none.
local NONE = {}

-- VOTES are the votes as the scripts' arguments and the voter records
-- write them: up, down, and '0' for none. A vote taken back leaves '0'
-- in its field, which is never deleted while its record lives: Redis
-- shrinks a hash's table when an HDEL leaves it a tenth full, and an
-- HSCAN over a table that shrank between its calls may return a field
-- twice, where Store.Voters promises each voter once a walk. A cancelled
-- vote so keeps a small field until its record expires.
local VOTES = {['1'] = 1, ['-1'] = -1, ['0'] = 0}

-- priorVote reads v, a voter record's value for the voter (nil for
-- none), as the vote that counts (prev), for a shadow vote (moderation:
-- lib/moderation.lua SHADOW) the vote the voter sees (shown), and for a
-- logged vote the offset of its line in the voter's vote log (off,
-- loggedVote); nil where v is no vote the record may hold. implied is
-- the vote of a voter without a value: 1 for a comment's poster (their
-- own upvote, which '0' cancels), else 0. '0' is none for every voter.
local function priorVote(v, implied)
  if not v then
    return implied
  end
  local prev = VOTES[v]
  if prev == nil then
    local shown = SHADOW[v]
    if shown then
      return 0, shown
    end
    local vote, off = loggedVote(v) -- nil for no vote
    return vote, nil, off
  end
  return prev
end

-- shadowVote is a vote new (vs as sent) of a voter under Shadow
-- (moderation): it returns the vote the voter sees, what the voter
-- record keeps ('1s', '-1s', or '0' for none) and the vote that counts,
-- none.
local function shadowVote(new, vs)
  return new, new ~= 0 and vs .. 's' or '0', 0
end

-- moderate applies the voter's suspension, mode and the ms left of it
-- (voterCheck; nil for none), to a vote new (vs as sent) from prev, the
-- vote that counts, which the voter sees as shown where it is a shadow
-- vote. It returns {NOT_ALLOWED, ms} for Refuse; else nil, the vote that
-- counts, the vote the voter sees where that is none (Shadow), what the
-- voter record's field keeps, and true where the vote is done: a shadow
-- vote where none counted before, kept at field of the voter record
-- votedKey ('0' where it is none, as VOTES says why).
local function moderate(mode, left, prev, new, vs, votedKey, field)
  if not mode then
    return nil, new, nil, vs -- a shadow vote before never counted: the vote counts from none
  end
  if mode == 'r' then
    return {NOT_ALLOWED, num(left)}
  end
  local shown, stored = shadowVote(new, vs)
  if prev ~= 0 then
    return nil, 0, shown, stored -- the vote that counted is taken back
  end
  redis.call('HSET', votedKey, field, stored)
  return nil, 0, shown, stored, true
end

-- fill splits k.more, the key prefixes that only a vote on an article
-- in groups or optional orders needs (keys.go votePrefixes), into
-- k.groups, k.by, k.cache and k.bucket.
local function fill(k)
  if not k.by then
    k.groups, k.by, k.cache, k.bucket = string.match(k.more, '^([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)$')
  end
end

-- notBefore reports whether now is at or after t, two times in seconds
-- as the store sends them and num writes them: compared as strings where
-- both are whole numbers of at most 15 digits (as num writes them below
-- 1e15), which costs a vote less than converting them to numbers.
local function notBefore(now, t)
  if #now > 15 or #t > 15 or string.byte(now) == 45 or string.byte(t) == 45 then -- 45: '-'
    return tonumber(now) >= tonumber(t)
  end
  if #now ~= #t then
    return #now > #t
  end
  return now >= t
end

-- vote applies one vote and returns its reply:
--   {OK, previous, score, up, down} | {NOT_FOUND} | {CLOSED} | {CORRUPT}
--   | {NOT_ALLOWED} | {RATE_LIMITED, ms} (k.rules, karmaRules)
-- CORRUPT: the user's field in the voter record holds no value a vote
-- writes (written by hand); nothing is changed.
-- k holds the score ordering's key (score) and the key prefixes article,
-- voted and more (fill); vs is the vote, '1', '-1' or '0', and now the
-- store's clock in Unix seconds, both as the script's arguments hold
-- them. store and want, where vote.lua passes them, are the record's key
-- and this store's identity, checked (checkStore) only where the vote
-- would write, or answers closed or not found; nil where the script
-- checked them first (vote_batch.lua).
-- A vote counts only while the article's voter record exists: Post
-- creates it with a field that is never removed, and it expires when
-- voting closes on the server's clock, so a record that is gone means
-- voting is over, never "no previous vote". Voting closes too when now,
-- the caller's clock, reaches the article's close.
local function vote(k, id, user, vs, now, store, want)
  local articleKey, votedKey = k.article .. id, k.voted .. id
  -- The '' field exists exactly as long as the voter record does.
  local r = redis.call('HMGET', votedKey, '', user)
  local meta = r[1]
  if not meta then
    -- A store of another layout is incompatible, not closed.
    if store then checkStore(store, want, 'w') end
    if missing(articleKey) then
      return {NOT_FOUND}
    end
    return {CLOSED}
  end
  -- What a vote needs of the article (VOTE_META), and where the part
  -- after its counts starts (rest), which the vote copies.
  local up, down, rest, ngroups, posted, closes, weight, orders = string.match(meta, VOTE_META)
  if not orders then
    return badValue(votedKey)
  end
  if notBefore(now, closes) then
    if store then checkStore(store, want, 'w') end
    return {CLOSED}
  end
  local new = VOTES[vs]
  -- moderation: shown, a shadow vote of the user's, which counts nowhere
  local prev, shown, off = 0, nil, nil -- none: a first vote, which calls nothing
  if r[2] then
    prev, shown, off = priorVote(r[2], 0)
  end
  if prev == nil then
    return {CORRUPT}
  end
  up, down = tonumber(up), tonumber(down)
  local m = member(id)
  local was = shown or prev -- the previous vote, as the user sees it
  if new == was then
    if shown then
      local tu, td = told(up, down, shown)
      return {OK, shown, num(value('score', tonumber(posted), tonumber(weight), tu, td)), tu, td}
    end
    return {OK, prev, redis.call('ZSCORE', k.score, m), up, down}
  end
  -- The store's identity (checkStore) at store, which vote.lua defers to
  -- here, before the vote's first write; moderation: with the voter's
  -- suspension, read with it (voterCheck), or, in a batch, from the
  -- suspensions the batch found on (k.suspended).
  local mode, left
  if store then
    mode, left = voterCheck(store, want, user, now)
  elseif k.suspended then
    mode, left = suspensionOf(k.suspended, user, now)
  end
  local refused, stored, done = nil, vs, nil -- a voter neither suspended nor shadowed calls nothing
  if mode or shown then
    refused, new, shown, stored, done = moderate(mode, left, prev, new, vs, votedKey, user)
  end
  if refused then
    return refused
  elseif done then
    local tu, td = told(up, down, shown)
    return {OK, was, num(value('score', tonumber(posted), tonumber(weight), tu, td)), tu, td}
  end
  local up0, down0 = up, down
  if prev == 1 then up = up - 1 elseif prev == -1 then down = down - 1 end
  if new == 1 then up = up + 1 elseif new == -1 then down = down + 1 end
  if up > MAX_COUNT or down > MAX_COUNT then
    return error('voting: article ' .. id .. ' has as many votes as its record holds', 0)
  end
  if orders ~= '' or ngroups ~= '0' then
    fill(k)
  end
  -- Every key written below is the voter record, read above, the record
  -- and the score ordering, whose writes come first (below), then the
  -- first of the moderators' keys, whose failure puts them back, or
  -- checked here; the groups are read before the first write too. A
  -- store with pages or rules writes before them, so it checks them here.
  local pn, wn -- posted and weight as numbers, for the optional orders
  if orders ~= '' then
    pn, wn = tonumber(posted), tonumber(weight)
    expectIndexes(k, orders, pn)
  end
  if k.upvoted or k.rules then
    if not expect(articleKey, 'string') then
      return {NOT_FOUND}
    end
    expect(k.score, 'zset')
  end
  local mod = k.mod -- moderation: the vote log, the events (lib/moderation.lua)
  if mod and (mod.events or k.upvoted or k.rules) then
    expectModerated(mod, user, k.upvoted or k.rules)
  end

  local groups = NONE
  if ngroups ~= '0' then -- skips a call for the many articles in no group
    groups = redis.call('SMEMBERS', k.groups .. id)
  end
  local page = k.upvoted and votePage(k, user, prev, new) -- WithUserPages only
  if k.rules then -- karma and the vote rules, for a store that has them
    local refused = karmaRules(k, k.rules.karma and record(articleKey).poster, user, prev, new)
    if refused then
      return refused
    end
  end
  if page then
    pageVote(page, m, new, now)
  end

  -- The first writes: the record's counts, in place, then the score
  -- ordering. A foreign value at the record's key fails the vote before
  -- it writes anything, no record there (its article gone, its voter
  -- record left; both by hand) finds the article gone, and a foreign
  -- value at the score ordering fails it after the counts are put back.
  local counts = string.format(COUNTS, up, down)
  local n = redis.pcall('SETRANGE', articleKey, 0, counts)
  if n == 2 * COUNT_DIGITS + 1 then -- SETRANGE made the record: there was none
    redis.call('DEL', articleKey)
    return {NOT_FOUND}
  elseif type(n) ~= 'number' then
    expect(articleKey, 'string')
    return error(n.err, 0)
  end
  -- Values are recomputed, never incremented, so they never drift from
  -- their formulas, whatever the weight.
  local score = num(value('score', tonumber(posted), tonumber(weight), up, down))
  local z = redis.pcall('ZADD', k.score, score, m)
  if type(z) ~= 'number' then
    redis.call('SETRANGE', articleKey, 0, string.format(COUNTS, up0, down0))
    expect(k.score, 'zset')
    return error(z.err, 0)
  end
  -- moderation: the first of the vote log and the events is written
  -- next, unchecked where nothing was written before the counts
  -- (expectModerated): a foreign value there fails the vote after the
  -- counts and the score are put back. A check would cost a vote ~6,000
  -- instructions (BENCHMARKS.md, "Moderation"). A vote that counts as
  -- none before and after (a shadow vote cancelled once its suspension
  -- ended) changes no log entry and adds no event.
  if mod and prev ~= new then
    local r, at
    if mod.log then
      -- The line, sent (vote.lua) or, in a batch, of its tail (layout.LogTail).
      local line = k.logLine or new ~= 0 and LOG_SIGNS[new] .. logItem(false, id) .. k.logTail
      r, at = logVote(mod.log, user, false, id, new, prev, off, line)
      if at then
        stored = loggedValue(stored, at) -- the line's offset
      end
    else
      r = addEvent(mod.events, mod.maxLen, 'vote', user, id, false, prev, new, now .. '000')
    end
    if type(r) == 'table' and r.err then
      redis.call('SETRANGE', articleKey, 0, string.format(COUNTS, up0, down0))
      redis.call('ZADD', k.score, num(value('score', tonumber(posted), tonumber(weight), up0, down0)), m)
      expectModerated(mod, user, true)
      return error(r.err, 0)
    end
  end
  -- The values of the orderings the vote changes, which the group caches
  -- take too, for an article in any; none for the many in no group and
  -- no optional order.
  local values, changed
  if orders ~= '' or #groups > 0 then
    values, changed = {score = score}, {'score'}
  end
  if orders ~= '' then
    eachIndex(k, orders, pn, function(key, o)
      if not values[o] then
        values[o] = num(value(o, pn, wn, up, down))
        changed[#changed + 1] = o
      end
      redis.call('ZADD', key, values[o], m)
    end)
  end
  -- One HSET: the counts and the user's vote, '0' for none (VOTES).
  redis.call('HSET', votedKey, '', counts .. string.sub(meta, rest), user, stored)
  if mod and mod.log and mod.events and prev ~= new then -- moderation: the vote events, after the log (above); the vote counted from prev to new
    must(addEvent(mod.events, mod.maxLen, 'vote', user, id, false, prev, new, now .. '000'))
  end
  -- A cache is updated where it holds the article, or where the new
  -- value puts it in the part a walk has passed (cacheVote); a cache
  -- being built that has yet to reach it will copy the new value. Most
  -- groups have a cache in few orderings, if any: one EXISTS over every
  -- cache the vote changes skips them all when there is none.
  if #groups > 0 then
    local caches, orderings = {}, {}
    for _, g in ipairs(groups) do
      eachCache(k.cache, g, changed, function(key, o)
        caches[#caches + 1], orderings[#orderings + 1] = key, o
      end)
    end
    if redis.call('EXISTS', unpack(caches)) > 0 then
      for i, key in ipairs(caches) do
        cacheVote(key, values[orderings[i]], m)
      end
    end
  end
  if shown then -- moderation: a shadowed voter is told the vote counted
    local tu, td = told(up, down, shown)
    return {OK, was, num(value('score', tonumber(posted), tonumber(weight), tu, td)), tu, td}
  end
  return {OK, was, score, up, down}
end
