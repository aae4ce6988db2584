-- comments.lua: reads comments by id (Store.CommentsByID). Uses lua/lib.
local cseqKey = KEYS[1] -- the store's slot, for routing
local prefix = ARGV[1]
-- ARGV[2..]: the ids.
-- Reply: {OK, one row (lib/comments.lua commentRow) per id whose comment
-- exists, in the order of the ids}.
local out = {OK}
for i = 2, #ARGV do
  local c = readComment(prefix .. ARGV[i])
  if c then
    out[#out + 1] = commentRow(ARGV[i], c, c.h)
  end
end
return out
