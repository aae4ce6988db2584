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
//	page, arrows, err := store.ArticlesFor(ctx, "bob", voting.ScoreDesc, 1) // with bob's votes
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
// to up moves the net count by two), [CancelVote] takes it back, and voting
// the same way again changes nothing, so a retried request is harmless.
// [NoVote], the zero VoteType, is what a read says where there is no
// vote; as a ballot it gets [ErrInvalidVote], so a request that left its
// vote out changes nothing.
// Voting is open for the vote window after posting (a week by default);
// after it Vote returns [ErrVotingClosed], the score is frozen, and the
// voter records expire so their memory is reclaimed. The vote window is
// half-open: voting is open at posted + window − 1 s and closed at
// posted + window, on the store's clock (whole seconds: see "Time").
//
// Articles of equal score (or post time, or value in any order) are
// ordered by id as a number: newest first in descending orders, oldest
// first in ascending ones.
//
// Every listing a user reads comes with that user's votes, for its
// arrows, in the same script and round trip: [Store.ArticlesFor],
// [Store.GroupArticlesFor], [Store.TopSinceFor], [Store.SubmittedFor],
// [Store.UpvotedFor], [Store.ThreadFor] and [Store.RepliesFor] return
// what Articles, GroupArticles, TopSince, Submitted, Upvoted, Thread and
// Replies return, and votes[i], the user's vote on the i-th item, as
// [Store.VotesOf] and [Store.CommentVotesOf] read it ([NoVote] where
// there is none or voting has closed). Each takes the round trips of its
// plain read, one but for a cold group page or a busy TopSince edge,
// whose last step reads the votes.
//
// # Orders
//
// [ScoreDesc], [ScoreAsc], [TimeDesc] and [TimeAsc] are always available.
// [WithOrders] adds Reddit's [Top], [Hot], [Best] and [Controversial]
// (descending only), which every vote keeps exact, and [Store.TopSince],
// the top articles of the last hour, day, week or year. A store without
// them keeps no extra keys and does no extra work per vote. [Order.Value]
// works out an article's value in an order, as the store keeps it.
//
// # Groups
//
// Groups (tags, subreddits) are sets of articles, at most
// [MaxArticleGroups] per article. A group's page is the group's members in
// an order, read from a cached copy of the group in that ordering, which
// every vote, addition, removal and deletion keeps exact: a group page is
// always the front page restricted to the group. A cache is built by the
// reads of the group in an ordering, in bounded steps, one round trip
// each, so no command runs long however large the group or the store;
// concurrent readers share one build. Until it is complete, a read walks
// the store's ordering from the top (or the bottom, for an ascending
// page), copying the group's members into the cache, and the cache keeps
// how far the walk went, so the next read, or the next round trip of the
// same read, goes on from there, and a page the walk has passed is read
// from the cache at once. A read of a group that is a small share of the
// store builds its cache from the group's members instead, a few hundred
// a step. Either way a cold page costs a few round trips of a few
// milliseconds (page 40 of a group of 100,000 in a store of a million:
// four, about 10 ms), and is exactly the page the complete cache gives.
// A cache nobody reads expires after the group cache TTL
// ([WithGroupCacheTTL], 60 seconds by default; zero keeps caches for
// good). Group pages need Redis 6.2 or later, for SMISMEMBER and ZMSCORE.
//
// # A user's pages
//
// [WithUserPages] keeps, for each user, the pages of Reddit's profile
// tabs: [Store.Submitted], their posts, and [Store.Upvoted], the articles
// they upvoted (a post is its poster's upvote), each the latest
// [MaxUserPageEntries] entries, newest first, ties by id, highest first.
// Post and Vote keep them in their scripts; cancelling or switching an
// upvote removes the article. Delete and Prune remove a post from its
// poster's page at once. They cannot reach every voter's page in one
// short script (an article may have 100,000 voters, whose records expire
// with its window), so a read of a page skips and drops the entries of
// articles that are gone, walking at most the list's 1,000 entries: no
// deleted or pruned article shows, and every page but the last is full.
// A store without the option keeps no pages and does no extra work per
// vote or post.
//
// # Comments
//
// Every article takes comments: [Store.Comment] posts a reply to the
// article or to one of its comments, [Store.VoteComment] votes on one
// as Vote votes on an article, [Store.Thread] reads an article's
// comments as a tree and [Store.Replies] the tree under one comment,
// filled best-first as Reddit's CommentOrderer does and cut at a count
// ([MaxThread]) and a depth ([MaxThreadDepth]), with "load more"
// counts ([ThreadComment].More) for what they leave out.
// [Store.CommentsByID], [Store.CommentVotesOf], [Store.EditComment],
// [Store.DeleteComment] and [Store.UserComments] ([WithUserPages]) do
// for comments what their article twins do. [Article].Comments counts
// an article's live comments, in every read of articles. A store whose
// articles get no comments does no extra work per vote or post.
//
// Comment ids come from a counter of their own ("1", "2", ...), which a
// refused Comment does not move. Siblings are ordered by Best (Reddit's
// confidence sort), Top (points, Upvotes − Downvotes), TimeDesc and
// TimeAsc always, and by Hot, Controversial and ScoreDesc where
// [WithOrders] names them, each by its formula (order.go; a comment's
// score has the store's vote weight), ties by id. Time order is the
// order in which Redis received the comments, which is that of their
// ids, not that of their Posted times: stores whose clocks disagree may
// date a comment before an earlier one, and a thread still shows them
// as they came.
//
// As Post does for an article, Comment records the poster's own upvote:
// a comment starts with one. It is implied by the comment's record, not
// kept as a voter's entry, so that it costs no memory; the poster's
// first change of it (a downvote, a cancel) makes the entry, and
// upvoting again removes it. A comment's voting is open for the store's
// vote window after it was posted, on the store's clock, and while the
// article's comment voter record exists: a hash of the votes on all the
// article's comments, which each Comment keeps for a vote window after
// it on the server's clock, and which then expires with all of them, as
// an article's voter record does. The record names the comment that
// made it: a record made again after one expired (by a Comment on an
// article still open on a store's clock) reopens no older comment's
// voting, so no vote counts twice. Karma ([WithKarma], [WithVoteCost],
// [WithMinKarma]) and the vote limit ([WithVoteLimit]) apply to comment
// votes as to article votes, in the same script; [WithCommentInterval]
// spaces a user's comments; [WithEditWindow] lets a poster edit their
// comment for a while.
//
// A comment may be [MaxCommentDepth] levels deep, which bounds the work
// of a Comment and of a DeleteComment: each walks up the comment's
// ancestors to keep their live counts ([Comment].Replies).
// DeleteComment removes a comment without replies whole, then each
// deleted ancestor left without replies; one with replies stays in
// place as Deleted, its poster and body gone from every read, its votes
// and their karma kept; it takes no more votes (ErrNotFound), as a
// deleted comment on Reddit takes none. The removal goes in steps of
// at most 100 comments, one script and round trip each: the first walks
// up every ancestor for their live counts, as a Comment does, and
// removes one comment fewer for every 5 ancestors, down to the comment
// alone; each other step removes 100 of the deleted ancestors left. So
// a chain of n deleted ancestors left without replies takes about
// 1 + n/100 round trips, and no script more than about 5 ms of
// redis-server's time, at MaxCommentDepth too (BenchmarkCommentBounds'
// comment-at-999 costs as much). Between steps the ancestors not yet
// removed read, in every read and count, as deleted comments without
// replies; their cids wait in {prefix}:cremoving, and a DeleteComment
// cut short between steps leaves them so until the next DeleteComment
// of any comment of the store, which removes them first.
//
// A comment's record is one string, as an article's is, its body in
// it: its counts (up, down, live descendants), its newest and oldest
// replies and its next older and previous newer siblings (each ten
// digits, with leading zeros, so that a vote, a reply or a link writes
// them in place), whether it is deleted, what never changes (its
// article, parent, post time, close, depth, optional orderings and
// weight), its poster (kept once deleted for the votes that stay, never
// shown) and its body. Each parent's replies are a linked list in the
// order they came, which time order follows, so no time ordering is
// kept; their Best and Top orderings are one sorted set, in two bands of
// values, so that a vote writes both with one ZADD. A comment costs
// about 360 bytes with the default orders, its body aside
// (BENCHMARKS.md).
//
// [Store.Delete] and [Store.Prune] remove an article's comments first,
// 200 a round trip, in post order (a comment after its replies), one
// short script each, and the article in the last step: Delete of an
// article with n comments takes 1 + n/200 round trips, each a few
// milliseconds at most. Comments posted meanwhile go too. Until the last
// step the article and its remaining comments read as before (their
// counts may run ahead of what is left); an error leaves the rest, and
// Delete called again goes on. Drop removes comments with every other
// key.
//
// # Karma and rules
//
// [WithKarma] keeps each user's karma, which every vote on their articles
// moves in the same script as the vote; [Store.Karma] reads it and
// [Store.TopUsers] lists users by it. [WithVoteCost] makes each standing
// vote cost the voter karma, given back when the vote is cancelled. A
// poster's vote on their own article moves no karma and costs nothing. At
// all times, under any interleaving of votes, a user's karma is
//
//	Karma = Σ perUpvote or perDownvote over the standing votes of others on their articles
//	      − Σ the cost of their own standing votes on others' articles
//
// Switching and cancelling move it back exactly, and once an article's
// voting closes its votes' karma stays. Deleting or pruning an article
// leaves the karma its votes earned: taking it back would need the
// article's voter list, which may be huge or already expired.
//
// The rules that protect a site are decided inside the script of the call
// they guard, so concurrent requests cannot get past them, and a refused
// call changes nothing: [WithMinKarma] ([ErrNotAllowed] for a vote from a
// user with too little karma), [WithVoteLimit] (at most n votes that
// change something in any span of a given length: [ErrRateLimited]),
// [WithPostInterval] ([ErrRateLimited] for a post too soon after the
// poster's last), [WithRepostAfter] ([ErrDuplicate] for a link posted
// within a span) and [WithEditWindow] ([Store.Edit] by the poster only,
// within a span of posting). [RetryAfter] tells a rate-limited caller how
// long to wait. Every one is off unless its option is given; a store
// without the vote rules does no extra work per vote.
//
// Rules are data. Whether a rule is on is a shared option, recorded in
// the store's identity (below); its numbers (karma per vote, costs, least
// karma, the vote limit and its span, the intervals, the repost span, the
// edit window) are data of the store, in {prefix}:rules. The first Post
// into an empty store records the numbers of its options; from then on
// [Store.SetRules] (or votectl options -vote-limit 6/1m) changes them,
// and every process sharing the store applies them from its next call,
// with no restart and no [ErrIncompatible], whatever numbers its own
// options name. [Store.Rules] reads them. A rule's script reads the
// record with one GET (parsed once per record where the scripts run as
// a library); a store whose record is lost applies each process's own
// numbers until SetRules or Reconfigure writes it again.
//
// # Moderation
//
// [Store.Voters] and [Store.CommentVoters] list who voted on an article
// or a comment, and how, while its voter record is kept (its voting
// window), a cursor-paged walk of bounded steps. With [WithVoteLog] the
// store keeps, in each vote's script, every standing vote each user has
// cast, on articles and comments, which outlives the voting window:
// [Store.VotesBy] lists it newest first, and [Store.ReverseVotes] takes
// every vote of it back, as if it had never been cast: the item's
// counts, score or points and every ordering (the front pages, groups
// and their cached pages, TopSince, the comment orders), the posters'
// karma and the voter's vote costs, and the voter's upvoted page. A vote
// on an item whose voting is open is cancelled as a vote would cancel
// it; one on a closed article or comment is taken off its frozen
// counts, so a closed article's frozen score changes too. Post's and
// Comment's own upvote is the item's, not a vote cast: no log has it and
// ReverseVotes leaves it; a vote the poster casts on their own item
// afterwards is logged, and taken back to none. A user whose karma the
// refunds bring to 0 leaves TopUsers, as one who never voted. The
// reversal works in bounded steps of a few milliseconds, one script each
// (BENCHMARKS.md): interrupted, it resumes where it stopped, and a
// second call takes back nothing more.
//
// [Store.Suspend] suspends a user until a time, when the suspension ends
// by itself; the script of each vote, post and comment decides it before
// its first write, so no request gets past it. [Refuse] refuses the
// user's votes, posts and comments with [ErrNotAllowed] ([RetryAfter]:
// the time left), changing nothing. [Shadow] accepts the user's votes,
// which the user sees as cast (the vote's result, VoteOf, VotesOf and
// the reads for a user: the voter record keeps "1s" or "-1s") and which
// count nowhere: no count, score, ordering, karma, page, log or event
// has them, and a vote the user cast before, changed while shadowed, is
// taken back. While any user is suspended, the store's record carries
// the latest end of the suspensions, which a vote reads with the one
// GET that checks the record: a store that never suspended anyone, or
// whose suspensions have all ended, pays nothing more on a vote, and
// Unsuspend of the last suspended user takes the end off.
//
// With [WithVoteEvents] the store adds, in the script of each change,
// an entry to a Redis Stream at {prefix}:events capped at about its
// length (XADD MAXLEN ~): every vote that changes something (kind
// "vote"), every vote a reversal takes back ("reversed"), every
// suspension ("suspend") and its end by Unsuspend ("unsuspend").
// [Store.VoteEvents] reads them in order; a detector outside the site
// may read the stream itself, with a consumer group (XGROUP CREATE
// {voting}:events detectors $, then XREADGROUP). Every entry has the
// same fields, strings:
//
//	kind     vote, reversed, suspend or unsuspend
//	user     the voter, or the user suspended
//	target   the article's or comment's id; a suspension's mode, refuse
//	         or shadow; "" for unsuspend
//	comment  1 where target is a comment's id, else 0
//	from     the vote counted before: 1, -1, or 0 for none
//	to       the vote counted after (0 for a reversal)
//	at       the store's clock at the change, Unix milliseconds (a
//	         vote's to the second)
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
// post times the stores wrote. When it takes steps (below, "Concurrency
// and failure"), it chooses the first articles of that bucket by their
// net votes at the steps: one voted past them meanwhile may be missing
// from its page, which is otherwise read, ranked and filled at its last
// step.
//
// The rules run on the store's clock too, to the millisecond: a vote
// limit against the times of the user's last votes, a post interval
// against the poster's last post, and the repost and edit spans from the
// article's Posted time (whole seconds). The keys they read expire on
// Redis's clock, so that idle users cost nothing, but only twice the
// rule's span and a minute after their last write: a Redis clock running
// ahead can only make them outlive their use, which refuses a call early,
// never let one through that the rule refuses. The vote log keeps the
// user's last n vote times whatever the clock that wrote them, so stores
// whose clocks disagree cannot clear each other's votes.
//
// # Key layout
//
// All keys of a store start with "{prefix}:" ([WithKeyPrefix], default
// "voting"), so redis-cli can read them:
//
//	{voting}:seq                      string  the last issued article id
//	{voting}:store                    string  the store's identity: "<layout> <option>...",
//	                                          as "6 orders=top karma" ("The store's
//	                                          identity")
//	{voting}:rules                    string  the numbers of the rules that are on, as
//	                                          "karma=1,-1 votelimit=10,60000" (spans in
//	                                          ms; Store.SetRules, "Rules are data")
//	{voting}:store:<identity>         none    the fence: never written; every script
//	                                          declares it ("Redis Cluster")
//	{voting}:backfill                 string  "<post time> <member>", where Reconfigure's
//	                                          backfill of the links is, while it runs
//	{voting}:by:score                 zset    member -> score
//	{voting}:by:time                  zset    member -> post time (Unix seconds)
//	{voting}:by:<order>               zset    member -> value, for top, hot, best, controversial
//	{voting}:top:<size>:<n>           zset    member -> net votes, for the articles posted in
//	                                          [n·size, (n+1)·size) seconds; size 600,
//	                                          86400 and 2592000 (10 minutes, 1 and 30 days)
//	{voting}:article:<id>             string  the article's record: "<up> <down> <posted>
//	                                          <weight> <orders> <#poster> <#title>:<poster>
//	                                          <title><link>" (below)
//	{voting}:voted:<id>               hash    user -> 1 (up) or -1 (down), 1s or -1s (a shadowed
//	                                          user's, counted nowhere), and "" -> "<up>
//	                                          <down> <groups> <posted> <closes> <weight>
//	                                          <orders>" (below); expires when voting closes
//	{voting}:groups:<id>              set     the names of the groups the article is in
//	{voting}:group:<name>             set     the members of the group
//	{voting}:cache:<ordering>:<name>  zset    the group's members in an ordering, and a
//	                                          marker at -inf; expires unread
//	{voting}:link:<link>              string  the id of the live article with that link
//	                                          (WithUniqueLinks; with WithRepostAfter alone,
//	                                          expires twice its span and a minute after)
//	{voting}:submitted:<user>         zset    member -> post time, the user's latest
//	                                          1,000 posts (WithUserPages)
//	{voting}:upvoted:<user>           zset    member -> time of the upvote, the user's
//	                                          latest 1,000 upvotes (WithUserPages)
//	{voting}:karma                    zset    user -> minus karma (WithKarma), so that
//	                                          ZRANGE lists the highest first, ties by name
//	{voting}:votelog:<user>           zset    "<ms>:<n>" -> ms, the times of the user's last
//	                                          n votes (WithVoteLimit); expires twice its
//	                                          span and a minute after the last
//	{voting}:lastpost:<user>          string  the time in ms of the user's last post
//	                                          (WithPostInterval); expires as votelog does
//	{voting}:cseq                     string  the last issued comment id
//	{voting}:cmoving                  string  the last comment id Reconfigure moved from
//	                                          layout 4, while it moves them
//	{voting}:cremoving                set     cids of deleted comments without replies
//	                                          whose removal, and their deleted
//	                                          ancestors', a DeleteComment left to a
//	                                          later step (Store.DeleteComment)
//	{voting}:comment:<cid>            string  the comment's record: "<up> <down> <replies>
//	                                          <first> <last> <next> <prev> <deleted>
//	                                          <article> <parent> <posted> <closes> <depth>
//	                                          <orders> <weight> <#poster>:<poster><body>"
//	{voting}:thread:<id>              hash    the article's top level: f and l, its
//	                                          newest and oldest comment
//	{voting}:kids:<parent>            zset    the replies to a comment (parent, its cid)
//	                                          or to the article ("a" and its id): member
//	                                          -> Best's value, and the member in capitals
//	                                          ("A7") -> Top's value less 2^50
//	{voting}:kids:<ordering>:<parent> zset    member -> value: the same replies, for
//	                                          hot, controversial and score where kept
//	{voting}:comments                 hash    article id -> its live comments
//	{voting}:cvoted:<id>              hash    "<cid>:<user>" -> 1, -1 or 0 (a poster's
//	                                          own vote cancelled), and "" -> the cid of
//	                                          the comment that made it: the votes on the
//	                                          article's comments; expires a vote window
//	                                          after its latest comment
//	{voting}:commented:<user>         zset    member -> post time, the user's latest
//	                                          1,000 comments (WithUserPages)
//	{voting}:lastcomment:<user>       string  the time in ms of the user's last comment
//	                                          (WithCommentInterval); expires as votelog does
//	{voting}:uvotes:<user>            zset    "a<id>" (an article) or "c<cid>" (a comment)
//	                                          -> 2 × the vote's time (Unix s), + 1 for an
//	                                          upvote: the user's standing votes (WithVoteLog)
//	{voting}:suspended                hash    user -> "r <until ms>" (Refuse) or "s <until
//	                                          ms>" (Shadow): the suspensions; while it
//	                                          holds any, {voting}:store carries the latest
//	                                          until after its identity and a newline
//	{voting}:events                   stream  the vote events (WithVoteEvents, "Moderation")
//
// A member is an article id prefixed by its number of digits as a letter
// ("a7", "b42", "c100"), so that members of equal value sort by id as
// numbers. An article's record is one string, so that a page reads its
// rows with one MGET: its vote counts (ten digits each, with leading
// zeros, so that a vote writes them in place), its post time (Unix
// seconds), its vote weight, the optional orders it is in
// (comma-separated), and the lengths in bytes of the poster's name and of
// the title, which follow with the link, byte for byte ("0000000001
// 0000000000 1700000000 432.0  5 12:aliceHello, world" is a link-less
// post of alice). The score is not in it: a read works it out from these
// fields, as the score ordering's value is. While voting is open, the
// voter record's "" field (no user's name) holds what a vote needs of the
// article, which it reads with the voter's own vote in one call: the
// counts, how many groups the article is in, its post time, the time its
// voting closes, its weight and its orders ("0000000001 0000000000 0
// 1700000000 1700604800 432.0 "). For example, "redis-cli ZREVRANGE
// {voting}:by:score 0 24 WITHSCORES" is the front page and "redis-cli GET
// {voting}:article:1" the first article. Ids are canonical decimals and
// names are validated ([MaxNameLen] and the other limits), so no input can
// reach a key outside the prefix or another article's, user's or group's
// data.
//
// # The store's identity
//
// The key layout of this package is version [LayoutVersion] (6). Each
// store records, at {prefix}:store, its layout and the options that
// every process writing to it must share ([Identity]): WithOrders
// (ScoreDesc among them, for comments), whether each rule is on
// (WithKarma, WithVoteCost, WithMinKarma, WithVoteLimit,
// WithPostInterval, WithRepostAfter, WithEditWindow,
// WithCommentInterval), WithUserPages, WithUniqueLinks, WithVoteLog and
// WithVoteEvents. Each decides what a write keeps (an ordering, karma, a
// page, a link's claim, a log, an event) or refuses, so two processes
// that differ build data that neither describes. The rules' numbers are
// not shared options but data of the store ("Rules are data", above).
// The vote weight and window are not
// shared: each article keeps those it was posted with, and every vote
// on it uses them, whichever store counts it. The other options (page
// size, group cache TTL, clock, read pool, waits) are each process's.
//
// The first Post into an empty store records the store's identity, in
// its own script. From then on every script compares the record with
// the store's identity, one GET before its own code (a vote, before its
// first write, so that a vote that changes nothing reads no record; the
// identity travels in the name of the key every script declares,
// {prefix}:store:<identity>, never written): a write runs only
// where they are equal, and a read where the layouts are; otherwise the
// call returns an error wrapping [ErrIncompatible] that names the
// difference ("karma on here, off in the store", "layout 2, this
// library reads 6") and changes nothing. New does not talk to Redis:
// [Store.CheckIdentity] makes a write's comparison in one round trip,
// for a service to call at start and refuse to start on, with the
// votectl command that records its options in the error. VotesOf, which
// runs no script, reads the record in its pipeline and makes a read's
// check in Go. A
// store with data (an id at {prefix}:seq) and no record was written by a
// version before layouts were recorded: every call but Drop gets
// ErrIncompatible. Upgrading
// from such a version whose articles are already records of layout 3
// (strings, as this version writes them) is one step before the new
// processes start: Reconfigure, from a store of the site's options
// (votectl options with the service's flags), which adopts the data and
// records its identity. Stores whose articles were hashes (the earliest
// builds) are layouts 1 and 2, which this version does not read. Drop
// removes a store whatever its identity, the record last.
//
// Layout 4 added the families of comments to layout 3: a library of
// layout 3 knows nothing of comments, and would delete an article and
// leave its comments behind. Layout 5 keeps each comment in one string,
// its body in it, where layout 4 kept a hash and a string for the body,
// and a parent's Best and Top orderings of its replies in one sorted
// set, where layout 4 kept two: a comment takes about 360 bytes, not
// 480. Layout 6 keeps the numbers of the rules in a record of their own.
// A store recorded as layout 3, 4 or 5 gets ErrIncompatible from this
// version (saying to run Reconfigure), and [Store.Reconfigure] migrates
// it by recording layout 6, in one step but for comments of layout 4: a
// store of layout 3 has no comments, and nothing else moves but the
// rules' numbers; one of layout 4 has its comments moved then, by
// id, 100 a step (the cursor at {prefix}:cmoving), each step a few
// milliseconds; layout 5 kept the numbers of the rules in the identity's
// words ("votelimit=10,60000"), which Reconfigure moves to the rules
// record. Until the last step, the calls about comments, and
// Delete and Prune of an article with comments, get ErrIncompatible
// (saying that Reconfigure moves them), but a vote on a comment already
// moved; the articles' calls work throughout. An interrupted
// Reconfigure goes on where it stopped when called again. From the
// record on, the processes of earlier layouts get ErrIncompatible, on
// reads too. The rolling deploy of the upgrade is so a short stop of
// the old processes and, for the time of the move, of comments: deploy
// the new processes (they refuse calls until the migration), run
// Reconfigure once (votectl options, or a one-off program), and stop
// the old ones, which refuse every call from then on. The check costs a vote that changes something about 4%
// of its Redis time, one that changes nothing under 1% (instruction
// counts: BENCHMARKS.md, "Method", and its git history).
//
// [Store.Reconfigure] changes the recorded options to the store's own,
// in one call: it records them, then brings existing data in line in
// steps of one short script each, and can be interrupted and called
// again. For each option, existing data:
//
//   - WithOrders added: the articles posted before keep the orders they
//     were posted with (each article records them), so a new ordering
//     lists the articles posted from the change on; removed: the
//     articles that have it stay in its ordering, which votes keep
//     exact, but stores without it do not read it.
//   - WithKarma: karma counts the votes cast from the change on; the
//     votes standing before it moved nothing, and cancelling one of
//     them gives back what it never took. Turned off, the karma zset
//     stays as it was. WithVoteCost and WithMinKarma likewise apply to
//     votes from the change on.
//   - WithUserPages: pages list the posts and upvotes from the change on;
//     turned off, the pages stay until their articles go.
//   - WithUniqueLinks turned on: Reconfigure indexes the links of the live
//     articles, oldest first, 200 articles a step (the cursor at
//     {prefix}:backfill): where live articles share a link, the oldest
//     keeps it, and a link claimed for WithRepostAfter's span is claimed
//     for good. Until it is done, a link of an article not yet indexed
//     may be posted again. Turned off, the claims stay until their
//     articles go; a store without the option does not read them.
//   - WithVoteLimit, WithPostInterval, WithRepostAfter, WithEditWindow:
//     the rules apply to calls from the change on.
//
// A rolling deploy that changes shared options:
//
//  1. Run Reconfigure once, from a store with the new options (votectl
//     options, or a one-off program). From its first step, writes of the
//     processes still running with the old options fail with
//     ErrIncompatible (their reads run), and writes with the new options
//     succeed.
//  2. Restart the processes with the new options, one by one. Only the
//     ones not yet restarted get write errors, and only until they are.
//
// To go back, run Reconfigure from a store with the old options. A new
// layout (a later version of this package) is a migration, not a
// Reconfigure: a store of another layout refuses every call of this
// one, but for the migrations of layouts 3 and 4 above.
// [Store.Check] reports the record against the store's own, with the
// server's settings below.
//
// # Redis settings
//
// The store keeps its data in Redis's memory and relies on nothing being
// evicted behind its back. Run Redis with maxmemory-policy noeviction (the
// default) or one of the volatile-* policies, which evict only keys with
// an expiry: voter records of open articles and group caches. Evicting a
// voter record closes the article's voting early; evicting a cache costs a
// rebuild. Under noeviction a full Redis fails writes with an OOM error,
// which the store returns; the reads, and Delete, Prune, Drop,
// RemoveFromGroups and DeleteComment, which free memory, still run,
// with the store's library loaded or not (FUNCTION LOAD is refused
// there: they run as scripts flagged allow-oom). Redis frees an expired key in one go: a group
// cache of 100,000 members stalls it for about 20 ms, one of a million
// for about 300 ms, unless Redis runs with lazyfree-lazy-expire yes, which
// frees it in the background; stores with groups that large want that
// setting, and lazyfree-lazy-eviction yes under a volatile-* policy (or
// caches kept for good, [WithGroupCacheTTL]). The allkeys-*
// policies may evict anything: the
// id counter (Post then skips past the live articles, or fails with an
// error naming the counter), an article, an ordering or a group, which
// the store cannot restore. Persistence (AOF with appendfsync always, or
// everysec) decides what an acknowledged call survives (see Durability).
//
// # Scripts and Functions
//
// On Redis 7 the store's scripts run as one Redis Functions library,
// voting_<hash of its code>, which the store loads with FUNCTION LOAD the
// first time a call finds it missing (a new server, FUNCTION FLUSH, a
// restart without persistence) and then calls with FCALL, or FCALL_RO
// for the reads. A library is compiled once per server, where a script
// re-runs its helpers on every call: a Vote or a page costs Redis less
// time (BENCHMARKS.md). Functions persist in RDB and AOF and replicate
// to replicas. Each version of this package has a library of its own,
// so versions that keep the same key layout can share a server during a
// rolling deploy (the article records of this version are not those of
// earlier, unreleased builds, which kept articles as hashes); delete the
// libraries of versions no longer running with FUNCTION DELETE. Where the
// server has no Functions (miniredis, Redis before 7) or the user may not
// run FCALL or FUNCTION LOAD (ACL), the store sends its scripts with
// EVALSHA instead, from then on. A user of the store needs FCALL,
// FCALL_RO and FUNCTION LOAD, or EVALSHA and EVAL. The call that finds
// the library missing takes one round trip more (its FCALL, then
// FUNCTION LOAD and the FCALL again in one pipeline), as does the first
// call on a server that refuses Functions; every later call is one.
//
// # Servers
//
// The store needs Redis 6.2 or later: its scripts use ZMSCORE and
// SMISMEMBER. Functions and [WithReadPool] need 7.0 (before it the store
// sends EVALSHA, and the read pool's calls fail), [WithWaitAOF] 7.2. Its
// tests that start a server run in CI on Redis 7.0, Redis 8.0 and Valkey
// 8.1, and the store behaves alike on the three, but for WAITAOF, which
// 7.0 lacks; nothing older is tested. Valkey reports as its redis_version
// the Redis it is compatible with (7.2.4 for Valkey 8.1), which is what
// Health.Version ([Store.Check]) shows there.
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
// Resharding is supported: a store's slot may move to another master
// (redis-cli --cluster reshard or rebalance, or CLUSTER SETSLOT and
// MIGRATE by hand) while the store serves calls. Every script declares,
// after its own keys, the key {prefix}:store:<identity> (the fence),
// which the store never writes. Redis checks the keys a script declares before it runs it, and
// while a slot moves, a node refuses a call that names a key it lacks:
// the source with TRYAGAIN (or with an ASK to the target, which answers
// TRYAGAIN too). So no script of the store runs while its slot moves,
// and each call is either applied whole, exactly once, on one node, or
// not at all, with an error wrapping [ErrTryAgain]; nothing the store
// writes can land on the target ahead of the keys being moved, so the
// move never meets BUSYKEY. VotesOf, a pipeline of reads that writes
// nothing, needs no fence: a node whose slot moves answers each of its
// commands from a key it holds, or refuses it (ASK), so it reads no key
// that has left or has yet to arrive, and fails with ErrTryAgain where a
// key has moved. Calls are refused for as long as the move of
// the slot lasts (MIGRATE moves a few keys a batch: about a second for
// ten thousand keys); a call retried after ErrTryAgain succeeds once the
// move is over, when the source answers MOVED and a cluster-aware pool
// follows it. A pool that follows redirections and retries TRYAGAIN by
// itself (redisc's RetryConn, go-redis's ClusterClient) hides short
// moves, and its last refusal is still ErrTryAgain. A store's library of
// Functions is loaded on the new master by the first call that finds it
// missing there, as on any new server. TestReshard (and its twin in
// goredis/) moves the slots of stores while posts, votes, batches and
// group changes run, and checks that no acknowledged write is lost.
//
// The pool must reach the node that owns the prefix's slot. Scripts run
// with FCALL or EVALSHA, whose first argument is a function's name or a
// script's hash, not a key, so a
// pool that routes commands by their first argument cannot route them. A
// cluster-aware pool whose connections implement [Binder], as
// *redisc.Cluster (github.com/mna/redisc) does, works as it is: the store
// binds each connection to one of its own keys before it runs a script.
// To use redisc's RetryConn, wrap it in a connection that still binds
// the *redisc.Conn under it (redisc.BindConn), as reshard_test.go's
// retryPool does; RetryConn cannot pipeline, so VoteBatch then sends
// one script a round trip, and VotesOf runs as a script. A
// plain *redis.Pool dialling the owner of the slot (CLUSTER KEYSLOT
// "{prefix}", then CLUSTER SHARDS) works too, but must be re-pointed by
// hand when the slot moves. Where the pool's connections do not support
// contexts (redis.ConnWithContext), a context is checked only before the
// call: give the pool read and write timeouts.
//
// # Reads on replicas
//
// Reads outnumber votes on most sites. [WithReadPool] sends the reads to
// a second pool, meant to reach replicas of the primary: Article,
// ArticlesByID, Articles, ArticlesFor, TopSince, TopSinceFor, Count,
// GroupCount, Groups, VoteOf, VotesOf, Karma, TopUsers, Thread,
// ThreadFor, Replies, RepliesFor, CommentsByID, CommentVotesOf, and
// GroupArticles and GroupArticlesFor once their group's cache is built. They run there as FCALL_RO of the store's library, which a
// replica has from its primary, or, where it has not (yet), as read-only
// scripts (EVALSHA_RO, falling back to EVAL_RO): forms a replica runs,
// which need Redis 7.0 or later on the read pool's servers; an older
// server gets an error that says so. VotesOf reads there with plain
// commands (see its documentation). Writes, and the
// reads that guard them, stay on the primary. Without the option every
// call runs on the primary. miniredis (v2.40) runs EVALSHA_RO and EVAL_RO
// too, but does not replicate: tests on it pass the same server as both.
//
// A replica serves the data as of its replication offset, usually a
// fraction of a millisecond behind the primary, more under load or after
// a failover: a page read there may lack the article a Post just made,
// or show a vote's old count. Vote's and Post's replies carry the fresh
// state, for the user who made them. Where a flow needs its writes on
// the replicas, [WithWaitReplicas] with n the number of replicas the read
// pool reaches acknowledges a write only once each of them has applied
// it (see Durability).
//
// GroupArticles builds a cold cache on the primary (a replica cannot
// write), and a read on a replica cannot renew the cache's TTL as a read
// on the primary does: the replica reports the cache's remaining TTL, and
// when under half is left, the store renews it on the primary, one more
// round trip, about once per half TTL per cache and reader. A cache read
// only on replicas so lives while it is read, and is built once.
//
// The read pool may be a *redis.Pool dialling a replica (or several, to
// spread the reads), or a cluster-aware pool whose connections are made
// read-only before the store binds them, as redisc.ReadOnlyConn does on a
// *redisc.Cluster: they go to a replica of the slot's master and send
// READONLY, without which a Redis Cluster replica redirects every command
// to its master. Each replica runs the reads it gets on one core, as the
// primary does: R replicas serve about R times the pages of one
// (BENCHMARKS.md).
//
// # Durability
//
// What a call that returned no error (an acknowledged call) survives
// depends on the store's options and on the server's settings:
//
//   - Plain, the default: acknowledged means applied on the primary.
//     Redis replicates asynchronously, so a failover that promotes a
//     replica may lose the last writes the primary acknowledged.
//   - [WithWaitReplicas](n, timeout): acknowledged means applied on the
//     primary and received by n replicas, in their memory. A call whose
//     replicas fall short returns its result with an error wrapping
//     [ErrNotReplicated]: applied on the primary only, as a plain call
//     is. WAIT does not make Redis a strongly consistent (CP) store, as
//     the Redis documentation of WAIT says: a failover may still promote
//     a replica that lacks the write, unless it promotes the most
//     up-to-date replica, as Sentinel and Redis Cluster try to (they
//     prefer, best effort, the replica with the greatest replication
//     offset). With one replica, promoted by hand after the primary
//     died, no acknowledged vote is lost (TestWaitReplicasFailover).
//   - AOF with appendfsync always, on the server: Redis fsyncs each
//     write before it replies, so a restart of the same server, after
//     a crash of the process or of the machine, loses no acknowledged
//     call. With appendfsync everysec it fsyncs once a second, and a
//     crash may lose about the last second or two of acknowledged
//     calls. Without AOF a restart goes back to the last RDB snapshot,
//     or to nothing. These bound what a restart of the same server
//     loses, not a failover to a replica.
//   - [WithWaitAOF](local, replicas, timeout), Redis 7.2 or later:
//     acknowledged means fsynced to the append-only file of the primary
//     (local 1) and of that many replicas; one that falls short returns
//     [ErrNotReplicated] as above. It needs appendonly yes on the
//     servers it waits for.
//
// The waits cost a call the time its replicas take to acknowledge (a
// vote with one replica on loopback: BENCHMARKS.md) and none of the
// store's Redis time; a store without them sends no WAIT.
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
// [Store.Drop], [Store.Delete] of an article with more than 200 comments
// (1 + n/200 round trips for n comments: "Comments"), and
// [Store.TopSince] when the 10-minute bucket its period
// starts in holds more than 2,000 articles of the period and its page is
// not among the bucket's first 2,000 by net votes (2 + n/2,000 round
// trips for n such articles; one otherwise). [Store.AddToGroups] and
// [Store.RemoveFromGroups] do work in proportion to the groups the
// article joins or leaves, at most [MaxArticleGroups], however many
// names they are given. [Store.VoteBatch] sends its ballots as a pipeline
// of short scripts in one round trip, and [Store.VotesOf] its reads as a
// pipeline of plain commands, an HGET an id. [Store.Thread] and
// [Store.Replies] do work in proportion to their limit, at most
// [MaxThread] comments, however large the thread; [Store.Comment] and
// [Store.DeleteComment] in proportion to the comment's depth, at most
// [MaxCommentDepth], and DeleteComment in steps of 100 comments removed
// ("Comments"). Every other call is one script in one round trip;
// Post and Comment take one more, a PING before it (below).
//
// A missing library is loaded again by the call that finds it missing,
// and scripts sent with EVALSHA fall back to EVAL when the server does
// not know them, so a restarted or flushed server heals by itself. Every
// method takes a context, honoured while waiting for a connection and for
// the reply; a call cut short by its deadline returns an error for which
// errors.Is(err, context.DeadlineExceeded) holds. Redis errors are
// returned, wrapped; the store never panics on bad input or a bad reply.
//
// A connection the server has closed (a restart, a failover, CLIENT
// KILL, the server's timeout, a proxy dropping idle connections) stays
// in the pool until a call takes it, sends its request and reads EOF or
// a reset. Every call but Post and Comment is then sent again on another
// connection, and the next, up to every connection the pool held idle
// and one new one: running it twice does nothing twice (a vote sets the
// user's vote, an edit a text; a group change or a deletion leaves what
// it left), though a repeat of one that had run reports what it finds
// (a Vote its own vote as Previous, a Delete ErrNotFound). Post and
// Comment, which make a new id, send their script only on a connection
// that has just answered a PING, which a closed one fails having run
// nothing; where the connection fails once the script is sent (closed
// in between, a timeout, the context ended), they return an error
// wrapping [ErrUnknownOutcome]: they may have posted. A timeout is not
// a closed connection, and no call is sent again for it. So a restart
// costs no call an error, and the pool needs no TestOnBorrow. A Vote
// whose reply was lost may be retried safely: it counts once. A retried
// Post posts a second article unless the store has [WithUniqueLinks]
// and the article a link.
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
// [ErrInvalidArgument], [ErrDuplicate], [ErrNotAllowed],
// [ErrRateLimited], [ErrTryAgain], [ErrOutOfMemory],
// [ErrUnknownOutcome] (a Post or Comment that may have posted:
// "Concurrency and failure") and
// [ErrIncompatible] (a store of other options or layout: "The store's
// identity"), or the error of
// the pool or connection; check them with errors.Is. ErrTryAgain and
// ErrOutOfMemory are Redis's refusals of a whole call, before it runs: a
// slot on the move, a cluster down, a server loading its data; a full
// Redis. The call changed nothing, so it is safe to retry. With
// [WithWaitReplicas] or [WithWaitAOF] a call that wrote may return its
// result with an error wrapping [ErrNotReplicated]. Errors read
// "voting: <operation>: <what>: <detail>", as in `voting: vote: article
// not found: "9"`. Input
// is validated before Redis is touched; any string that is not an id the
// store issues is not found.
//
// Writes take safe text alone, and refuse the rest with
// [ErrInvalidArgument] naming the field, the character and its byte
// ("title: contains a control character U+001B at byte 4"): titles and
// comment bodies of valid UTF-8 without control characters (a body keeps
// newlines and tabs) or bidi embeddings, overrides and isolates, titles
// without line or paragraph separators; links that are absolute http or
// https URLs with a host and no user info ([WithLinkSchemes]), or
// empty; names of printable characters without white space at either
// end (no zero-width or bidi characters, so two names that look alike
// are alike). [WithRawText] relaxes these to the limits of length, valid
// UTF-8 and printable names. Reads return what is stored, as it is, and
// a lookup refuses only a name no store takes at all.
//
// A voter record that holds anything but a vote (written by hand) gets
// an error that wraps none of the sentinels from Vote, VoteOf and for
// its ballot in VoteBatch, and reads as NoVote in VotesOf; it never
// surfaces as an invalid VoteType.
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
//	WithUserPages          off
//	WithReadPool           none        not nil; Redis 7.0 or later
//	WithKarma              off         each within ±MaxKarmaPoints
//	WithVoteCost           off         needs WithKarma; each within ±MaxKarmaPoints
//	WithMinKarma           off         needs WithKarma; each within ±MaxKarma
//	WithVoteLimit          off         n 1 to MaxVoteLimit, per >= 1 ms
//	WithPostInterval       off         >= 1 ms
//	WithRepostAfter        off         >= 1 s
//	WithEditWindow         off         >= 1 s
//	WithCommentInterval    off         >= 1 ms
//	WithWaitReplicas       off         n >= 1, timeout >= 1 ms
//	WithWaitAOF            off         local 0 or 1, replicas >= 0, not both 0; timeout >= 1 ms
//	WithLinkSchemes        http, https RFC 3986 schemes, at least one; not with WithRawText
//	WithRawText            off
package voting
