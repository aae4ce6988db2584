-- moderation.lua: what a vote keeps for the moderators (moderation.go):
-- the voter's vote log (WithVoteLog). vote.lua, comment_vote.lua and
-- vote_batch.lua call it at their marked hook points ("moderation:").
-- Needs: base.lua (expect).

-- A user's vote log (WithVoteLog) is a zset at k.log .. user of the
-- items the user has a standing vote on, "a<id>" for an article and
-- "c<cid>" for a comment, each at twice the time of the vote (Unix s,
-- the store's clock), plus 1 for an upvote: ZREVRANGE lists the newest
-- first, and the vote outlives the item's voter record, for a reversal
-- of a vote on a closed item. A vote that changes the user's vote moves
-- the entry; a cancel removes it. Post's and Comment's own upvote is no
-- entry: it is the item's, not a vote the user cast.
local function logScore(now, new)
  if new == 1 then
    return string.format('%d', 2 * tonumber(now) + 1)
  end
  return string.format('%d', 2 * tonumber(now))
end

-- logVote keeps the entry of item in the log at key for the user's new
-- vote (1, -1, or 0 for none). Its caller checked key (expect) before
-- its first write.
local function logVote(key, item, new, now)
  if new == 0 then
    redis.call('ZREM', key, item)
  else
    redis.call('ZADD', key, logScore(now, new), item)
  end
end
