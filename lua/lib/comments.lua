-- comments.lua: comments (comments.go).
-- Needs: base.lua.
local INVALID = 9
