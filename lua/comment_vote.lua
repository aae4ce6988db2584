-- comment_vote.lua: decides one vote on a comment, as lib/vote.lua vote
-- decides one on an article. Uses lua/lib.
local key = KEYS[1]
local cid, user, vs, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local k = {comment = ARGV[5], cvoted = ARGV[6], kids = ARGV[7], rules = readRules(ARGV, 8)}
-- vs: '1', '-1' or '0' (cancel); now: the store's clock, Unix seconds;
-- ARGV[8..19]: the vote rules (lib/rules.lua readRules), for a store
-- that has them.
-- Reply: '<previous> <points> <up> <down>' (reply.go parseVote) |
-- {NOT_FOUND} | {CLOSED} | {CORRUPT} | {NOT_ALLOWED} | {RATE_LIMITED, ms}.
--
-- The comment's voter record is the article's, k.cvoted .. aid, a hash
-- of "<cid>:<user>" -> '1' | '-1' | '0'. The poster's own upvote is
-- implied: no field until they change it ('-1', or '0' for their own
-- vote cancelled), and none again when they upvote once more. Others
-- have a field while their vote stands.
-- The record's first fields (lib/comments.lua CFIELDS): a deleted
-- comment, kept for its replies (x), takes no votes.
local v = redis.call('HMGET', key, 'u', 'd', 'm', 'n', 'x')
-- A store of another layout is incompatible, not closed or not found.
if not v[3] or v[5] then
  checkStore(storeKey, storeIdentity, 'w')
  return {NOT_FOUND}
end
-- What never changes (lib/comments.lua META), in locals: a table would
-- cost the vote more.
local aid, parent, posted, closes, _, orders, weight = string.match(v[3], META)
if not aid then
  return error('voting: key ' .. key .. ' holds no comment', 0)
end
if parent == '0' then parent = nil end
local poster = v[4]
if notBefore(now, closes) then
  checkStore(storeKey, storeIdentity, 'w')
  return {CLOSED}
end
local votedKey, field = k.cvoted .. aid, cid .. ':' .. user
local r = redis.call('HMGET', votedKey, '', field)
if not voterOpen(r[1], cid) then
  checkStore(storeKey, storeIdentity, 'w')
  return {CLOSED}
end
local new, prev = VOTES[vs], 0
if r[2] then
  prev = VOTES[r[2]]
  if prev == nil or (prev == 0 and user ~= poster) then
    return {CORRUPT}
  end
elseif user == poster then
  prev = 1
end
local up, down = tonumber(v[1]), tonumber(v[2])
if new == prev then
  return string.format('%d %d %d %d', prev, up - down, up, down)
end
if prev == 1 then up = up - 1 elseif prev == -1 then down = down - 1 end
if new == 1 then up = up + 1 elseif new == -1 then down = down + 1 end

-- Every key written below is the record and the voter record, read
-- above, or the parent's orderings, whose writes come first: a foreign
-- value at the first fails the vote before it writes anything, and one
-- at another fails it after the first is put back (as lib/vote.lua
-- does). A store with rules writes their keys first (karmaRules, which
-- checks them), so it checks the orderings before.
local pname = parent or ('a' .. aid)
local ords = corderings(orders)
local pn, wn = tonumber(posted), tonumber(weight) or 0
-- The store's identity (checkStore), deferred to here, where the vote
-- writes, as lib/vote.lua vote defers it.
checkStore(storeKey, storeIdentity, 'w')
if k.rules then
  for _, o in ipairs(ords) do
    expect(k.kids .. o .. ':' .. pname, 'zset')
  end
  local refused = karmaRules(k, poster, user, prev, new)
  if refused then
    return refused
  end
end
local m = member(cid)
local up0, down0 = tonumber(v[1]), tonumber(v[2])
for i, o in ipairs(ords) do
  local key = k.kids .. o .. ':' .. pname
  local z = redis.pcall('ZADD', key, num(value(o, pn, wn, up, down)), m)
  if type(z) ~= 'number' then
    for j = 1, i - 1 do
      redis.call('ZADD', k.kids .. ords[j] .. ':' .. pname, num(value(ords[j], pn, wn, up0, down0)), m)
    end
    expect(key, 'zset')
    return error(z.err, 0)
  end
end
redis.call('HSET', key, 'u', up, 'd', down)
if user == poster then
  if new == 1 then
    redis.call('HDEL', votedKey, field)
  else
    redis.call('HSET', votedKey, field, vs)
  end
elseif new == 0 then
  redis.call('HDEL', votedKey, field)
else
  redis.call('HSET', votedKey, field, vs)
end
return string.format('%d %d %d %d', prev, up - down, up, down)
