-- reconfigure.lua: one step of Reconfigure (identity.go). Uses lua/lib.
-- Its identity check is off (lib/base.lua identity, mode 'n'): it does its own.
local seqKey, timeKey, backfillKey = KEYS[1], KEYS[2], KEYS[3]
local phase, articlePrefix, linkPrefix, step = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
-- phase 'record' records this store's identity (storeIdentity) in place of
-- the recorded one, which must be of the same layout, or of layout 3,
-- which it so migrates to 4 (nothing else moves); a store with data
-- and no record is adopted where its newest article is a record of this
-- layout. Where the new identity has uniquelinks and the recorded one
-- had not, it starts the backfill of the links: backfillKey, '0', and
-- where the new one has not, it ends one. Reply: {OK, recorded ('' for
-- none), backfill ('' for none)}.
-- phase 'links' indexes the links of up to step articles, oldest first,
-- from the cursor at backfillKey, "<post time> <member>" of the last
-- article done: a live article's link key is set to it where no live
-- article has the link, and kept for good (PERSIST) where one has.
-- Reply: {OK, done}, done 1 when the backfill is over.
expect(storeKey, 'string')
expect(backfillKey, 'string')
if phase == 'record' then
  local got = redis.call('GET', storeKey)
  local layout = string.match(storeIdentity, '^%d+')
  if not got then
    expect(seqKey, 'string')
    expect(timeKey, 'zset')
    if redis.call('EXISTS', seqKey) == 1 then
      -- Data without a record: adopted only where its newest article is
      -- a record of this layout.
      local newest = redis.call('ZREVRANGE', timeKey, 0, 0)[1]
      local t = newest and redis.call('TYPE', articlePrefix .. idof(newest))
      t = t and (t.ok or t)
      local s = t == 'string' and redis.call('GET', articlePrefix .. idof(newest))
      if not s or not string.match(s, RECORD) then
        return error('voting: incompatible store:  | ' .. storeIdentity .. ' |', 0)
      end
    end
  elseif string.match(got, '^%d+') ~= layout and not (string.match(got, '^3 ') or got == '3') then
    -- Layout 3 migrates to 4 by this record alone: 4 adds the comments'
    -- families, which a store of layout 3 has none of.
    return error('voting: incompatible store: ' .. got .. ' | ' .. storeIdentity .. ' |', 0)
  end
  local function unique(s) return s and string.find(' ' .. s .. ' ', ' uniquelinks ', 1, true) ~= nil end
  if unique(storeIdentity) and not unique(got) then
    redis.call('SET', backfillKey, '0')
  elseif not unique(storeIdentity) then
    redis.call('DEL', backfillKey)
  end
  redis.call('SET', storeKey, storeIdentity)
  return {OK, got or '', redis.call('GET', backfillKey) or ''}
end

-- phase 'links': only for the identity recorded.
local got = redis.call('GET', storeKey)
if got ~= storeIdentity then
  return error('voting: incompatible store: ' .. (got or '') .. ' | ' .. storeIdentity .. ' |', 0)
end
local cursor = redis.call('GET', backfillKey)
if not cursor then
  return {OK, 1}
end
expect(timeKey, 'zset')
local start = 0
if cursor ~= '0' then
  local posted, m = string.match(cursor, '^(%S+) (%S+)$')
  local rank = redis.call('ZRANK', timeKey, m)
  if rank then
    start = rank + 1
  else
    -- Deleted meanwhile: from the first article posted at its time,
    -- again, which is harmless.
    start = redis.call('ZCOUNT', timeKey, '-inf', '(' .. posted)
  end
end
local list = redis.call('ZRANGE', timeKey, start, start + step - 1, 'WITHSCORES')
-- Every key is checked before the first write.
local todo = {}
for i = 1, #list, 2 do
  local id = idof(list[i])
  local a = record(articlePrefix .. id)
  if a and a.link ~= '' then
    local key = linkPrefix .. a.link
    expect(key, 'string')
    todo[#todo + 1] = {key, id}
  end
end
for _, t in ipairs(todo) do
  local other = redis.call('GET', t[1])
  if other and other ~= t[2] and redis.call('EXISTS', articlePrefix .. other) == 1 then
    redis.call('PERSIST', t[1])
  else
    redis.call('SET', t[1], t[2])
  end
end
if #list < 2 * step then
  redis.call('DEL', backfillKey)
  return {OK, 1}
end
redis.call('SET', backfillKey, list[#list] .. ' ' .. list[#list - 1])
return {OK, 0}
