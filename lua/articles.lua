-- articles.lua: reads articles by id. Uses lua/lib.
openStore(KEYS, 'r')
local scoreKey = KEYS[1] -- the store's slot, for routing
local articlePrefix = ARGV[1]
-- ARGV[2..]: the ids.
-- Reply: {OK, one row per id whose article exists, in the order of the ids}.
local members = {}
for i = 2, #ARGV do
  members[#members + 1] = member(ARGV[i])
end
return rows(articlePrefix, members, {OK})
