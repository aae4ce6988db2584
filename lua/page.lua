-- page.lua: reads one page of articles in one ordering. Uses lua/lib.
openStore(KEYS, 'r')
local orderingKey = KEYS[1]
local articlePrefix, start, stop, desc = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down.
-- Reply: {OK, page}: page is the page's rows as one string
-- (lib/record.lua pageRows; page.go parsePage).
return {OK, join(pageRows(orderingKey, articlePrefix, start, stop, desc))}
