// Package voting is Reddit and Hacker News style article voting on
// Redis: post articles, vote them up or down, list them by score, by time
// or by Reddit's orders, group them and comment on them. It is the
// article-voting design of "Redis in Action" (section 1.3), with every
// operation an atomic Lua script in one round trip over a redigo pool.
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
//
// Voting is open for the vote window after posting (a week by default);
// after it Vote returns [ErrVotingClosed], the score is frozen, and the
// voter records expire so their memory is reclaimed. The vote window is
// half-open: voting is open at posted + window − 1 s and closed at
// posted + window, on the store's clock ([WithClock], whole seconds).
// Clocks that disagree can close voting early, never count a vote twice.
//
// Articles of equal score (or post time, or value in any order) are
// ordered by id as a number: newest first in descending orders, oldest
// first in ascending ones.
//
// Every listing a user reads comes with that user's votes, for its
// arrows, in the same script and round trip: [Store.ArticlesFor],
// [Store.GroupArticlesFor], [Store.TopSinceFor], [Store.SubmittedFor],
// [Store.UpvotedFor], [Store.ThreadFor] and [Store.RepliesFor] return
// what their plain reads return, and votes[i], the user's vote on the
// i-th item, as [Store.VotesOf] and [Store.CommentVotesOf] read it
// ([NoVote] where there is none or voting has closed).
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
// # Groups, pages and comments
//
// Groups (tags, subreddits) are sets of articles, at most
// [MaxArticleGroups] per article ([Store.AddToGroups]). A group's page
// ([Store.GroupArticles]) is always the front page restricted to the
// group, read from a cache that every vote keeps exact; a cold cache is
// built in a few short round trips, and one nobody reads expires after
// [WithGroupCacheTTL].
//
// [WithUserPages] keeps, for each user, the pages of Reddit's profile
// tabs: [Store.Submitted], their posts, and [Store.Upvoted], the articles
// they upvoted (a post is its poster's upvote), each the latest
// [MaxUserPageEntries] entries, newest first. No deleted or pruned
// article shows on them, and every page but the last is full.
//
// Every article takes comments: [Store.Comment] posts a reply to the
// article or to one of its comments, [Store.VoteComment] votes on one as
// Vote votes on an article, [Store.Thread] reads an article's comments as
// a tree and [Store.Replies] the tree under one comment, filled best-first
// as Reddit's CommentOrderer does and cut at a count ([MaxThread]) and a
// depth ([MaxThreadDepth]), with "load more" counts ([ThreadComment].More)
// for what they leave out. [Store.CommentsByID], [Store.CommentVotesOf],
// [Store.EditComment], [Store.DeleteComment] and [Store.UserComments]
// ([WithUserPages]) do for comments what their article twins do;
// [Article].Comments counts an article's live comments.
//
// Comment ids come from a counter of their own ("1", "2", ...), which a
// refused Comment does not move. Siblings are ordered by Best (Reddit's
// confidence sort), Top (points, Upvotes − Downvotes), TimeDesc and
// TimeAsc always, and by Hot, Controversial and ScoreDesc where
// [WithOrders] names them, each by its formula (order.go; a comment's
// score has the store's vote weight), ties by id. Time order is the order
// in which Redis received the comments, that of their ids, not that of
// their Posted times. A comment starts with its poster's upvote and may be
// [MaxCommentDepth] levels deep. DeleteComment keeps a comment with
// replies in place as Deleted; one without replies goes, with each deleted
// ancestor it leaves without replies, 50 a round trip: a chain of n such
// ancestors takes about 1 + n/50 round trips, no script more than about
// 4 ms of redis-server's time. A store whose articles get no comments does
// no extra work per vote or post.
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
// call changes nothing: [WithMinKarma] ([ErrNotAllowed]), [WithVoteLimit],
// [WithPostInterval] and [WithCommentInterval] ([ErrRateLimited]),
// [WithRepostAfter] ([ErrDuplicate]) and [WithEditWindow] ([Store.Edit]
// by the poster only, within a span of posting). Every one is off unless
// its option is given; a store without the vote rules does no extra work
// per vote.
//
// Rules are data: whether a rule is on is a shared option of the store,
// and its numbers are kept in the store, where [Store.SetRules] changes
// them for every process sharing it, from its next call, with no
// restart; [Store.Rules] reads them (docs/LAYOUT.md, "Rules").
//
// # Moderation
//
// [Store.Voters] and [Store.CommentVoters] list who voted on an item,
// and how, while its voting is open. With [WithVoteLog] the store keeps
// every standing vote of each user, beyond the voting window:
// [Store.VotesBy] lists it, and [Store.ReverseVotes] takes every vote
// of it back, as if it had never been cast. [Store.Suspend] suspends a
// user until a time: [Refuse] refuses their votes, posts and comments
// with [ErrNotAllowed]; [Shadow] accepts their votes, which count
// nowhere. [WithVoteEvents] adds every change to a Redis Stream that
// [Store.VoteEvents] reads. docs/OPERATIONS.md, "Moderation", says what
// each one does and the stream's fields.
//
// # Errors
//
// Errors wrap one of [ErrNotFound], [ErrVotingClosed], [ErrInvalidVote],
// [ErrInvalidArgument], [ErrDuplicate], [ErrNotAllowed],
// [ErrRateLimited], [ErrTryAgain], [ErrOutOfMemory],
// [ErrUnknownOutcome] (a Post or Comment that may have posted) and
// [ErrIncompatible] (a store of other shared options or layout), or the
// error of the pool or connection; check them with errors.Is. [RetryAfter]
// tells a rate-limited or suspended caller how long to wait.
// ErrTryAgain and ErrOutOfMemory are Redis's refusals of a whole call,
// before it runs: a slot on the move, a cluster down, a server loading
// its data; a full Redis. The call changed nothing, so it is safe to
// retry. With [WithWaitReplicas] or [WithWaitAOF] a call that wrote may
// return its result with an error wrapping [ErrNotReplicated]. Errors
// read "voting: <operation>: <what>: <detail>", as in `voting: vote:
// article not found: "9"`.
//
// Input is validated before Redis is touched; any string that is not an
// id the store issues is not found. Writes take safe text alone, and
// refuse the rest with [ErrInvalidArgument] naming the field, the
// character and its byte ("title: contains a control character U+001B
// at byte 4"): titles and comment bodies of valid UTF-8 without control
// characters (a body keeps newlines and tabs) or bidi embeddings,
// overrides and isolates, titles without line or paragraph separators;
// links that are absolute http or https URLs with a host and no user
// info ([WithLinkSchemes]), or empty; names of printable characters
// without white space at either end (no zero-width or bidi characters,
// so two names that look alike are alike). [WithRawText] relaxes these
// to the limits of length, valid UTF-8 and printable names. Reads return
// what is stored, as it is, and a lookup refuses only a name no store
// takes at all.
//
// # Concurrency
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
// work that grows with the data (a cold group page, Prune, Drop, Delete
// of an article with many comments, a long DeleteComment) is done in
// bounded steps of one short script each. Every method takes a context.
// A call that meets a connection the server closed is sent again on
// another, but for Post and Comment, which return [ErrUnknownOutcome]
// where they may have posted; a Vote whose reply was lost may be
// retried safely: it counts once.
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
//
// # Where the rest is
//
// The store needs Redis 6.2 or later (7.0 for Functions and
// [WithReadPool], 7.2 for WAITAOF, [WithWaitAOF]'s; it is tested on Redis
// 7.0 and 8.0 and Valkey 8.1). docs/OPERATIONS.md is the manual
// for operators: servers, Redis settings (maxmemory-policy noeviction or
// volatile-*), scripts and Functions, changing shared options with
// [Store.Reconfigure], Redis Cluster, reads on replicas, durability,
// failures, bounded work, clocks, retention ([Store.Prune]), moderation
// and votectl. docs/LAYOUT.md gives the key layout, the records, the
// store's identity ([Identity], [LayoutVersion], [Store.CheckIdentity])
// and the migrations between layouts. BENCHMARKS.md gives the costs;
// cmd/votectl is the operator's tool; examples/newsapi is a whole
// service built on the package.
package voting
