-- delete.lua: one step of Delete: removes an article and every trace of
-- it (lib/delete.lua delete), once its comments are gone: an article
-- with comments first loses up to step of them a step
-- (lib/removal.lua purgeComments). Uses lua/lib.
openStore(KEYS, 'w')
local scoreKey = KEYS[1] -- the store's slot, for routing
local id = ARGV[1]
local k = {article = ARGV[2], voted = ARGV[3], groups = ARGV[4], group = ARGV[5],
  by = ARGV[6], cache = ARGV[7], bucket = ARGV[8], link = ARGV[9]}
k.submitted = ARGV[10] -- the prefix of submitted pages (WithUserPages)
k.comment, k.thread, k.kids, k.cvoted, k.comments = ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15]
local step = tonumber(ARGV[16])
-- Reply: {OK, more} | {NOT_FOUND}: more is 1 when comments remain, and
-- the article with them: call again.
local d = deleting(k, id)
if not d then
  return {NOT_FOUND}
end
if redis.call('EXISTS', k.thread .. id) == 1 and not purgeComments(k, id, step) then
  return {OK, 1}
end
deleteNow(k, d)
return {OK, 0}
