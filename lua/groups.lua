-- groups.lua: lists the groups an article is in. Uses lua/lib.
openStore(KEYS, 'r')
local articleKey, groupsKey = KEYS[1], KEYS[2]
-- Reply: {OK, names...} (unordered) | {NOT_FOUND}.
if missing(articleKey) then
  return {NOT_FOUND}
end
local out = redis.call('SMEMBERS', groupsKey)
table.insert(out, 1, OK)
return out
