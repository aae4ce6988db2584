-- suspend.lua: suspends a user (Store.Suspend, lib/moderation.lua), or
-- ends a suspension (Store.Unsuspend: mode ''). Uses lua/lib.
local hash = KEYS[1]
local last, user, mode, ends, events, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
-- hash: the suspensions; last: the latest end of them (a vote's MGET
-- reads it with the store's record); mode: 'r' (Refuse) or 's'
-- (Shadow), '' to end the user's; ends: the end, ms on the store's clock;
-- events: the vote events (WithVoteEvents), or '', to which the change
-- adds a 'suspend' or 'unsuspend' entry at now (ms).
-- Reply: {OK, was}: '1' where the user had a suspension on record.
expect(hash, 'hash')
expect(last, 'string')
if events ~= '' then
  expectEvents(events)
end
local was = redis.call('HEXISTS', hash, user) == 1 and '1' or '0'
if mode == '' then
  redis.call('HDEL', hash, user)
  if redis.call('EXISTS', hash) == 0 then
    redis.call('DEL', last)
  end
  if events ~= '' and was == '1' then
    addEvent(events, 'unsuspend', user, '', false, 0, 0, now)
  end
  return {OK, was}
end
redis.call('HSET', hash, user, mode .. ' ' .. ends)
local l = tonumber(redis.call('GET', last))
if not l or l < tonumber(ends) then
  redis.call('SET', last, ends)
end
if events ~= '' then
  addEvent(events, 'suspend', user, mode == 'r' and 'refuse' or 'shadow', false, 0, 0, now)
end
return {OK, was}
