-- page.lua: reads one page of articles in one ordering. Uses lib.lua.
local orderingKey, scoreKey = KEYS[1], KEYS[2]
local articlePrefix, start, stop, desc = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down.
-- Reply: {OK, the page's rows}.
if orderingKey == scoreKey then -- the scores come with the members
  local cmd = desc == '1' and 'ZREVRANGE' or 'ZRANGE'
  return scoredRows(articlePrefix, redis.call(cmd, orderingKey, start, stop, 'WITHSCORES'), {OK})
end
return rows(articlePrefix, scoreKey, range(orderingKey, start, stop, desc), {OK})
