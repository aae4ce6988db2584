-- comment_voters.lua: reads the standing voters of a comment
-- (Store.CommentVoters) in bounded steps of HSCAN over its article's
-- comment voter record (comment_vote.lua), whose fields are
-- "<cid>:<user>". Uses lua/lib.
openStore(KEYS, 'r')
local key = KEYS[1]
local cid, cursor, limit, cvoted = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
-- cursor: HSCAN's ('0' starts); limit: the most voters to read, and the
-- fields HSCAN is asked for at a time.
-- Reply: {OK, next, user, vote, ...} (next '0' at the end) |
-- {NOT_FOUND} | {CLOSED}: the comment's voter record is gone.
-- A vote taken back keeps its field, '0' (lib/ballot.lua VOTES), which
-- is no voter: no field is deleted while the record lives, so its table
-- never shrinks, and HSCAN returns each field once a walk. The poster's
-- implied upvote (no field; a field of theirs, '-1', '1' cast again or
-- '0' taken back, replaces it) comes first on the last step, where the
-- poster has no field then: having none at the end, they had none
-- throughout (none is deleted), so HSCAN never returned one, and the
-- walk lists them once. Listed on the first step, a poster who voted
-- later in the walk could be listed again, from their new field.
local c = readHead(key)
if not c or c.x then
  return {NOT_FOUND}
end
local votedKey = cvoted .. c.a
expect(votedKey, 'hash')
local r = redis.call('HMGET', votedKey, '', cid .. ':' .. c.n)
if not voterOpen(r[1], cid) then
  return {CLOSED}
end
local out, seen, scanned = {OK, '0'}, {}, 0
local pattern, from = string.gsub(cid .. ':', '([%*%?%[%]\\])', '\\%1') .. '*', #cid + 2
repeat
  local s = redis.call('HSCAN', votedKey, cursor, 'MATCH', pattern, 'COUNT', limit)
  cursor = s[1]
  local fields = s[2]
  for i = 1, #fields, 2 do
    local user, v = string.sub(fields[i], from), fields[i + 1]
    if v ~= '0' and not seen[user] then
      seen[user] = true
      out[#out + 1], out[#out + 2] = user, v
    end
  end
  scanned = scanned + limit
until cursor == '0' or #out - 2 >= 2 * limit or scanned >= 4 * limit
if cursor == '0' and not r[2] then
  table.insert(out, 3, '1')
  table.insert(out, 3, c.n)
end
out[2] = cursor
return out
