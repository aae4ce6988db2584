-- karma.lua: reads a user's karma (Store.Karma). Uses lua/lib.
openStore(KEYS, 'r')
local karmaKey = KEYS[1] -- zset: user -> minus karma
local user = ARGV[1]
-- Reply: {OK, minus karma}, "0" for a user who has none.
return {OK, redis.call('ZSCORE', karmaKey, user) or '0'}
