-- comment_edit.lua: changes a comment's body, by its poster within the
-- edit window (Store.EditComment, WithEditWindow). Uses lua/lib.
openStore(KEYS, 'w')
local key = KEYS[1]
local cid, user, body, now, prefix = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[7]
-- now: the store's clock in ms; ARGV[5], ARGV[6]: the rules record and
-- this process's words (lib/rules.lua storeRules), '' for a store with no
-- rule on. The edit window (WithEditWindow) is a span in ms after the
-- comment's post time, nil where it is off: no edit at any clock.
local rules = ARGV[6] ~= '' and storeRules(ARGV[5], ARGV[6]) or {}
local window = rules.editwindow and rules.editwindow[1]
-- Reply: {OK, id, depth, record} (lib/comments.lua appendRow) | {NOT_FOUND} (none, or deleted) | {NOT_ALLOWED}.
moving(key)
local c = readHead(key)
if not c or c.x == '1' then
  return {NOT_FOUND}
end
if not window or c.n ~= user or now >= tonumber(c.t) * 1000 + window then
  return {NOT_ALLOWED}
end
-- The head as it is, and the new body: a head read whole, as Comment
-- keeps it under HEAD bytes.
local rec = commentRecord(c, body)
redis.call('SET', key, rec)
return appendRow({OK}, cid, c.h, rec)
