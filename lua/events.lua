-- events.lua: reads the vote events (Store.VoteEvents,
-- lib/moderation.lua addEvent) after an entry. Uses lua/lib.
openStore(KEYS, 'r')
local key = KEYS[1]
local after, count = ARGV[1], tonumber(ARGV[2])
-- after: the id of the entry the read follows, '' for the oldest kept.
-- Reply: {OK, id, kind, user, target, comment, from, to, at, ...}.
expect(key, 'stream')
local list
if after == '' then
  list = redis.call('XRANGE', key, '-', '+', 'COUNT', count)
else
  list = redis.call('XRANGE', key, '(' .. after, '+', 'COUNT', count)
end
local out = {OK}
for _, e in ipairs(list) do
  local f = {}
  for i = 1, #e[2], 2 do
    f[e[2][i]] = e[2][i + 1]
  end
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = e[1], f.kind or '', f.user or '', f.target or ''
  out[n + 5], out[n + 6], out[n + 7], out[n + 8] = f.comment or '0', f.from or '0', f.to or '0', f.at or '0'
end
return out
