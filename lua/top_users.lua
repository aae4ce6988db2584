-- top_users.lua: one page of users by karma (Store.TopUsers). Uses
-- lua/lib.
openStore(KEYS, 'r')
local karmaKey = KEYS[1] -- zset: user -> minus karma
local start, stop = ARGV[1], ARGV[2]
-- Reply: {OK, user, minus karma, ...}: ZRANGE lists the lowest score,
-- the highest karma, first, and ties by name.
local out = {OK}
local list = redis.call('ZRANGE', karmaKey, start, stop, 'WITHSCORES')
for i = 1, #list do
  out[i + 1] = list[i]
end
return out
