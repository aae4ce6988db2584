-- comment_delete.lua: one step of Store.DeleteComment: deletes a
-- comment: one without replies is removed whole, and then each deleted
-- ancestor left without replies, a step of them (lib/removal.lua
-- chainPlan); one with replies stays as a placeholder. With cid '', it
-- goes on with a removal of ancestors left for a later step (lib/removal.lua
-- resumeRemoval). Uses lua/lib.
openStore(KEYS, 'w')
local key, commentsKey = KEYS[1], KEYS[2] -- the comment's record (the set of removals left, for cid '')
local cid = ARGV[1]
local k = {comment = ARGV[2], thread = ARGV[3], kids = ARGV[4], comments = commentsKey}
local commented = ARGV[5] -- the prefix of the users' comment pages, kept or not
k.removing = ARGV[6]
-- step: the most comments a step removes; walk: the ancestors walked
-- that cost as much as a comment removed (bounded.go ancestorStep,
-- ancestorWalk).
local step, walk = tonumber(ARGV[7]), tonumber(ARGV[8])
-- Reply: {OK, more, removed} | {NOT_FOUND}: more is 1 while a removal
-- is left, this call's or another's (call again with cid ''); removed,
-- the comments removed whole.
moving(key)
-- Every key written below is checked before the first write.
expect(k.removing, 'set')
local function done(removed)
  return {OK, redis.call('SCARD', k.removing) > 0 and 1 or 0, removed}
end
if cid == '' then
  return done(resumeRemoval(k, step))
end
local c = readHead(key)
if not c then
  return {NOT_FOUND}
end
if c.x == '1' then
  return done(0) -- a placeholder already
end
local up, counts = ancestors(k.comment, c.p)
expect(commentsKey, 'hash')
local page = commented .. c.n
expect(page, 'zset')
if c.f then
  addLive(k, up, counts, c.a, -1)
  c.x = '1'
  redis.call('SET', key, commentRecord(c, ''))
  redis.call('ZREM', page, member(cid))
  return done(0)
end

-- The comments removed: this one, then each deleted ancestor whose only
-- reply is the one removed before it, up to step of them, less what the
-- walk up the ancestors cost.
local plan = {{id = cid, c = c}}
local left = chainPlan(k, plan, math.max(1, step - math.floor(#up / walk)))
expectPlan(k, plan)
addLive(k, up, counts, c.a, -1)
redis.call('ZREM', page, member(cid))
removePlan(k, plan, left)
return done(#plan)
