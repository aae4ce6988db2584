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
local c = redis.call('HMGET', key, 'a', 'p', 'c', 'n', 'u', 'd', 't', 'o', 'w')
local aid, parent, closes, poster = c[1], c[2], c[3], c[4]
if not aid then
  return {NOT_FOUND}
end
if notBefore(now, closes) then
  return {CLOSED}
end
local votedKey, field = k.cvoted .. aid, cid .. ':' .. user
local r = redis.call('HMGET', votedKey, '', field)
if not voterOpen(r[1], cid) then
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
local up, down = tonumber(c[5]), tonumber(c[6])
if new == prev then
  return string.format('%d %d %d %d', prev, up - down, up, down)
end
if prev == 1 then up = up - 1 elseif prev == -1 then down = down - 1 end
if new == 1 then up = up + 1 elseif new == -1 then down = down + 1 end

-- Every key written below is checked before the first write: the record
-- and the voter record were read above; the parent's orderings here; the
-- rules' keys by karmaRules, whose writes come first.
local rec = {a = aid, t = c[7], w = c[9]}
local pname = parent or ('a' .. aid)
local ords = corderings(c[8])
for _, o in ipairs(ords) do
  expect(k.kids .. o .. ':' .. pname, 'zset')
end
if k.rules then
  local refused = karmaRules(k, poster, user, prev, new)
  if refused then
    return refused
  end
end
redis.call('HSET', key, 'u', up, 'd', down)
local m = member(cid)
for _, o in ipairs(ords) do
  redis.call('ZADD', k.kids .. o .. ':' .. pname, num(cvalue(o, rec, up, down)), m)
end
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
