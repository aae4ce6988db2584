-- comment_votes.lua: placeholder. Uses lua/lib.
return {NOT_FOUND}
