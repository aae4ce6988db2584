-- reversal.lua: taking back one logged vote (Store.ReverseVotes,
-- lua/reverse.lua): as lib/ballot.lua vote and comment_vote.lua would cancel
-- it where the item's voting is open, and, where it closed, on the
-- item's frozen counts, orderings, group caches, karma and the voter's
-- upvoted page, as if the vote had never been cast.
-- Needs: base.lua, record.lua, cache.lua, pages.lua, rules.lua
-- (karmaRules), ballot.lua (vote, fill, notBefore, VOTES, NONE),
-- tree.lua (readHead, kidsKeys, placeComment, voterOpen).

-- reverseWork is the work of taking back a vote on an article in
-- ngroups groups and the optional orders orders: about the commands it
-- sends (its orderings and TopSince buckets, each group's caches of the
-- orderings it changes), which bounds a step of reverse.lua.
local function reverseWork(ngroups, orders)
  local n = 0
  for _ in string.gmatch(orders or '', '[^,]+') do
    n = n + 1
  end
  if has(orders, 'top') then
    n = n + #BUCKETS
  end
  return 4 + n + tonumber(ngroups) * (2 + n)
end

-- reverseArticle takes back user's vote on the article id, logged as
-- logged (1 or -1), at now; it returns whether a vote was taken back,
-- its work (reverseWork), and the vote taken back.
-- k is vote()'s, with the vote rules loaded and their limit off (a
-- reversal is no vote a limit counts), so that neither vote() nor
-- karmaRules refuses it (a vote to none needs no least karma), and no
-- vote log (the caller removes the entry).
local function reverseArticle(k, id, user, logged, now)
  local articleKey, votedKey = k.article .. id, k.voted .. id
  local r = redis.call('HMGET', votedKey, '', user)
  local meta, prev = r[1], logged
  local rest, closes
  if meta then
    local _, ngroups, orders
    _, _, rest, ngroups, _, closes, _, orders = string.match(meta, VOTE_META)
    if not closes then
      return badValue(votedKey)
    end
    if not notBefore(now, closes) then
      local res = vote(k, id, user, '0', now)
      return res[1] == OK and res[2] ~= 0, reverseWork(ngroups, orders), res[2]
    end
    -- Closed by the store's clock, its voter record not expired yet: the
    -- record's vote is the user's.
    prev = priorVote(r[2], 0) or 0 -- a logged vote's too
  end
  if prev == 0 then
    return false, 1
  end
  local a = record(articleKey)
  if not a then
    return false, 1 -- gone: its votes with it
  end
  local up, down = tonumber(a.up), tonumber(a.down)
  if prev == 1 then up = up - 1 else down = down - 1 end
  if up < 0 or down < 0 then
    return false, 1
  end
  -- Every key written below is checked first.
  local pn, wn, m = tonumber(a.posted), tonumber(a.weight), member(id)
  fill(k)
  expect(k.score, 'zset')
  expectIndexes(k, a.orders, pn)
  local groups = NONE
  if expect(k.groups .. id, 'set') then
    groups = redis.call('SMEMBERS', k.groups .. id)
  end
  local page = k.upvoted and prev == 1 and k.upvoted .. user
  if page then
    expect(page, 'zset')
  end
  if k.rules then -- karma given back, the vote's cost refunded
    karmaRules(k, k.rules.karma and a.poster, user, prev, 0)
  end
  local counts = string.format(COUNTS, up, down)
  redis.call('SETRANGE', articleKey, 0, counts)
  local values, changed = {}, {'score'}
  values.score = num(value('score', pn, wn, up, down))
  redis.call('ZADD', k.score, 'XX', values.score, m)
  eachIndex(k, a.orders, pn, function(key, o)
    if not values[o] then
      values[o] = num(value(o, pn, wn, up, down))
      changed[#changed + 1] = o
    end
    redis.call('ZADD', key, 'XX', values[o], m)
  end)
  for _, g in ipairs(groups) do
    eachCache(k.cache, g, changed, function(key, o)
      cacheVote(key, values[o], m)
    end)
  end
  if page then
    redis.call('ZREM', page, m)
  end
  if meta then
    -- The vote's field keeps '0', none (lib/ballot.lua VOTES).
    redis.call('HSET', votedKey, '', counts .. string.sub(meta, rest), user, '0')
  end
  return true, reverseWork(#groups, a.orders), prev
end

-- reverseComment takes back user's vote on the comment cid, logged as
-- logged (1 or -1), at now, as reverseArticle does an article's: its
-- field keeps '0', none (lib/ballot.lua VOTES), and a poster's own vote
-- so goes back to none, not to the implied upvote.
local function reverseComment(k, cid, user, logged, now)
  local key = k.comment .. cid
  local c = readHead(key)
  if not c then
    return false, 1 -- gone: its votes with it
  end
  -- A comment deleted and kept for its replies (c.x) keeps its votes,
  -- its place among its siblings and the karma they moved: taken back
  -- as a live one's.
  local votedKey, field = k.cvoted .. c.a, cid .. ':' .. user
  expect(votedKey, 'hash')
  local r = redis.call('HMGET', votedKey, '', field)
  local open, prev = voterOpen(r[1], cid), logged
  if open then
    if r[2] then
      prev = priorVote(r[2], 0) or 0 -- a logged vote's too
    elseif user == c.n then
      prev = 1
    else
      prev = 0
    end
  end
  if prev == 0 then
    return false, 1
  end
  local up, down = tonumber(c.u), tonumber(c.d)
  local up0, down0 = up, down
  if prev == 1 then up = up - 1 else down = down - 1 end
  if up < 0 or down < 0 then
    return false, 1
  end
  local keys, ords = kidsKeys(k, c)
  for _, kk in ipairs(keys) do
    expect(kk, 'zset')
  end
  if k.rules then
    karmaRules(k, c.n, user, prev, 0)
  end
  placeComment(keys, ords, cid, tonumber(c.t), tonumber(c.w) or 0, up, down, up0, down0)
  redis.call('SETRANGE', key, C_UP, string.format(COUNTS, up, down))
  if open then
    redis.call('HSET', votedKey, field, '0')
  end
  return true, 4 + #keys, prev
end
