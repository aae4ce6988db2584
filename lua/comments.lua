-- comments.lua: reads comments by id (Store.CommentsByID). Uses lua/lib.
openStore(KEYS, 'r')
local cseqKey = KEYS[1] -- the store's slot, for routing
local prefix = ARGV[1]
-- ARGV[2..]: the ids.
-- Reply: {OK, row...}: a row (lib/comments.lua appendRow) for each id
-- whose comment exists, in the order of the ids.
moving(prefix)
local out = {OK}
for i = 2, #ARGV do
  local c = readComment(prefix .. ARGV[i])
  if c then
    appendRow(out, ARGV[i], c.h, c.rec)
  end
end
return out
