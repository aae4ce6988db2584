-- restore.lua: writes one article and what derives from it as the
-- store's own scripts write them (lib/record.lua: the record, the values
-- of its orderings by value, its TopSince buckets, the voter record's ''
-- field, its values in its groups' caches as a vote moves them,
-- lib/cache.lua): for the tools that rebuild a store from its records, votectl's
-- import and check -repair (restore.go), which so write no copy of a
-- record or a formula of their own. Uses lua/lib. Its identity check is
-- off (mode 'n'): an import writes into a store before it records the
-- store's identity.
openStore(KEYS, 'n')
local scoreKey = KEYS[1]
local id, up, down = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local a = {posted = ARGV[4], weight = ARGV[5], orders = ARGV[6], poster = ARGV[7], title = ARGV[8], link = ARGV[9]}
local whole, closes, expireAt, groups = ARGV[10] == '1', ARGV[11], ARGV[12], ARGV[13]
local k = {article = ARGV[14], voted = ARGV[15], groups = ARGV[16], group = ARGV[17], by = ARGV[18], bucket = ARGV[19],
  cache = ARGV[20]}
-- whole: '1' to write the record of these fields; '0' to keep the
-- record there and set its counts (a repair); closes: the time voting
-- closes (Unix seconds) and expireAt the voter record's expiry (Unix ms)
-- while voting is open, '' to leave the voter record's times as they
-- are; groups: the article's groups, newline-joined, or "\n-" to leave
-- them as they are. Voters are written before it (restore_entries.lua, with the voter record's expiry).
-- Reply: {OK, 1}, or {OK, 0} for a repair of a record that is gone.
local articleKey, votedKey, groupsKey = k.article .. id, k.voted .. id, k.groups .. id
local timeKey = k.by .. 'time'
expect(articleKey, 'string')
if not whole then
  local r = record(articleKey)
  if not r then
    return {OK, 0}
  end
  a = r
end
local posted, weight = tonumber(a.posted), tonumber(a.weight)
if not posted or not weight or (up or -1) < 0 or (down or -1) < 0 or up > MAX_COUNT or down > MAX_COUNT then
  return error('voting: restore: article ' .. id .. ': counts or fields out of the record', 0)
end
-- Every key written below is checked first.
expect(scoreKey, 'zset')
expect(timeKey, 'zset')
expectIndexes(k, a.orders, posted)
expect(votedKey, 'hash')
expect(groupsKey, 'set')
local list = {}
if groups ~= '\n-' then
  for g in string.gmatch(groups, '[^\n]+') do
    list[#list + 1] = g
    expect(k.group .. g, 'set')
  end
end
-- The group caches of the article's groups, those it has and those it
-- joins (at most MaxArticleGroups, as a vote reads them): each is checked
-- (lib/cache.lua groupCaches). Those of the groups it has take the
-- article's new values below as a vote's do (cacheVote), so that a
-- repair of its counts leaves no cache stale; those of the groups it
-- joins take the article, as group_add.lua adds it to them (built or
-- being built).
local had, joins, seen = {}, {}, {}
for _, g in ipairs(redis.call('SMEMBERS', groupsKey)) do
  seen[g] = true
  had[#had + 1] = g
end
for _, g in ipairs(list) do
  if not seen[g] then
    seen[g] = true
    joins[#joins + 1] = g
  end
end
local caches, orderingOf = groupCaches(k, had)
local joined, joinedOrdering = groupCaches(k, joins)

local m = member(id)
a.up, a.down = up, down
writeRecord(articleKey, a)
local values = {score = num(value('score', posted, weight, up, down)), time = a.posted}
redis.call('ZADD', scoreKey, values.score, m)
redis.call('ZADD', timeKey, a.posted, m)
eachIndex(k, a.orders, posted, function(key, o)
  values[o] = values[o] or num(value(o, posted, weight, up, down))
  redis.call('ZADD', key, values[o], m)
end)
for _, g in ipairs(list) do
  redis.call('SADD', k.group .. g, m)
  redis.call('SADD', groupsKey, g)
end
for i, key in ipairs(caches) do
  if values[orderingOf[i]] then -- a cache of an ordering the article has
    cacheVote(key, values[orderingOf[i]], m)
  end
end
for i, key in ipairs(joined) do
  if values[joinedOrdering[i]] then
    redis.call('ZADD', key, values[joinedOrdering[i]], m)
  end
end
local n = redis.call('SCARD', groupsKey)
if closes ~= '' then
  redis.call('HSET', votedKey, '', voteMeta(up, down, n, a.posted, closes, a.weight, a.orders))
  redis.call('PEXPIREAT', votedKey, expireAt)
else
  local old = redis.call('HGET', votedKey, '')
  local _, _, _, _, p, c, w, o = string.match(old or '', VOTE_META)
  if p then
    redis.call('HSET', votedKey, '', voteMeta(up, down, n, p, c, w, o))
  end
end
return {OK, 1}
