-- lib.lua: the helpers shared by the scripts whose header says
-- "Uses lib.lua". scripts.go puts this file in front of those scripts.
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

-- num formats a score for ZADD and for the reply without losing precision:
-- with %.17g, or with %d for whole numbers (what a whole vote weight
-- makes), which prints them the same and faster.
local function num(x)
  if x == math.floor(x) and x > -1e15 and x < 1e15 then
    return string.format('%d', x)
  end
  return string.format('%.17g', x)
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
-- (identity.go, doc.go "The store's identity"). Every script is sent
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
-- tag's. Every script starts with the check (identity.go
-- identityPrologue, checkStore): its fast path, the record equal to this
-- store's identity, is one table index and one GET. A vote checks later
-- (vote's store and want), where it knows it changes something: a vote
-- that changes nothing, a click on the arrow already lit, skips the GET.
local fences = {}
local function fenceOf(fence)
  local f = {string.match(fence, '^({[^}]*}:[^:]*):(.*)$')}
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
  elseif mode == 'r' and string.match(got, '^%d+') == string.match(want, '^%d+') then
    return false
  end
  return error('voting: incompatible store: ' .. got .. ' | ' .. want .. ' |', 0)
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

-- The article record (the one place that defines it; reply.go's
-- parseRecord reads it in Go): each article is one string, at k.article
-- .. id, which a page reads with one MGET:
--   <up> <down> <posted> <weight> <orders> <#poster> <#title>:<poster><title><link>
-- up, down: its vote counts, each COUNT_DIGITS digits with leading zeros,
-- so that a vote writes them in place (SETRANGE) without reading the
-- record; posted: its post time in Unix seconds; weight: its vote weight
-- (Store.weight); orders: the optional orders it is in (lib.lua ORDERS),
-- comma-separated, '' for none; #poster, #title: the lengths in bytes of
-- the poster's name and the title, so that they and the link, the rest,
-- are kept byte for byte.
local RECORD = '^(%d+) (%d+) (%S+) (%S+) (%S*) (%d+) (%d+):()'
local COUNTS, COUNT_DIGITS, MAX_COUNT = '%010d %010d', 10, 9999999999

-- The voter record, at k.voted .. id, is a hash of each voter's vote ('1'
-- or '-1') and, under the field '' (no user's name), what a vote needs
-- of the article while its voting is open, which the vote reads with the
-- voter's own vote in one HMGET:
--   <up> <down> <groups> <posted> <closes> <weight> <orders>
-- its counts, as the record has them; how many groups it is in (0 lets a
-- vote skip reading them); its post time and the store's time its voting
-- closes at, in Unix seconds; its weight and orders, as the record has
-- them. Post makes it and it expires when the article's voting closes
-- (post.lua), so a vote that finds no '' field finds voting over.
local VOTE_META = '^(%d+) (%d+)() (%d+) (%S+) (%S+) (%S+) (%S*)$'

-- voteMeta returns the voter record's '' field (VOTE_META) of these
-- fields, counts as numbers: what Post writes and group changes rewrite;
-- a vote rewrites only the counts in front.
local function voteMeta(up, down, groups, posted, closes, weight, orders)
  return string.format(COUNTS, up, down) .. ' ' .. table.concat({groups, posted, closes, weight, orders}, ' ')
end

-- badValue fails the script for a value at one of the store's keys that
-- is not what the store writes there (written by hand).
local function badValue(key)
  return error('voting: key ' .. key .. ' holds no article', 0)
end

-- record returns the article at key as a table of its fields (strings),
-- or nil when there is none.
local function record(key)
  local s = redis.call('GET', key)
  if not s then
    return nil
  end
  local up, down, posted, weight, orders, np, nt, at = string.match(s, RECORD)
  if not at then
    return badValue(key)
  end
  np, nt = tonumber(np), tonumber(nt)
  return {up = up, down = down, posted = posted, weight = weight, orders = orders,
    poster = string.sub(s, at, at + np - 1), title = string.sub(s, at + np, at + np + nt - 1),
    link = string.sub(s, at + np + nt)}
end

-- writeRecord writes the article a (record's table) at key.
local function writeRecord(key, a)
  redis.call('SET', key, string.format(COUNTS, tonumber(a.up), tonumber(a.down)) .. ' ' ..
    table.concat({a.posted, a.weight, a.orders, #a.poster, #a.title}, ' ') .. ':' .. a.poster .. a.title .. a.link)
end

-- has reports whether the article's orders (comma-separated names)
-- names order.
local function has(orders, order)
  return orders ~= nil and string.find(',' .. orders .. ',', ',' .. order .. ',', 1, true) ~= nil
end

-- value returns the article's value in an ordering given its post time,
-- vote weight and counts (the formulas of order.go).
local function value(ordering, posted, weight, up, down)
  local s = up - down
  if ordering == 'score' then
    return posted + weight * s
  elseif ordering == 'top' then
    return s
  elseif ordering == 'hot' then
    local sign = 0
    if s > 0 then sign = 1 elseif s < 0 then sign = -1 end
    return sign * math.log10(math.max(math.abs(s), 1)) + (posted - 1134028003) / 45000
  elseif ordering == 'best' then
    local n = up + down
    if n == 0 then return 0 end
    local z = 1.281551565545
    local p = up / n
    return (p + z * z / (2 * n) - z * math.sqrt((p * (1 - p) + z * z / (4 * n)) / n)) / (1 + z * z / n)
  elseif ordering == 'controversial' then
    if up <= 0 or down <= 0 then return 0 end
    local balance = down / up
    if up < down then balance = up / down end
    return (up + down) ^ balance
  end
  return posted -- time
end

-- bucket returns the TopSince bucket key of a post time at one size.
local function bucket(prefix, size, posted)
  return prefix .. size .. ':' .. math.floor(posted / size)
end

-- eachIndex calls fn(key, ordering) for each index an article is in
-- besides the score and time orderings, given its orders field and post
-- time: the ordering of each optional order it has and, with top, its
-- TopSince buckets, which hold top's value.
local function eachIndex(k, orders, posted, fn)
  if orders == '' then
    return
  end
  for _, o in ipairs(ORDERS) do
    if has(orders, o) then fn(k.by .. o, o) end
  end
  if has(orders, 'top') then
    for _, size in ipairs(BUCKETS) do fn(bucket(k.bucket, size, posted), 'top') end
  end
end

-- expectIndexes checks an article's indexes (eachIndex) before a
-- script's first write.
local function expectZset(key) expect(key, 'zset') end
local function expectIndexes(k, orders, posted)
  eachIndex(k, orders, posted, expectZset)
end

-- Rows: a read of articles replies, for each article that exists, two
-- fields: its id and its record (RECORD), from which reply.go takes the
-- article and works out its score by the formula that made it (value).
-- Members whose article is gone are skipped.

-- rows appends to out the rows of members, in their order: one MGET.
local function rows(articlePrefix, members, out)
  if #members == 0 then
    return out
  end
  local keys = {}
  for i, m in ipairs(members) do
    keys[i] = articlePrefix .. idof(m)
  end
  local n = #out
  for i, r in ipairs(redis.call('MGET', unpack(keys))) do
    if r then
      out[n + 1], out[n + 2] = idof(members[i]), r
      n = n + 2
    end
  end
  return out
end

-- range returns the members at ranks start..stop of a zset, from the top
-- when desc is '1'.
local function range(key, start, stop, desc)
  if desc == '1' then
    return redis.call('ZREVRANGE', key, start, stop)
  end
  return redis.call('ZRANGE', key, start, stop)
end

-- missing reports whether the article record at key does not exist: the
-- guard of every script about one article.
local function missing(articleKey)
  return redis.call('EXISTS', articleKey) == 0
end

-- groupKeys returns the keys of an article that adding it to groups or
-- removing it from them writes besides the groups and their caches: its
-- set of groups and its voter record, with the voter record's '' field
-- (nil once voting closed), all checked before the script's first write;
-- nothing when the article does not exist.
local function groupKeys(k, id)
  local articleKey, groupsKey, votedKey = k.article .. id, k.groups .. id, k.voted .. id
  if missing(articleKey) then
    return nil
  end
  expect(articleKey, 'string')
  expect(groupsKey, 'set')
  expect(votedKey, 'hash')
  local meta = redis.call('HGET', votedKey, '')
  if meta and not string.match(meta, VOTE_META) then
    return badValue(votedKey)
  end
  return groupsKey, votedKey, meta
end

-- countGroups keeps how many groups the article is in in its voter
-- record's '' field, which lets a vote skip reading its groups when there
-- are none; once voting closed there is none to keep. Its callers check
-- the keys first (groupKeys).
local function countGroups(groupsKey, votedKey, meta)
  if meta then
    local up, down, _, _, posted, closes, weight, orders = string.match(meta, VOTE_META)
    redis.call('HSET', votedKey, '', voteMeta(tonumber(up), tonumber(down), redis.call('SCARD', groupsKey),
      posted, closes, weight, orders))
  end
end

-- eachCache calls fn(cacheKey, ordering) for the cached page of group g in
-- each of the orderings, whether it exists or not.
local function eachCache(cachePrefix, g, orderings, fn)
  for _, o in ipairs(orderings) do
    fn(cachePrefix .. o .. ':' .. g, o)
  end
end

-- The marker of a group cache being built and its frontiers
-- (group_page.lua defines them). They stand here, before vote(), which
-- keeps a walked part exact (cacheVote): a Lua local is seen only below
-- its definition.

-- cacheMarker returns the SSCAN cursor and the top and bottom frontiers
-- ({v = value, m = member}, nil for a direction not walked: cacheFront
-- reads one) of the marker of a cache being built; a marker
-- "#<cursor>" has no frontiers.
local function cacheFront(part)
  local v, m = string.match(part, '^(%S+) (%S+)$')
  if v then
    return {v = v, m = m}
  end
end
local function cacheMarker(marker)
  local cursor, top, bottom = string.match(marker, '^#([^|]*)|([^|]*)|(.*)$')
  if not cursor then
    return string.sub(marker, 2), nil, nil
  end
  return cursor, cacheFront(top), cacheFront(bottom)
end

-- cmpFront compares (value v, member m) with the frontier f in an
-- ordering's ascending order, value then member as ZRANGE sorts ties:
-- -1 before f, 0 at f, 1 after f. Values compare as numbers; both sides
-- are Redis's or num's text of a double, which reads back exactly.
-- Members are a lowercase letter and digits, which Lua's comparison
-- (strcoll, under the server's locale) orders as ZRANGE does, bytewise,
-- in C and the usual UTF-8 locales.
local function cmpFront(v, m, f)
  local a, b = tonumber(v), tonumber(f.v)
  if a ~= b then
    return a < b and -1 or 1
  end
  if m == f.m then
    return 0
  end
  return m < f.m and -1 or 1
end

-- walked reports whether (v, m) is in the part of the ordering a walk has
-- passed: at or above the top frontier, or at or below the bottom one.
local function walked(v, m, top, bottom)
  return (top ~= nil and cmpFront(v, m, top) >= 0) or (bottom ~= nil and cmpFront(v, m, bottom) <= 0)
end

-- cacheVote moves group member m to value v in the group's cache at key
-- when the cache holds it (XX). Else (CH counts 0: no such member, no
-- cache, or the same value), a cache being built gets m when v puts it
-- in a walked part, which holds every group member there with its
-- value: a vote may lift a member the walk has yet to reach over the top
-- frontier, or drop one under the bottom one. A foreign value at key
-- fails the reads of that page, not the vote.
local function cacheVote(key, v, m)
  if redis.pcall('ZADD', key, 'XX', 'CH', v, m) ~= 0 then
    return -- moved, or a foreign value (an error reply)
  end
  local marker = redis.call('ZRANGE', key, 0, 0)[1]
  if marker and marker ~= '#' and string.sub(marker, 1, 1) == '#' then
    local _, top, bottom = cacheMarker(marker)
    if walked(v, m, top, bottom) then
      redis.call('ZADD', key, v, m)
    end
  end
end

-- User pages (WithUserPages): each user's submitted and upvoted
-- articles, zsets of members: submitted by post time, upvoted by the
-- time of the upvote (the caller's clock), ties by id. Each keeps the
-- latest PAGE_CAP entries, MaxUserPageEntries of validate.go (a test
-- keeps them equal). k.submitted and k.upvoted are the key prefixes, to
-- which a user's name is appended; nil when the store has no pages.
local PAGE_CAP = 1000

-- listOn adds member m to a user's page at value, then drops the oldest
-- entries past PAGE_CAP. Its caller has checked key's type.
local function listOn(key, value, m)
  redis.call('ZADD', key, value, m)
  local n = redis.call('ZCARD', key)
  if n > PAGE_CAP then
    redis.call('ZREMRANGEBYRANK', key, 0, n - PAGE_CAP - 1)
  end
end

-- votePage returns the voter's upvoted page that a vote changing prev to
-- new changes, or nil: an upvote lists the article, and cancelling or
-- switching an upvote unlists it (pageVote). vote() calls it before its
-- first write, with every other key it writes checked: the page's ZADD
-- or ZREM is the vote's first write, which a foreign value at the page's
-- key fails before anything changed. With rules, whose writes (karma, the
-- vote log) come first, the page's key is checked here.
local function votePage(k, user, prev, new)
  if new ~= 1 and prev ~= 1 then
    return nil
  end
  local key = k.upvoted .. user
  if k.rules then
    expect(key, 'zset')
  end
  return key
end

-- pageVote lists the article m on the voter's upvoted page at now for an
-- upvote (new == 1), and unlists it otherwise.
local function pageVote(key, m, new, now)
  if new == 1 then
    listOn(key, now, m)
  else
    redis.call('ZREM', key, m)
  end
end

-- submittedPage returns the submitted page of an article's poster that
-- a delete of it unlists it from, checked, or nil for none. Upvoted pages are
-- not reached: the voters of an article may be too many to walk, or
-- their records gone; a read of a page drops the entries whose article
-- is gone (user_page.lua).
local function submittedPage(k, poster)
  if not k.submitted then
    return nil
  end
  local key = k.submitted .. poster
  expect(key, 'zset')
  return key
end

-- Karma and the rules (rules.go, karma.go): the statuses of a refused
-- call, and the helpers that vote and post.lua call only for a store that
-- has them.
local NOT_ALLOWED, RATE_LIMITED = 7, 8

-- readRules returns the vote rules from a script's arguments a[i..i+11]
-- (rules.go newRules), or nil when there are none:
--   now (the store's clock, ms), the karma key ('' when off), the prefix
--   of the users' vote logs, the karma an upvote and a downvote give the
--   poster, the karma they cost the voter, the least karma to upvote and
--   to downvote, the vote limit, its span (ms) and its logs' TTL (ms);
-- '' for the numbers of a rule that is off.
local function readRules(a, i)
  if not a[i] then
    return nil
  end
  return {now = a[i], karma = a[i + 1] ~= '' and a[i + 1] or nil, log = a[i + 2],
    perUp = tonumber(a[i + 3]), perDown = tonumber(a[i + 4]),
    costUp = tonumber(a[i + 5]), costDown = tonumber(a[i + 6]),
    minUp = tonumber(a[i + 7]), minDown = tonumber(a[i + 8]),
    limit = tonumber(a[i + 9]), per = tonumber(a[i + 10]), ttl = a[i + 11]}
end

-- worth returns what a vote v (1, -1 or 0) is worth given what an
-- upvote and a downvote are (nil for 0).
local function worth(v, up, down)
  if v == 1 then return up or 0 elseif v == -1 then return down or 0 end
  return 0
end

-- karmaRules decides the rules of one vote that changes something (prev
-- to new) and, when they let it pass, moves karma and logs the vote; it
-- returns {NOT_ALLOWED} or {RATE_LIMITED, ms to wait} for a vote refused,
-- having changed nothing. vote() calls it after its own checks, just
-- before its first write. Karma is kept negated in one zset (ZRANGE lists
-- the highest first, ties by name). A poster's vote on their own article
-- moves no karma, costs nothing and needs no least karma. A user's vote
-- log holds the times (ms) of their last limit votes: a vote passes when
-- the oldest of them is at least per old, so no span of per holds more
-- than limit votes, whichever clock trimmed the log.
local function karmaRules(k, articleKey, user, prev, new)
  local r = k.rules
  local poster, logKey
  if r.karma then
    expect(r.karma, 'zset')
    poster = record(articleKey).poster
    if poster == user then
      poster = nil
    end
  end
  if poster and new ~= 0 then
    local least = r.minDown
    if new == 1 then least = r.minUp end
    if least and -(tonumber(redis.call('ZSCORE', r.karma, user)) or 0) < least then
      return {NOT_ALLOWED}
    end
  end
  if r.limit then
    logKey = r.log .. user
    expect(logKey, 'zset')
    local n = redis.call('ZCARD', logKey)
    if n >= r.limit then
      local t = tonumber(redis.call('ZRANGE', logKey, n - r.limit, n - r.limit, 'WITHSCORES')[2])
      local wait = t + r.per - tonumber(r.now)
      if wait > 0 then
        return {RATE_LIMITED, num(wait)}
      end
    end
  end
  if poster then
    local gain = worth(new, r.perUp, r.perDown) - worth(prev, r.perUp, r.perDown)
    if gain ~= 0 then
      redis.call('ZINCRBY', r.karma, num(-gain), poster)
    end
    local cost = worth(new, r.costUp, r.costDown) - worth(prev, r.costUp, r.costDown)
    if cost ~= 0 then
      redis.call('ZINCRBY', r.karma, num(cost), user)
    end
  end
  if logKey then
    -- Members are unique: the time and how many the log holds at it.
    local m = r.now .. ':' .. (redis.call('ZCOUNT', logKey, r.now, r.now) + 1)
    redis.call('ZADD', logKey, r.now, m)
    redis.call('ZREMRANGEBYRANK', logKey, 0, -(r.limit + 1))
    redis.call('PEXPIRE', logKey, r.ttl)
  end
  return nil
end

-- postRules reads the rules of Post from a script's arguments a[i..i+5]
-- (rules.go appendPostRules): now (ms), the poster's last-post key, the
-- post interval (ms, '' when off) and its key's TTL (ms), the repost span
-- (ms, '' when off) and its link keys' TTL (ms); nil when there are none.
-- It returns the rules and, for a post they refuse, its reply:
-- {RATE_LIMITED, ms to wait}, or {DUPLICATE, row} for a link an article
-- posted within the repost span has. It writes nothing.
local function postRules(k, a, i, link)
  if not a[i] then
    return nil
  end
  local r = {now = a[i], last = a[i + 1], interval = tonumber(a[i + 2]), intervalTTL = a[i + 3],
    repost = tonumber(a[i + 4]), linkTTL = a[i + 5]}
  local now = tonumber(r.now)
  if r.repost and link ~= '' then
    r.link = k.link .. link
    expect(r.link, 'string')
    local other = redis.call('GET', r.link)
    local a = other and record(k.article .. other)
    if a and tonumber(a.posted) * 1000 + r.repost > now then
      return r, rows(k.article, {member(other)}, {DUPLICATE})
    end
  end
  if r.interval then
    expect(r.last, 'string')
    local last = tonumber(redis.call('GET', r.last))
    if last and last + r.interval > now then
      return r, {RATE_LIMITED, num(last + r.interval - now)}
    end
  end
  return r
end

-- postRulesDone records the post of article id for the rules postRules
-- read: the poster's last post time, and the link's claim, which expires
-- unless the store keeps links unique for good.
local function postRulesDone(r, id, unique)
  if r.interval then
    redis.call('SET', r.last, r.now, 'PX', r.intervalTTL)
  end
  if r.link and not unique then
    redis.call('SET', r.link, id, 'PX', r.linkTTL)
  end
end

-- NONE is an empty list that is never written to: the groups of a vote
-- on an article in none.
local NONE = {}

-- VOTES are the votes as the scripts' arguments and the voter records
-- write them: up, down, and '0' for none, which no record holds.
local VOTES = {['1'] = 1, ['-1'] = -1, ['0'] = 0}

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
-- CORRUPT: the user's voter record holds neither 1 nor -1 (written by
-- hand); nothing is changed.
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
  local new, prev = VOTES[vs], 0
  if r[2] then
    prev = VOTES[r[2]]
    if prev == nil or prev == 0 then
      return {CORRUPT}
    end
  end
  up, down = tonumber(up), tonumber(down)
  local m = member(id)
  if new == prev then
    return {OK, prev, redis.call('ZSCORE', k.score, m), up, down}
  end
  -- The store's identity (checkStore) at store, which vote.lua defers to
  -- here, before the vote's first write.
  if store then checkStore(store, want, 'w') end
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
  -- and the score ordering, whose writes come first (below), or checked
  -- here; the groups are read before the first write too. A store with
  -- pages or rules writes before them, so it checks them here.
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

  local groups = NONE
  if ngroups ~= '0' then -- skips a call for the many articles in no group
    groups = redis.call('SMEMBERS', k.groups .. id)
  end
  local page = k.upvoted and votePage(k, user, prev, new) -- WithUserPages only
  if k.rules then -- karma and the vote rules, for a store that has them
    local refused = karmaRules(k, articleKey, user, prev, new)
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
  meta = counts .. string.sub(meta, rest)
  if new == 0 then
    redis.call('HSET', votedKey, '', meta)
    redis.call('HDEL', votedKey, user)
  else
    redis.call('HSET', votedKey, '', meta, user, vs)
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
  return {OK, prev, score, up, down}
end

-- deleting checks every key that deleting article id writes, and
-- returns what deleteNow needs to delete it; nil when the article does
-- not exist. It writes nothing, so a step of Prune checks each article
-- before it deletes any.
local function deleting(k, id)
  local a = record(k.article .. id)
  if not a then
    return nil
  end
  local d = {id = id, posted = tonumber(a.posted), orders = a.orders, link = a.link ~= '' and k.link .. a.link}
  if d.link then
    expect(d.link, 'string')
  end
  d.groups = redis.call('SMEMBERS', k.groups .. id)
  for _, g in ipairs(d.groups) do
    expect(k.group .. g, 'set')
  end
  expect(k.by .. 'score', 'zset')
  expect(k.by .. 'time', 'zset')
  expectIndexes(k, d.orders, d.posted)
  d.page = submittedPage(k, a.poster)
  return d
end

-- deleteNow removes the article that deleting checked and every trace
-- of it.
local function deleteNow(k, d)
  local id, m = d.id, member(d.id)
  if d.page then
    redis.call('ZREM', d.page, m)
  end
  for _, g in ipairs(d.groups) do
    redis.call('SREM', k.group .. g, m)
    eachCache(k.cache, g, ALL, function(key) redis.pcall('ZREM', key, m) end)
  end
  redis.call('ZREM', k.by .. 'score', m)
  redis.call('ZREM', k.by .. 'time', m)
  eachIndex(k, d.orders, d.posted, function(key) redis.call('ZREM', key, m) end)
  if d.link and redis.call('GET', d.link) == id then
    redis.call('DEL', d.link)
  end
  redis.call('UNLINK', k.article .. id, k.voted .. id, k.groups .. id) -- a popular article's voter record is large
end

-- delete removes an article and every trace of it; it returns false when
-- the article does not exist.
local function delete(k, id)
  local d = deleting(k, id)
  if not d then
    return false
  end
  deleteNow(k, d)
  return true
end

-- cacheComplete reports whether the cached page of a group at cacheKey is
-- complete: its marker, at rank 0, is "#" (group_page.lua says how a
-- cache is built). A missing cache is not.
local function cacheComplete(cacheKey)
  return redis.call('ZRANGE', cacheKey, 0, 0)[1] == '#'
end

-- cachePage returns the members at ranks start..stop (from the top when
-- desc is '1') of a complete group cache, without its marker: the marker
-- is rank 0, so ascending ranks skip it, and a descending page may end
-- with it.
local function cachePage(cacheKey, start, stop, desc)
  if desc == '1' then
    local members = range(cacheKey, start, stop, desc)
    if members[#members] == '#' then
      members[#members] = nil
    end
    return members
  end
  return range(cacheKey, start + 1, stop + 1, desc)
end

-- frontRank returns the rank, in the ordering at key read from the top
-- when desc is '1', of the first member past the frontier f, where a
-- walk resumes. f's member may have moved or gone since the walk passed
-- it; then the rank is found from f's value: the members before it
-- (ZCOUNT), then a binary search, one rank per probe, of those tied at
-- it, which an ordering such as top, best or controversial has by the
-- thousand.
local function frontRank(key, f, desc)
  local v = redis.call('ZSCORE', key, f.m)
  if v and tonumber(v) == tonumber(f.v) then -- where the walk left it
    if desc == '1' then
      return redis.call('ZREVRANK', key, f.m) + 1
    end
    return redis.call('ZRANK', key, f.m) + 1
  end
  local lo
  if desc == '1' then
    lo = redis.call('ZCOUNT', key, '(' .. f.v, '+inf')
  else
    lo = redis.call('ZCOUNT', key, '-inf', '(' .. f.v)
  end
  local hi = lo + redis.call('ZCOUNT', key, f.v, f.v)
  -- Ties run by member, descending from the top: find the first past f.m.
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = range(key, mid, mid, desc)[1]
    if (desc == '1' and x < f.m) or (desc ~= '1' and x > f.m) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end

-- cacheWalk walks on the ordering at key (from the top when desc is
-- '1') from the first member past the frontier front (from the start
-- without one) for the group cache at cacheKey: it copies the group's
-- members it meets (SMISMEMBER on batches) with their values into the
-- cache, and moves the frontier to the last member examined, until it
-- has spent budget (a member examined costs 1, one copied 1 more), or
-- want(front), the members the caller still wants walked, is 0. other is
-- the frontier of the other direction, or nil. It returns the frontier,
-- what it spent, and true when every member of the ordering has now been
-- walked (the end of the ordering, or the other frontier, was reached).
local WALK_BATCH = 1000 -- members per ZRANGE and SMISMEMBER; unpack takes up to 8,000
local function cacheWalk(groupKey, cacheKey, key, desc, front, other, budget, share, want)
  local r = 0
  if front then
    r = frontRank(key, front, desc)
  end
  local spent, n, seen, hits = 0, want(front), 0, 0
  local sign = desc == '1' and 1 or -1
  while spent < budget do
    -- As many as the work left pays for, each with its copy by the
    -- density met so far, or the group's share before any.
    local density = share
    if seen > 0 then
      density = math.max(density, hits / seen)
    end
    n = math.max(1, math.min(n, WALK_BATCH, math.floor((budget - spent) / (1 + density))))
    -- The values of the group's members alone (ZMSCORE), not of every
    -- member examined (WITHSCORES): Redis formats each value it replies.
    local ms = range(key, r, r + n - 1, desc)
    local got = #ms
    if got == 0 then
      return front, spent, true
    end
    local inGroup = redis.call('SMISMEMBER', groupKey, unpack(ms))
    local found = {}
    for i = 1, got do
      if inGroup[i] == 1 then
        found[#found + 1] = ms[i]
      end
    end
    if #found > 0 then
      local vs = redis.call('ZMSCORE', key, unpack(found))
      local args = {}
      for i, m in ipairs(found) do
        args[2 * i - 1] = vs[i]
        args[2 * i] = m
      end
      redis.call('ZADD', cacheKey, unpack(args))
    end
    front = {v = redis.call('ZSCORE', key, ms[got]), m = ms[got]}
    r, seen, hits = r + got, seen + got, hits + #found
    spent = spent + got + #found
    if got < n or (other and sign * cmpFront(front.v, front.m, other) <= 0) then
      return front, spent, true
    end
    n = want(front)
    if n == 0 then
      break
    end
  end
  return front, spent, false
end
