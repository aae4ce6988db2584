-- delete.lua: deleting an article and every trace of it (Delete, Prune).
-- Needs: base.lua (ALL, expect, member), record.lua (record, eachIndex,
-- expectIndexes), cache.lua (eachCache), pages.lua (submittedPage).

-- deleting checks every key that deleting article id writes, and
-- returns what deleteNow needs to delete it; nil when the article does
-- not exist. It writes nothing, so a step of Prune checks each article
-- before it deletes any.
local function deleting(k, id)
  local a = record(k.article .. id)
  if not a then
    return nil
  end
  local d = {id = id, posted = tonumber(a.posted), orders = a.orders, link = a.link ~= '' and k.link .. a.link}
  if d.link then
    expect(d.link, 'string')
  end
  d.groups = redis.call('SMEMBERS', k.groups .. id)
  for _, g in ipairs(d.groups) do
    expect(k.group .. g, 'set')
  end
  expect(k.by .. 'score', 'zset')
  expect(k.by .. 'time', 'zset')
  expectIndexes(k, d.orders, d.posted)
  d.page = submittedPage(k, a.poster)
  return d
end

-- deleteNow removes the article that deleting checked and every trace
-- of it.
local function deleteNow(k, d)
  local id, m = d.id, member(d.id)
  if d.page then
    redis.call('ZREM', d.page, m)
  end
  for _, g in ipairs(d.groups) do
    redis.call('SREM', k.group .. g, m)
    eachCache(k.cache, g, ALL, function(key) redis.pcall('ZREM', key, m) end)
  end
  redis.call('ZREM', k.by .. 'score', m)
  redis.call('ZREM', k.by .. 'time', m)
  eachIndex(k, d.orders, d.posted, function(key) redis.call('ZREM', key, m) end)
  if d.link and redis.call('GET', d.link) == id then
    redis.call('DEL', d.link)
  end
  -- A popular article's voter records are large. Its comments are gone
  -- (lib/removal.lua purgeComments), but for their voter record, which
  -- outlives them.
  redis.call('UNLINK', k.article .. id, k.voted .. id, k.groups .. id, k.cvoted .. id)
end

-- delete removes an article and every trace of it; it returns false when
-- the article does not exist.
local function delete(k, id)
  local d = deleting(k, id)
  if not d then
    return false
  end
  deleteNow(k, d)
  return true
end
