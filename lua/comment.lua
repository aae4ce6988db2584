-- comment.lua: posts a comment, a reply to an article or to one of its
-- comments, with the poster's own upvote implied (lib/comments.lua).
-- Uses lua/lib.
local cseqKey, commentsKey = KEYS[1], KEYS[2]
local aid, parent, poster, body = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, window, weight, orders, maxDepth = ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], tonumber(ARGV[9])
local k = {article = ARGV[10], voted = ARGV[11], comment = ARGV[12], thread = ARGV[13], kids = ARGV[14],
  cvoted = ARGV[15], comments = commentsKey, body = ARGV[21]}
local commented = ARGV[16] ~= '' and ARGV[16] .. poster or nil
local nowMs, lastKey, interval, ttl = ARGV[17], ARGV[18], tonumber(ARGV[19]), ARGV[20]
-- parent: '' for a reply to the article; now: the store's clock, Unix
-- seconds (nowMs in ms); window: the store's vote window (s); orders: the
-- comment orderings the store keeps besides best and top; maxDepth:
-- MaxCommentDepth; commented: the prefix of the users' comment pages
-- (WithUserPages), or ''; lastKey, interval, ttl: the poster's
-- last-comment key, the interval (ms) and the key's TTL (ms), or '' for
-- a store without WithCommentInterval; ARGV[21]: the prefix of the
-- bodies.
-- Reply: {OK, row} | {NOT_FOUND} (the article) | {NOT_FOUND, 'parent'} |
-- {CLOSED} | {INVALID, reason} | {RATE_LIMITED, ms}.

-- The article and its voting, as a vote reads them (lib/vote.lua).
local meta = redis.call('HGET', k.voted .. aid, '')
if not meta then
  if missing(k.article .. aid) then
    return {NOT_FOUND}
  end
  return {CLOSED}
end
local closes = select(6, string.match(meta, VOTE_META))
if not closes then
  return badValue(k.voted .. aid)
end
if tonumber(now) >= tonumber(closes) then
  return {CLOSED}
end

-- The parent, of this article, and not too deep.
local depth, up = 0, {}
local parentKey = k.thread .. aid
if parent ~= '' then
  parentKey = k.comment .. parent
  local m = redis.call('HGET', parentKey, 'm')
  if not m then
    return {NOT_FOUND, 'parent'}
  end
  local p = parseMeta({m = m}, parentKey)
  if p.a ~= aid then
    return {INVALID, 'comment ' .. parent .. ' is not of article ' .. aid}
  end
  depth = tonumber(p.h) + 1
  if depth > maxDepth - 1 then
    return {INVALID, 'comment ' .. parent .. ' is at the deepest level, ' .. (maxDepth - 1)}
  end
  up = ancestors(k.comment, parent)
end
if interval then
  expect(lastKey, 'string')
  local last = tonumber(redis.call('GET', lastKey))
  if last and last + interval > tonumber(nowMs) then
    return {RATE_LIMITED, num(last + interval - tonumber(nowMs))}
  end
end

-- Every key written below is checked before the first write (the
-- ancestors' records were, by ancestors).
expect(cseqKey, 'string')
expect(commentsKey, 'hash')
expect(parentKey, 'hash')
local pname = parent ~= '' and parent or 'a' .. aid
local ords = corderings(orders)
for _, o in ipairs(ords) do
  expect(k.kids .. o .. ':' .. pname, 'zset')
end
local newest = redis.call('HGET', parentKey, 'f')
if newest then
  expect(k.comment .. newest, 'hash')
end
local cvotedKey = k.cvoted .. aid
expect(cvotedKey, 'hash')
if commented then
  expect(commented, 'zset')
end
local seq = redis.call('GET', cseqKey)
if seq and not string.match(seq, '^%d+$') then
  return error('voting: comment id counter ' .. cseqKey .. ' holds ' .. seq .. ', not an id', 0)
end

-- The next id must be free: a counter behind the comments (restored,
-- evicted) must never make Comment overwrite one.
local cid = num((tonumber(seq) or 0) + 1)
local key = k.comment .. cid
if redis.call('EXISTS', key, k.body .. cid) > 0 then
  return error('voting: comment id counter ' .. cseqKey .. ' is behind the comments: set it to the highest id', 0)
end
redis.call('INCR', cseqKey)
local c = {a = aid, p = parent ~= '' and parent or nil, t = now, c = num(tonumber(now) + window),
  u = '1', d = '0', r = '0', h = tostring(depth), n = poster}
if orders ~= '' then
  c.o = orders
  if has(orders, 'score') then
    c.w = weight
  end
end
-- The record's fields in the order lib/comments.lua CFIELDS says.
c.m = commentMeta(c.a, c.p, c.t, c.c, c.h, c.o, c.w)
local fields = {'u', '1', 'd', '0', 'm', c.m, 'n', poster, 'r', '0'}
-- Linked as its parent's newest child.
if newest then
  c.nx = newest
  fields[#fields + 1], fields[#fields + 2] = 'nx', newest
  redis.call('HSET', k.comment .. newest, 'pv', cid)
  redis.call('HSET', parentKey, 'f', cid)
else
  redis.call('HSET', parentKey, 'f', cid, 'l', cid)
end
redis.call('HSET', key, unpack(fields))
redis.call('SET', k.body .. cid, body)
local m = member(cid)
for _, o in ipairs(ords) do
  redis.call('ZADD', k.kids .. o .. ':' .. pname, num(cvalue(o, c, 1, 0)), m)
end
addLive(k, up, aid, 1)
-- The article's comment voter record: its '' field names the comment
-- that made it; it lives a window past the latest comment, on the
-- server's clock (lib/comments.lua voterOpen).
redis.call('HSETNX', cvotedKey, '', cid)
if redis.call('PTTL', cvotedKey) < window * 1000 then
  redis.call('EXPIRE', cvotedKey, window)
end
if commented then
  listOn(commented, now, m)
end
if interval then
  redis.call('SET', lastKey, nowMs, 'PX', ttl)
end
return {OK, commentRow(cid, c, depth, body)}
