-- comment.lua: posts a comment, a reply to an article or to one of its
-- comments, with the poster's own upvote implied (lib/comments.lua).
-- Uses lua/lib.
local storeKey, storeIdentity = openStore(KEYS, 'w')
local cseqKey, commentsKey = KEYS[1], KEYS[2]
local aid, parent, poster, body = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, window, weight, orders, maxDepth = ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], tonumber(ARGV[9])
local k = {article = ARGV[10], voted = ARGV[11], comment = ARGV[12], thread = ARGV[13], kids = ARGV[14],
  cvoted = ARGV[15], comments = commentsKey}
local commented = ARGV[16] ~= '' and ARGV[16] .. poster or nil
local nowMs, lastKey = ARGV[17], ARGV[18]
local interval -- the comment interval (WithCommentInterval), ms
if lastKey ~= '' then
  local rules = storeRules(ARGV[19], ARGV[20])
  interval = rules.commentinterval and rules.commentinterval[1]
end
-- parent: '' for a reply to the article; now: the store's clock, Unix
-- seconds (nowMs in ms); window: the store's vote window (s); orders: the
-- comment orderings the store keeps besides best and top; maxDepth:
-- MaxCommentDepth; commented: the prefix of the users' comment pages
-- (WithUserPages), or ''; lastKey: the poster's last-comment key, ''
-- for a store without WithCommentInterval, whose interval is read from
-- the rules record and this process's words, ARGV[19] and ARGV[20]
-- (lib/rules.lua storeRules).
-- Reply: {OK, id, depth, record} (lib/comments.lua appendRow) | {NOT_FOUND} (the article) | {NOT_FOUND, 'parent'} |
-- {CLOSED} | {INVALID, reason} | {RATE_LIMITED, ms} | {NOT_ALLOWED, ms}.

-- moderation: a poster suspended with Refuse (lib/moderation.lua).
local suspended = refused(liveSuspensions(storeKey, storeIdentity, now), poster, now)
if suspended then
  return suspended
end
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

-- The parent, of this article, and not too deep; the ancestors and their
-- live counts, which the comment adds to.
moving(k.comment)
local depth, up, counts = 0, {}, {}
local pc -- the parent's head
if parent ~= '' then
  pc = readHead(k.comment .. parent)
  if not pc then
    return {NOT_FOUND, 'parent'}
  end
  if pc.a ~= aid then
    return {INVALID, 'comment ' .. parent .. ' is not of article ' .. aid}
  end
  depth = tonumber(pc.h) + 1
  if depth > maxDepth - 1 then
    return {INVALID, 'comment ' .. parent .. ' is at the deepest level, ' .. (maxDepth - 1)}
  end
  up, counts = ancestors(k.comment, parent, pc)
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
local newest
if pc then
  newest = pc.f
else
  expect(k.thread .. aid, 'hash')
  newest = redis.call('HGET', k.thread .. aid, 'f')
end
if newest then
  expect(k.comment .. newest, 'string')
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
if tonumber(cid) > MAX_COUNT then
  return error('voting: comment id counter ' .. cseqKey .. ' is at the most ids a record links', 0)
end
local key = k.comment .. cid
if redis.call('EXISTS', key) > 0 then
  return error('voting: comment id counter ' .. cseqKey .. ' is behind the comments: set it to the highest id', 0)
end
local c = {a = aid, p = parent ~= '' and parent or nil, t = now, c = num(tonumber(now) + window),
  u = 1, d = 0, r = 0, h = tostring(depth), n = poster, nx = newest}
if orders ~= '' then
  c.o = orders
  if has(orders, 'score') then
    c.w = weight
  end
end
local rec = commentRecord(c, body)
if #rec - #body > HEAD then
  return {INVALID, 'the comment\'s head is longer than ' .. HEAD .. ' bytes'}
end
local keys, ords = kidsKeys(k, c)
for _, kk in ipairs(keys) do
  expect(kk, 'zset')
end
redis.call('INCR', cseqKey)
-- Linked as its parent's newest child.
if newest then
  setLink(k.comment .. newest, C_PREV, cid)
else
  setEnd(k, c.p, aid, 'l', cid)
end
setEnd(k, c.p, aid, 'f', cid)
redis.call('SET', key, rec)
placeComment(keys, ords, cid, tonumber(now), tonumber(c.w) or 0, 1, 0)
addLive(k, up, counts, aid, 1)
-- The article's comment voter record: its '' field names the comment
-- that made it; it lives a window past the latest comment, on the
-- server's clock (lib/comments.lua voterOpen).
redis.call('HSETNX', cvotedKey, '', cid)
if redis.call('PTTL', cvotedKey) < window * 1000 then
  redis.call('EXPIRE', cvotedKey, window)
end
if commented then
  listOn(commented, now, member(cid))
end
if interval then
  redis.call('SET', lastKey, nowMs, 'PX', ruleTTL(interval))
end
return appendRow({OK}, cid, c.h, rec)
