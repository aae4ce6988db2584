// Package voting is Reddit and Stack Overflow style article voting on
// Redis: post articles, vote them up or down, list them by score or by
// time, and group them. It is the article-voting design of "Redis in
// Action" (section 1.3), with every operation one atomic Lua script in one
// round trip over a redigo pool.
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
// Posting gives an article a new id from a counter ("1", "2", ...) and
// records the poster's own upvote, so a new article has one upvote.
//
// Each user has at most one vote per article: Upvote, Downvote or none.
// Vote replaces the user's previous vote (switching from down to up moves
// the net count by two), NoVote cancels it, and voting the same way again
// changes nothing, so a retried request is harmless. Voting is open for the
// vote window after posting (a week by default, WithVoteWindow); after it
// Vote returns ErrVotingClosed, the score is frozen, and the voter records
// expire so their memory is reclaimed.
//
// Groups (tags, subreddits) are sets of articles. A group's page is the
// intersection of the group with the score or time ordering, computed with
// ZINTERSTORE and cached per group and ordering for the group cache TTL (60
// seconds by default, WithGroupCacheTTL): a group page's order may be that
// old, while its articles' fields are always current. A removed or deleted
// article leaves the cached pages at once; an added one shows once the
// cache expires.
//
// # Time
//
// The store's clock (time.Now unless WithClock) dates posts and decides
// whether voting is open; scripts receive "now" as an argument. Redis's own
// clock only expires keys, by relative TTLs computed from the store's
// clock, so a simulated clock works against a real server. The group
// cache TTL, however, runs on the server's clock: a simulation that moves
// its clock faster than real time wants a short WithGroupCacheTTL.
//
// # Key layout
//
// All keys of a store start with "{prefix}:" (WithKeyPrefix, default
// "voting"), so redis-cli can read them:
//
//	{voting}:seq                 string  the last issued article id
//	{voting}:score               zset    article id -> score
//	{voting}:time                zset    article id -> post time (Unix seconds)
//	{voting}:article:<id>        hash    title, link, poster, posted, up, down
//	{voting}:voted:<id>          hash    user -> 1 (up) or -1 (down); expires when voting closes
//	{voting}:groups:<id>         set     the names of the groups the article is in
//	{voting}:group:<name>        set     the ids of the group's articles
//	{voting}:cache:score:<name>  zset    the group ∩ score, expires after the group cache TTL
//	{voting}:cache:time:<name>   zset    the group ∩ time, expires after the group cache TTL
//
// For example, "redis-cli ZREVRANGE {voting}:score 0 24 WITHSCORES" is the
// front page and "redis-cli HGETALL {voting}:article:1" the first article.
// Ids are canonical decimals and names are validated (see MaxNameLen and
// the other limits), so no input can reach a key outside the prefix or
// another article's, user's or group's data.
//
// # Redis Cluster
//
// The braces make the prefix a Redis Cluster hash tag: all of a store's
// keys hash to one slot, every script touches that slot only, and the
// store runs unchanged on a cluster, with no MOVED or CROSSSLOT errors.
// The other side of this is that one prefix lives on one node: one Store's
// load and memory go to a single master, however large the cluster. To
// spread load, use several prefixes, one Store per site, community or
// tenant (WithKeyPrefix("news"), WithKeyPrefix("tenant-42")); they hash to
// different slots, so a cluster of fair size spreads them over its nodes.
// A Store holds no state, so keeping one per tenant is cheap.
//
// The pool must reach the node that owns the prefix's slot. Scripts run
// with EVALSHA, whose first argument is the script's hash, not a key, so a
// pool that routes commands by their first argument cannot route them.
// Plug in a cluster-aware pool whose connections have a method
// Bind(keys ...string) error, as those of github.com/mna/redisc have: the
// store binds each connection to one of its own keys before it runs a
// script, and the pool sends the script to the right node. A plain
// *redis.Pool dialling the owner of the slot (CLUSTER KEYSLOT "{prefix}",
// then CLUSTER SHARDS) works too, but must be re-pointed by hand when the
// slot moves. Where the pool's connections do not support contexts
// (redis.ConnWithContext), a context is checked only before the call: give
// the pool read and write timeouts.
//
// # Concurrency and failure
//
// A Store is safe for concurrent use, and any number of Stores in any
// number of processes may share a prefix: every operation is one Lua
// script, which Redis runs atomically, and decides everything (does the
// article exist, is voting open, what was the previous vote) inside it.
// Under any interleaving, every article's score equals its post time plus
// the weight times its net votes, and its counters equal the number of
// users whose recorded vote is up or down.
//
// Scripts are sent with EVALSHA and fall back to EVAL when the server does
// not know them, so a restarted or flushed server heals by itself. Every
// method takes a context, honoured while waiting for a connection and for
// the reply; a call cut short by its deadline returns an error for which
// errors.Is(err, context.DeadlineExceeded) holds. Redis errors are
// returned, wrapped; the store never panics on bad input or a bad reply.
//
// A Vote whose reply was lost may be retried safely: it counts once. A
// retried Post posts a second article. After a server restart, each idle
// connection of a *redis.Pool fails once; set the pool's TestOnBorrow to
// ping connections idle for a while if that matters.
//
// # Errors
//
// Errors wrap one of ErrNotFound, ErrVotingClosed, ErrInvalidVote and
// ErrInvalidArgument, or the error of the pool or connection; check them
// with errors.Is. Input is validated before Redis is touched.
//
// # Defaults
//
//	key prefix       "voting"   WithKeyPrefix
//	vote weight      432        WithVoteWeight
//	vote window      7 days     WithVoteWindow
//	group cache TTL  60 s       WithGroupCacheTTL
//	page size        25         WithPageSize
//	clock            time.Now   WithClock
package voting
