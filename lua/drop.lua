-- drop.lua: one bounded step of Drop: unlinks the keys one SCAN step
-- finds. UNLINK frees large values off the main thread. Uses lib.lua.
local seqKey = KEYS[1] -- the store's slot, for routing
local cursor, pattern, count = ARGV[1], ARGV[2], ARGV[3]
-- pattern matches the store's keys only (keys.go pattern).
-- Reply: {OK, next cursor}: "0" when the scan is complete.
local r = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', count)
for i = 1, #r[2], 100 do
  redis.call('UNLINK', unpack(r[2], i, math.min(i + 99, #r[2])))
end
return {OK, r[1]}
