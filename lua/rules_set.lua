-- rules_set.lua: sets the numbers of rules that are on (Store.SetRules).
-- Uses lua/lib.
local storeKey, storeIdentity, storeUnrecorded = openStore(KEYS, 'w')
local rulesKey = KEYS[1]
local want, set = ARGV[1], ARGV[2]
-- want: this process's words (lib/rules.lua storeRules), of every rule
-- that is on; set: the words of the rules to change, each of them on.
-- The rules record keeps the numbers of the others. An empty store gets
-- its identity recorded too, as its first Post would record it.
-- Reply: {OK, the rules record}.
expect(rulesKey, 'string')
local rules, lacking = mergeRules(want, (redis.call('GET', rulesKey) or '') .. ' ' .. set)
if lacking then
  return error('voting: rules: no numbers for ' .. lacking .. ': give its option', 0)
end
if storeUnrecorded then
  redis.call('SET', storeKey, storeIdentity)
end
redis.call('SET', rulesKey, rules)
return {OK, rules}
