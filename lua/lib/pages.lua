-- pages.lua: the user pages (WithUserPages, userpages.go): listing an
-- article on a page, and the pages a vote or a delete changes.
-- Needs: base.lua (expect).

-- User pages (WithUserPages): each user's submitted and upvoted
-- articles, zsets of members: submitted by post time, upvoted by the
-- time of the upvote (the caller's clock), ties by id. Each keeps the
-- latest PAGE_CAP entries, MaxUserPageEntries of validate.go (a test
-- keeps them equal). k.submitted and k.upvoted are the key prefixes, to
-- which a user's name is appended; nil when the store has no pages.
local PAGE_CAP = 1000

-- listOn adds member m to a user's page at value, then drops the oldest
-- entries past PAGE_CAP. Its caller has checked key's type.
local function listOn(key, value, m)
  redis.call('ZADD', key, value, m)
  local n = redis.call('ZCARD', key)
  if n > PAGE_CAP then
    redis.call('ZREMRANGEBYRANK', key, 0, n - PAGE_CAP - 1)
  end
end

-- votePage returns the voter's upvoted page that a vote changing prev to
-- new changes, or nil: an upvote lists the article, and cancelling or
-- switching an upvote unlists it (pageVote). vote() calls it before its
-- first write, with every other key it writes checked: the page's ZADD
-- or ZREM is the vote's first write, which a foreign value at the page's
-- key fails before anything changed. With rules, whose writes (karma, the
-- vote log) come first, the page's key is checked here.
local function votePage(k, user, prev, new)
  if new ~= 1 and prev ~= 1 then
    return nil
  end
  local key = k.upvoted .. user
  if k.rules then
    expect(key, 'zset')
  end
  return key
end

-- pageVote lists the article m on the voter's upvoted page at now for an
-- upvote (new == 1), and unlists it otherwise.
local function pageVote(key, m, new, now)
  if new == 1 then
    listOn(key, now, m)
  else
    redis.call('ZREM', key, m)
  end
end

-- pageWalk reads one page of a user's list at key (a page of their
-- articles or of their comments), newest entry first: count live entries
-- after start live ones. alive(ms) tells, for a chunk of the list's
-- members, what each names: a value where it is live, false or nil where
-- it is gone (deleted, pruned; a read cannot reach every list when they
-- go). It returns the page, {member, value} each, having removed the
-- gone entries it walked past, so each page but the last is full. The
-- walk reads the list in chunks, down to the page's last entry; a list
-- holds at most PAGE_CAP entries, which bounds it.
local function pageWalk(key, start, count, alive)
  local CHUNK = 100
  local page, live, gone, at = {}, 0, {}, 0
  while live < start + count do
    local ms = redis.call('ZREVRANGE', key, at, at + CHUNK - 1)
    if #ms == 0 then
      break
    end
    local values = alive(ms)
    for i, m in ipairs(ms) do
      if not values[i] then
        gone[#gone + 1] = m
      else
        live = live + 1
        if live > start then
          page[#page + 1] = {m, values[i]}
          if live == start + count then
            break
          end
        end
      end
    end
    if #ms < CHUNK then
      break
    end
    at = at + CHUNK
  end
  for i = 1, #gone, 100 do
    redis.call('ZREM', key, unpack(gone, i, math.min(i + 99, #gone)))
  end
  return page
end

-- submittedPage returns the submitted page of an article's poster that
-- a delete of it unlists it from, checked, or nil for none. Upvoted pages are
-- not reached: the voters of an article may be too many to walk, or
-- their records gone; a read of a page drops the entries whose article
-- is gone (user_page.lua).
local function submittedPage(k, poster)
  if not k.submitted then
    return nil
  end
  local key = k.submitted .. poster
  expect(key, 'zset')
  return key
end
