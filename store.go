package voting

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/votekit/voting/internal/layout"
)

// Article is a posted article as the store holds it.
//
// Every result type of the package reads in JSON with snake_case names,
// as here: {"id": "1", "title": ..., "posted": "2024-01-01T00:00:00Z",
// "score": ..., "upvotes": 1, "downvotes": 0, "comments": 0}.
type Article struct {
	ID     string    `json:"id"`
	Title  string    `json:"title"`
	Link   string    `json:"link"` // "" for a text post
	Poster string    `json:"poster"`
	Posted time.Time `json:"posted"` // whole seconds, in UTC
	// Score is Posted.Unix() + weight × (Upvotes − Downvotes), with the
	// weight the article was posted with.
	Score     float64 `json:"score"`
	Upvotes   int64   `json:"upvotes"`
	Downvotes int64   `json:"downvotes"`
	// Comments is the article's live comments, all levels (deleted ones
	// left out), kept by Comment and DeleteComment.
	Comments int64 `json:"comments"`
}

// Comment is a comment as the store holds it.
type Comment struct {
	ID        string    `json:"id"`
	Article   string    `json:"article"`
	Parent    string    `json:"parent"` // "" for a reply to the article itself
	Poster    string    `json:"poster"`
	Body      string    `json:"body"`
	Posted    time.Time `json:"posted"`
	Upvotes   int64     `json:"upvotes"`
	Downvotes int64     `json:"downvotes"`
	Replies   int64     `json:"replies"` // its live descendants, all levels
	Deleted   bool      `json:"deleted"` // deleted but kept for its replies: Poster and Body are ""
}

// ThreadComment is a comment of a Thread or a Replies, with its place in
// the tree.
type ThreadComment struct {
	Comment
	Depth int   `json:"depth"` // 0 for a reply to the article
	More  int64 `json:"more"`  // its descendants not in this reply ("load more")
}

// VoteResult is the outcome of a vote: the vote it replaced and the
// article's or the comment's standing after it.
type VoteResult struct {
	Previous VoteType `json:"previous"` // NoVote, Upvote or Downvote
	// Score is an article's score after the vote (Article.Score); 0, and
	// left out of JSON, for a comment, which has Points alone.
	Score     float64 `json:"score,omitempty"`
	Points    int64   `json:"points"` // Upvotes − Downvotes, as Reddit shows a comment's score
	Upvotes   int64   `json:"upvotes"`
	Downvotes int64   `json:"downvotes"`
}

// Store is article voting on one Redis (or one Cluster hash slot), under
// one key prefix. It holds no state of its own beyond its settings: any
// number of Stores in any number of processes may share the same prefix.
// Store is safe for concurrent use; every method is one atomic Lua script
// in one round trip, but for those whose documentation says otherwise
// (GroupArticles on a cold cache or through a read pool, VoteBatch,
// Delete of an article with comments, Prune, Drop, and VotesOf, a
// pipeline of reads), and but for the first call that finds the store's
// Functions library missing on a server, or Functions refused, which
// takes one round trip more (see docs/OPERATIONS.md, "Scripts and
// Functions").
type Store struct {
	pool     Pool
	keys     keys
	weight   string // the vote weight, formatted for the scripts
	window   int64  // the vote window in seconds
	cacheTTL int64  // the group cache TTL in milliseconds; 0 for none
	pageSize int
	now      func() time.Time
	orders   string         // the optional orders enabled, comma-separated, for post.lua
	enabled  map[Order]bool // the optional orders enabled
	// commentOrders are the orders of comments kept besides Best and Top
	// (Hot, Controversial, ScoreDesc, where WithOrders has them);
	// commentOrderings the names of their orderings, comma-separated,
	// for comment.lua.
	commentOrders    map[Order]bool
	commentOrderings string
	uniqueLinks      bool
	userPages        bool // WithUserPages
	voteLog          bool // WithVoteLog (moderation.go)
	events           bool // WithVoteEvents (moderation.go)
	// upvotedArg is the upvoted pages' prefix (WithUserPages) as vote.lua
	// and vote_batch.lua take it, boxed once; "" for none.
	upvotedArg interface{}
	// votePrefixes are the score key and the key prefixes of every vote,
	// boxed once (vote.go voteArgs).
	votePrefixes []interface{}
	// orderingArgs are the keys of the orderings by name, boxed once
	// (page.go pageArgs).
	orderingArgs map[string]interface{}
	fence        interface{} // keys.fence of the store's identity, boxed once: every script declares it (functions.go)
	shared       Identity    // the same, parsed
	funcs        functions   // whether the server runs the library (functions.go)
	readPool     Pool        // the pool of the reads (WithReadPool); nil for none
	rules        storeRules  // karma and the rules, for their scripts (rules.go)
	text         textRules   // the checks of the text writes store (validate.go)
	waits        []waitCmd   // sent after each script that writes (durable.go); nil for none
	// walk bounds the work of one call's walk of a cold group page
	// (walkStep; 0 in the tests of the cache's build alone), step its
	// build step (buildStep): tests shrink them, so that a page takes
	// many calls.
	walk, step int
	// edge bounds the members of TopSince's edge bucket one call reads
	// (edgeStep): tests shrink it, so that an edge takes many calls.
	edge int
	// reverseStep bounds the votes one step of ReverseVotes takes back
	// (reverseStep): tests shrink it, so that a reversal takes many steps.
	reverseStep int

	hooks []Hook // WithHook, the first given outermost (hook.go); nil for none
}

// New returns a Store that talks to Redis through pool. Without options it
// uses the defaults of the WithX functions. It returns an error wrapping
// ErrInvalidArgument for a nil pool or an option value out of range. New
// does not talk to Redis.
func New(pool Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: pool is nil", ErrInvalidArgument)
	}
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	s := &Store{
		pool:        pool,
		keys:        newKeys(c.prefix),
		weight:      formatWeight(c.weight),
		window:      int64(c.window / time.Second),
		pageSize:    c.pageSize,
		now:         c.now,
		enabled:     map[Order]bool{},
		uniqueLinks: c.uniqueLinks,
		readPool:    c.readPool,
		hooks:       c.hooks,
	}
	s.walk, s.step, s.edge = walkStep, buildStep, edgeStep
	s.reverseStep = reverseStep
	s.votePrefixes = s.keys.votePrefixes()
	s.orderingArgs = boxedOrderings(s.keys)
	s.rules = newRules(c.rules, s.keys)
	s.text = c.text.rules()
	s.waits = c.durability.commands()
	s.userPages = c.userPages
	s.voteLog = c.voteLog
	s.events = c.hasEvents
	s.upvotedArg = ""
	if s.userPages {
		s.upvotedArg = s.keys.upvoted
	}
	if c.cacheTTL > 0 {
		s.cacheTTL = int64(c.cacheTTL / time.Millisecond)
	}
	var names []string
	for o := Top; o <= Controversial; o++ {
		for _, e := range c.orders {
			if e == o && !s.enabled[o] {
				s.enabled[o] = true
				names = append(names, o.String())
			}
		}
	}
	s.orders = strings.Join(names, ",")
	s.commentOrders = map[Order]bool{}
	var corders []string
	for _, o := range []Order{Hot, Controversial, ScoreDesc} {
		for _, e := range c.orders {
			if e == o && !s.commentOrders[o] {
				s.commentOrders[o] = true
				name, _ := o.ordering()
				corders = append(corders, name)
			}
		}
	}
	s.commentOrderings = strings.Join(corders, ",")
	if s.commentOrders[ScoreDesc] {
		// Kept for comments only, but shared all the same.
		names = append([]string{ScoreDesc.String()}, names...)
	}
	s.shared = c.identity(names)
	s.fence = s.keys.fence(s.shared.String())
	return s, nil
}

// Ballot is one vote of a VoteBatch: User's vote Vote on article ID.
type Ballot struct {
	User, ID string
	Vote     VoteType
}

// BallotResult is the outcome of one ballot: what Vote would have
// returned for it.
//
// In JSON it is its VoteResult's fields, and "error", Err's text, where
// Err is not nil.
type BallotResult struct {
	VoteResult
	Err error `json:"-"`
}

// MarshalJSON encodes r as its VoteResult's fields and, where Err is not
// nil, "error": its text.
func (r BallotResult) MarshalJSON() ([]byte, error) {
	out := struct {
		VoteResult
		Error string `json:"error,omitempty"`
	}{VoteResult: r.VoteResult}
	if r.Err != nil {
		out.Error = r.Err.Error()
	}
	return json.Marshal(out)
}

// votesCarryPages reports whether the arguments of vote.lua carry the
// slot of the upvoted pages (ARGV[9]): with WithUserPages, and with vote
// rules, which follow it. A store with neither sends no more arguments
// than the vote needs.
func (s *Store) votesCarryPages() bool {
	return s.userPages || s.rules.vote != nil
}

// formatWeight formats a vote weight for the scripts as the records
// hold it (layout.FormatWeight): plain decimals with a point, which
// every Lua reads.
func formatWeight(w float64) string { return layout.FormatWeight(w) }

// boxedOrderings returns the keys of k's orderings by name, boxed once
// for the reads' arguments (pageArgs).
func boxedOrderings(k keys) map[string]interface{} {
	m := map[string]interface{}{}
	for o := ScoreDesc; o <= Controversial; o++ {
		name, _ := o.ordering()
		m[name] = k.orderingKey(name)
	}
	return m
}

// functions is a store's knowledge of whether its server runs the
// library: off once a server refused Functions (no FCALL, or FUNCTION
// LOAD or FCALL not allowed), from which point the store sends scripts.
type functions struct {
	off atomic.Bool
}

// storeRules are a store's rules, laid out for its scripts.
type storeRules struct {
	config ruleConfig // as the options gave them
	// want is the store's own words of its rules (ruleConfig.words),
	// which every script that reads the rules record takes
	// (lib/rules.lua storeRules), boxed once; "" for a store with none.
	want interface{}
	// vote holds vote.lua's rule arguments after the time (lib/rules.lua
	// readRules), boxed once; nil when the store has no vote rule.
	vote []interface{}
	// Which of Post's, Edit's and Comment's rules are on.
	interval, repost, edit, commentInterval bool
}

// newRules lays out c for the scripts of a store with keys k.
func newRules(c ruleConfig, k keys) storeRules {
	r := storeRules{config: c, want: c.words(), interval: c.hasInterval, repost: c.hasRepost,
		edit: c.hasEdit, commentInterval: c.hasCommentInterval}
	if c.karma || c.voteLimit {
		karmaKey := ""
		if c.karma {
			karmaKey = k.karma
		}
		r.vote = []interface{}{karmaKey, k.voteLog, k.rules, r.want}
	}
	return r
}
