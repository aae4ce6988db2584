-- restore_entries.lua: writes the entries of a store beside its articles
-- and comments as the store's own scripts write them: the users' karma
-- (its sign, lib/rules.lua), vote logs (each line appended to the
-- user's journal, lib/moderation.lua, as restore.go formats it, and the
-- item's voter record's plain vote linked to it), pages (lib/base.lua
-- member), last post and comment times and the vote limit's logs
-- (lib/rules.lua), the links, the id counters, the articles' thread
-- heads and live comment counts, the groups' members, and the votes of
-- the voter records (a shadow vote's value, lib/ballot.lua shadowVote):
-- for votectl's import and check -repair (restore.go), which so write no
-- copy of a key, a member or a score of their own. A repair's entries of
-- the vote logs take back a stray line (logKill's) or link a voter
-- record's vote to its line anew, each where the store still holds what
-- the check read. Uses lua/lib. Its identity check is off (mode 'n'): an
-- import writes into a store before it records the store's identity.
openStore(KEYS, 'n')
local seqKey = KEYS[1]
local a = ARGV
local k = {cseq = a[1], karma = a[2], log = a[3], submitted = a[4], upvoted = a[5], commented = a[6], link = a[7],
  lastPost = a[8], lastComment = a[9], rate = a[10], comments = a[11], thread = a[12], group = a[13], voted = a[14],
  cvoted = a[15], comment = a[16]}
-- ARGV[17..]: for each entry, FIELDS arguments: its kind, user, id, item,
-- vote, shadow ('1' for a shadow vote), n, text and the key's expiry
-- (Unix ms, '0' for none); which each kind reads, internal/restore
-- Entry says; a vote log's entries (uvote, ukill, ulink) carry the
-- offset of their line in n, and an uvote its line in text. Every
-- write sets a value: the same entries written again change nothing (a
-- line is appended where the log ends at its offset, and found there
-- the second time).
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

-- LOG_KINDS are the kinds of a vote log's entries: a line appended
-- (uvote, an import's), a stray line taken back and a voter record's
-- vote linked anew to its line, or unlinked (ukill and ulink, a
-- repair's).
local LOG_KINDS = {uvote = true, ukill = true, ulink = true}

-- logEntry reads the vote log entry e: its item and vote, the offset of
-- its line (n: at least 0; -1 for none, an ulink's unlinking), its item
-- in the log (logged, lib/moderation.lua logItem) and the head of its
-- line (logHead), and the field
-- of its vote in the item's voter record (vk, field; none where the
-- comment is gone), of which poster says whether the user posted the
-- comment (their implied upvote). It raises for an entry the store
-- never writes, and checks the voter record's key, which the entry may
-- write.
local function logEntry(e)
  local what = 'voting: restore: ' .. e.kind .. ' of user ' .. e.user .. ' on ' .. e.item .. ' ' .. e.id
  local comment, vote = ITEMS[e.item], tonumber(e.vote)
  if comment == nil or not LOG_SIGNS[vote] or e.vote ~= tostring(vote) then
    return error(what .. ': item ' .. e.item .. ' or vote ' .. e.vote .. ' is none of a vote log', 0)
  end
  if not (e.n == '0' or string.match(e.n, '^[1-9]%d*$') or (e.kind == 'ulink' and e.n == '-1')) then
    return error(what .. ': offset ' .. e.n .. ' is none', 0)
  end
  e.off = tonumber(e.n)
  e.logged = logItem(comment, e.id)
  e.head = logHead(vote, e.logged)
  if e.kind == 'uvote' and (string.sub(e.text, 1, #e.head) ~= e.head or string.sub(e.text, -1) ~= '\n' or
      not string.match(string.sub(e.text, 1, -2), LOG_LINE)) then
    return error(what .. ': line ' .. string.gsub(e.text, '\n', '\\n') .. ' is no line of this vote', 0)
  elseif e.kind == 'ulink' and e.text ~= '' and e.text ~= e.vote and loggedVote(e.text) ~= vote then
    return error(what .. ': value ' .. e.text .. ' is not this vote', 0)
  end
  if not comment then
    e.vk, e.field = k.voted .. e.id, e.user
  else
    local c = readHead(k.comment .. e.id) -- lib/tree.lua
    if c then
      e.vk, e.field, e.poster = k.cvoted .. c.a, e.id .. ':' .. e.user, c.n == e.user and not c.x
    end
  end
  if e.vk then
    expect(e.vk, 'hash')
  end
end

-- linkVote links the vote of entry e in its voter record to its line at
-- offset at, where the record holds it plain, as the vote that logged
-- it would have written it (lib/moderation.lua logVote); or, for a
-- comment's poster without a field (their implied upvote, which a
-- store of layout 6 kept so where the poster cast it again and the log
-- logged it) and an upvote, while the comment's votes stand
-- (voterOpen), sets the field, as comment_vote.lua keeps a poster's
-- upvote cast again.
local function linkVote(e, at)
  if not e.vk then
    return
  end
  local v = redis.call('HGET', e.vk, e.field)
  if v == e.vote or (not v and e.poster and e.vote == '1' and voterOpen(redis.call('HGET', e.vk, ''), e.id)) then
    redis.call('HSET', e.vk, e.field, loggedValue(e.vote, at))
  end
end

-- entryKey returns the key of entry e and the type of its value, or
-- raises for an entry the store never writes.
local function entryKey(e)
  local kind = e.kind
  if LOG_KINDS[kind] then
    return k.log .. e.user, 'string'
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

-- ends are the lengths of the vote logs an uvote appends to, as the
-- entries before it leave them; had their lengths before the call.
local ends, had = {}, {}

-- placeLine sets where the line of uvote e goes: appended (e.append),
-- where the log at its key ends at its offset once the entries before
-- are written, or nowhere where the log holds it there already (an
-- import resumed); anything else raises, before any write.
local function placeLine(e)
  local key = e.key
  if not ends[key] then
    ends[key] = redis.call('STRLEN', key)
    had[key] = ends[key]
  end
  if e.off == ends[key] then
    e.append, ends[key] = true, ends[key] + #e.text
  elseif e.off + #e.text > had[key] or redis.call('GETRANGE', key, e.off, e.off + #e.text - 1) ~= e.text then
    return error('voting: restore: the vote log line ' .. string.sub(e.text, 1, -2) .. ' of user ' .. e.user .. ' goes at offset ' ..
      e.n .. ', where the log at ' .. key .. ' holds ' .. ends[key] .. ' bytes and not that line', 0)
  end
end

local list = {}
for i = 17, #a, FIELDS do
  local e = {kind = a[i], user = a[i + 1], id = a[i + 2], item = a[i + 3], vote = a[i + 4], shadow = a[i + 5] == '1',
    n = a[i + 6], text = a[i + 7], exp = a[i + 8]}
  -- Every key written below is checked first.
  local want
  e.key, want = entryKey(e)
  expect(e.key, want)
  if e.kind == 'voter' or e.kind == 'cvoter' then
    e.stored = voteOf(e)
  elseif LOG_KINDS[e.kind] then
    logEntry(e)
    if e.kind == 'uvote' then
      placeLine(e)
    end
  end
  list[#list + 1] = e
end
for _, e in ipairs(list) do
  local kind, key = e.kind, e.key
  if kind == 'karma' then
    redis.call('ZADD', key, num(-tonumber(e.n)), e.user)
  elseif kind == 'uvote' then
    -- The line, then the vote linked to it (an import writes the voter
    -- records first).
    local at = e.off
    if e.append then
      at = redis.call('APPEND', key, e.text) - #e.text
    end
    linkVote(e, at)
  elseif kind == 'ukill' then
    -- The line, where it is still the vote's and no voter record's vote
    -- links it (logKill's check).
    local linked = e.vk and redis.call('HGET', e.vk, e.field) == loggedValue(e.vote, e.n)
    if not linked then
      must(logKill(key, e.off, tonumber(e.vote), e.logged))
    end
  elseif kind == 'ulink' then
    -- The vote, where the record holds what the check read (text; ''
    -- for none, a comment poster's implied upvote, whose record must be
    -- there), linked to the line at n where it is the vote's, or
    -- unlinked (n -1).
    local v = e.vk and redis.call('HGET', e.vk, e.field)
    local none = e.text == '' and e.poster and e.vote == '1' and redis.call('HEXISTS', e.vk, '') == 1
    if e.vk and (v or '') == e.text and (v or none) then
      if e.off < 0 then
        if v then
          redis.call('HSET', e.vk, e.field, e.vote)
        end
      elseif redis.call('GETRANGE', key, e.off, e.off + #e.head - 1) == e.head then
        redis.call('HSET', e.vk, e.field, loggedValue(e.vote, e.n))
      end
    end
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
