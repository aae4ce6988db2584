-- edit.lua: changes an article's title and link, by its poster within
-- the edit window (Store.Edit, WithEditWindow). Uses lua/lib.
openStore(KEYS, 'w')
local scoreKey = KEYS[1] -- the store's slot, for routing
local id, user, title, link = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, unique = tonumber(ARGV[5]), ARGV[6] == '1'
local k = {article = ARGV[9], link = ARGV[10]}
-- now: the store's clock in ms; ARGV[7], ARGV[8]: the rules record and
-- this process's words (lib/rules.lua storeRules), '' for a store with no
-- rule on. The edit window (WithEditWindow) and the repost span
-- (WithRepostAfter) are spans in ms after the article's post time, nil
-- for a rule that is off: no edit at any clock.
local rules = ARGV[8] ~= '' and storeRules(ARGV[7], ARGV[8]) or {}
local window = rules.editwindow and rules.editwindow[1]
local repost = rules.repostafter and rules.repostafter[1]
-- Reply: {OK, row} | {NOT_FOUND} | {NOT_ALLOWED} | {DUPLICATE, row} when
-- a live article (posted within repost, without unique) has the new link.
local articleKey = k.article .. id
local a = record(articleKey)
if not a then
  return {NOT_FOUND}
end
if not window or a.poster ~= user or now >= tonumber(a.posted) * 1000 + window then
  return {NOT_ALLOWED}
end
local old = a.link
if link ~= old and (unique or repost) then
  -- The link's claim follows the change, as Post would make it.
  local newKey = link ~= '' and k.link .. link
  local oldKey = old ~= '' and k.link .. old
  if newKey then
    expect(newKey, 'string')
    local other = redis.call('GET', newKey)
    if other and other ~= id then
      local o = record(k.article .. other)
      if o and (unique or tonumber(o.posted) * 1000 + repost > now) then
        return rows(k.article, {member(other)}, {DUPLICATE})
      end
    end
  end
  if oldKey then
    expect(oldKey, 'string')
    if redis.call('GET', oldKey) == id then
      redis.call('DEL', oldKey)
    end
  end
  if newKey and unique then
    redis.call('SET', newKey, id)
  elseif newKey then
    redis.call('SET', newKey, id, 'PX', ruleTTL(repost))
  end
end
a.title, a.link = title, link
writeRecord(articleKey, a)
return rows(k.article, {member(id)}, {OK})
