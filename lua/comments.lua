-- comments.lua: reads comments by id (Store.CommentsByID). Uses lua/lib.
local cseqKey = KEYS[1] -- the store's slot, for routing
local prefix, bodies = ARGV[1], ARGV[2]
-- ARGV[3..]: the ids; bodies: the prefix of the bodies.
-- Reply: {OK, one row (lib/comments.lua commentRow) per id whose comment
-- exists, in the order of the ids}.
local list = {}
for i = 3, #ARGV do
  local c = readComment(prefix .. ARGV[i])
  if c then
    list[#list + 1] = {ARGV[i], c, c.h}
  end
end
return commentRows({body = bodies}, list, {OK})
