-- suspend.lua: suspends a user (Store.Suspend, lib/moderation.lua), or
-- ends a suspension (Store.Unsuspend: mode ''). Uses lua/lib.
local storeKey, storeIdentity, storeUnrecorded, m = openStore(KEYS, 'w')
local hash = KEYS[1]
local user, mode, ends, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local rulesKey, want = ARGV[5], ARGV[6]
-- hash: the suspensions; mode: 'r' (Refuse) or 's' (Shadow), '' to end
-- the user's; ends: the end, ms on the store's clock; now: the store's
-- clock, ms, the time of the 'suspend' or 'unsuspend' entry the change
-- adds to the vote events where the store keeps them (WithVoteEvents,
-- lib/base.lua moderationIn); rulesKey, want: the rules record and
-- this process's words of its rules (lib/rules.lua), which a suspension
-- that is an empty store's first write records, as its first Post would
-- (post.lua).
-- The store's record carries the latest end of the suspensions while
-- the hash holds any (lib/moderation.lua lastEnd): the first write of an
-- empty store records it so.
-- Reply: {OK, was}: '1' where the user had a suspension on record.
expect(hash, 'hash')
m = m or {}
if m.events then
  expect(m.events, 'stream')
end
local recordedRules = storeUnrecorded and mode ~= '' and firstRules(rulesKey, want)
local got = redis.call('GET', storeKey)
local last = lastEnd(got, storeIdentity)
-- The record's first line stays as it is: the identity, marked while
-- Reconfigure moves the comments of layout 4 (lib/base.lua MOVING).
local head = got and string.match(got, '^[^\n]*') or storeIdentity
local was = redis.call('HEXISTS', hash, user) == 1 and '1' or '0'
if mode == '' then
  -- An unsuspend event where a suspension is on: one that ended by
  -- itself ended without one.
  local on = m.events and was == '1' and suspensionOf(hash, user, tonumber(now) / 1000)
  redis.call('HDEL', hash, user)
  if got and redis.call('EXISTS', hash) == 0 then
    redis.call('SET', storeKey, head)
  end
  if on then
    must(addEvent(m.events, m.maxLen, 'unsuspend', user, '', false, 0, 0, now))
  end
  return {OK, was}
end
redis.call('HSET', hash, user, mode .. ' ' .. ends)
if not last or last < tonumber(ends) then
  redis.call('SET', storeKey, head .. '\n' .. ends)
end
if recordedRules then
  redis.call('SET', rulesKey, recordedRules)
end
if m.events then
  must(addEvent(m.events, m.maxLen, 'suspend', user, mode == 'r' and 'refuse' or 'shadow', false, 0, 0, now))
end
return {OK, was}
