-- rows.lua: the one shape in which every read returns articles. It is
-- prepended to each read script (scripts.go), never run alone.
--
-- rows(prefix, scoreKey, ids, out) appends, for each id whose article hash
-- (prefix .. id) exists, eight fields to out:
--   id, title, link, poster, posted, upvotes, downvotes, score
-- Ids whose hash is gone are skipped. The score is read from scoreKey as
-- Redis formats it, so no precision is lost. reply.go parses these rows.
local function rows(prefix, scoreKey, ids, out)
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', prefix .. id, 'title', 'link', 'poster', 'posted', 'up', 'down')
    if f[4] then
      local n = #out
      out[n + 1] = id
      out[n + 2] = f[1]
      out[n + 3] = f[2]
      out[n + 4] = f[3]
      out[n + 5] = f[4]
      out[n + 6] = f[5]
      out[n + 7] = f[6]
      out[n + 8] = redis.call('ZSCORE', scoreKey, id)
    end
  end
  return out
end
