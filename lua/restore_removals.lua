-- restore_removals.lua: removes what a repair found stray, by the
-- store's own keys: members of the orderings, of the TopSince buckets,
-- of the users' pages, of the replies' orderings and of the groups, the
-- articles' live comment counts, and group caches, threads' ends,
-- replies' orderings and layout 4's bodies whole: for votectl's check
-- -repair (restore.go), which so removes nothing with commands of its
-- own. Uses lua/lib. Its identity check is a read's (mode 'r'): a repair
-- removes what this layout makes stray, so it refuses a store of another
-- layout, or one with data and no record, whatever options it was
-- opened with (votectl opens the store with the defaults).
openStore(KEYS, 'r')
local countsKey = KEYS[1]
local a = ARGV
local k = {ordering = a[1], bucket = a[2], submitted = a[3], upvoted = a[4], commented = a[5], kids = a[6],
  group = a[7], cache = a[8], cbody = a[9], thread = a[10]}
-- ARGV[11..]: for each removal, FIELDS arguments: its kind, the name of
-- its key after the family's prefix, the member (the article of a
-- count), and '1' to remove the key whole; which each kind takes,
-- internal/restore Removal says. What is gone already is no error: the
-- same removals made again change nothing.
-- Reply: {OK, how many removals it made}.
local FIELDS = 4

-- KINDS are the type of each kind's key, and what a removal of it
-- takes: a member ('m'), the key whole ('w'), or either.
local KINDS = {
  ordering = {'zset', 'm'}, bucket = {'zset', 'm'}, submitted = {'zset', 'm'}, upvoted = {'zset', 'm'},
  commented = {'zset', 'm'}, kids = {'zset', 'mw'}, group = {'set', 'm'}, count = {'hash', 'm'},
  cache = {'zset', 'w'}, cbody = {'string', 'w'}, thread = {'hash', 'w'},
}
local REMOVE = {zset = 'ZREM', set = 'SREM', hash = 'HDEL'}

local list = {}
for i = 11, #a, FIELDS do
  local e = {kind = a[i], name = a[i + 1], member = a[i + 2], whole = a[i + 3] == '1'}
  local place = KINDS[e.kind]
  if not place or not string.find(place[2], e.whole and 'w' or 'm', 1, true) then
    return error('voting: restore: no removal of kind ' .. e.kind .. (e.whole and ', whole' or ''), 0)
  end
  e.key, e.type = e.kind == 'count' and countsKey or k[e.kind] .. e.name, place[1]
  -- Every key removed from is checked first; a key removed whole is
  -- removed whatever it holds (a stray key under cache:, say, that no
  -- ordering of this store names).
  if not e.whole then
    expect(e.key, e.type)
  end
  list[#list + 1] = e
end
for _, e in ipairs(list) do
  if e.whole then
    redis.call('UNLINK', e.key)
  else
    redis.call(REMOVE[e.type], e.key, e.member)
  end
end
return {OK, #list}
