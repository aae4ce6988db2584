-- comment_delete.lua: deletes a comment (Store.DeleteComment): one
-- without replies is removed whole, and then each deleted ancestor left
-- without replies; one with replies stays as a placeholder. Uses lua/lib.
local key, commentsKey = KEYS[1], KEYS[2]
local cid = ARGV[1]
local k = {comment = ARGV[2], thread = ARGV[3], kids = ARGV[4], comments = commentsKey}
local commented = ARGV[5] -- the prefix of the users' comment pages, kept or not
-- Reply: {OK} | {NOT_FOUND}.
moving(key)
local c = readHead(key)
if not c then
  return {NOT_FOUND}
end
if c.x == '1' then
  return {OK} -- a placeholder already
end
-- Every key written below is checked before the first write.
local up, counts = ancestors(k.comment, c.p)
expect(commentsKey, 'hash')
local page = commented .. c.n
expect(page, 'zset')
local m = member(cid)
if c.f then
  addLive(k, up, counts, c.a, -1)
  c.x = '1'
  redis.call('SET', key, commentRecord(c, ''))
  redis.call('ZREM', page, m)
  return {OK}
end

-- The comments removed: this one, then each deleted ancestor whose only
-- reply is the one removed before it.
local plan, cur = {{id = cid, c = c}}, c
local curID = cid
while cur.p do
  local p = readHead(k.comment .. cur.p)
  if p.x ~= '1' or p.f ~= curID or p.l ~= curID then
    break
  end
  plan[#plan + 1] = {id = cur.p, c = p}
  curID, cur = cur.p, p
end
for _, x in ipairs(plan) do
  local r = x.c
  if not r.p then expect(k.thread .. r.a, 'hash') end
  if r.pv then expect(k.comment .. r.pv, 'string') end
  if r.nx then expect(k.comment .. r.nx, 'string') end
  for _, kk in ipairs(kidsKeys(k, r)) do
    expect(kk, 'zset')
  end
end

addLive(k, up, counts, c.a, -1)
redis.call('ZREM', page, m)
for _, x in ipairs(plan) do
  unlinkComment(k, x.id, x.c)
end
return {OK}
