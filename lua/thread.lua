-- thread.lua: reads a thread, the comments of an article or the replies
-- under a comment, filled best-first as Reddit's CommentOrderer does
-- (Store.Thread, Store.Replies). Uses lua/lib.
openStore(KEYS, 'rc')
local rootKey = KEYS[1]
local kind, id, ordering, desc = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
local limit, maxDepth = tonumber(ARGV[5]), tonumber(ARGV[6])
local k = {comment = ARGV[7], kids = ARGV[8], thread = ARGV[9]}
local cvoted, user = ARGV[10], ARGV[11]
-- rootKey: the article's record (kind 'a') or the comment's (kind 'c'),
-- whose children are read; ordering: best, top, hot, controversial,
-- score or time (desc '1' newest first, '0' oldest first); limit: the
-- most comments taken; maxDepth: the levels shown (MaxThreadDepth);
-- cvoted and user, optional: the comment voter records' prefix and the
-- user whose votes the reply carries (ThreadFor, RepliesFor).
-- Reply: {OK, row...} | {OK, row..., votes} with a user | {NOT_FOUND}:
-- the comments taken, in the order taken, each a row (lib/tree.lua
-- appendRow) whose depth counts from the root's children (0); comments.go
-- orders them for display. votes holds one byte a row, in the rows'
-- order, as comment_votes.lua writes them.
--
-- A candidate heap holds one stream a parent: the children of a comment
-- taken, in the ordering, of which the heap sees the first not yet
-- taken (its head). The best head is taken, its stream moves on, and
-- the stream of its own children joins the heap unless it is at the last
-- level shown. A zset stream reads its parent's ordering a few members
-- at a time; a time stream follows the parent's linked list (newest
-- child, then each next older sibling; or oldest, then each previous).
-- The work is so bounded by limit, not by the size of the thread.
local pname, ends, aid = 'a' .. id, nil, id
if kind == 'a' then
  if redis.call('EXISTS', rootKey) == 0 then
    return {NOT_FOUND}
  end
  ends = redis.call('HMGET', k.thread .. id, 'f', 'l')
else
  local c = readHead(rootKey)
  if not c then
    return {NOT_FOUND}
  end
  pname, ends, aid = id, {c.f or false, c.l or false}, c.a
end
local time = ordering == 'time'
-- DEPTHS are the depths as the rows write them.
local DEPTHS = {}
for d = 0, maxDepth do
  DEPTHS[d] = tostring(d)
end

-- better reports whether stream a's head comes before b's: by value
-- (0 for all in time order), then by id, which compares as a number (n)
-- where it has at most 15 digits, exact as a Lua number, and as a
-- string else.
local function better(a, b)
  local av, bv = a.value, b.value
  if av ~= bv then
    return av > bv
  end
  local an, bn = a.n, b.n
  if an and bn then
    if desc then return an > bn end
    return an < bn
  end
  if desc then
    return idLess(b.head, a.head)
  end
  return idLess(a.head, b.head)
end

-- setHead sets a stream's head, its id as a number where exact, and its
-- value.
local function setHead(s, head, value)
  s.head, s.value, s.n = head, value, nil
  if #head <= 15 then
    s.n = tonumber(head)
  end
end

-- refill reads the next members of a zset stream into its buffer: best
-- and top from their bands of the parent's replies (lib/tree.lua
-- TOP_BASE), the others from their own orderings.
local function refill(s)
  local n = s.batch
  s.batch = math.min(2 * n, 200)
  local list
  if ordering == 'best' then
    list = redis.call('ZREVRANGEBYSCORE', s.key, '+inf', BEST_MIN, 'WITHSCORES', 'LIMIT', s.off, n)
  elseif ordering == 'top' then
    list = redis.call('ZREVRANGEBYSCORE', s.key, TOP_MAX, '-inf', 'WITHSCORES', 'LIMIT', s.off, n)
  else
    list = redis.call('ZREVRANGE', s.key, s.off, s.off + n - 1, 'WITHSCORES')
  end
  s.off = s.off + n
  s.buf, s.at, s.done = list, 1, #list < 2 * n
end

-- advance sets a stream's head to its next child, given the next
-- sibling of the head taken, in the order (time streams); it returns
-- false at its end.
local function advance(s, next)
  if time then
    if not next then
      return false
    end
    setHead(s, next, 0)
    return true
  end
  if s.at > #s.buf then
    if s.done then
      return false
    end
    refill(s)
    if #s.buf == 0 then
      return false
    end
  end
  setHead(s, idof(s.buf[s.at]), tonumber(s.buf[s.at + 1]))
  s.at = s.at + 2
  return true
end

-- The heap of streams, best head first.
local heap = {}
local function push(s)
  local i = #heap + 1
  heap[i] = s
  while i > 1 do
    local p = math.floor(i / 2)
    if not better(heap[i], heap[p]) then break end
    heap[i], heap[p] = heap[p], heap[i]
    i = p
  end
end
local function pop()
  local top = heap[1]
  local n = #heap
  heap[1] = heap[n]
  heap[n] = nil
  n = n - 1
  local i = 1
  while true do
    local l, r, b = 2 * i, 2 * i + 1, i
    if l <= n and better(heap[l], heap[b]) then b = l end
    if r <= n and better(heap[r], heap[b]) then b = r end
    if b == i then break end
    heap[i], heap[b] = heap[b], heap[i]
    i = b
  end
  return top
end

-- open joins the stream of the children of a parent (its name in the
-- orderings' keys, its record's first and last child) at depth.
local function open(name, first, last, depth)
  -- Made whole in one constructor: a field added later grows the table,
  -- which costs more than the field. false stands for none.
  local s = {depth = depth, dstr = DEPTHS[depth], head = false, value = 0, n = false,
    key = false, off = 0, batch = 0, buf = NONE, at = 1, done = false}
  if time then
    local head = last
    if desc then head = first end
    if not advance(s, head) then
      return
    end
  else
    -- The root's stream reads 10 members first, a comment's 1: most
    -- comments show few of their replies.
    s.key, s.batch = k.kids .. ordering .. ':' .. name, 1
    if ordering == 'best' or ordering == 'top' then
      s.key = k.kids .. name
    end
    if depth == 0 then s.batch = 10 end
    if not advance(s) then
      return
    end
  end
  push(s)
end

if ends[1] then
  open(pname, ends[1], ends[2], 0)
end
-- The comments taken, each read whole with one GET, its links at their
-- fixed places (lib/tree.lua linkAt): comments.go parses the rest.
local out, taken = {OK}, 0
while taken < limit and #heap > 0 do
  local s = pop()
  local cid = s.head
  local key = k.comment .. cid
  local rec = fetch(key, 'GET')
  -- A member whose comment is gone (an article's purge under way) is
  -- skipped.
  local sib = nil
  if rec then
    taken = taken + 1
    appendRow(out, cid, s.dstr, rec)
    local first = linkAt(rec, C_FIRST, key)
    if first and s.depth < maxDepth - 1 then
      open(cid, first, linkAt(rec, C_LAST, key), s.depth + 1)
    end
    if desc then sib = linkAt(rec, C_NEXT, key) else sib = linkAt(rec, C_PREV, key) end
  end
  if advance(s, sib) then
    push(s)
  end
end
if not user or user == '' then
  return out
end
-- The user's votes, as comment_votes.lua reads them: every comment of
-- the thread is of the article aid, whose comment voter record holds
-- them all, read with one HMGET a few hundred rows.
local votes = {}
for lo = 2, #out, 1500 do
  local fields = {''}
  for i = lo, math.min(lo + 1499, #out), 3 do
    fields[#fields + 1] = out[i] .. ':' .. user
  end
  local r = redis.call('HMGET', cvoted .. aid, unpack(fields))
  for j = 2, #fields do
    local i = lo + 3 * (j - 2)
    local cid = out[i]
    local v = '0'
    if voterOpen(r[1], cid) then
      if r[j] then
        v = voteSign(r[j]) or 'c' -- lib/record.lua
      else
        local c = parseComment(out[i + 2], k.comment .. cid)
        if c.n == user and c.x ~= '1' then -- a deleted one's poster is gone from every read
          v = '+'
        end
      end
    end
    votes[#votes + 1] = v
  end
end
out[#out + 1] = join(votes)
return out
