-- user_page.lua: reads one page of a user's submitted or upvoted
-- articles (WithUserPages), newest entry first, ties by id, highest
-- first. Uses lua/lib.
local listKey, scoreKey = KEYS[1], KEYS[2]
local articlePrefix, start, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
-- start: how many live entries to skip; count: the page size.
-- Reply: {OK, the page's rows}.
--
-- Entries whose article is gone (deleted or pruned: Delete reaches the
-- poster's submitted page but not its voters' upvoted pages) are skipped
-- and removed, so each page but the last is full. The walk reads the
-- list in chunks, down to the page's last row, and tells a live article
-- from a gone one by its score (ZMSCORE: one call a chunk); a list holds
-- at most PAGE_CAP entries, which bounds it.
local CHUNK = 100
local out, live, gone, at = {OK}, 0, {}, 0
while live < start + count do
  local ms = redis.call('ZREVRANGE', listKey, at, at + CHUNK - 1)
  if #ms == 0 then
    break
  end
  local scores = redis.call('ZMSCORE', scoreKey, unpack(ms))
  for i, m in ipairs(ms) do
    if not scores[i] then
      gone[#gone + 1] = m
    else
      live = live + 1
      if live > start then
        rows(articlePrefix, {m}, out)
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
return out
