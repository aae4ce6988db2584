-- rules.lua: karma and the rules of Vote and Post (rules.go, karma.go).
-- Needs: base.lua (expect, member, num, DUPLICATE), record.lua (record,
-- rows).

-- Karma and the rules (rules.go, karma.go): the statuses of a refused
-- call, and the helpers that vote and post.lua call only for a store that
-- has them.
local NOT_ALLOWED, RATE_LIMITED = 7, 8

-- readRules returns the vote rules from a script's arguments a[i..i+11]
-- (rules.go newRules), or nil when there are none:
--   now (the store's clock, ms), the karma key ('' when off), the prefix
--   of the users' vote logs, the karma an upvote and a downvote give the
--   poster, the karma they cost the voter, the least karma to upvote and
--   to downvote, the vote limit, its span (ms) and its logs' TTL (ms);
-- '' for the numbers of a rule that is off.
local function readRules(a, i)
  if not a[i] then
    return nil
  end
  return {now = a[i], karma = a[i + 1] ~= '' and a[i + 1] or nil, log = a[i + 2],
    perUp = tonumber(a[i + 3]), perDown = tonumber(a[i + 4]),
    costUp = tonumber(a[i + 5]), costDown = tonumber(a[i + 6]),
    minUp = tonumber(a[i + 7]), minDown = tonumber(a[i + 8]),
    limit = tonumber(a[i + 9]), per = tonumber(a[i + 10]), ttl = a[i + 11]}
end

-- worth returns what a vote v (1, -1 or 0) is worth given what an
-- upvote and a downvote are (nil for 0).
local function worth(v, up, down)
  if v == 1 then return up or 0 elseif v == -1 then return down or 0 end
  return 0
end

-- karmaRules decides the rules of one vote that changes something (prev
-- to new) on an item (an article or a comment) by poster and, when they
-- let it pass, moves karma and logs the vote; it returns {NOT_ALLOWED}
-- or {RATE_LIMITED, ms to wait} for a vote refused, having changed
-- nothing. vote() and comment_vote.lua call it after their own checks,
-- just before their first write; vote() reads the poster only where the
-- store keeps karma (posterOf), which alone needs it. Karma is kept negated in one zset (ZRANGE lists
-- the highest first, ties by name). A poster's vote on their own article
-- moves no karma, costs nothing and needs no least karma. A user's vote
-- log holds the times (ms) of their last limit votes: a vote passes when
-- the oldest of them is at least per old, so no span of per holds more
-- than limit votes, whichever clock trimmed the log.
local function karmaRules(k, poster, user, prev, new)
  local r = k.rules
  local logKey
  if r.karma then
    expect(r.karma, 'zset')
    if poster == user then
      poster = nil
    end
  else
    poster = nil
  end
  if poster and new ~= 0 then
    local least = r.minDown
    if new == 1 then least = r.minUp end
    if least and -(tonumber(redis.call('ZSCORE', r.karma, user)) or 0) < least then
      return {NOT_ALLOWED}
    end
  end
  if r.limit then
    logKey = r.log .. user
    expect(logKey, 'zset')
    local n = redis.call('ZCARD', logKey)
    if n >= r.limit then
      local t = tonumber(redis.call('ZRANGE', logKey, n - r.limit, n - r.limit, 'WITHSCORES')[2])
      local wait = t + r.per - tonumber(r.now)
      if wait > 0 then
        return {RATE_LIMITED, num(wait)}
      end
    end
  end
  if poster then
    local gain = worth(new, r.perUp, r.perDown) - worth(prev, r.perUp, r.perDown)
    if gain ~= 0 then
      redis.call('ZINCRBY', r.karma, num(-gain), poster)
    end
    local cost = worth(new, r.costUp, r.costDown) - worth(prev, r.costUp, r.costDown)
    if cost ~= 0 then
      redis.call('ZINCRBY', r.karma, num(cost), user)
    end
  end
  if logKey then
    -- Members are unique: the time and how many the log holds at it.
    local m = r.now .. ':' .. (redis.call('ZCOUNT', logKey, r.now, r.now) + 1)
    redis.call('ZADD', logKey, r.now, m)
    redis.call('ZREMRANGEBYRANK', logKey, 0, -(r.limit + 1))
    redis.call('PEXPIRE', logKey, r.ttl)
  end
  return nil
end

-- postRules reads the rules of Post from a script's arguments a[i..i+5]
-- (rules.go appendPostRules): now (ms), the poster's last-post key, the
-- post interval (ms, '' when off) and its key's TTL (ms), the repost span
-- (ms, '' when off) and its link keys' TTL (ms); nil when there are none.
-- It returns the rules and, for a post they refuse, its reply:
-- {RATE_LIMITED, ms to wait}, or {DUPLICATE, row} for a link an article
-- posted within the repost span has. It writes nothing.
local function postRules(k, a, i, link)
  if not a[i] then
    return nil
  end
  local r = {now = a[i], last = a[i + 1], interval = tonumber(a[i + 2]), intervalTTL = a[i + 3],
    repost = tonumber(a[i + 4]), linkTTL = a[i + 5]}
  local now = tonumber(r.now)
  if r.repost and link ~= '' then
    r.link = k.link .. link
    expect(r.link, 'string')
    local other = redis.call('GET', r.link)
    local a = other and record(k.article .. other)
    if a and tonumber(a.posted) * 1000 + r.repost > now then
      return r, rows(k.article, {member(other)}, {DUPLICATE})
    end
  end
  if r.interval then
    expect(r.last, 'string')
    local last = tonumber(redis.call('GET', r.last))
    if last and last + r.interval > now then
      return r, {RATE_LIMITED, num(last + r.interval - now)}
    end
  end
  return r
end

-- postRulesDone records the post of article id for the rules postRules
-- read: the poster's last post time, and the link's claim, which expires
-- unless the store keeps links unique for good.
local function postRulesDone(r, id, unique)
  if r.interval then
    redis.call('SET', r.last, r.now, 'PX', r.intervalTTL)
  end
  if r.link and not unique then
    redis.call('SET', r.link, id, 'PX', r.linkTTL)
  end
end
