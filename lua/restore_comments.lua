-- restore_comments.lua: writes comments and their places in their
-- parents' orderings as the store's own scripts write them
-- (lib/tree.lua commentRecord, kidsKeys, placeAt): for votectl's
-- import (restore.go), which so writes no copy of a comment's record or
-- of an ordering's formula. Uses lua/lib. Its identity check is off
-- (mode 'n'): an import writes into a store before it records the
-- store's identity.
openStore(KEYS, 'n')
local cseqKey = KEYS[1] -- the store's slot, for routing
local k = {comment = ARGV[1], kids = ARGV[2]}
local removingKey = ARGV[3]
-- ARGV[4..]: for each comment, FIELDS arguments: its cid, then its
-- record's fields (lib/tree.lua parseComment): u, d, r; f, l, nx, pv
-- ('' for no link); x ('1' when deleted); a, p ('' for a reply to the
-- article), t, c, h, o, w ('' for none); n, the poster; its body; and
-- '1' where its removal waits in removingKey (a deleted comment without
-- replies that a DeleteComment left); '1' to place it alone and keep its
-- record as it is, '2' to write its record's head of these fields and
-- keep the body the record has (repairs, which have read the head
-- alone; a record gone meanwhile is left gone).
-- Reply: {OK, how many comments it wrote}.
local FIELDS = 20
local function opt(s)
  if s == '' then
    return nil
  end
  return s
end
expect(removingKey, 'set')
local list = {}
for i = 4, #ARGV, FIELDS do
  local a = ARGV
  local c = {u = a[i + 1], d = a[i + 2], r = a[i + 3], f = opt(a[i + 4]), l = opt(a[i + 5]), nx = opt(a[i + 6]),
    pv = opt(a[i + 7]), x = a[i + 8] == '1' and '1' or nil, a = a[i + 9], p = opt(a[i + 10]), t = a[i + 11],
    c = a[i + 12], h = a[i + 13], o = opt(a[i + 14]), w = opt(a[i + 15]), n = a[i + 16]}
  local cid = a[i]
  -- Every key written below is checked first.
  expect(k.comment .. cid, 'string')
  c.keys, c.ords = kidsKeys(k, c)
  for _, key in ipairs(c.keys) do
    expect(key, 'zset')
  end
  local e = {cid = cid, c = c, body = a[i + 17], removing = a[i + 18] == '1', placeOnly = a[i + 19] == '1'}
  local keep = true
  if a[i + 19] == '2' then
    -- The body is what follows the head, which the store wrote; a
    -- record gone meanwhile is left gone.
    local r = readComment(k.comment .. cid)
    keep = r ~= nil
    if r then
      e.body = string.sub(r.rec, #commentRecord(r, '') + 1)
    end
  end
  if keep then
    list[#list + 1] = e
  end
end
for _, e in ipairs(list) do
  local c = e.c
  if not e.placeOnly then
    redis.call('SET', k.comment .. e.cid, commentRecord(c, e.body))
  end
  for i = 1, #c.keys do
    local r = placeAt(c.keys, c.ords, i, e.cid, tonumber(c.t), tonumber(c.w) or 0, tonumber(c.u), tonumber(c.d))
    if type(r) == 'table' and r.err then
      return error(r.err, 0)
    end
  end
  if e.removing then
    redis.call('SADD', removingKey, e.cid)
  end
end
return {OK, #list}
