-- comment_vote.lua: placeholder. Uses lua/lib.
return {NOT_FOUND}
