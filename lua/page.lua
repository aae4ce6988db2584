-- page.lua: reads one page of articles in one ordering. Uses lua/lib.
local orderingKey = KEYS[1]
local articlePrefix, start, stop, desc = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down.
-- Reply: {OK, page}: page is the page's rows as one string, for each
-- article that exists, in order, its member (member: the id after one
-- byte of its length), the length of its record in decimal, '+' and its
-- live comment count where it has any, a space and the record (RECORD): one value to read for the whole page (reply.go
-- parsePage). Members whose article is gone are skipped.
local members = range(orderingKey, start, stop, desc)
if #members == 0 then
  return {OK, ''}
end
local keys = {}
for i, m in ipairs(members) do
  keys[i] = articlePrefix .. idof(m)
end
local counts = commentCounts(articlePrefix, keys)
local out, n, format = {}, 0, string.format
for i, r in ipairs(redis.call('MGET', unpack(keys))) do
  if r then
    if counts[i] then
      out[n + 1], out[n + 2], out[n + 3] = members[i], format('%d+%s ', #r, counts[i]), r
    else
      out[n + 1], out[n + 2], out[n + 3] = members[i], format('%d ', #r), r
    end
    n = n + 3
  end
end
return {OK, join(out)}
