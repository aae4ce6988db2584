-- voters.lua: reads the standing voters of an article (Store.Voters) in
-- bounded steps of HSCAN over its voter record. Uses lua/lib.
openStore(KEYS, 'r')
local votedKey = KEYS[1]
local cursor, limit, articleKey = ARGV[1], tonumber(ARGV[2]), ARGV[3]
-- cursor: HSCAN's ('0' starts); limit: the most voters to read, and the
-- fields HSCAN is asked for at a time.
-- Reply: {OK, next, user, vote, ...} (next '0' at the end) |
-- {NOT_FOUND} | {CLOSED}: the voter record is gone.
-- A vote taken back keeps its field, '0' (lib/ballot.lua VOTES), which
-- is no voter: a step may so reply fewer voters than it read. No field
-- is deleted while the record lives, so its table never shrinks, and
-- HSCAN returns each field once a walk.
expect(votedKey, 'hash')
if redis.call('EXISTS', votedKey) == 0 then
  if missing(articleKey) then
    return {NOT_FOUND}
  end
  return {CLOSED}
end
local out, seen, scanned = {OK, '0'}, {}, 0
repeat
  local r = redis.call('HSCAN', votedKey, cursor, 'COUNT', limit)
  cursor = r[1]
  local fields = r[2]
  for i = 1, #fields, 2 do
    local user = fields[i]
    if user ~= '' and fields[i + 1] ~= '0' and not seen[user] then
      seen[user] = true
      out[#out + 1], out[#out + 2] = user, fields[i + 1]
    end
  end
  scanned = scanned + #fields / 2
until cursor == '0' or #out - 2 >= 2 * limit or scanned >= 4 * limit
out[2] = cursor
return out
