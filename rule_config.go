package voting

import (
	"fmt"
	"time"

	"github.com/votekit/voting/internal/layout"
)

// The numbers of the rules, and how they travel: the options give them
// (ruleConfig), a store holds them (Rules), and the rules record and
// an identity write them as words (ruleList, and the record's codec,
// internal/layout's RuleWord). The rules themselves are decided in the
// scripts (rules.go).

// The rules, by their place in ruleList, which is their place in
// internal/layout's RuleNames, which names them.
const (
	ruleKarma = iota
	ruleCost
	ruleMinKarma
	ruleVoteLimit
	rulePostInterval
	ruleRepostAfter
	ruleEditWindow
	ruleCommentInterval
)

// ruleSpec is one rule: its name, its switch in a ruleConfig (its
// option is ruleOptionNames'), and how its numbers go between a
// ruleConfig, a Rules and the words of the rules record
// (layout.RuleWord's Numbers, layout.RuleArity of them).
type ruleSpec struct {
	name string
	on   func(c *ruleConfig) *bool
	// get returns c's numbers, as the record writes them (spans in ms);
	// set puts numbers, as get returns them, into c and into r.
	get func(c *ruleConfig) []int64
	set func(c *ruleConfig, r *Rules, v []int64)
}

// ruleList is every rule, in the order of their words in an identity and
// in the rules record.
var ruleList = []ruleSpec{
	{layout.RuleKarma, func(c *ruleConfig) *bool { return &c.karma },
		func(c *ruleConfig) []int64 { return []int64{c.perUp, c.perDown} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.perUp, c.perDown = v[0], v[1]
			r.KarmaPerUpvote, r.KarmaPerDownvote = v[0], v[1]
		}},
	{layout.RuleCost, func(c *ruleConfig) *bool { return &c.cost },
		func(c *ruleConfig) []int64 { return []int64{c.costUp, c.costDown} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.costUp, c.costDown = v[0], v[1]
			r.UpvoteCost, r.DownvoteCost = v[0], v[1]
		}},
	{layout.RuleMinKarma, func(c *ruleConfig) *bool { return &c.minKarma },
		func(c *ruleConfig) []int64 { return []int64{c.minUp, c.minDown} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.minUp, c.minDown = v[0], v[1]
			r.MinKarmaToUpvote, r.MinKarmaToDownvote = v[0], v[1]
		}},
	{layout.RuleVoteLimit, func(c *ruleConfig) *bool { return &c.voteLimit },
		func(c *ruleConfig) []int64 { return []int64{int64(c.limit), c.per.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) {
			c.limit, c.per = int(v[0]), ms(v[1])
			r.VoteLimit, r.VoteLimitPer = c.limit, c.per
		}},
	{layout.RulePostInterval, func(c *ruleConfig) *bool { return &c.hasInterval },
		func(c *ruleConfig) []int64 { return []int64{c.postInterval.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.postInterval, r.PostInterval = ms(v[0]), ms(v[0]) }},
	{layout.RuleRepostAfter, func(c *ruleConfig) *bool { return &c.hasRepost },
		func(c *ruleConfig) []int64 { return []int64{c.repostAfter.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.repostAfter, r.RepostAfter = ms(v[0]), ms(v[0]) }},
	{layout.RuleEditWindow, func(c *ruleConfig) *bool { return &c.hasEdit },
		func(c *ruleConfig) []int64 { return []int64{c.editWindow.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.editWindow, r.EditWindow = ms(v[0]), ms(v[0]) }},
	{layout.RuleCommentInterval, func(c *ruleConfig) *bool { return &c.hasCommentInterval },
		func(c *ruleConfig) []int64 { return []int64{c.commentInterval.Milliseconds()} },
		func(c *ruleConfig, r *Rules, v []int64) { c.commentInterval, r.CommentInterval = ms(v[0]), ms(v[0]) }},
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// ruleNamed returns the rule of name and its place in ruleList.
func ruleNamed(name string) (ruleSpec, int, bool) {
	i, ok := layout.RuleIndex(name)
	if !ok {
		return ruleSpec{}, -1, false
	}
	return ruleList[i], i, true
}

// ruleConfig holds the options of karma and the rules: which are on,
// and the numbers the options gave them (ruleList).
type ruleConfig struct {
	karma, minKarma, cost, voteLimit bool
	perUp, perDown                   int64
	minUp, minDown                   int64
	costUp, costDown                 int64
	limit                            int
	per                              time.Duration
	postInterval, repostAfter        time.Duration
	editWindow                       time.Duration
	hasInterval, hasRepost, hasEdit  bool
	commentInterval                  time.Duration
	hasCommentInterval               bool
	// asRecorded has the bit 1<<i of each rule i of ruleList turned on
	// with no numbers of its own, by Identity.StoreOptions: its numbers
	// are the store's.
	asRecorded uint16
}

// ownNumbers marks the numbers of rule i (ruleKarma...) as the
// options' own (not asRecorded).
func (c *ruleConfig) ownNumbers(i int) { c.asRecorded &^= 1 << i }

// validNumbers checks the numbers of the rules that are on and have
// their own.
func (c *ruleConfig) validNumbers() error {
	own := func(i int) bool { return c.asRecorded&(1<<i) == 0 }
	points := func(what string, vs ...int64) error {
		for _, v := range vs {
			if v < -MaxKarmaPoints || v > MaxKarmaPoints {
				return fmt.Errorf("%w: %s %d is not in [%d, %d]", ErrInvalidArgument, what, v, -MaxKarmaPoints, MaxKarmaPoints)
			}
		}
		return nil
	}
	switch {
	case c.minKarma && own(ruleMinKarma) && (c.minUp < -MaxKarma || c.minUp > MaxKarma || c.minDown < -MaxKarma || c.minDown > MaxKarma):
		return fmt.Errorf("%w: least karma %d, %d is not in [%d, %d]", ErrInvalidArgument, c.minUp, c.minDown, -int64(MaxKarma), int64(MaxKarma))
	case c.voteLimit && own(ruleVoteLimit) && (c.limit < 1 || c.limit > MaxVoteLimit):
		return fmt.Errorf("%w: vote limit %d is not in [1, %d]", ErrInvalidArgument, c.limit, MaxVoteLimit)
	case c.voteLimit && own(ruleVoteLimit) && c.per < time.Millisecond:
		return fmt.Errorf("%w: vote limit span %v is under one millisecond", ErrInvalidArgument, c.per)
	case c.hasInterval && own(rulePostInterval) && c.postInterval < time.Millisecond:
		return fmt.Errorf("%w: post interval %v is under one millisecond", ErrInvalidArgument, c.postInterval)
	case c.hasCommentInterval && own(ruleCommentInterval) && c.commentInterval < time.Millisecond:
		return fmt.Errorf("%w: comment interval %v is under one millisecond", ErrInvalidArgument, c.commentInterval)
	case c.hasRepost && own(ruleRepostAfter) && c.repostAfter < time.Second:
		return fmt.Errorf("%w: repost span %v is under one second", ErrInvalidArgument, c.repostAfter)
	case c.hasEdit && own(ruleEditWindow) && c.editWindow < time.Second:
		return fmt.Errorf("%w: edit window %v is under one second", ErrInvalidArgument, c.editWindow)
	}
	if err := points("karma per vote", c.perUp, c.perDown); err != nil {
		return err
	}
	return points("vote cost", c.costUp, c.costDown)
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
	var words []layout.RuleWord
	for i, r := range ruleList {
		if !*r.on(c) {
			continue
		}
		w := layout.RuleWord{Name: r.name}
		if c.asRecorded&(1<<i) == 0 {
			w.Numbers = r.get(c)
		}
		words = append(words, w)
	}
	return layout.FormatRules(words)
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

// config returns r's numbers in a ruleConfig, each rule of r.On on.
func (r Rules) asRuleConfig() ruleConfig {
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
	c := r.asRuleConfig()
	return c.words()
}

// parseRules parses the rules record (layout.ParseRules, as
// lib/rules.lua mergeRules writes it): a bare name is a rule on without
// numbers, which lacking names.
func parseRules(text string) (r Rules, lacking string, err error) {
	words, err := layout.ParseRules(text)
	if err != nil {
		return Rules{}, "", fmt.Errorf("rules record: %w", err)
	}
	var c ruleConfig
	for _, w := range words {
		r.On = append(r.On, w.Name)
		if len(w.Numbers) == 0 {
			if lacking == "" {
				lacking = w.Name
			}
			continue
		}
		spec, _, _ := ruleNamed(w.Name)
		spec.set(&c, &r, w.Numbers)
	}
	return r, lacking, nil
}
