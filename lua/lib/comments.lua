-- comments.lua: a comment as the store keeps it (comments.go): its
-- record, its place among its siblings and in its parent's orderings,
-- the row a read replies, and the walk up its ancestors.
-- Needs: base.lua (expect, member, num, mgetAt), record.lua (value, has).

-- The status of a call whose input does not fit the data (a parent of
-- another article, a comment too deep): the reason follows.
local INVALID = 9

-- A comment's record is a hash at k.comment .. cid, its fields in the
-- order Comment writes them, so that a vote, which reads and writes the
-- first four, finds them at the front of a small hash (a listpack, which
-- Redis searches from the front):
--   u, d vote counts · m what never changes (META) · n poster ·
--   r live descendants, all levels · x '1' once deleted · f, l newest and
--   oldest child · nx next older sibling, pv previous newer sibling.
-- The body is a string of its own at k.body .. cid (absent once
-- deleted), so that no body makes the record a full hash table (Redis
-- keeps a hash as a listpack while each value is at most 64 bytes).
-- The poster is kept once deleted, for the votes that stay (the
-- poster's implied own upvote, karma), but no read shows it.
-- An article's top level is a hash at k.thread .. aid with f and l, as
-- a comment's children are; the live counts of all articles are one
-- hash, aid -> count (Article.Comments).
--
-- META is m: the article id, the parent's cid ('0' for a reply to the
-- article), the post time (Unix s, the store's clock), the time its
-- voting closes, its depth (0 for a reply to the article), the optional
-- orderings it is in besides best and top (comma-separated, '' for
-- none) and its vote weight ('' unless it is in the score ordering).
local META = '^(%d+) (%d+) (%S+) (%S+) (%d+) (%S*) (%S*)$'
local CFIELDS = {'u', 'd', 'm', 'n', 'r', 'x', 'f', 'l', 'nx', 'pv'}

-- commentMeta returns m of these fields.
local function commentMeta(a, p, t, c, h, o, w)
  return table.concat({a, p or '0', t, c, h, o or '', w or ''}, ' ')
end

-- parseMeta sets c's a, p (nil for none), t, c, h, o and w (nil for
-- none) from its m.
local function parseMeta(c, key)
  local a, p, t, closes, h, o, w = string.match(c.m or '', META)
  if not a then
    return error('voting: key ' .. key .. ' holds no comment', 0)
  end
  c.a, c.t, c.c, c.h = a, t, closes, h
  if p ~= '0' then c.p = p end
  if o ~= '' then c.o = o end
  if w ~= '' then c.w = w end
  return c
end

-- readComment returns the comment at key as a table of CFIELDS and its
-- META's (strings, nil where absent), or nil when there is none: one
-- HMGET.
local function readComment(key)
  local v = redis.call('HMGET', key, unpack(CFIELDS))
  if not v[3] then
    return nil
  end
  local c = {}
  for i, f in ipairs(CFIELDS) do
    c[f] = v[i] or nil
  end
  return parseMeta(c, key)
end

-- parentOf returns the parent's cid of the comment at key (nil for a
-- reply to the article), checking the key is a hash.
local function parentOf(key)
  expect(key, 'hash')
  local m = redis.call('HGET', key, 'm')
  local p = m and string.match(m, '^%d+ (%d+)')
  if p == '0' then
    return nil
  end
  return p
end

-- corderings returns the orderings of a comment's parent that hold it:
-- best and top always, then those of its o field.
local BEST_TOP = {'best', 'top'} -- never written to
local function corderings(o)
  if not o or o == '' then
    return BEST_TOP
  end
  local list = {'best', 'top'}
  do
    for name in string.gmatch(o, '[^,]+') do
      list[#list + 1] = name
    end
  end
  return list
end

-- parentName returns the name of a comment's parent in the kids
-- orderings' keys: its cid, or "a" and the article id for the top level.
local function parentName(c)
  return c.p or ('a' .. c.a)
end

-- cvalue returns a comment's value in an ordering (lib/record.lua value,
-- the formulas of order.go), from its counts as numbers.
local function cvalue(ordering, c, up, down)
  return value(ordering, tonumber(c.t), tonumber(c.w or 0), up, down)
end

-- idLess reports whether the id a is below b, both canonical decimals.
local function idLess(a, b)
  if #a ~= #b then
    return #a < #b
  end
  return a < b
end

-- commentHead returns the front of a comment's row, all but its body,
-- from its record's fields u, d, m, n, r and x, and its depth in the
-- reply; deleted reports whether it is deleted, whose body is ''. A row
-- is one string, which reply.go's parseCommentRow reads:
--   <id> <up> <down> <replies> <deleted 0|1> <depth> <m> <#poster>:<poster><body>
-- with m as the record has it (META). A deleted comment's poster and
-- body are ''.
local function commentHead(id, u, d, m, n, r, x, depth)
  local poster, deleted = n or '', '0'
  if x == '1' then
    poster, deleted = '', '1'
  end
  return table.concat({id, u, d, r or '0', deleted, depth, m, #poster}, ' ') .. ':' .. poster, deleted == '1'
end

-- commentRow returns the row of comment id (c, its record's table) at
-- depth, with its body.
local function commentRow(id, c, depth, body)
  local head, deleted = commentHead(id, c.u, c.d, c.m, c.n, c.r, c.x, depth)
  if deleted then
    return head
  end
  return head .. (body or '')
end

-- commentRows appends to out the rows of list, {id, c, depth} each, with
-- their bodies, read with one MGET at k.body.
local function commentRows(k, list, out)
  if #list == 0 then
    return out
  end
  local _, bodies = mgetAt(k.body, list, function(e) return e[1] end)
  for i, e in ipairs(list) do
    out[#out + 1] = commentRow(e[1], e[2], e[3], bodies[i] or '')
  end
  return out
end

-- ancestors returns the cids above the comment whose parent is p (nil
-- for a reply to the article), nearest first, checking each is a hash:
-- at most MaxCommentDepth reads, before any write.
local function ancestors(prefix, p)
  local list = {}
  while p do
    list[#list + 1] = p
    p = parentOf(prefix .. p)
    if #list > 1000 then
      return error('voting: comment ' .. list[1] .. ' has more than 1000 ancestors', 0)
    end
  end
  return list
end

-- addLive adds n to the live count of each ancestor in list and of the
-- article aid.
local function addLive(k, list, aid, n)
  for _, cid in ipairs(list) do
    redis.call('HINCRBY', k.comment .. cid, 'r', n)
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
  local container = c.p and k.comment .. c.p or k.thread .. c.a
  -- link points the sibling from (the container where there is none)
  -- at to through field (the container's end field where there is none).
  local function link(from, to, field, endField)
    local key = container
    if from then
      key, endField = k.comment .. from, field
    end
    if to then
      redis.call('HSET', key, endField, to)
    else
      redis.call('HDEL', key, endField)
    end
  end
  link(c.pv, c.nx, 'nx', 'f')
  link(c.nx, c.pv, 'pv', 'l')
  local m = member(id)
  for _, o in ipairs(corderings(c.o)) do
    redis.call('ZREM', k.kids .. o .. ':' .. parentName(c), m)
  end
  redis.call('DEL', k.comment .. id, k.body .. id)
end

-- CORDERINGS are every ordering of comments.
local CORDERINGS = {'best', 'top', 'hot', 'controversial', 'score'}

-- purgeComments removes, in post order, up to budget of the comments of
-- article aid (one step of Delete or Prune of an article with comments):
-- from the article's newest top-level comment it goes down the newest
-- children to a comment without any, removes it, then its next older
-- sibling's subtree, then its parent, and so on. Each step starts again
-- from the top, so comments posted between steps are found. It reads
-- every record it removes before its first write. It returns whether
-- the article has no comment left, and then removes the article's
-- comment keys too: its top level, its orderings, its comment voter
-- record and its live count. The descent to the first comment without
-- children reads at most MaxCommentDepth records, past budget.
local function purgeComments(k, aid, budget)
  local threadKey = k.thread .. aid
  expect(threadKey, 'hash')
  expect(k.comments, 'hash')
  local plan, done, cur = {}, false, redis.call('HGET', threadKey, 'f')
  local function down(id)
    local c = readComment(k.comment .. id)
    while c and c.f do
      id = c.f
      c = readComment(k.comment .. id)
    end
    return id, c
  end
  if not cur then
    done = true
  else
    local c
    cur, c = down(cur)
    while #plan < budget do
      if not c then
        return error('voting: comment ' .. cur .. ' of article ' .. aid .. ' is missing', 0)
      end
      plan[#plan + 1] = {id = cur, c = c}
      if c.nx then
        cur, c = down(c.nx)
      elseif c.p then
        cur = c.p
        c = readComment(k.comment .. cur)
      else
        done = true
        break
      end
    end
  end
  local removed, live = {}, 0
  for _, x in ipairs(plan) do
    removed[x.id] = true
  end
  -- The orderings of the parents that stay, which lose members, checked
  -- before the first write; the top level's go whole when done.
  local function stays(c)
    return not (c.p and removed[c.p]) and not (done and not c.p)
  end
  for _, x in ipairs(plan) do
    if stays(x.c) then
      for _, o in ipairs(corderings(x.c.o)) do
        expect(k.kids .. o .. ':' .. parentName(x.c), 'zset')
      end
    end
  end
  for _, x in ipairs(plan) do
    local c = x.c
    if c.x ~= '1' then
      live = live + 1
    end
    if stays(c) then
      -- Its parent stays (this step): its newest child is the next.
      local container = c.p and k.comment .. c.p or threadKey
      if c.nx then
        redis.call('HSET', container, 'f', c.nx)
        redis.call('HDEL', k.comment .. c.nx, 'pv')
      else
        redis.call('HDEL', container, 'f', 'l')
      end
      local m = member(x.id)
      for _, o in ipairs(corderings(c.o)) do
        redis.call('ZREM', k.kids .. o .. ':' .. parentName(c), m)
      end
    end
    local keys = {k.comment .. x.id, k.body .. x.id}
    for _, o in ipairs(CORDERINGS) do
      keys[#keys + 1] = k.kids .. o .. ':' .. x.id
    end
    redis.call('DEL', unpack(keys))
  end
  if live > 0 then
    local left = redis.call('HINCRBY', k.comments, aid, -live)
    if left <= 0 then
      redis.call('HDEL', k.comments, aid)
    end
  end
  if done then
    local keys = {threadKey, k.cvoted .. aid}
    for _, o in ipairs(CORDERINGS) do
      keys[#keys + 1] = k.kids .. o .. ':a' .. aid
    end
    redis.call('UNLINK', unpack(keys))
    redis.call('HDEL', k.comments, aid)
  end
  return done
end
