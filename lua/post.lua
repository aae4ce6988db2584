-- post.lua: posts an article and records the poster's own upvote.
-- Uses lua/lib.
local storeKey, storeIdentity, storeUnrecorded = openStore(KEYS, 'w')
local seqKey, scoreKey, timeKey = KEYS[1], KEYS[2], KEYS[3]
local poster, title, link = ARGV[1], ARGV[2], ARGV[3]
local now, window, weight = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local orders, unique = ARGV[7], ARGV[8] == '1'
local k = {article = ARGV[9], voted = ARGV[10], groups = ARGV[11],
  by = ARGV[12], bucket = ARGV[13], link = ARGV[14]}
-- ARGV[15..16]: the prefixes of the poster's pages (WithUserPages), or
-- '' for a store without them.
if ARGV[15] ~= '' then
  k.submitted, k.upvoted = ARGV[15], ARGV[16]
end
-- orders: the names of the orders the store keeps (lib/base.lua ORDERS),
-- comma-separated; the article keeps them, and its window and weight,
-- for good (lib/record.lua RECORD).
-- ARGV[17], ARGV[18]: the rules record and this process's words (none
-- for a store with no rule on), which the first post of an empty store
-- records (lib/rules.lua mergeRules); ARGV[19..20]: now (ms) and the
-- poster's last-post key, for a store with a rule of Post (lib/rules.lua
-- postRules).
-- Reply: {OK, id, score} | {DUPLICATE, row} when unique is set and a live
-- article has the link, or a rule finds one posted within its span |
-- {RATE_LIMITED, ms} | {NOT_ALLOWED, ms}: the poster is suspended (Refuse).

-- moderation: a poster suspended with Refuse (lib/moderation.lua).
local suspended = refused(liveSuspensions(storeKey, storeIdentity, ARGV[4]), poster, ARGV[4])
if suspended then
  return suspended
end
-- Links are recorded only by stores that keep them unique.
local linkKey = unique and link ~= '' and k.link .. link
if linkKey then
  expect(linkKey, 'string')
  local other = redis.call('GET', linkKey)
  if other and redis.call('EXISTS', k.article .. other) == 1 then
    return rows(k.article, {member(other)}, {DUPLICATE})
  end
end
local rulesKey, want = ARGV[17], ARGV[18] or ''
local rules, refused = postRules(k, rulesKey, want, ARGV[19], ARGV[20], link)
if refused then
  return refused
end

-- Every key this script writes is checked before the first write.
expect(seqKey, 'string')
expect(scoreKey, 'zset')
expect(timeKey, 'zset')
expectIndexes(k, orders, now)
if k.submitted then
  expect(k.submitted .. poster, 'zset')
  expect(k.upvoted .. poster, 'zset')
end
-- The rules record that the first post of an empty store records: its
-- numbers where it has some (SetRules before the first post), else this
-- process's.
local recordedRules = storeUnrecorded and firstRules(rulesKey, want)

-- The counter must hold a canonical id below the int64 maximum; it is
-- read back as a string after INCR, since Lua numbers lose digits past
-- 2^53.
local MAX = '9223372036854775807'
local function canonical(s)
  return s and string.find(s, '^[1-9]%d*$') and (#s < #MAX or (#s == #MAX and s <= MAX))
end
local seq = redis.call('GET', seqKey)
if seq and seq ~= '0' and not canonical(seq) then
  return error('voting: id counter ' .. seqKey .. ' holds ' .. seq .. ', not an id', 0)
end

-- taken reports whether anything of an article with that id exists: a
-- counter behind the articles (restored, deleted, evicted) must never
-- make Post overwrite one or inherit its voters or groups.
local function taken(id)
  return redis.call('EXISTS', k.article .. id, k.voted .. id, k.groups .. id) > 0
    or redis.call('ZSCORE', timeKey, member(id)) ~= false
end
local function nextID()
  if redis.call('GET', seqKey) == MAX then
    return error('voting: id counter ' .. seqKey .. ' is at the int64 maximum', 0)
  end
  redis.call('INCR', seqKey)
  return redis.call('GET', seqKey)
end

local id = nextID()
if taken(id) then
  -- Behind: jump to the newest article's id, then probe a few more.
  local newest = redis.call('ZREVRANGE', timeKey, 0, 0)[1]
  if newest then
    local n = idof(newest)
    if canonical(n) and (#n > #id or (#n == #id and n > id)) then
      redis.call('SET', seqKey, n)
    end
  end
  for _ = 1, 100 do
    id = nextID()
    if not taken(id) then break end
  end
  if taken(id) then
    return error('voting: id counter ' .. seqKey .. ' is behind the articles: set it to the highest id', 0)
  end
end

-- The first write of an empty store records its identity (lib/base.lua
-- identity).
if storeUnrecorded then
  redis.call('SET', storeKey, storeIdentity)
  if recordedRules then
    redis.call('SET', rulesKey, recordedRules)
  end
end
local m = member(id)
local score = num(value('score', now, weight, 1, 0))
writeRecord(k.article .. id, {up = 1, down = 0, posted = ARGV[4], weight = ARGV[6], orders = orders,
  poster = poster, title = title, link = link})
redis.call('ZADD', scoreKey, score, m)
redis.call('ZADD', timeKey, ARGV[4], m)
eachIndex(k, orders, now, function(key, o)
  redis.call('ZADD', key, num(value(o, now, weight, 1, 0)), m)
end)
-- The voter record lives as long as the window, on the server's clock,
-- and its '' field (lib/record.lua VOTE_META) keeps it from being emptied by
-- cancels: while it exists voting is open, and once it is gone it never
-- comes back.
local votedKey = k.voted .. id
redis.call('HSET', votedKey, '', voteMeta(1, 0, 0, ARGV[4], num(now + window), ARGV[6], orders), poster, 1)
redis.call('EXPIRE', votedKey, window)
if linkKey then
  redis.call('SET', linkKey, id)
end
-- The poster's pages list the post and the poster's own upvote.
if k.submitted then
  listOn(k.submitted .. poster, ARGV[4], m)
  listOn(k.upvoted .. poster, ARGV[4], m)
end
if rules then
  postRulesDone(rules, id, unique)
end
return {OK, id, score}
