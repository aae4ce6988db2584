-- thread.lua: reads a thread, the comments of an article or the replies
-- under a comment, filled best-first as Reddit's CommentOrderer does
-- (Store.Thread, Store.Replies). Uses lua/lib.
local rootKey = KEYS[1]
local kind, id, ordering, desc = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
local limit, maxDepth = tonumber(ARGV[5]), tonumber(ARGV[6])
local k = {comment = ARGV[7], kids = ARGV[8], thread = ARGV[9], body = ARGV[10]}
-- rootKey: the article's record (kind 'a') or the comment's (kind 'c'),
-- whose children are read; ordering: best, top, hot, controversial,
-- score or time (desc '1' newest first, '0' oldest first); limit: the
-- most comments taken; maxDepth: the levels shown (MaxThreadDepth).
-- Reply: {OK, row...} | {NOT_FOUND}: the comments taken, in the order
-- taken, each a row (lib/comments.lua commentRow) whose depth counts
-- from the root's children (0); reply.go orders them for display.
--
-- A candidate heap holds one stream a parent: the children of a comment
-- taken, in the ordering, of which the heap sees the first not yet
-- taken (its head). The best head is taken, its stream moves on, and
-- the stream of its own children joins the heap unless it is at the last
-- level shown. A zset stream reads its parent's ordering a few members
-- at a time; a time stream follows the parent's linked list (newest
-- child, then each next older sibling; or oldest, then each previous).
-- The work is so bounded by limit, not by the size of the thread.
local pname, container = 'a' .. id, k.thread .. id
if kind == 'a' then
  if redis.call('EXISTS', rootKey) == 0 then
    return {NOT_FOUND}
  end
else
  if redis.call('HEXISTS', rootKey, 'm') == 0 then
    return {NOT_FOUND}
  end
  pname, container = id, rootKey
end
local time = ordering == 'time'

-- better reports whether stream a's head comes before b's.
local function better(a, b)
  if time or a.value == b.value then
    if desc then
      return idLess(b.head, a.head)
    end
    return idLess(a.head, b.head)
  end
  return a.value > b.value
end

-- refill reads the next members of a zset stream into its buffer.
local function refill(s)
  local n = s.batch
  s.batch = math.min(2 * n, 200)
  local list = redis.call('ZREVRANGE', s.key, s.off, s.off + n - 1, 'WITHSCORES')
  s.off = s.off + n
  s.buf, s.at, s.done = list, 1, #list < 2 * n
end

-- advance sets a stream's head to its next child, given the next
-- sibling of the head taken, in the order (time streams); it returns
-- false at its end.
local function advance(s, next)
  if time then
    s.head = next
    return s.head ~= nil
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
  s.head, s.value = idof(s.buf[s.at]), tonumber(s.buf[s.at + 1])
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
  local s = {depth = depth, dstr = tostring(depth)}
  if time then
    s.head = last
    if desc then s.head = first end
    if not s.head then
      return
    end
  else
    -- The root's stream reads 10 members first, a comment's 2: most
    -- comments show few of their replies.
    local first = 2
    if depth == 0 then first = 10 end
    s.key, s.off, s.batch, s.buf, s.at = k.kids .. ordering .. ':' .. name, 0, first, {}, 1
    if not advance(s) then
      return
    end
  end
  push(s)
end

local ends = redis.call('HMGET', container, 'f', 'l')
if ends[1] then
  open(pname, ends[1], ends[2], 0)
end
-- The comments taken: the front of each row (lib/comments.lua
-- commentHead), whether it is deleted, and the key of its body, which
-- one MGET reads at the end.
local heads, deleted, bodies = {}, {}, {}
while #heads < limit and #heap > 0 do
  local s = pop()
  local cid = s.head
  -- The record's fields as lib/comments.lua CFIELDS names them.
  local v = redis.call('HMGET', k.comment .. cid, 'u', 'd', 'm', 'n', 'r', 'x', 'f', 'l', 'nx', 'pv')
  -- A member whose comment is gone (an article's purge under way) is
  -- skipped.
  local sib = nil
  if v[3] then
    local n = #heads + 1
    heads[n], deleted[n] = commentHead(cid, v[1], v[2], v[3], v[4] or nil, v[5] or nil, v[6] or nil, s.dstr)
    bodies[n] = k.body .. cid
    if v[7] and s.depth < maxDepth - 1 then
      open(cid, v[7], v[8], s.depth + 1)
    end
    if desc then sib = v[9] else sib = v[10] end
  end
  if advance(s, sib or nil) then
    push(s)
  end
end
local out = {OK}
if #heads > 0 then
  local texts = redis.call('MGET', unpack(bodies))
  for i, head in ipairs(heads) do
    if deleted[i] then
      out[i + 1] = head
    else
      out[i + 1] = head .. (texts[i] or '')
    end
  end
end
return out
