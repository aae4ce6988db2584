-- user_page.lua: reads one page of a user's submitted or upvoted
-- articles (WithUserPages), newest entry first, ties by id, highest
-- first. Uses lua/lib.
openStore(KEYS, 'r')
local listKey, scoreKey = KEYS[1], KEYS[2]
local articlePrefix, start, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local votedPrefix, user = ARGV[4], ARGV[5]
-- start: how many live entries to skip; count: the page size; votedPrefix
-- and user, optional: the voter records' prefix and the user whose votes
-- the reply carries (SubmittedFor, UpvotedFor).
-- Reply: {OK, the page's rows} | {OK, the page's rows, votes} with a user
-- (lib/record.lua withVotes).
--
-- Entries whose article is gone (deleted or pruned: Delete reaches the
-- poster's submitted page but not its voters' upvoted pages) are skipped
-- and removed (lib/pages.lua pageWalk), which tells a live article from
-- a gone one by its score: one ZMSCORE a chunk.
local page = pageWalk(listKey, start, count, function(ms)
  return redis.call('ZMSCORE', scoreKey, unpack(ms))
end)
local members = {}
for i, e in ipairs(page) do
  members[i] = e[1]
end
return withVotes(rows(articlePrefix, members, {OK}), 2, votedPrefix, user)
