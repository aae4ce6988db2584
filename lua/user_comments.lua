-- user_comments.lua: reads one page of a user's comments (WithUserPages),
-- newest first, ties by id, highest first. Uses lua/lib.
openStore(KEYS, 'r')
local listKey = KEYS[1]
local prefix, start, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
-- start: how many live entries to skip; count: the page size.
-- Reply: {OK, row...} (lib/comments.lua appendRow).
--
-- Entries whose comment is gone (removed, or its article deleted) or
-- deleted are skipped and removed (lib/pages.lua pageWalk), which reads
-- each comment's record.
moving(prefix)
local page = pageWalk(listKey, start, count, function(ms)
  local values = {}
  for i, m in ipairs(ms) do
    local c = readComment(prefix .. idof(m))
    values[i] = c and c.x ~= '1' and c
  end
  return values
end)
local out = {OK}
for _, e in ipairs(page) do
  appendRow(out, idof(e[1]), e[2].h, e[2].rec)
end
return out
