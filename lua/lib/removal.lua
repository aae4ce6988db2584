-- removal.lua: removing comments whole: a deleted comment's ancestors
-- that its removal leaves without replies (DeleteComment, comment_delete.lua),
-- and an article's comments (Delete, Prune).
-- Needs: base.lua (expect, member), comments.lua (readHead, kidsKeys,
-- setEnd, setLink, unlinkComment, parentKeys, moving, C_NEXT, C_PREV).

-- A chain of deleted comments, each with no reply but the one below,
-- is removed from its bottom up, at most a step of them a script
-- (bounded.go ancestorStep), so that a chain MaxCommentDepth long takes
-- no script long. Between steps the top of the chain is a deleted
-- comment without replies, as every read shows it; its cid waits in
-- the set k.removing, from which the next DeleteComment, any comment's,
-- goes on (comment_delete.lua), until none is left.

-- chainPlan appends to plan, whose last entry ({id, c}, c its head) is
-- removed, the deleted ancestors that its removal leaves without
-- replies, nearest first, each with no reply but the one below it,
-- until plan holds limit entries. It returns the cid of the next such
-- ancestor, left past limit, or nil: at most limit reads of a head.
local function chainPlan(k, plan, limit)
  local x = plan[#plan]
  local id, c = x.id, x.c
  while c.p do
    local p = readHead(k.comment .. c.p)
    if not p or p.x ~= '1' or p.f ~= id or p.l ~= id then
      return nil
    end
    if #plan >= limit then
      return c.p
    end
    plan[#plan + 1] = {id = c.p, c = p}
    id, c = c.p, p
  end
  return nil
end

-- expectPlan checks every key that removePlan writes for plan.
local function expectPlan(k, plan)
  for _, x in ipairs(plan) do
    local r = x.c
    if not r.p then expect(k.thread .. r.a, 'hash') end
    if r.pv then expect(k.comment .. r.pv, 'string') end
    if r.nx then expect(k.comment .. r.nx, 'string') end
    for _, kk in ipairs(kidsKeys(k, r)) do
      expect(kk, 'zset')
    end
  end
end

-- removePlan removes the comments of plan, in its order (each the only
-- reply of the next), checked by expectPlan; left, where given, is the
-- ancestor chainPlan left, kept in k.removing for a later step.
local function removePlan(k, plan, left)
  for _, x in ipairs(plan) do
    unlinkComment(k, x.id, x.c)
  end
  if left then
    redis.call('SADD', k.removing, left)
  end
end

-- resumeRemoval removes, in one step, up to budget of a chain left in
-- k.removing, from its bottom: the cid taken leaves the set, and comes
-- back as the next ancestor where the chain goes on. A cid whose
-- comment is gone, not deleted or has replies again (a reply came
-- meanwhile) only leaves. It returns how many it removed.
local function resumeRemoval(k, budget)
  local id = redis.call('SRANDMEMBER', k.removing)
  if not id then
    return 0
  end
  local c = readHead(k.comment .. id)
  local plan, left = {}, nil
  if c and c.x == '1' and not c.f then
    plan[1] = {id = id, c = c}
    left = chainPlan(k, plan, budget)
  end
  expectPlan(k, plan)
  redis.call('SREM', k.removing, id)
  removePlan(k, plan, left)
  return #plan
end

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
    local c = readHead(k.comment .. id)
    while c and c.f do
      id = c.f
      c = readHead(k.comment .. id)
    end
    return id, c
  end
  if not cur then
    done = true
  else
    moving(k.comment)
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
        c = readHead(k.comment .. cur)
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
      for _, key in ipairs(kidsKeys(k, x.c)) do
        expect(key, 'zset')
      end
      if x.c.p then expect(k.comment .. x.c.p, 'string') end
      if x.c.nx then expect(k.comment .. x.c.nx, 'string') end
    end
  end
  for _, x in ipairs(plan) do
    local c = x.c
    if c.x ~= '1' then
      live = live + 1
    end
    if stays(c) then
      -- Its parent stays (this step): its newest child is the next.
      setEnd(k, c.p, c.a, 'f', c.nx)
      if c.nx then
        setLink(k.comment .. c.nx, C_PREV, nil)
      else
        setEnd(k, c.p, c.a, 'l', nil)
      end
      local keys = kidsKeys(k, c)
      redis.call('ZREM', keys[1], member(x.id), topMember(x.id))
      for i = 2, #keys do
        redis.call('ZREM', keys[i], member(x.id))
      end
    end
    local keys = parentKeys(k, x.id)
    keys[#keys + 1] = k.comment .. x.id
    redis.call('DEL', unpack(keys))
  end
  if live > 0 then
    local left = redis.call('HINCRBY', k.comments, aid, -live)
    if left <= 0 then
      redis.call('HDEL', k.comments, aid)
    end
  end
  if done then
    local keys = parentKeys(k, 'a' .. aid)
    keys[#keys + 1], keys[#keys + 2] = threadKey, k.cvoted .. aid
    redis.call('UNLINK', unpack(keys))
    redis.call('HDEL', k.comments, aid)
  end
  return done
end
