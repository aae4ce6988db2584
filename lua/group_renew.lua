-- group_renew.lua: renews the TTL of a group's complete cached page on
-- the primary, for a store that reads it on a replica, where a read
-- cannot (group_read.lua). Uses lua/lib.
openStore(KEYS, 'r')
local cacheKey = KEYS[1]
local ttl = ARGV[1] -- ms
-- Reply: {OK}. A cache that is gone or being built is left alone: the
-- next read builds it on the primary (group_page.lua).
expect(cacheKey, 'zset')
if cacheComplete(cacheKey) then
  redis.call('PEXPIRE', cacheKey, ttl)
end
return {OK}
