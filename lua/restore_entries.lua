-- restore_entries.lua: writes the entries of a store beside its articles
-- and comments as the store's own scripts write them: the users' karma
-- (its sign, lib/rules.lua), vote logs (the items' members,
-- lib/moderation.lua logItem, at the scores restore.go sends), pages (lib/base.lua member), last post and comment
-- times and the vote limit's logs (lib/rules.lua), the links, the id
-- counters, the articles' thread heads and live comment counts, the
-- groups' members, and the votes of the voter records (a shadow vote's
-- value, lib/ballot.lua shadowVote): for votectl's import and check
-- -repair (restore.go), which so write no copy of a key, a member or a
-- score of their own. Uses lua/lib. Its identity check is off (mode
-- 'n'): an import writes into a store before it records the store's
-- identity.
openStore(KEYS, 'n')
local seqKey = KEYS[1]
local a = ARGV
local k = {cseq = a[1], karma = a[2], log = a[3], submitted = a[4], upvoted = a[5], commented = a[6], link = a[7],
  lastPost = a[8], lastComment = a[9], rate = a[10], comments = a[11], thread = a[12], group = a[13], voted = a[14],
  cvoted = a[15]}
-- ARGV[16..]: for each entry, FIELDS arguments: its kind, user, id, item,
-- vote, shadow ('1' for a shadow vote), n, text and the key's expiry
-- (Unix ms, '0' for none); which each kind reads, internal/restore
-- Entry says. Every write sets a value: the same entries written again
-- change nothing.
-- Reply: {OK, how many entries it wrote}.
local FIELDS = 9
local ITEMS = {article = false, comment = true} -- is the item a comment (logItem)
local PAGES = {submitted = k.submitted, upvoted = k.upvoted, commented = k.commented}

-- voteOf returns what a voter record keeps of the vote of e.
local function voteOf(e)
  local v = VOTES[e.vote] -- lib/ballot.lua
  if not v or (e.shadow and v == 0) then
    return error('voting: restore: ' .. e.kind .. ' ' .. e.id .. ': vote ' .. e.vote .. ' is no vote', 0)
  end
  if e.shadow then
    local _, stored = shadowVote(v, e.vote)
    return stored
  end
  return e.vote
end

-- PLACES are where the entries of most kinds live: the family in k, the
-- field of the entry appended to it (none for a key of its own), and
-- the type of the key's value.
local PLACES = {
  karma = {'karma', nil, 'zset'}, link = {'link', 'text', 'string'}, lastpost = {'lastPost', 'user', 'string'},
  lastcomment = {'lastComment', 'user', 'string'}, votelog = {'rate', 'user', 'zset'}, cseq = {'cseq', nil, 'string'},
  count = {'comments', nil, 'hash'}, thread = {'thread', 'id', 'hash'}, group = {'group', 'text', 'set'},
  voter = {'voted', 'id', 'hash'}, cvoter = {'cvoted', 'id', 'hash'}, cvoted = {'cvoted', 'id', 'hash'},
}

-- entryKey returns the key of entry e and the type of its value, or
-- raises for an entry the store never writes.
local function entryKey(e)
  local kind = e.kind
  if kind == 'uvote' then
    if ITEMS[e.item] == nil or (e.vote ~= '1' and e.vote ~= '-1') then
      return error('voting: restore: vote log entry of ' .. e.item .. ' ' .. e.id .. ': no item or vote', 0)
    end
    return k.log .. e.user, 'zset'
  elseif kind == 'page' then
    if not PAGES[e.item] then
      return error('voting: restore: no page ' .. e.item, 0)
    end
    return PAGES[e.item] .. e.user, 'zset'
  elseif kind == 'seq' then
    return seqKey, 'string'
  end
  local p = PLACES[kind]
  if not p then
    return error('voting: restore: no entry of kind ' .. kind, 0)
  end
  return k[p[1]] .. (p[2] and e[p[2]] or ''), p[3]
end

-- set sets key to v, expiring at e's expiry.
local function set(key, v, e)
  if e.exp == '0' then
    redis.call('SET', key, v)
  else
    redis.call('SET', key, v, 'PXAT', e.exp)
  end
end

local list = {}
for i = 16, #a, FIELDS do
  local e = {kind = a[i], user = a[i + 1], id = a[i + 2], item = a[i + 3], vote = a[i + 4], shadow = a[i + 5] == '1',
    n = a[i + 6], text = a[i + 7], exp = a[i + 8]}
  -- Every key written below is checked first.
  local want
  e.key, want = entryKey(e)
  expect(e.key, want)
  if e.kind == 'voter' or e.kind == 'cvoter' then
    e.stored = voteOf(e)
  end
  list[#list + 1] = e
end
for _, e in ipairs(list) do
  local kind, key = e.kind, e.key
  if kind == 'karma' then
    redis.call('ZADD', key, num(-tonumber(e.n)), e.user)
  elseif kind == 'uvote' then
    redis.call('ZADD', key, e.n, logItem(ITEMS[e.item], e.id)) -- n: the entry's score (layout.LogEntry)
  elseif kind == 'page' then
    redis.call('ZADD', key, e.n, member(e.id))
  elseif kind == 'link' then
    set(key, e.id, e)
  elseif kind == 'lastpost' or kind == 'lastcomment' then
    set(key, e.n, e)
  elseif kind == 'votelog' then
    redis.call('ZADD', key, e.n, e.text)
    if e.exp ~= '0' then
      redis.call('PEXPIREAT', key, e.exp)
    end
  elseif kind == 'seq' or kind == 'cseq' then
    redis.call('SET', key, e.id)
  elseif kind == 'count' then
    redis.call('HSET', key, e.id, e.n)
  elseif kind == 'thread' then
    redis.call('HSET', key, 'f', e.text, 'l', e.item)
  elseif kind == 'group' then
    redis.call('SADD', key, member(e.id))
  elseif kind == 'voter' or kind == 'cvoter' then
    -- A vote sets its record's expiry too, where it has one: a voter
    -- record whose meta an interrupted import never wrote still goes when
    -- its voting closes, as a whole import would have left it.
    redis.call('HSET', key, kind == 'voter' and e.user or e.item .. ':' .. e.user, e.stored)
    if e.exp ~= '0' then
      redis.call('PEXPIREAT', key, e.exp)
    end
  else -- cvoted
    redis.call('HSET', key, '', e.text)
    redis.call('PEXPIREAT', key, e.exp)
  end
end
return {OK, #list}
