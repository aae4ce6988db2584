-- comment_votes.lua: reads a user's votes on comments
-- (Store.CommentVotesOf). Uses lua/lib.
openStore(KEYS, 'rc')
local cseqKey = KEYS[1] -- the store's slot, for routing
local user, prefix, cvoted = ARGV[1], ARGV[2], ARGV[3]
-- ARGV[4..]: the ids.
-- Reply: {OK, votes}: one byte per id, as votes.lua's: '+', '-' or '0'
-- (none, or no such comment, or its voting closed and its voter record
-- gone), or 'c' for a voter record that holds no vote (written by hand),
-- which reads as none. The poster's own upvote is implied
-- (comment_vote.lua), but for a comment deleted and kept for its
-- replies, whose poster no read names.
local out = {}
for i = 4, #ARGV do
  local cid = ARGV[i]
  local c = readHead(prefix .. cid)
  local v = '0'
  if c then
    local r = redis.call('HMGET', cvoted .. c.a, '', cid .. ':' .. user)
    if voterOpen(r[1], cid) then
      if r[2] then
        v = voteSign(r[2]) or 'c' -- lib/record.lua
      elseif c.n == user and c.x ~= '1' then -- a deleted one's poster is gone from every read
        v = '+'
      end
    end
  end
  out[#out + 1] = v
end
return {OK, join(out)}
