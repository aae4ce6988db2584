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
-- {NOT_FOUND} | {CLOSED}: the comment's voter record is gone. The
-- poster's implied upvote (no field) comes first, on the first step; a
-- poster's field ('-1', '1' cast again, '0' taken back) replaces it.
-- A vote taken back keeps its field, '0' (lib/ballot.lua VOTES), which
-- is no voter: no field is deleted while the record lives, so its table
-- never shrinks, and HSCAN returns each field once a walk.
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
if cursor == '0' and not r[2] then
  out[3], out[4], seen[c.n] = c.n, '1', true
end
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
out[2] = cursor
return out
