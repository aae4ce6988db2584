package voting

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Defaults of a Store. The weight and window are the book's: 200 votes a
// day keep an article on the front page (86,400 s / 200 = 432).
const (
	DefaultKeyPrefix     = "voting"
	DefaultVoteWeight    = 432.0
	DefaultVoteWindow    = 7 * 24 * time.Hour
	DefaultGroupCacheTTL = 60 * time.Second
	DefaultPageSize      = 25
)

// An Option configures a Store in New. Values are checked by New, which
// returns [ErrInvalidArgument] for any that is out of range.
type Option func(*config)

type config struct {
	prefix      string
	weight      float64
	window      time.Duration
	cacheTTL    time.Duration
	pageSize    int
	now         func() time.Time
	orders      []Order
	uniqueLinks bool
	userPages   bool
	voteLog     bool  // WithVoteLog (moderation.go)
	voteEvents  int64 // WithVoteEvents: the stream's length; 0 for none
	hasEvents   bool  // WithVoteEvents was given
	readPool    Pool
	hasReadPool bool       // WithReadPool was given, if with nil
	rules       ruleConfig // karma and the rules (rule_config.go)

	durability durabilityConfig // WithWaitReplicas, WithWaitAOF (durable.go)

	hooks   []Hook // WithHook (hook.go, call.go)
	nilHook bool   // WithHook was given nil

	text textConfig // WithRawText, WithLinkSchemes (the checks: validate.go)
}

func defaultConfig() config {
	return config{
		prefix:   DefaultKeyPrefix,
		weight:   DefaultVoteWeight,
		window:   DefaultVoteWindow,
		cacheTTL: DefaultGroupCacheTTL,
		pageSize: DefaultPageSize,
		now:      time.Now,
	}
}

// WithKeyPrefix sets the prefix of every key, which becomes the store's
// Redis Cluster hash tag: every key is "{prefix}:...". Stores with
// different prefixes share nothing. Default "voting". A prefix must be
// non-empty printable UTF-8 of at most [MaxPrefixLen] bytes without "{" or "}".
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithVoteWeight sets the points one vote adds to (or takes from) the
// score of the articles the store posts; each article keeps the weight it
// was posted with, whichever store later counts its votes. Default 432
// (= 86400/200). Negative, NaN and infinite weights are rejected; 0
// orders by post time alone.
func WithVoteWeight(points float64) Option {
	return func(c *config) { c.weight = points }
}

// WithVoteWindow sets how long after posting the articles the store posts
// accept votes; each article keeps the window it was posted with. After
// it the score is frozen and the voter records expire. Default one week.
// It is counted in whole seconds (the fraction is dropped); windows under
// one second are rejected.
func WithVoteWindow(d time.Duration) Option {
	return func(c *config) { c.window = d }
}

// WithGroupCacheTTL sets how long a group's cached page in one ordering
// lives after its last read. Every mutation keeps cached pages exact, so
// the TTL does not make pages stale: it only returns the memory of groups
// nobody reads, whose next read rebuilds the cache. A cache being built
// lives at least 10s after each build step, whatever the TTL, so a TTL
// shorter than a round trip cannot stall a build. Default 60s. It is
// counted in whole milliseconds; a TTL of zero or less keeps caches for
// good; from zero to one millisecond (exclusive) is rejected.
//
// Redis frees an expired cache in one go, which stalls it for about 20 ms
// at 100,000 members and 300 ms at a million (BENCHMARKS.md), unless it
// runs with lazyfree-lazy-expire yes, which frees it in the background:
// stores with groups that large want that setting, or caches kept for good.
func WithGroupCacheTTL(d time.Duration) Option {
	return func(c *config) { c.cacheTTL = d }
}

// WithPageSize sets how many articles a page holds. Default 25; it must be
// from 1 to [MaxPageSize].
func WithPageSize(n int) Option {
	return func(c *config) { c.pageSize = n }
}

// WithClock sets the clock that dates posts and decides whether voting is
// still open. Default time.Now. Voting also closes when the article's
// voter records expire on Redis's clock, so skew between clocks can only
// close voting early, never count a vote twice (see the package
// documentation). A nil clock is rejected.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithOrders enables the orders Top, Hot, Best and Controversial for the
// articles the store posts: Post indexes them in each, every vote keeps
// them exact, and Articles, GroupArticles (and, with Top, TopSince)
// accept them. Hot, Controversial and ScoreDesc enable those orders of
// comments too (Thread, Replies), which always have Best, Top, TimeDesc
// and TimeAsc. Each article keeps the orders it was posted with. The
// orders are shared options: stores of one prefix must enable the same
// ones (docs/LAYOUT.md, "The store's identity"), or get [ErrIncompatible]. Without it a store keeps
// no extra keys and does no extra work per vote. ScoreDesc, ScoreAsc,
// TimeDesc and TimeAsc are always enabled; values outside the Order
// constants are rejected.
func WithOrders(orders ...Order) Option {
	return func(c *config) { c.orders = append(c.orders, orders...) }
}

// WithUniqueLinks makes Post refuse a non-empty link that a live article
// posted with this option already has: it returns that article and an
// error wrapping [ErrDuplicate], and changes nothing, so retrying a Post
// whose reply was lost is safe. Empty links never collide; Delete and
// Prune free the link. Default off.
func WithUniqueLinks() Option {
	return func(c *config) { c.uniqueLinks = true }
}

// WithUserPages keeps each user's pages, as Reddit's profile tabs and
// lamernews's saved news: [Store.Submitted], the user's posts, and
// [Store.Upvoted], the articles the user upvoted (their own posts
// included), each the latest [MaxUserPageEntries]. Post and every vote
// that makes or unmakes an upvote keep them, in the same script. Stores
// sharing a prefix should all have it or all not: a post or upvote made
// by a store without it is not listed, so it is a shared option (docs/LAYOUT.md,
// "The store's identity"). Without it a store keeps no pages
// and does no extra work per vote or post. Default off.
func WithUserPages() Option {
	return func(c *config) { c.userPages = true }
}

// WithVoteLog keeps, for each user, every standing vote they cast, on
// articles and on comments, newest first, in the script of the vote: the
// log [Store.VotesBy] reads and [Store.ReverseVotes] takes back, which
// outlives the item's voting window. Each user's log is a journal of
// about 20 bytes a vote (docs/LAYOUT.md): a vote appends its line, and
// the vote that changes or cancels it marks that line taken back. Post's
// and Comment's own upvote of the poster is no entry. Stores sharing a prefix should all have it
// or all not: a vote made by a store without it is not logged, so it is
// a shared option (docs/LAYOUT.md, "The store's identity"). Without it a store
// keeps no log, does no extra work per vote, and VotesBy and
// ReverseVotes get [ErrNotAllowed]. Default off.
func WithVoteLog() Option {
	return func(c *config) { c.voteLog = true }
}

// WithVoteEvents keeps a stream of the store's vote events, which
// [Store.VoteEvents] reads and a consumer group may read directly
// (docs/OPERATIONS.md, "Moderation"): every vote that changes something, on an
// article or a comment, every vote [Store.ReverseVotes] takes back, and
// every suspension and its end ([Store.Suspend], [Store.Unsuspend]),
// each added in the script of the change, to a stream capped at about
// maxLen entries (XADD MAXLEN ~): the oldest go first. A shadowed
// user's vote ([Shadow]) adds none, but where it takes back a vote that
// counted before the suspension: that change of the counts adds one.
// Stores sharing a prefix should all
// have it, with the same length, or all not: it is a shared option.
// Without it a store keeps no stream and does no extra work per vote.
// A maxLen below 1 is rejected. Default off.
func WithVoteEvents(maxLen int64) Option {
	return func(c *config) { c.voteEvents, c.hasEvents = maxLen, true }
}

func (c *config) validate() error {
	if err := checkPrefix(c.prefix); err != nil {
		return err
	}
	switch {
	case c.weight < 0 || math.IsNaN(c.weight) || math.IsInf(c.weight, 0):
		return fmt.Errorf("%w: vote weight %v is not a finite number >= 0", ErrInvalidArgument, c.weight)
	case c.window < time.Second:
		return fmt.Errorf("%w: vote window %v is under one second", ErrInvalidArgument, c.window)
	case c.cacheTTL > 0 && c.cacheTTL < time.Millisecond:
		return fmt.Errorf("%w: group cache TTL %v is under one millisecond", ErrInvalidArgument, c.cacheTTL)
	case c.pageSize < 1 || c.pageSize > MaxPageSize:
		return fmt.Errorf("%w: page size %d is not in [1, %d]", ErrInvalidArgument, c.pageSize, MaxPageSize)
	case c.now == nil:
		return fmt.Errorf("%w: clock is nil", ErrInvalidArgument)
	case c.hasReadPool && c.readPool == nil:
		return fmt.Errorf("%w: read pool is nil", ErrInvalidArgument)
	case c.nilHook:
		return fmt.Errorf("%w: hook is nil", ErrInvalidArgument)
	case c.hasEvents && c.voteEvents < 1:
		return fmt.Errorf("%w: vote events' length %d is below 1", ErrInvalidArgument, c.voteEvents)
	}
	for _, o := range c.orders {
		if !o.Valid() {
			return fmt.Errorf("%w: unknown order %v", ErrInvalidArgument, o)
		}
	}
	if err := c.durability.validate(); err != nil {
		return err
	}
	if err := c.text.validate(); err != nil {
		return err
	}
	switch {
	case c.rules.minKarma && !c.rules.karma:
		return fmt.Errorf("%w: WithMinKarma needs WithKarma", ErrInvalidArgument)
	case c.rules.cost && !c.rules.karma:
		return fmt.Errorf("%w: WithVoteCost needs WithKarma", ErrInvalidArgument)
	}
	return c.rules.validNumbers()
}

// ruleOptionNames are the options of the rules, by their place in
// ruleList, for the errors that name them.
var ruleOptionNames = [...]string{ruleKarma: "WithKarma", ruleCost: "WithVoteCost", ruleMinKarma: "WithMinKarma",
	ruleVoteLimit: "WithVoteLimit", rulePostInterval: "WithPostInterval", ruleRepostAfter: "WithRepostAfter",
	ruleEditWindow: "WithEditWindow", ruleCommentInterval: "WithCommentInterval"}

// WithLinkSchemes sets the schemes an article's link may have, in place
// of "http" and "https", the default: Post and Edit take a link that is
// an absolute URL of one of them (in any case), with a host and no user
// info, without white space or control characters, and refuse others
// with [ErrInvalidArgument]; an empty link is a text post. For example,
// WithLinkSchemes("http", "https", "ftp") lets ftp links in. Each scheme
// must be a scheme by RFC 3986 (a letter, then letters, digits, "+", "-"
// or "."); New rejects another, an empty list, and the option together
// with [WithRawText], which checks no link's form. It is a setting of
// the process, not recorded in the store's identity: the links stored
// before stay, and every read returns them as they are.
func WithLinkSchemes(schemes ...string) Option {
	return func(c *config) { c.text.schemes, c.text.hasSchemes = append([]string(nil), schemes...), true }
}

// WithRawText makes the writes keep any text within the limits, as it
// is given: titles, comment bodies and links of valid UTF-8 (titles and
// bodies not blank) of at most [MaxTitleLen], [MaxCommentLen] and
// [MaxLinkLen] bytes, and names of printable UTF-8 (the rule every
// lookup of a name applies), white space at either end allowed.
// Default off: Post, Edit, Comment and EditComment refuse, with
// [ErrInvalidArgument], titles and bodies with control characters (a
// body keeps newlines and tabs), bidi embeddings, overrides and
// isolates, and titles with line or paragraph separators; links that
// are not http or https URLs with a host ([WithLinkSchemes]); and every
// write refuses names (posters, voters, the groups an article joins)
// with white space at either end. A site that shows text where those
// characters are harmless, or that moves data kept under other rules,
// takes this option. It is a setting of the process, not recorded in
// the store's identity: the checks apply to what a call writes, and
// every read returns what is stored.
func WithRawText() Option {
	return func(c *config) { c.text.raw = true }
}

// textConfig holds WithRawText's and WithLinkSchemes's values.
type textConfig struct {
	raw        bool
	schemes    []string
	hasSchemes bool
}

func (c *textConfig) validate() error {
	switch {
	case c.hasSchemes && c.raw:
		return fmt.Errorf("%w: WithLinkSchemes with WithRawText, which checks no link's form", ErrInvalidArgument)
	case c.hasSchemes && len(c.schemes) == 0:
		return fmt.Errorf("%w: WithLinkSchemes names no scheme", ErrInvalidArgument)
	}
	for _, s := range c.schemes {
		if !validScheme(s) {
			return fmt.Errorf("%w: link scheme %q is not a URL scheme (a letter, then letters, digits, \"+\", \"-\" or \".\")", ErrInvalidArgument, s)
		}
	}
	return nil
}

// rules returns the checks of a store of these options.
func (c *textConfig) rules() textRules {
	r := textRules{raw: c.raw}
	for _, s := range c.schemes {
		if s = strings.ToLower(s); !slices.Contains(r.schemes, s) {
			r.schemes = append(r.schemes, s)
		}
	}
	return r
}

// validScheme reports whether s is a URL scheme by RFC 3986: ALPHA
// *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // lower case, for letters
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// ruleOption returns the option that turns rule i (ruleKarma...) on,
// with the numbers numbers puts into the rules' config as its own (not
// asRecorded). Which switch of ruleConfig turns a rule on is ruleList's
// (ruleSpec.on).
func ruleOption(i int, numbers func(r *ruleConfig)) Option {
	return func(c *config) {
		*ruleList[i].on(&c.rules) = true
		numbers(&c.rules)
		c.rules.ownNumbers(i)
	}
}

// WithKarma keeps each user's karma: every vote on an article moves its
// poster's karma by perUpvote for an upvote and perDownvote for a
// downvote (WithKarma(1, -1) for Reddit's), in the same script as the
// vote, and cancelling or switching the vote moves it back exactly, while
// the numbers stay ([Store.SetRules] says what a change of them does). A
// poster's vote on their own article moves no karma. Karma stays when
// voting closes, and when the article is deleted or pruned. Default off:
// a store without it keeps no karma and does no extra work per vote.
// Values beyond ±[MaxKarmaPoints] are rejected.
func WithKarma(perUpvote, perDownvote int64) Option {
	return ruleOption(ruleKarma, func(r *ruleConfig) { r.perUp, r.perDown = perUpvote, perDownvote })
}

// WithMinKarma makes Vote refuse, with [ErrNotAllowed], an upvote from a
// user with less karma than toUpvote, and a downvote from one with less
// than toDownvote (Hacker News: downvotes from 500). Cancelling a vote is
// always allowed, and so is a poster's vote on their own article. It
// needs [WithKarma]; New rejects it otherwise, and values beyond
// ±[MaxKarma]. Default off.
func WithMinKarma(toUpvote, toDownvote int64) Option {
	return ruleOption(ruleMinKarma, func(r *ruleConfig) { r.minUp, r.minDown = toUpvote, toDownvote })
}

// WithVoteCost makes each standing vote cost the voter karma: upvote for
// an upvote, downvote for a downvote (lamernews: 1 and 6), taken when the
// vote is cast and given back when it is cancelled or switched. A
// poster's vote on their own article costs nothing. It needs
// [WithKarma]; New rejects it otherwise, and values beyond
// ±[MaxKarmaPoints]. Default off.
func WithVoteCost(upvote, downvote int64) Option {
	return ruleOption(ruleCost, func(r *ruleConfig) { r.costUp, r.costDown = upvote, downvote })
}

// WithVoteLimit makes Vote and VoteBatch refuse, with [ErrRateLimited],
// a user's vote that would make more than n votes of theirs in any span
// of length per, on the store's clock, to the millisecond: ups, downs,
// switches and cancels that change something count; a vote that changes
// nothing does not. The store keeps the times of each user's last n
// votes. n must be from 1 to [MaxVoteLimit] and per at least one
// millisecond. Default off.
func WithVoteLimit(n int, per time.Duration) Option {
	return ruleOption(ruleVoteLimit, func(r *ruleConfig) { r.limit, r.per = n, per })
}

// WithPostInterval makes Post refuse, with [ErrRateLimited], a user's
// post within d of their last, on the store's clock, to the millisecond
// (lamernews: 15 minutes). d must be at least one millisecond. Default
// off.
func WithPostInterval(d time.Duration) Option {
	return ruleOption(rulePostInterval, func(r *ruleConfig) { r.postInterval = d })
}

// WithCommentInterval makes Comment refuse, with [ErrRateLimited], a
// user's comment within d of their last, on the store's clock, to the
// millisecond, as [WithPostInterval] does for posts. d must be at least
// one millisecond. It is a shared option, recorded in the store's
// identity. Default off.
func WithCommentInterval(d time.Duration) Option {
	return ruleOption(ruleCommentInterval, func(r *ruleConfig) { r.commentInterval = d })
}

// WithRepostAfter makes Post refuse a non-empty link that a live article
// posted within the last d (after its Posted time, whole seconds, on the
// store's clock) has: it returns that article and an error wrapping
// [ErrDuplicate], as [WithUniqueLinks] does, and changes nothing. From d
// after that article's post time the link may be posted again
// (lamernews: 48 hours). With WithUniqueLinks too, a live article's link
// stays taken for good. d must be at least one second. Default off.
func WithRepostAfter(d time.Duration) Option {
	return ruleOption(ruleRepostAfter, func(r *ruleConfig) { r.repostAfter = d })
}

// WithEditWindow lets an article's poster change its title and link with
// [Store.Edit] until d after its Posted time (whole seconds), on the
// store's clock (lamernews: 15 minutes). d must be at least one second.
// Default off: Edit gets [ErrNotAllowed].
func WithEditWindow(d time.Duration) Option {
	return ruleOption(ruleEditWindow, func(r *ruleConfig) { r.editWindow = d })
}

// WithReadPool sends the store's reads to pool, which should reach
// replicas of the primary that New's pool reaches: Article, ArticlesByID,
// Articles, ArticlesFor, TopSince, TopSinceFor, Count, GroupCount, Groups,
// VoteOf, VotesOf, Karma, TopUsers, Thread, ThreadFor, Replies,
// RepliesFor, CommentsByID, CommentVotesOf, and GroupArticles and
// GroupArticlesFor once their group's cache is built. They run
// there as FCALL_RO of the store's library or read-only scripts
// (EVALSHA_RO, EVAL_RO), which a replica runs: the
// read pool's servers must be Redis 7.0 or later, or those calls get an
// error saying so. Every other call, and every read of a store without
// this option, runs on the primary. Default none. A nil pool is rejected.
//
// A replica serves the data as of its replication offset: a read may
// miss a write the primary acknowledged a moment ago, such as the
// article a Post just made or a vote just counted. Vote's and Post's
// replies carry the fresh state; show those to the user who made them.
//
// The pool may be a *redis.Pool dialling one replica, or a cluster-aware
// pool whose connections are made read-only (READONLY), so that Redis
// Cluster replicas serve them instead of redirecting to their master: a
// redisc.Cluster whose connections pass through redisc.ReadOnly, for one
// (see the examples). A pool that spreads connections over several
// replicas spreads the reads.
//
// A replica cannot renew a group cache's TTL, which a read on the primary
// does (WithGroupCacheTTL). A read on a replica learns the cache's
// remaining TTL, and when it is under half the TTL, GroupArticles renews
// it on the primary: one more round trip, about once per half TTL per
// cache and reader (more while the renewal has yet to reach the
// replica). A cache read only on replicas so lives as long as it is read.
func WithReadPool(pool Pool) Option {
	return func(c *config) { c.readPool, c.hasReadPool = pool, true }
}

// WithHook adds h to the store's hooks, which see every call of the
// store's public methods (see [Hook]). Hooks compose in the order given,
// over one or several WithHook options: the first given is the
// outermost, whose next runs the second, and so on, the last's next
// running the call. Default none: a store without hooks does no work
// and allocates nothing for them. A nil Hook is rejected.
func WithHook(h Hook) Option {
	return func(c *config) {
		if h == nil {
			c.nilHook = true
			return
		}
		c.hooks = append(c.hooks, h)
	}
}

// WithWaitReplicas makes every call that writes wait until n replicas
// have acknowledged its writes, or until timeout: the store sends WAIT n
// timeout on the call's own connection, pipelined after the call's
// script, in the same round trip. A call that returns no error has its
// writes on the primary and on n replicas or more.
//
// A call whose wait falls short (fewer than n replicas acknowledged in
// time, the WAIT failed, or ctx ended while it waited) returns what it
// returns without the option, together with an error wrapping
// [ErrNotReplicated], which says how many acknowledged: Vote its
// VoteResult, Post its Article, Edit the edited article, VoteBatch its
// results, Prune its count. The write is applied on the primary and not
// known to be on n replicas; a failover may lose it. A call that Redis
// refused ([ErrNotFound], [ErrVotingClosed], ...) changed nothing and
// returns its error alone.
//
// Post, Vote, Edit, Delete, AddToGroups and RemoveFromGroups wait after
// their script; VoteBatch once, after its whole pipeline; Prune and Drop
// after each step, and stop at the first step not replicated, returning
// ErrNotReplicated (run them again to go on). Reads send no WAIT, nor do
// GroupArticles, Submitted and Upvoted, whose only writes are the
// group caches and the dropping of gone articles from users' pages: a
// failover that loses those costs a rebuild, never a wrong page.
//
// A call that changes nothing, such as a repeated vote, waits only for
// its connection's earlier writes (Redis keeps, per connection, the
// offset of its last write): the state it reports may rest on another
// call's write that the replicas lack. A retry of a call that got
// ErrNotReplicated so does not confirm it.
//
// The timeout is counted in whole milliseconds. n below 1 and timeouts
// under one millisecond (to WAIT, 0 is forever) are rejected. A context
// deadline still bounds the call; a pool's read timeout under timeout
// cuts the wait short with ErrNotReplicated. The WAIT goes in the
// script's round trip where the connection pipelines (Send, Flush,
// Receive), as redigo's, redisc's and the goredis adapter's do; on one
// that does not, such as redisc's RetryConn, in a round trip of its own
// on the same connection. Default off: no WAIT. See
// docs/OPERATIONS.md, "Durability", for what this promises on a failover.
func WithWaitReplicas(n int, timeout time.Duration) Option {
	return func(c *config) {
		d := &c.durability
		d.replicas, d.replicasTimeout, d.waitReplicas = n, timeout, true
	}
}

// WithWaitAOF makes every call that writes wait until its writes are
// fsynced to the append-only file of the primary (local 1) and of
// replicas replicas, or until timeout: the store sends WAITAOF local
// replicas timeout (Redis 7.2 or later) after each script that writes,
// on the same calls, in the same round trip and with the same outcome as
// [WithWaitReplicas]: a call whose wait falls short returns its result
// and an error wrapping [ErrNotReplicated]. So does every write on a
// server without WAITAOF (before 7.2), and with local 1 on a primary
// without appendonly yes. With both options a call sends WAIT, then
// WAITAOF.
//
// local must be 0 or 1, replicas 0 or more, not both 0, and the timeout
// at least one millisecond (whole milliseconds); other values are
// rejected. Default off: no WAITAOF.
func WithWaitAOF(local, replicas int, timeout time.Duration) Option {
	return func(c *config) {
		d := &c.durability
		d.aofLocal, d.aofReplicas, d.aofTimeout, d.waitAOF = local, replicas, timeout, true
	}
}

// Options returns the options of the rules on in r, with r's numbers:
// for New, a store whose rules are r's. Like every rule's option, each
// gives the rule numbers of its own where an earlier option (such as
// [Identity.StoreOptions]) turned it on with the store's.
func (r Rules) Options() []Option {
	c := r.asRuleConfig()
	var opts []Option
	for _, name := range r.On {
		spec, i, ok := ruleNamed(name)
		if !ok {
			continue
		}
		v := spec.get(&c)
		opts = append(opts, ruleOption(i, func(rc *ruleConfig) { spec.set(rc, &Rules{}, v) }))
	}
	return opts
}
