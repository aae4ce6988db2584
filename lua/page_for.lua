-- page_for.lua: reads one page of articles in one ordering, as page.lua
-- does, and one user's vote on each of its articles. Uses lua/lib.
openStore(KEYS, 'r')
local orderingKey = KEYS[1]
local articlePrefix, start, stop, desc, votedPrefix, user = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
-- start, stop: ranks, inclusive; desc: '1' from the highest value down;
-- votedPrefix: the voter records' prefix, to which an id is appended.
-- Reply: {OK, page, votes}: page as page.lua's; votes holds one byte a
-- row of page, in order: '+' up, '-' down, '0' none. The user's vote is
-- their field of the article's voter record, as VotesOf reads it (one
-- HGET an article): none where the record is gone (voting closed) or
-- holds anything but 1 or -1.
local rows = pageRows(orderingKey, articlePrefix, start, stop, desc)
local votes = {}
for i = 1, #rows, 3 do
  votes[#votes + 1] = voteByte(votedPrefix .. idof(rows[i]), user)
end
return {OK, join(rows), join(votes)}
