-- record.lua: an article as the store keeps it: its record and its
-- voter record's '' field, its values in the orderings and the indexes
-- that hold them, the rows a read replies, and the keys a group change
-- checks.
-- Needs: base.lua (expect, idof, join, mgetAt, ORDERS, BUCKETS).

-- The article record (internal/layout's Record reads and writes it in
-- Go, and a test holds the two to each other): each article is one
-- string, at k.article .. id, which a page reads with one MGET:
--   <up> <down> <posted> <weight> <orders> <#poster> <#title>:<poster><title><link>
-- up, down: its vote counts, each COUNT_DIGITS digits with leading zeros,
-- so that a vote writes them in place (SETRANGE) without reading the
-- record; posted: its post time in Unix seconds; weight: its vote weight
-- (Store.weight); orders: the optional orders it is in (lib/base.lua ORDERS),
-- comma-separated, '' for none; #poster, #title: the lengths in bytes of
-- the poster's name and the title, so that they and the link, the rest,
-- are kept byte for byte.
local RECORD = '^(%d+) (%d+) (%S+) (%S+) (%S*) (%d+) (%d+):()'
local COUNTS, COUNT_DIGITS, MAX_COUNT = '%010d %010d', 10, 9999999999

-- The voter record, at k.voted .. id, is a hash of each voter's vote ('1'
-- or '-1', '0' once taken back: lib/ballot.lua VOTES) and, under the
-- field '' (no user's name), what a vote needs of the article while its
-- voting is open, which the vote reads with the voter's own vote in one
-- HMGET:
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
-- vote weight and counts (internal/layout Value, Go's copy of the formulas).
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

-- Rows: a read of articles replies, for each article that exists, three
-- fields: its id, its record (RECORD) and its live comments, from which reply.go takes the
-- article and works out its score by the formula that made it (value).
-- Members whose article is gone are skipped.

-- commentCounts returns the live comment counts of the articles of
-- keys (their records' keys, at articlePrefix): one HMGET of the
-- counts' hash, whose key is the record prefix's sibling in the same
-- hash tag (keys.go comments, which a test keeps so), false for none.
-- A foreign value there reads as no counts: the scripts that write
-- before they read rows (a group page's build, an edit) must not fail
-- after their writes, and the calls that keep the counts refuse it.
local function commentCounts(articlePrefix, keys)
  local ids = {}
  for i, key in ipairs(keys) do
    ids[i] = string.sub(key, #articlePrefix + 1)
  end
  local counts = redis.pcall('HMGET', string.sub(articlePrefix, 1, -9) .. 'comments', unpack(ids))
  if counts.err then
    return {}
  end
  return counts
end

-- records returns the records of the articles of members (at least
-- one), false for those gone, and their live comment counts
-- (commentCounts): one MGET (mgetAt), then one HMGET.
local function records(articlePrefix, members)
  local keys, recs = mgetAt(articlePrefix, members, idof)
  return recs, commentCounts(articlePrefix, keys)
end

-- rows appends to out the rows of members, in their order (records). A
-- row is three fields: the id, the record and the live comment count.
local function rows(articlePrefix, members, out)
  if #members == 0 then
    return out
  end
  local recs, counts = records(articlePrefix, members)
  local n = #out
  for i, r in ipairs(recs) do
    if r then
      out[n + 1], out[n + 2], out[n + 3] = idof(members[i]), r, counts[i] or '0'
      n = n + 3
    end
  end
  return out
end

-- VOTE_SIGNS are a voter record's values as the vote their voter sees,
-- a byte: '+' up, '-' down, '0' none (a vote taken back, a comment
-- poster's own among them); '1s', '-1s' are shadow votes
-- (lib/moderation.lua).
local VOTE_SIGNS = {['1'] = '+', ['-1'] = '-', ['0'] = '0', ['1s'] = '+', ['-1s'] = '-'}

-- voteSign reads v, a user's value in a voter record, as VOTE_SIGNS
-- does, a logged vote's '<vote>@<offset>' (lib/moderation.lua) as its
-- vote; nil for none or any other value.
local function voteSign(v)
  local s = VOTE_SIGNS[v]
  if s or not v then
    return s
  end
  return VOTE_SIGNS[string.match(v, '^(-?1)@%d+$') or '']
end

-- voteByte is user's vote in the voter record at votedKey as one byte:
-- '+' up, '-' down, '0' none: no field or '0' (a vote taken back), the
-- record gone (voting closed), or a value that is no vote; as VotesOf
-- reads it.
local function voteByte(votedKey, user)
  local s = voteSign(redis.call('HGET', votedKey, user))
  if s == '+' or s == '-' then
    return s
  end
  return '0'
end

-- withVotes appends to out, whose article rows (rows) start at index
-- from, user's vote on the article of each row, as one string of a byte
-- a row, in order: '+' up, '-' down, '0' none, read as page_for.lua and
-- VotesOf read it (one HGET of the article's voter record, at
-- votedPrefix .. id): none where the record is gone (voting closed) or
-- holds anything but an up or down vote. Without a user (nil or '': a
-- plain read) it appends nothing, and reads nothing.
local function withVotes(out, from, votedPrefix, user)
  if not user or user == '' then
    return out
  end
  local votes = {}
  for i = from, #out, 3 do
    votes[#votes + 1] = voteByte(votedPrefix .. out[i], user)
  end
  out[#out + 1] = join(votes)
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

-- pageRows returns the page at ranks start..stop of the ordering at
-- orderingKey (desc: '1' from the highest value down) as the strings of
-- its rows, three a row, for each article that exists, in order: its
-- member (the id after one byte of its length), the length of its record
-- in decimal, '+' and its live comment count where it has any, a space,
-- and the record (RECORD). Joined, they are one value to read for the
-- whole page (page.go parsePage). Members whose article is gone are
-- skipped. One ZRANGE, then records's reads.
local function pageRows(orderingKey, articlePrefix, start, stop, desc)
  local out = {}
  local members = range(orderingKey, start, stop, desc)
  if #members == 0 then
    return out
  end
  local recs, counts = records(articlePrefix, members)
  local n, format = 0, string.format
  for i, r in ipairs(recs) do
    if r then
      if counts[i] then
        out[n + 1], out[n + 2], out[n + 3] = members[i], format('%d+%s ', #r, counts[i]), r
      else
        out[n + 1], out[n + 2], out[n + 3] = members[i], format('%d ', #r), r
      end
      n = n + 3
    end
  end
  return out
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

-- groupChange returns the groups named by names[first..] that the
-- article whose set of groups is groupsKey joins (join true: those it is
-- not in) or leaves (join false: those it is in), each once, a repeated
-- name counting once, and how many groups it is in before the change.
local function groupChange(groupsKey, names, first, join)
  local in_ = {}
  local current = redis.call('SMEMBERS', groupsKey)
  for _, g in ipairs(current) do
    in_[g] = true
  end
  local changed = {}
  for i = first, #names do
    local g = names[i]
    if (in_[g] == true) ~= join then
      in_[g] = join
      changed[#changed + 1] = g
    end
  end
  return changed, #current
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
