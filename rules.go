package voting

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting/internal/layout"
)

// The rules that protect a site (WithMinKarma, WithVoteCost,
// WithVoteLimit, WithPostInterval, WithCommentInterval, WithRepostAfter,
// WithEditWindow) and karma (WithKarma, karma.go) are decided inside the
// scripts of the calls they guard, so concurrent requests cannot get
// past them. Each is off unless its option is given; a store with none of
// the vote rules sends vote.lua the same arguments as before them, and
// vote() skips them with one test.
//
// Whether a rule is on is a shared option, in the store's identity
// (identity.go); its numbers are data of the store, in the rules record
// (keys.go rules; lib/rules.lua storeRules), which SetRules changes for
// every process at its next call. A store's options give the numbers of
// a new store, and of a rule that Reconfigure turns on.

// The names of the rules, as the identity and the rules record name them
// (internal/layout).
const (
	ruleKarma           = layout.RuleKarma
	ruleCost            = layout.RuleCost
	ruleMinKarma        = layout.RuleMinKarma
	ruleVoteLimit       = layout.RuleVoteLimit
	rulePostInterval    = layout.RulePostInterval
	ruleRepostAfter     = layout.RuleRepostAfter
	ruleEditWindow      = layout.RuleEditWindow
	ruleCommentInterval = layout.RuleCommentInterval
)

// ruleSpec is one rule: its name, its option, and how its numbers go
// between a ruleConfig, a Rules and the words of the rules record.
type ruleSpec struct {
	name, option string
	on           func(c *ruleConfig) *bool
	// get returns c's numbers, as the record writes them (spans in ms);
	// set puts numbers, as get returns them, into c and into r.
	get func(c *ruleConfig) []int64
	set func(c *ruleConfig, r *Rules, v []int64)
}

// ruleList is every rule, in the order of their words in an identity and
// in the rules record.
var ruleList = []ruleSpec{
	{ruleKarma, "WithKarma", func(c *ruleConfig) *bool { return &c.karma },
		func(c *ruleConfig) []int64 { return []int64{c.perUp, c.perDown} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.perUp, c.perDown = v[0], v[1]
			r.KarmaPerUpvote, r.KarmaPerDownvote = v[0], v[1]
		}},
	{ruleCost, "WithVoteCost", func(c *ruleConfig) *bool { return &c.cost },
		func(c *ruleConfig) []int64 { return []int64{c.costUp, c.costDown} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.costUp, c.costDown = v[0], v[1]
			r.UpvoteCost, r.DownvoteCost = v[0], v[1]
		}},
	{ruleMinKarma, "WithMinKarma", func(c *ruleConfig) *bool { return &c.minKarma },
		func(c *ruleConfig) []int64 { return []int64{c.minUp, c.minDown} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.minUp, c.minDown = v[0], v[1]
			r.MinKarmaToUpvote, r.MinKarmaToDownvote = v[0], v[1]
		}},
	{ruleVoteLimit, "WithVoteLimit", func(c *ruleConfig) *bool { return &c.voteLimit },
		func(c *ruleConfig) []int64 { return []int64{int64(c.limit), c.per.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.limit, c.per = int(v[0]), ms(v[1])
			r.VoteLimit, r.VoteLimitPer = c.limit, c.per
		}},
	{rulePostInterval, "WithPostInterval", func(c *ruleConfig) *bool { return &c.hasInterval },
		func(c *ruleConfig) []int64 { return []int64{c.postInterval.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.postInterval, r.PostInterval = ms(v[0]), ms(v[0]) }},
	{ruleRepostAfter, "WithRepostAfter", func(c *ruleConfig) *bool { return &c.hasRepost },
		func(c *ruleConfig) []int64 { return []int64{c.repostAfter.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.repostAfter, r.RepostAfter = ms(v[0]), ms(v[0]) }},
	{ruleEditWindow, "WithEditWindow", func(c *ruleConfig) *bool { return &c.hasEdit },
		func(c *ruleConfig) []int64 { return []int64{c.editWindow.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.editWindow, r.EditWindow = ms(v[0]), ms(v[0]) }},
	{ruleCommentInterval, "WithCommentInterval", func(c *ruleConfig) *bool { return &c.hasCommentInterval },
		func(c *ruleConfig) []int64 { return []int64{c.commentInterval.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.commentInterval, r.CommentInterval = ms(v[0]), ms(v[0]) }},
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// ruleNamed returns the rule of name and its place in ruleList.
func ruleNamed(name string) (ruleSpec, int, bool) {
	for i, r := range ruleList {
		if r.name == name {
			return r, i, true
		}
	}
	return ruleSpec{}, -1, false
}

// names returns the names of the rules on in c, in ruleList's order.
func (c *ruleConfig) names() []string {
	var names []string
	for _, r := range ruleList {
		if *r.on(c) {
			names = append(names, r.name)
		}
	}
	return names
}

// words returns the words of the rules on in c, in ruleList's order:
// "votelimit=10,60000", or the bare name of a rule turned on as recorded
// (asRecorded), which has no numbers of its own. It is what a store sends
// its scripts as its own (lib/rules.lua storeRules, want).
func (c *ruleConfig) words() string {
	var words []string
	for i, r := range ruleList {
		if !*r.on(c) {
			continue
		}
		if c.asRecorded&(1<<i) != 0 {
			words = append(words, r.name)
			continue
		}
		v := r.get(c)
		s := make([]string, len(v))
		for j, x := range v {
			s[j] = strconv.FormatInt(x, 10)
		}
		words = append(words, r.name+"="+strings.Join(s, ","))
	}
	return strings.Join(words, " ")
}

// Rules are the numbers of a store's rules, as the store holds them:
// data of the store, which [Store.SetRules] changes for every process
// sharing it from its next call, with no restart. Which rules are on is
// a shared option, in the store's identity ([Store.Reconfigure] turns
// one on or off); a store's options give the numbers of a new store
// (its first Post or SetRules records them), and of a rule Reconfigure
// turns on. A rule that is off has zero numbers here. Spans are whole
// milliseconds.
type Rules struct {
	// On names the rules that are on, as the identity does: "karma",
	// "cost", "minkarma", "votelimit", "postinterval", "repostafter",
	// "editwindow", "commentinterval".
	On []string `json:"on"`

	KarmaPerUpvote     int64         `json:"karma_per_upvote"`      // WithKarma
	KarmaPerDownvote   int64         `json:"karma_per_downvote"`    // WithKarma
	UpvoteCost         int64         `json:"upvote_cost"`           // WithVoteCost
	DownvoteCost       int64         `json:"downvote_cost"`         // WithVoteCost
	MinKarmaToUpvote   int64         `json:"min_karma_to_upvote"`   // WithMinKarma
	MinKarmaToDownvote int64         `json:"min_karma_to_downvote"` // WithMinKarma
	VoteLimit          int           `json:"vote_limit"`            // WithVoteLimit: votes a user casts in any VoteLimitPer
	VoteLimitPer       time.Duration `json:"vote_limit_per"`        // WithVoteLimit
	PostInterval       time.Duration `json:"post_interval"`         // WithPostInterval
	RepostAfter        time.Duration `json:"repost_after"`          // WithRepostAfter
	EditWindow         time.Duration `json:"edit_window"`           // WithEditWindow
	CommentInterval    time.Duration `json:"comment_interval"`      // WithCommentInterval
}

// Options returns the options of the rules on in r, with r's numbers:
// for New, a store whose rules are r's.
func (r Rules) Options() []Option {
	c := r.config()
	var opts []Option
	for _, name := range r.On {
		spec, _, ok := ruleNamed(name)
		if !ok {
			continue
		}
		v := spec.get(&c)
		opts = append(opts, func(cc *config) {
			*spec.on(&cc.rules) = true
			spec.set(&cc.rules, &Rules{}, v)
		})
	}
	return opts
}

// config returns r's numbers in a ruleConfig, each rule of r.On on.
func (r Rules) config() ruleConfig {
	c := ruleConfig{
		perUp: r.KarmaPerUpvote, perDown: r.KarmaPerDownvote, costUp: r.UpvoteCost, costDown: r.DownvoteCost,
		minUp: r.MinKarmaToUpvote, minDown: r.MinKarmaToDownvote, limit: r.VoteLimit, per: r.VoteLimitPer,
		postInterval: r.PostInterval, repostAfter: r.RepostAfter, editWindow: r.EditWindow, commentInterval: r.CommentInterval,
	}
	for _, name := range r.On {
		if spec, _, ok := ruleNamed(name); ok {
			*spec.on(&c) = true
		}
	}
	return c
}

// String returns r as the rules record holds it: "karma=1,-1
// votelimit=10,60000", spans in milliseconds.
func (r Rules) String() string {
	c := r.config()
	return c.words()
}

// parseRules parses the rules record's words (lib/rules.lua mergeRules):
// a bare name is a rule on without numbers, which lacking names.
func parseRules(text string) (r Rules, lacking string, err error) {
	var c ruleConfig
	for _, w := range strings.Fields(text) {
		name, value, hasValue := strings.Cut(w, "=")
		spec, _, ok := ruleNamed(name)
		if !ok {
			return Rules{}, "", fmt.Errorf("rules record: unknown rule %q", w)
		}
		r.On = append(r.On, name)
		if !hasValue {
			if lacking == "" {
				lacking = name
			}
			continue
		}
		want := len(spec.get(&c))
		var v []int64
		for _, f := range strings.Split(value, ",") {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return Rules{}, "", fmt.Errorf("rules record: rule %q is not numbers", w)
			}
			v = append(v, n)
		}
		if len(v) != want {
			return Rules{}, "", fmt.Errorf("rules record: rule %q has %d numbers, not %d", w, len(v), want)
		}
		spec.set(&c, &r, v)
	}
	return r, lacking, nil
}

// Rules returns the numbers of the store's rules, as its calls apply
// them: the store's own, recorded in Redis, and this store's options'
// for a rule on that the store has no numbers for yet (an empty store
// before its first Post). It reads them in one round trip, from the
// read pool where the store has one ([WithReadPool]). A store whose
// options name a rule ([Identity.StoreOptions]) that neither has numbers
// for gets its other rules and an error wrapping [ErrIncompatible].
func (s *Store) Rules(ctx context.Context) (Rules, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Rules"}, s.Rules)
	}
	const op = "rules"
	reply, err := s.eval(ctx, rulesGetScript, []interface{}{s.keys.rules, s.rules.want})
	rest, err := s.rest(op, "", reply, err)
	if err != nil {
		return Rules{}, err
	}
	return s.parseRulesReply(op, rest)
}

// parseRulesReply reads the rules record of a script's reply.
func (s *Store) parseRulesReply(op string, rest []interface{}) (Rules, error) {
	var text string
	if err := scan(statusOK, rest, &text); err != nil {
		return Rules{}, opErr(op, err)
	}
	r, lacking, err := parseRules(text)
	if err != nil {
		return Rules{}, opErr(op, err)
	}
	if lacking != "" {
		return r, &opError{op: op, err: ErrIncompatible, detail: fmt.Sprintf("the store records no numbers for %s: SetRules (votectl options) sets them", lacking)}
	}
	return r, nil
}

// SetRules changes the numbers of rules that are on, for every process
// of the store from its next call, in one round trip, and returns the
// store's rules after. It takes the rules' options with their new numbers:
//
//	rules, err := s.SetRules(ctx, voting.WithVoteLimit(6, time.Minute), voting.WithKarma(1, -2))
//
// The rules it is not given keep their numbers. Each option must be one
// of a rule ([WithKarma], [WithVoteCost], [WithMinKarma],
// [WithVoteLimit], [WithPostInterval], [WithCommentInterval],
// [WithRepostAfter], [WithEditWindow]) with numbers in its range: else
// an error wrapping [ErrInvalidArgument], and nothing changes. A rule
// that is off in this store gets [ErrNotAllowed]: turning a rule on or
// off changes the store's identity, which is [Store.Reconfigure]'s. Like
// every write, it needs the store's identity recorded as this store's
// ([ErrIncompatible]); in an empty store it records it, as a first Post
// would. Calls already running finish under the numbers they read.
func (s *Store) SetRules(ctx context.Context, opts ...Option) (Rules, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "SetRules"}, func(ctx context.Context) (Rules, error) { return s.SetRules(ctx, opts...) })
	}
	const op = "set rules"
	if len(opts) == 0 {
		return Rules{}, opErr(op, fmt.Errorf("%w: no rule given", ErrInvalidArgument))
	}
	var set ruleConfig
	for i, o := range opts {
		var probe config
		if o != nil {
			o(&probe)
		}
		if o == nil || probe.rules == (ruleConfig{}) {
			return Rules{}, opErr(op, fmt.Errorf("%w: option %d is not a rule's: SetRules takes WithKarma, WithVoteCost, WithMinKarma, "+
				"WithVoteLimit, WithPostInterval, WithCommentInterval, WithRepostAfter and WithEditWindow", ErrInvalidArgument, i+1))
		}
		for _, spec := range ruleList {
			if *spec.on(&probe.rules) {
				*spec.on(&set) = true
				spec.set(&set, &Rules{}, spec.get(&probe.rules))
			}
		}
	}
	if err := set.validNumbers(); err != nil {
		return Rules{}, opErr(op, err)
	}
	for _, spec := range ruleList {
		if *spec.on(&set) && !*spec.on(&s.rules.config) {
			return Rules{}, &opError{op: op, err: ErrNotAllowed, detail: fmt.Sprintf("%s is off in this store (%s): "+
				"turning a rule on is Reconfigure's (votectl options)", spec.name, spec.option)}
		}
	}
	reply, err := s.eval(ctx, rulesSetScript, []interface{}{s.keys.rules, s.rules.want, set.words()})
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Rules{}, err
	}
	if status != statusOK {
		return Rules{}, statusErr(op, status, "")
	}
	r, err := s.parseRulesReply(op, rest)
	if err != nil {
		return r, err
	}
	return r, replicationErr(op, late)
}

// Edit changes the title and link of the article, for its poster until
// the edit window ([WithEditWindow]) after its Posted time, on the
// store's clock, in one round trip. It returns the article as edited. Anyone else, a call
// after the window, or a store without WithEditWindow gets
// [ErrNotAllowed]; an unknown article gets [ErrNotFound]. Title and link
// are checked as Post checks them. With [WithUniqueLinks] or
// [WithRepostAfter] the link's claim follows the change: a new link that
// Post would refuse gets that article and [ErrDuplicate], and the old one
// is freed. A refused Edit changes nothing.
func (s *Store) Edit(ctx context.Context, id, user, title, link string) (Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Edit"}, func(ctx context.Context) (Article, error) { return s.Edit(ctx, id, user, title, link) })
	}
	const op = "edit"
	if err := s.text.post("user", user, title, link); err != nil {
		return Article{}, opErr(op, err)
	}
	if !canonicalID(id) {
		return Article{}, notFound(op, id)
	}
	reply, err := s.eval(ctx, editScript, s.editArgs(id, user, title, link, s.now()))
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Article{}, err
	}
	switch status {
	case statusOK, statusDup:
		list, err := parseArticles(rest)
		if err != nil || len(list) != 1 {
			return Article{}, opErr(op, fmt.Errorf("edit reply: %d rows, %v", len(list), err))
		}
		if status == statusDup {
			return list[0], &opError{op: op, err: ErrDuplicate, detail: fmt.Sprintf("%q is article %q", link, list[0].ID)}
		}
		return list[0], replicationErr(op, late)
	case statusNotAllowed:
		return Article{}, s.editRefused(op, "article", id, user)
	}
	return Article{}, statusErr(op, status, id)
}

// editArgs lays out edit.lua's arguments: the edit window and the
// repost span are the store's rules, read from its record (the
// store's words: "" for none, off at any clock). KEYS[1]: the score
// ordering (the store's slot). ARGV[1..4]: id, user, title, link;
// ARGV[5..6]: now in ms, unique links ("1"); ARGV[7..8]: the rules record
// and the store's words; ARGV[9..10]: the prefixes of articles and links.
func (s *Store) editArgs(id, user, title, link string, t time.Time) []interface{} {
	k := s.keys
	return []interface{}{k.orderingKey("score"), id, user, title, link, t.UnixMilli(),
		flag(s.uniqueLinks), k.rules, s.rules.want, k.article, k.link}
}

// editRefused is the error of op, an edit by user of the article or
// comment (what) id that the script refused.
func (s *Store) editRefused(op, what, id, user string) error {
	detail := fmt.Sprintf("%s %q is not %q's to edit, or its edit window has passed", what, id, user)
	if !s.rules.edit {
		detail = "editing is off (WithEditWindow)"
	}
	return &opError{op: op, err: ErrNotAllowed, detail: detail}
}
