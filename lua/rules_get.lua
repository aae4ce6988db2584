-- rules_get.lua: reads the numbers of the rules that are on
-- (Store.Rules). Uses lua/lib.
openStore(KEYS, 'r')
local rulesKey = KEYS[1]
local want = ARGV[1]
-- want: this process's words (lib/rules.lua storeRules).
-- Reply: {OK, the rules: the record's numbers, this process's where it
-- has none, the bare name of a rule of neither} (lib/rules.lua
-- mergeRules).
expect(rulesKey, 'string')
return {OK, (mergeRules(want, redis.call('GET', rulesKey)))}
