-- user_comments.lua: reads one page of a user's comments (WithUserPages),
-- newest first, ties by id, highest first. Uses lua/lib.
local listKey = KEYS[1]
local prefix, start, count, bodies = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
-- start: how many live entries to skip; count: the page size.
-- Reply: {OK, row...} (lib/comments.lua commentRow).
--
-- Entries whose comment is gone (removed, or its article deleted) or
-- deleted are skipped, and removed, as user_page.lua does; a list holds
-- at most PAGE_CAP entries, which bounds the walk.
local CHUNK = 100
local list, live, gone, at = {}, 0, {}, 0
while live < start + count do
  local ms = redis.call('ZREVRANGE', listKey, at, at + CHUNK - 1)
  if #ms == 0 then
    break
  end
  for _, m in ipairs(ms) do
    local cid = idof(m)
    local c = readComment(prefix .. cid)
    if not c or c.x == '1' then
      gone[#gone + 1] = m
    else
      live = live + 1
      if live > start then
        list[#list + 1] = {cid, c, c.h}
        if live == start + count then
          break
        end
      end
    end
  end
  if #ms < CHUNK then
    break
  end
  at = at + CHUNK
end
for i = 1, #gone, 100 do
  redis.call('ZREM', listKey, unpack(gone, i, math.min(i + 99, #gone)))
end
return commentRows({body = bodies}, list, {OK})
