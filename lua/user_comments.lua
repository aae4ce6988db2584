-- user_comments.lua: placeholder. Uses lua/lib.
return {NOT_FOUND}
