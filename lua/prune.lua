-- prune.lua: one bounded step of Prune: deletes (lib/delete.lua deleting,
-- deleteNow) up to limit of the oldest articles posted at or before
-- last, and stops early once their group memberships reach budget, as each membership costs a
-- removal from the group and from its caches in every ordering. The first
-- article is always deleted, so every step makes progress. Uses lua/lib.
openStore(KEYS, 'w')
local timeKey = KEYS[1]
local last, limit, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local k = {article = ARGV[4], voted = ARGV[5], groups = ARGV[6], group = ARGV[7],
  by = ARGV[8], cache = ARGV[9], bucket = ARGV[10], link = ARGV[11]}
k.submitted = ARGV[12] -- the prefix of submitted pages (WithUserPages)
k.comment, k.thread, k.kids, k.cvoted, k.comments = ARGV[13], ARGV[14], ARGV[15], ARGV[16], ARGV[17]
local commentStep = tonumber(ARGV[18])
-- Reply: {OK, deleted, more}: more is 1 when articles may remain.
-- An article with comments loses up to commentStep of them a step
-- (lib/removal.lua purgeComments): the step that finds the first
-- article with comments left removes them, and the article once none
-- is left; a step stops before any later article with comments.
local members = redis.call('ZRANGEBYSCORE', timeKey, '-inf', last, 'LIMIT', 0, limit)
-- Every article of the step is checked (lib/delete.lua deleting) before the
-- first is deleted. A check that fails past the first article ends the
-- step before it, so the step replies what it deleted and the next one
-- fails on that article before any write.
local todo, work = {}, 0
local function check(id)
  expect(k.groups .. id, 'set')
  work = work + redis.call('SCARD', k.groups .. id)
  local d = deleting(k, id)
  if not d then
    for _, o in ipairs(ALL) do
      expect(k.by .. o, 'zset')
    end
  end
  return d
end
for _, m in ipairs(members) do
  local ok, d = true, nil
  local commented = redis.call('EXISTS', k.thread .. idof(m)) == 1
  if #todo > 0 and commented then
    break
  end
  if #todo == 0 then
    d = check(idof(m)) -- an error fails the step before any write
  else
    ok, d = pcall(check, idof(m))
  end
  if not ok or (#todo > 0 and work > budget) then
    break
  end
  todo[#todo + 1] = {m = m, d = d or false}
  if commented and d and not purgeComments(k, idof(m), commentStep) then
    return {OK, 0, 1}
  end
end
local deleted = 0
for _, t in ipairs(todo) do
  if t.d then
    deleteNow(k, t.d)
    deleted = deleted + 1
  else
    -- A member without its article (written by hand): drop it, or the
    -- next step would find it again.
    for _, o in ipairs(ALL) do
      redis.call('ZREM', k.by .. o, t.m)
    end
  end
end
local more = 0
if #members == limit or #todo < #members then more = 1 end
return {OK, deleted, more}
