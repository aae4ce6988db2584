-- suspended.lua: reads a user's suspension (Store.Suspended). Uses
-- lua/lib.
openStore(KEYS, 'r')
local hash = KEYS[1]
local user, now = ARGV[1], ARGV[2]
-- now: the store's clock, Unix seconds.
-- Reply: {OK, mode, ms left} | {OK} where none is on.
expect(hash, 'hash')
local mode, left = suspensionOf(hash, user, now)
if not mode then
  return {OK}
end
return {OK, mode, num(left)}
