-- rules.lua: karma and the rules of Vote and Post (rules.go, karma.go).
-- Needs: base.lua (expect, member, num, DUPLICATE), record.lua (record,
-- rows).

-- Karma and the rules (rules.go, karma.go): the statuses of a refused
-- call, and the helpers that vote and post.lua call only for a store that
-- has them.
local NOT_ALLOWED, RATE_LIMITED = 7, 8

-- The numbers of the rules are data of the store (rules.go, Store.Rules):
-- the rules record, a string of words "karma=1,-1 votelimit=10,60000",
-- one a rule that is on, "name=value[,value]" in ms for a span, as
-- Identity's words of layout 5 were: internal/layout/rules.go is the
-- record's codec, which a test holds ruleWords, ruleNumbers and
-- mergeRules to (rules_data_test.go). The store's identity says which
-- rules are on; each process sends its own words for them ("want",
-- rule_config.go words: its options' numbers, or the bare name of a rule
-- it opened as recorded, Identity.StoreOptions). A rule's numbers are the
-- record's, and the process's own where the record has none (a record
-- lost, or never written: no number is ever missing where a process has
-- one), so that SetRules changes them for every process at its next call.

-- ruleWords returns the words of s as a map, name -> its value ('' for a
-- bare name), and the names in their order.
local function ruleWords(s)
  local m, names = {}, {}
  for w in string.gmatch(s or '', '%S+') do
    local name, v = string.match(w, '^(%a+)=?(.*)$')
    if name then
      names[#names + 1] = name
      m[name] = v
    end
  end
  return m, names
end

-- ruleNumbers returns the numbers of a rule's word, its value after the
-- '=' ("10,60000"): one or two integers; nothing for a value that is
-- none.
local function ruleNumbers(v)
  local a, b = string.match(v, '^(%-?%d+),?(%-?%d*)$')
  if a then
    return tonumber(a), tonumber(b)
  end
end

-- mergeRules returns the record of the rules want names (this process's
-- words, in their order): each with the numbers of have (words, the
-- last of a name counting) where it has them, else want's; and the name
-- of a rule that neither has numbers for, which the record then names
-- bare (Store.Rules), and which no write records.
local function mergeRules(want, have)
  local w, names = ruleWords(want)
  local h = ruleWords(have)
  local out, lacking = {}, nil
  for i, name in ipairs(names) do
    local v = h[name]
    if not v or not ruleNumbers(v) then
      v = w[name]
    end
    if v == '' then
      lacking = lacking or name
      out[i] = name
    else
      out[i] = name .. '=' .. v
    end
  end
  return table.concat(out, ' '), lacking
end

-- ruleCache holds the numbers read for each process's words and the
-- record they were read from, where the scripts run as a library, which
-- keeps its locals between calls: a record unchanged costs one GET.
local ruleCache, ruleCached = {}, 0

-- storeRules returns the numbers of the rules on, read from the record at
-- key for a process whose words are want: name -> {n[, m]}. A record or
-- process without a rule's numbers fails the script, before it writes.
local function storeRules(key, want)
  local have = redis.call('GET', key) -- a foreign type fails here
  local c = ruleCache[want]
  if c and c[1] == have then
    return c[2]
  end
  local text, lacking = mergeRules(want, have)
  if lacking then
    return error('voting: rules: the store records no numbers for ' .. lacking .. ': SetRules (votectl options) sets them', 0)
  end
  local r = {}
  for name, v in pairs(ruleWords(text)) do
    r[name] = {ruleNumbers(v)}
  end
  if ruleCached >= 64 then
    ruleCache, ruleCached = {}, 0
  end
  ruleCache[want], ruleCached = {have, r}, ruleCached + 1
  return r
end

-- ruleTTL is how long, on Redis's clock, a key that a rule of span ms
-- reads lives after its last write: twice the span and a minute more, so
-- that a Redis clock running ahead of the store's by up to the span and a
-- minute cannot drop the key while the store's clock still needs it. A
-- rule may then refuse early, as when the key outlives its use, but never
-- lets a call through that it should refuse. Spans past about 146
-- years get the longest TTL a Go Duration holds, as a reader in Go of
-- the key's TTL may hold it in one.
local function ruleTTL(ms)
  return num(math.min(2 * ms + 60000, 9223372036854))
end

-- readRules returns the vote rules from a script's arguments a[i..i+4]
-- (rules.go newRules), or nil when there are none: now (the store's
-- clock, ms), the karma key ('' when off), the prefix of the users' vote
-- logs, the rules record and this process's words. Their numbers are
-- read (loadRules) by the first vote that changes something.
local function readRules(a, i)
  if not a[i] then
    return nil
  end
  return {now = a[i], karma = a[i + 1] ~= '' and a[i + 1] or nil, log = a[i + 2], key = a[i + 3], want = a[i + 4]}
end

-- firstRules returns the rules record that an empty store's first write
-- records with its identity (post.lua, suspend.lua): each rule of want
-- (this process's words) with the record's numbers where it has some
-- (SetRules before that write), else want's; nil where no rule is on.
-- It checks the record's key first, and raises where a rule has numbers
-- in neither.
local function firstRules(rulesKey, want)
  if want == '' then
    return nil
  end
  expect(rulesKey, 'string')
  local rules, lacking = mergeRules(want, redis.call('GET', rulesKey))
  if lacking then
    return error('voting: rules: no numbers for ' .. lacking .. ' to record: give its option', 0)
  end
  return rules
end

-- loadRules reads the numbers of r, vote rules (readRules), once: what an
-- upvote and a downvote give the poster (karma) and cost the voter
-- (cost), the least karma to upvote and to downvote (minkarma), and the
-- vote limit, its span (ms) and its logs' TTL (ms); nil for the numbers
-- of a rule that is off.
local function loadRules(r)
  if r.loaded then
    return r
  end
  local n = storeRules(r.key, r.want)
  local function pair(x) if x then return x[1], x[2] end end
  r.perUp, r.perDown = pair(n.karma)
  r.costUp, r.costDown = pair(n.cost)
  r.minUp, r.minDown = pair(n.minkarma)
  r.limit, r.per = pair(n.votelimit)
  r.ttl = r.per and ruleTTL(r.per)
  r.loaded = true
  return r
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
  local r = loadRules(k.rules)
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

-- postRules reads the rules of Post (rules.go appendPostRules) from the
-- rules record at key for this process's words want (storeRules): the
-- post interval (postinterval) and the repost span (repostafter), for now
-- (ms) and the poster's last-post key last; nil where now is (a store
-- with neither rule). It returns the rules and, for a post they refuse, its
-- reply: {RATE_LIMITED, ms to wait}, or {DUPLICATE, row} for a link an
-- article posted within the repost span has. It writes nothing.
local function postRules(k, key, want, now, last, link)
  if not now then
    return nil
  end
  local n = storeRules(key, want)
  local r = {now = now, last = last, interval = n.postinterval and n.postinterval[1],
    repost = n.repostafter and n.repostafter[1]}
  r.intervalTTL = r.interval and ruleTTL(r.interval)
  r.linkTTL = r.repost and ruleTTL(r.repost)
  now = tonumber(now)
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
