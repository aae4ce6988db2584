-- drop.lua: one bounded step of Drop: unlinks the keys one SCAN step
-- finds. UNLINK frees large values off the main thread. Uses lua/lib.
local storeKey = openStore(KEYS, 'n')
local seqKey = KEYS[1] -- the store's slot, for routing
local cursor, pattern, count = ARGV[1], ARGV[2], ARGV[3]
-- pattern matches the store's keys only (keys.go pattern).
-- Reply: {OK, next cursor}: "0" when the scan is complete.
-- The store's record (lib/base.lua identity) goes with the last step, so that
-- the store never looks like data without a record while it is dropped.
local r = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', count)
local list = {}
for _, key in ipairs(r[2]) do
  if key ~= storeKey then
    list[#list + 1] = key
  end
end
for i = 1, #list, 100 do
  redis.call('UNLINK', unpack(list, i, math.min(i + 99, #list)))
end
if r[1] == '0' then
  redis.call('UNLINK', storeKey)
end
return {OK, r[1]}
