-- article.lua: reads one article.
--
-- KEYS[1] score zset
-- ARGV[1] article key prefix  ARGV[2] id
--
-- Reply: one row (rows.lua), or an empty array when the article does not exist.
return rows(ARGV[1], KEYS[1], {ARGV[2]}, {})
