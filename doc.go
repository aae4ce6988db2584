// Package voting is Reddit and Stack Overflow style article voting on
// Redis: post articles, vote them up or down, list them by score, by time
// or by Reddit's orders, and group them. It is the article-voting design
// of "Redis in Action" (section 1.3), with every operation an atomic Lua
// script in one round trip over a redigo pool.
//
//	store, err := voting.New(pool, voting.WithKeyPrefix("news"))
//	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
//	r, err := store.Vote(ctx, "bob", a.ID, voting.Upvote)
//	page, err := store.Articles(ctx, voting.ScoreDesc, 1)
//
// # The model
//
// An article's score is its post time in Unix seconds plus the vote weight
// times its net votes:
//
//	Score = Posted.Unix() + weight × (Upvotes − Downvotes)
//
// The default weight, 432, is 86,400 seconds divided by 200: an article
// that collects 200 votes a day stays level with one posted a day later, so
// a site whose 50 interesting articles a day each get 200 votes keeps them
// in its top 100 for at least a day. Sorting by score is therefore "hot"
// ordering with no background job: time alone pushes old articles down.
//
// Posting gives an article a new id from a counter ("1", "2", ... up to
// the int64 maximum, exact) and records the poster's own upvote, so a new
// article has one upvote. Each article keeps the vote window and weight of
// the store that posted it ([WithVoteWindow], [WithVoteWeight]): stores
// that share a prefix with other settings never rescore each other's
// articles.
//
// Each user has at most one vote per article: [Upvote], [Downvote] or
// none. [Store.Vote] replaces the user's previous vote (switching from down
// to up moves the net count by two), [NoVote] cancels it, and voting the
// same way again changes nothing, so a retried request is harmless.
// Voting is open for the vote window after posting (a week by default);
// after it Vote returns [ErrVotingClosed], the score is frozen, and the
// voter records expire so their memory is reclaimed.
//
// Articles of equal score (or post time, or value in any order) are
// ordered by id as a number: newest first in descending orders, oldest
// first in ascending ones.
//
// # Orders
//
// [ScoreDesc], [ScoreAsc], [TimeDesc] and [TimeAsc] are always available.
// [WithOrders] adds Reddit's [Top], [Hot], [Best] and [Controversial]
// (descending only), which every vote keeps exact, and [Store.TopSince],
// the top articles of the last hour, day, week or year. A store without
// them keeps no extra keys and does no extra work per vote.
//
// # Groups
//
// Groups (tags, subreddits) are sets of articles, at most
// [MaxArticleGroups] per article. A group's page is the group's members in
// an order, read from a cached copy of the group in that ordering, which
// every vote, addition, removal and deletion keeps exact: a group page is
// always the front page restricted to the group. A cache is built by the
// reads of the group in an ordering, in steps of a few hundred members,
// one round trip each, so no command runs long however large the group;
// concurrent readers share one build. Until it is complete, a read of a
// group that is a large share of the store walks the store's ordering
// from the top, keeping the group's members, and does one build step, in
// one round trip; a read of a smaller group waits for its few steps. A
// cache nobody reads expires after the group cache TTL
// ([WithGroupCacheTTL], 60 seconds by default; zero keeps caches for
// good). Group pages need Redis 6.2 or later, for SMISMEMBER and ZMSCORE.
//
// # Time
//
// The store's clock (time.Now unless [WithClock]) dates posts and decides
// when an article's voting closes; scripts receive "now" as an argument.
// Redis's clock decides when the article's voter records expire: Post
// creates them to live for the vote window, and a vote counts only while
// they exist. Voting therefore closes at whichever comes first, the store's
// clock passing the article's close or the records expiring on the
// server's clock, and the records are gone at most about a second after
// voting closes on the server's clock. Clocks that disagree, calls delayed
// in a pool, or stores with other windows can close voting early, never
// count a vote twice: a vote never meets a record that vanished while the
// article was still open.
//
// [Store.TopSince] counts its period on the store's clock, against the
// post times the stores wrote.
//
// # Key layout
//
// All keys of a store start with "{prefix}:" ([WithKeyPrefix], default
// "voting"), so redis-cli can read them:
//
//	{voting}:seq                      string  the last issued article id
//	{voting}:by:score                 zset    member -> score
//	{voting}:by:time                  zset    member -> post time (Unix seconds)
//	{voting}:by:<order>               zset    member -> value, for top, hot, best, controversial
//	{voting}:top:<size>:<n>           zset    member -> net votes, for the articles posted in
//	                                          [n·size, (n+1)·size) seconds; size 600,
//	                                          86400 and 2592000 (10 minutes, 1 and 30 days)
//	{voting}:article:<id>             hash    title, link, poster, posted, closes, weight,
//	                                          orders, up, down, groups (how many it is in,
//	                                          absent for none until it joins one)
//	{voting}:voted:<id>               hash    user -> 1 (up) or -1 (down), and "" -> 0;
//	                                          expires when voting closes
//	{voting}:groups:<id>              set     the names of the groups the article is in
//	{voting}:group:<name>             set     the members of the group
//	{voting}:cache:<ordering>:<name>  zset    the group's members in an ordering, and a
//	                                          marker at -inf; expires unread
//	{voting}:link:<link>              string  the id of the live article with that link
//	                                          (WithUniqueLinks)
//
// A member is an article id prefixed by its number of digits as a letter
// ("a7", "b42", "c100"), so that members of equal value sort by id as
// numbers. For example, "redis-cli ZREVRANGE {voting}:by:score 0 24
// WITHSCORES" is the front page and "redis-cli HGETALL
// {voting}:article:1" the first article. Ids are canonical decimals and
// names are validated ([MaxNameLen] and the other limits), so no input can
// reach a key outside the prefix or another article's, user's or group's
// data.
//
// # Redis settings
//
// The store keeps its data in Redis's memory and relies on nothing being
// evicted behind its back. Run Redis with maxmemory-policy noeviction (the
// default) or one of the volatile-* policies, which evict only keys with
// an expiry: voter records of open articles and group caches. Evicting a
// voter record closes the article's voting early; evicting a cache costs a
// rebuild. Under noeviction a full Redis fails writes with an OOM error,
// which the store returns. Redis frees an expired key in one go: a group
// cache of 100,000 members stalls it for about 20 ms, one of a million
// for about 300 ms, unless Redis runs with lazyfree-lazy-expire yes, which
// frees it in the background; stores with groups that large want that
// setting, and lazyfree-lazy-eviction yes under a volatile-* policy (or
// caches kept for good, [WithGroupCacheTTL]). The allkeys-*
// policies may evict anything: the
// id counter (Post then skips past the live articles, or fails with an
// error naming the counter), an article, an ordering or a group, which
// the store cannot restore. Persistence (AOF with appendfsync always, or
// everysec) decides what an acknowledged call survives.
//
// # Redis Cluster
//
// The braces make the prefix a Redis Cluster hash tag: all of a store's
// keys hash to one slot, every script touches that slot only, and the
// store runs unchanged on a cluster, with no MOVED or CROSSSLOT errors.
// The other side of this is that one prefix lives on one node: one Store's
// load and memory go to a single master, however large the cluster. To
// spread load, use several prefixes, one Store per site, community or
// tenant; they hash to different slots. A Store holds no state, so keeping
// one per tenant is cheap.
//
// The pool must reach the node that owns the prefix's slot. Scripts run
// with EVALSHA, whose first argument is the script's hash, not a key, so a
// pool that routes commands by their first argument cannot route them. A
// cluster-aware pool whose connections implement [Binder], as
// *redisc.Cluster (github.com/mna/redisc) does, works as it is: the store
// binds each connection to one of its own keys before it runs a script. A
// plain *redis.Pool dialling the owner of the slot (CLUSTER KEYSLOT
// "{prefix}", then CLUSTER SHARDS) works too, but must be re-pointed by
// hand when the slot moves. Where the pool's connections do not support
// contexts (redis.ConnWithContext), a context is checked only before the
// call: give the pool read and write timeouts.
//
// # Concurrency and failure
//
// A Store is safe for concurrent use, and any number of Stores in any
// number of processes may share a prefix: every operation is one Lua
// script, which Redis runs atomically, and decides everything (does the
// article exist, is voting open, what was the previous vote) inside it.
// Under any interleaving, every article's score equals its post time plus
// its weight times its net votes, and its counters equal the number of
// users whose recorded vote is up or down. A script checks the type of
// every key it writes before its first write, so one that fails (a
// foreign value at a key of the store) leaves nothing half-written.
//
// No command the store sends runs long, whatever the size of the data:
// work that grows with the data is done in bounded steps, one round trip
// each: a cold group page ([Store.GroupArticles]), [Store.Prune] and
// [Store.Drop]. [Store.VoteBatch] sends its ballots as a pipeline of
// short scripts in one round trip. Every other call is one script in one
// round trip.
//
// Scripts are sent with EVALSHA and fall back to EVAL when the server does
// not know them, so a restarted or flushed server heals by itself. Every
// method takes a context, honoured while waiting for a connection and for
// the reply; a call cut short by its deadline returns an error for which
// errors.Is(err, context.DeadlineExceeded) holds. Redis errors are
// returned, wrapped; the store never panics on bad input or a bad reply.
//
// A Vote whose reply was lost may be retried safely: it counts once. A
// retried Post posts a second article unless the store has
// [WithUniqueLinks] and the article a link. After a server restart, each
// idle connection of a *redis.Pool fails once; set the pool's
// TestOnBorrow to ping connections idle for a while if that matters.
//
// # Retention
//
// Articles stay until deleted, about 700 bytes each. To keep a site's
// memory flat, run [Store.Prune] periodically, say hourly, with the oldest
// post time to keep (Reddit archives after 180 days):
//
//	n, err := store.Prune(ctx, time.Now().AddDate(0, 0, -180))
//
// Prune removes every trace of the articles it deletes, in short steps,
// while the site runs. [Store.Drop] removes all of a store's keys, for
// tests and for tenants that leave.
//
// # Errors
//
// Errors wrap one of [ErrNotFound], [ErrVotingClosed], [ErrInvalidVote],
// [ErrInvalidArgument] and [ErrDuplicate], or the error of the pool or
// connection; check them with errors.Is. They read "voting: <operation>:
// <what>: <detail>", as in `voting: vote: article not found: "9"`. Input
// is validated before Redis is touched; any string that is not an id the
// store issues is not found. A voter record that holds anything but a
// vote (written by hand) gets an error that wraps none of the sentinels
// from Vote, VoteOf and for its ballot in VoteBatch, and reads as NoVote
// in VotesOf; it never surfaces as an invalid VoteType.
//
// # Defaults
//
//	option                 default     limits
//	WithKeyPrefix          "voting"    1 to MaxPrefixLen bytes, printable, no braces
//	WithVoteWeight         432         finite, >= 0
//	WithVoteWindow         7 days      >= 1 s, whole seconds
//	WithGroupCacheTTL      60 s        >= 1 ms, or <= 0 for caches kept for good
//	WithPageSize           25          1 to MaxPageSize
//	WithClock              time.Now    not nil
//	WithOrders             none        Top, Hot, Best, Controversial
//	WithUniqueLinks        off
package voting
