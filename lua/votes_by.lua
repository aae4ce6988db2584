-- votes_by.lua: reads a page of a user's vote log (Store.VotesBy,
-- lib/moderation.lua), newest first. Uses lua/lib.
openStore(KEYS, 'rl')
local logKey = KEYS[1]
local cursor, limit = ARGV[1], tonumber(ARGV[2])
local articlePrefix, commentPrefix = ARGV[3], ARGV[4]
-- cursor: the offset where the page before stopped, the first byte of
-- its oldest line ('' for the first page: the log's end). limit: the
-- most entries to read.
-- Reply: {OK, next, line, ...}: the cursor of the next page ('' where
-- the log holds no more), then the lines of the standing votes, newline
-- left off, newest first; those whose item is gone (deleted, pruned)
-- are left out, and so are lines taken back, so a page may hold fewer
-- than limit | {INVALID}: a cursor that is no line's start.
-- It reads at most LOG_PAGE_BYTES a line of limit from the log.
expect(logKey, 'string')
local stop = redis.call('STRLEN', logKey)
if cursor ~= '' then
  local c = tonumber(cursor)
  if c > stop or (c > 0 and redis.call('GETRANGE', logKey, c - 1, c - 1) ~= '\n') then
    return {INVALID}
  end
  stop = c
end
local out = {OK, ''}
if stop == 0 then
  return out
end
local lines, starts = logLinesBefore(logKey, 0, stop, limit * LOG_PAGE_BYTES)
local n = 0
for i = #lines, 1, -1 do
  if n == limit then
    out[2] = tostring(starts[i + 1])
    return out
  end
  local sign, item = string.match(lines[i], LOG_LINE)
  if not sign then
    out[#out + 1] = lines[i] -- no line the store writes: the client reports it
  elseif sign ~= LOG_DEAD then
    n = n + 1
    local comment, id = loggedItem(item)
    if redis.call('EXISTS', (comment and commentPrefix or articlePrefix) .. id) == 1 then
      out[#out + 1] = lines[i]
    end
  end
end
if starts[1] and starts[1] > 0 then
  out[2] = tostring(starts[1])
end
return out
