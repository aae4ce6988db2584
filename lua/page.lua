-- page.lua: reads one page of articles in one ordering. Uses lua/lib.
local orderingKey = KEYS[1]
local articlePrefix, start, stop, desc = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down.
-- Reply: {OK, the page's rows}.
return rows(articlePrefix, range(orderingKey, start, stop, desc), {OK})
