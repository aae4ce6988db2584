-- tree.lua: a comment as the store keeps it (comments.go): its
-- record, its place among its siblings and in its parent's orderings,
-- the rows a read replies, and the walk up its ancestors.
-- Needs: base.lua (expect, member, num), record.lua (value, has, COUNTS,
-- MAX_COUNT).

-- The status of a call whose input does not fit the data (a parent of
-- another article, a comment too deep): the reason follows.
local INVALID = 9

-- A comment's record is one string at k.comment .. cid, as an article's
-- is (lib/record.lua), which a read takes whole, body included, with one
-- GET, and a vote by its head (all but the body) with one GETRANGE:
--   <up> <down> <replies> <first> <last> <next> <prev> <deleted> <meta> <#poster>:<poster><body>
-- up, down: its vote counts; replies: its live descendants, all levels;
-- first, last: its newest and oldest child; next: its next older
-- sibling; prev: its previous, newer, sibling; each COUNT_DIGITS digits
-- with leading zeros, 0 for none, so that a vote, a reply or a link
-- writes them in place (SETRANGE) without reading the record. deleted:
-- 1 once deleted and kept for its replies, else 0. meta is what never
-- changes: the article id, the parent's cid (0 for a reply to the
-- article), the post time (Unix s, the store's clock), the time its
-- voting closes, its depth (0 for a reply to the article), the optional
-- orderings it is in besides best and top (comma-separated, '' for
-- none) and its vote weight ('' unless it is in the score ordering).
-- #poster: the length in bytes of the poster's name; the body, the
-- rest, is kept byte for byte ('' once deleted). The poster is kept once
-- deleted, for the votes that stay (the poster's implied own upvote,
-- karma), but no read shows it. internal/layout's CommentRecord reads
-- and writes it in Go.
local CREC = '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) ([01]) (%d+) (%d+) (%S+) (%S+) (%d+) (%S*) (%S*) (%d+):()'
-- The offsets of the fields written in place, and the most bytes a head
-- takes: Comment refuses a longer one (a name of MaxNameLen bytes and
-- every meta field at its longest take well under).
local C_UP, C_DOWN, C_REPLIES, C_FIRST, C_LAST, C_NEXT, C_PREV, C_DELETED, C_META = 0, 11, 22, 33, 44, 55, 66, 77, 79
local HEAD = 640
-- VOTE_HEAD matches, from C_META, what a vote needs of the meta and the
-- poster's length (comment_vote.lua), with fewer captures than CREC.
local VOTE_HEAD = '^(%d+) (%d+) (%S+) (%S+) %d+ (%S*) (%S*) (%d+):()'
local NO_LINK = '0000000000'

-- An article's top level is a hash at k.thread .. aid with f and l, its
-- newest and oldest comment, as a record's first and last; the live
-- counts of all articles are one hash, aid -> count (Article.Comments).
--
-- A parent's replies are in one sorted set at k.kids .. <parent> (the
-- parent's cid, or "a" and the article id for the top level) in two
-- bands: each reply's best value (>= 0) under its member (member), and
-- its top value less TOP_BASE under its top member (topMember), so that
-- one ZADD writes both; the optional orderings it is in are each a
-- sorted set at k.kids .. <ordering> .. ':' .. <parent>. TOP_BASE is
-- 2^50: top values less it are exact, far below the best band, and have
-- digits enough that no reply writes them as "1e+15", which gopher-lua
-- (miniredis) cannot read back.
local TOP_BASE = 1125899906842624
local BEST_MIN, TOP_MAX = '-1', '-1e14' -- between the bands

-- topMember returns the member of a comment in its parent's top band:
-- as member, with capitals, so that it sorts among the others by id.
local function topMember(id) return string.char(64 + #id) .. id end

-- pad returns a count or a cid (nil for none) as the record writes it.
local function pad(n)
  return string.format('%010d', tonumber(n or 0))
end

-- unpad returns a link field's cid, nil for none.
local function unpad(s)
  if s == NO_LINK then
    return nil
  end
  return tostring(tonumber(s))
end

-- commentMeta returns meta of these fields.
local function commentMeta(a, p, t, c, h, o, w)
  return table.concat({a, p or '0', t, c, h, o or '', w or ''}, ' ')
end

-- parseComment returns the comment whose record (or head) is s, at key,
-- as a table: u, d, r its counts, f, l, nx, pv its links (strings, nil
-- for none), x '1' when deleted, a, p (nil for none), t, c, h, o, w (nil
-- for none) its meta's, n the poster, and rec the record (or head).
local function parseComment(s, key)
  local u, d, r, f, l, nx, pv, x, a, p, t, closes, h, o, w, np, at = string.match(s, CREC)
  np = tonumber(np)
  -- A head cut short (longer than HEAD, which no Comment writes) is no
  -- comment either: a write of it would lose the poster.
  if not at or at + np - 1 > #s then
    return error('voting: key ' .. key .. ' holds no comment', 0)
  end
  return {u = u, d = d, r = r, f = unpad(f), l = unpad(l), nx = unpad(nx), pv = unpad(pv),
    x = x == '1' and '1' or nil, a = a, p = p ~= '0' and p or nil, t = t, c = closes, h = h,
    o = o ~= '' and o or nil, w = w ~= '' and w or nil, n = string.sub(s, at, at + np - 1), rec = s}
end

-- commentRecord returns the record of c (parseComment's fields) with
-- this body.
local function commentRecord(c, body)
  return table.concat({pad(c.u), pad(c.d), pad(c.r), pad(c.f), pad(c.l), pad(c.nx), pad(c.pv), c.x or '0',
    commentMeta(c.a, c.p, c.t, c.c, c.h, c.o, c.w), #c.n}, ' ') .. ':' .. c.n .. body
end

-- moving fails the script where the comments of a store of layout 4 are
-- still being moved to this layout (reconfigure.lua, phase 'comments'),
-- whose cursor is the sibling of the key given, in the same hash tag: on
-- the way of a record that is not one of this layout (fetch) alone. A
-- call finds a move under way through its identity check (lib/base.lua
-- identity, storeMoving).
local function moving(key)
  local tag = string.match(key, '^({[^}]*}:)')
  if storeMoving or redis.call('EXISTS', tag .. 'cmoving') == 1 then
    return error(MOVING_ERROR, 0)
  end
end

-- fetch runs cmd on the comment record at key (GET or GETRANGE): a value
-- that is not a string (a record of layout 4 not moved yet, or one
-- written by hand) fails the script with what it is.
local function fetch(key, cmd, ...)
  local s = redis.pcall(cmd, key, ...)
  if type(s) == 'table' and s.err then
    moving(key)
    expect(key, 'string')
    return error(s.err, 0)
  end
  return s
end

-- readComment returns the comment at key (parseComment) with its body,
-- or nil when there is none: one GET.
local function readComment(key)
  local s = fetch(key, 'GET')
  if not s then
    return nil
  end
  return parseComment(s, key)
end

-- readHead returns the comment at key (parseComment) without its body,
-- or nil when there is none: one GETRANGE.
local function readHead(key)
  local s = fetch(key, 'GETRANGE', 0, HEAD - 1)
  if s == '' then
    return nil
  end
  return parseComment(s, key)
end

-- linkAt returns the link field at off of the record rec, read at its
-- fixed place: its cid, or nil for none; key names the record for the
-- error of a value that is no record.
local function linkAt(rec, off, key)
  local s = string.sub(rec, off + 1, off + 10)
  if s == NO_LINK then
    return nil
  end
  local n = tonumber(s)
  if not n or #s ~= 10 then
    return error('voting: key ' .. key .. ' holds no comment', 0)
  end
  return tostring(n)
end

-- setLink writes a link field of the record at key: off one of C_FIRST,
-- C_LAST, C_NEXT and C_PREV, id the cid (nil for none).
local function setLink(key, off, id)
  redis.call('SETRANGE', key, off, pad(id))
end

-- setEnd sets a parent's newest (which 'f') or oldest ('l') child to
-- id (nil for none): a comment's record (p its cid), or the article's
-- top level (p nil).
local END = {f = C_FIRST, l = C_LAST}
local function setEnd(k, p, aid, which, id)
  if p then
    return setLink(k.comment .. p, END[which], id)
  end
  if id then
    redis.call('HSET', k.thread .. aid, which, id)
  else
    redis.call('HDEL', k.thread .. aid, which)
  end
end

-- corderings returns the optional orderings a comment is in (its o),
-- besides best and top.
local NO_ORDERS = {} -- never written to
local function corderings(o)
  if not o or o == '' then
    return NO_ORDERS
  end
  local list = {}
  for name in string.gmatch(o, '[^,]+') do
    list[#list + 1] = name
  end
  return list
end

-- parentName returns the name of a comment's parent in the kids
-- orderings' keys: its cid, or "a" and the article id for the top level.
local function parentName(c)
  return c.p or ('a' .. c.a)
end

-- kidsKeys returns the keys of the orderings of c's parent that hold c,
-- its best and top bands' first, and the names of the orderings
-- (corderings) of the others, in their order from the second.
local function kidsKeys(k, c)
  local name, ords = parentName(c), corderings(c.o)
  local keys = {k.kids .. name}
  for i, o in ipairs(ords) do
    keys[i + 1] = k.kids .. o .. ':' .. name
  end
  return keys, ords
end

-- placeAt writes comment cid at its values for the counts up and down
-- (its post time pn and weight wn as numbers) in the i-th of its
-- parent's orderings (kidsKeys keys and ords): for 1, in the best and
-- top bands, with one ZADD. It returns Redis's reply, an error
-- included (redis.pcall).
local function placeAt(keys, ords, i, cid, pn, wn, up, down)
  if i == 1 then
    return redis.pcall('ZADD', keys[1], num(value('best', pn, wn, up, down)), member(cid),
      num(value('top', pn, wn, up, down) - TOP_BASE), topMember(cid))
  end
  return redis.pcall('ZADD', keys[i], num(value(ords[i - 1], pn, wn, up, down)), member(cid))
end

-- placeComment writes comment cid in every ordering of its parent
-- (placeAt), or, where a write fails (a foreign value at a key), puts
-- back those before it at the counts up0 and down0 and fails the
-- script: the first write fails before it writes anything.
local function placeComment(keys, ords, cid, pn, wn, up, down, up0, down0)
  for i = 1, #keys do
    local z = placeAt(keys, ords, i, cid, pn, wn, up, down)
    if type(z) == 'table' and z.err then
      for j = 1, i - 1 do
        placeAt(keys, ords, j, cid, pn, wn, up0, down0)
      end
      expect(keys[i], 'zset')
      return error(z.err, 0)
    end
  end
end

-- idLess reports whether the id a is below b, both canonical decimals.
local function idLess(a, b)
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

-- appendRow appends to out the row of comment id, at depth, whose
-- record (read whole) is rec: three strings, the id, the depth and the
-- record, which comments.go's parseComments reads. A deleted comment's
-- body is already ''; its poster comments.go leaves out.
local function appendRow(out, id, depth, rec)
  local n = #out
  out[n + 1], out[n + 2], out[n + 3] = id, depth, rec
  return out
end

-- ANCESTOR matches, in the front of a record, its live count, and,
-- from C_META, its parent (ancestors).
local ANCESTOR = '^%d+ (%d+)'

-- ancestors returns the cids above the comment whose parent is p (nil
-- for a reply to the article), nearest first, and their live counts,
-- checking each is a record: at most MaxCommentDepth reads of the front
-- of a record (the counts and meta's first fields: an article id has at
-- most 20 digits), before any write. head, where given, is p's head,
-- read already (parseComment), which it reads no more.
local function ancestors(prefix, p, head)
  local list, counts = {}, {}
  while p do
    local r, parent
    if head then
      r, parent, head = tonumber(head.r), head.p or '0', nil
    else
      local key = prefix .. p
      local s = fetch(key, 'GETRANGE', 0, 127)
      if s == '' then
        return error('voting: comment ' .. p .. ', an ancestor, is missing', 0)
      end
      r, parent = tonumber(string.sub(s, C_REPLIES + 1, C_REPLIES + 10)), string.match(s, ANCESTOR, C_META + 1)
      if not (r and parent) then
        return error('voting: key ' .. key .. ' holds no comment', 0)
      end
    end
    list[#list + 1], counts[#counts + 1] = p, r
    p = parent ~= '0' and parent or nil
    if #list > 1000 then
      return error('voting: comment ' .. list[1] .. ' has more than 1000 ancestors', 0)
    end
  end
  return list, counts
end

-- addLive adds n to the live count of each ancestor in list (counts,
-- theirs: ancestors) and of the article aid.
local function addLive(k, list, counts, aid, n)
  for i, cid in ipairs(list) do
    redis.call('SETRANGE', k.comment .. cid, C_REPLIES, pad(counts[i] + n))
  end
  local left = redis.call('HINCRBY', k.comments, aid, n)
  if left <= 0 then
    redis.call('HDEL', k.comments, aid)
  end
end

-- voterOpen reports whether voting on comment cid, of an article whose
-- comment voter record's '' field (the id of the comment that made the
-- record, which expires on the server's clock) is marker, is open: a
-- record made after the comment was posted (its first expired) keeps
-- no vote of the comment, which is then closed.
local function voterOpen(marker, cid)
  return marker and not idLess(cid, marker)
end

-- unlinkComment removes comment id (its record c) from its parent's
-- list of children and orderings, and deletes its record. Its caller
-- checked the keys.
local function unlinkComment(k, id, c)
  if c.pv then
    setLink(k.comment .. c.pv, C_NEXT, c.nx)
  else
    setEnd(k, c.p, c.a, 'f', c.nx)
  end
  if c.nx then
    setLink(k.comment .. c.nx, C_PREV, c.pv)
  else
    setEnd(k, c.p, c.a, 'l', c.pv)
  end
  local keys = kidsKeys(k, c)
  redis.call('ZREM', keys[1], member(id), topMember(id))
  for i = 2, #keys do
    redis.call('ZREM', keys[i], member(id))
  end
  redis.call('DEL', k.comment .. id)
end

-- CORDERINGS are the optional orderings of comments.
local CORDERINGS = {'hot', 'controversial', 'score'}

-- parentKeys returns every kids key of a parent named name.
local function parentKeys(k, name)
  local keys = {k.kids .. name}
  for _, o in ipairs(CORDERINGS) do
    keys[#keys + 1] = k.kids .. o .. ':' .. name
  end
  return keys
end
