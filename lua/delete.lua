-- delete.lua: removes an article and every trace of it (lib/delete.lua delete).
-- Uses lua/lib.
local scoreKey = KEYS[1] -- the store's slot, for routing
local id = ARGV[1]
local k = {article = ARGV[2], voted = ARGV[3], groups = ARGV[4], group = ARGV[5],
  by = ARGV[6], cache = ARGV[7], bucket = ARGV[8], link = ARGV[9]}
k.submitted = ARGV[10] -- the prefix of submitted pages (WithUserPages)
-- Reply: {OK} | {NOT_FOUND}.
if delete(k, id) then
  return {OK}
end
return {NOT_FOUND}
