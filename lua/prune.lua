-- prune.lua: one bounded step of Prune: deletes (lib.lua delete) up to
-- limit of the oldest articles posted at or before last. Uses lib.lua.
local timeKey = KEYS[1]
local last, limit = ARGV[1], tonumber(ARGV[2])
local k = {article = ARGV[3], voted = ARGV[4], groups = ARGV[5], group = ARGV[6],
  by = ARGV[7], cache = ARGV[8], bucket = ARGV[9], link = ARGV[10]}
-- Reply: {OK, deleted, more}: more is 1 when articles may remain.
local members = redis.call('ZRANGEBYSCORE', timeKey, '-inf', last, 'LIMIT', 0, limit)
local deleted = 0
for _, m in ipairs(members) do
  if delete(k, idof(m)) then
    deleted = deleted + 1
  else
    -- A member without its article (written by hand): drop it, or the
    -- next step would find it again.
    for _, o in ipairs(ALL) do
      redis.call('ZREM', k.by .. o, m)
    end
  end
end
local more = 0
if #members == limit then more = 1 end
return {OK, deleted, more}
