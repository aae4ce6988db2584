-- comment_edit.lua: changes a comment's body, by its poster within the
-- edit window (Store.EditComment, WithEditWindow). Uses lua/lib.
local key = KEYS[1]
local cid, user, body, now, window, prefix = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local bodyKey = ARGV[7] .. cid
-- now: the store's clock in ms; window: the edit window in ms after the
-- comment's post time, 0 for none.
-- Reply: {OK, row} | {NOT_FOUND} (none, or deleted) | {NOT_ALLOWED}.
local c = readComment(key)
if not c or c.x == '1' then
  return {NOT_FOUND}
end
if c.n ~= user or now >= tonumber(c.t) * 1000 + window then
  return {NOT_ALLOWED}
end
expect(bodyKey, 'string')
redis.call('SET', bodyKey, body)
return {OK, commentRow(cid, c, c.h, body)}
