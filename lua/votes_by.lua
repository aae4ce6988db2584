-- votes_by.lua: reads a page of a user's vote log (Store.VotesBy,
-- lib/moderation.lua), newest first. Uses lua/lib.
openStore(KEYS, 'r')
local logKey = KEYS[1]
local afterScore, afterItem, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local articlePrefix, commentPrefix = ARGV[4], ARGV[5]
-- afterScore, afterItem: the cursor, the last entry of the page before
-- ('' for the first page). limit: the most entries to read.
-- Reply: {OK, nextScore, nextItem, item, score, ...}: the cursor of the
-- next page, the last entry read ('' '' where the log holds no more),
-- then the entries; those whose item is gone (deleted, pruned) are left
-- out, so a page may hold fewer than limit.
expect(logKey, 'zset')
local list
if afterScore == '' then
  list = redis.call('ZREVRANGE', logKey, 0, limit - 1, 'WITHSCORES')
elseif redis.call('ZSCORE', logKey, afterItem) == afterScore then
  local r = redis.call('ZREVRANK', logKey, afterItem)
  list = redis.call('ZREVRANGE', logKey, r + 1, r + limit, 'WITHSCORES')
else
  -- The cursor's entry moved or went: on from the entries older than it.
  list = redis.call('ZREVRANGEBYSCORE', logKey, '(' .. afterScore, '-inf', 'WITHSCORES', 'LIMIT', 0, limit)
end
local out = {OK, '', ''}
if #list == 2 * limit then
  out[2], out[3] = list[#list], list[#list - 1]
end
for i = 1, #list, 2 do
  local item = list[i]
  local comment, id = loggedItem(item)
  local key = (comment and commentPrefix or articlePrefix) .. id
  if redis.call('EXISTS', key) == 1 then
    out[#out + 1], out[#out + 2] = item, list[i + 1]
  end
end
return out
