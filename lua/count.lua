-- count.lua: counts the articles of an ordering (a zset) or of a group
-- (a set). Uses lua/lib.
openStore(KEYS, 'r')
local key = KEYS[1]
local kind = ARGV[1] -- 'zset' or 'set'
-- Reply: {OK, count}.
expect(key, kind)
if kind == 'zset' then
  return {OK, redis.call('ZCARD', key)}
end
return {OK, redis.call('SCARD', key)}
