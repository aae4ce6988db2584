package voting

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The rules that protect a site (WithMinKarma, WithVoteCost,
// WithVoteLimit, WithPostInterval, WithRepostAfter, WithEditWindow) and
// karma (WithKarma, karma.go) are decided inside the scripts of the
// calls they guard, so concurrent requests cannot get past them. Each is
// off unless its option is given; a store with none of the vote rules
// sends vote.lua the same arguments as before them, and vote() skips
// them with one test.

// ruleConfig holds the options of karma and the rules.
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
}

func (c *ruleConfig) validate() error {
	points := func(what string, vs ...int64) error {
		for _, v := range vs {
			if v < -MaxKarmaPoints || v > MaxKarmaPoints {
				return fmt.Errorf("%w: %s %d is not in [%d, %d]", ErrInvalidArgument, what, v, -MaxKarmaPoints, MaxKarmaPoints)
			}
		}
		return nil
	}
	switch {
	case c.minKarma && !c.karma:
		return fmt.Errorf("%w: WithMinKarma needs WithKarma", ErrInvalidArgument)
	case c.cost && !c.karma:
		return fmt.Errorf("%w: WithVoteCost needs WithKarma", ErrInvalidArgument)
	case c.minKarma && (c.minUp < -MaxKarma || c.minUp > MaxKarma || c.minDown < -MaxKarma || c.minDown > MaxKarma):
		return fmt.Errorf("%w: least karma %d, %d is not in [%d, %d]", ErrInvalidArgument, c.minUp, c.minDown, -int64(MaxKarma), int64(MaxKarma))
	case c.voteLimit && (c.limit < 1 || c.limit > MaxVoteLimit):
		return fmt.Errorf("%w: vote limit %d is not in [1, %d]", ErrInvalidArgument, c.limit, MaxVoteLimit)
	case c.voteLimit && c.per < time.Millisecond:
		return fmt.Errorf("%w: vote limit span %v is under one millisecond", ErrInvalidArgument, c.per)
	case c.hasInterval && c.postInterval < time.Millisecond:
		return fmt.Errorf("%w: post interval %v is under one millisecond", ErrInvalidArgument, c.postInterval)
	case c.hasRepost && c.repostAfter < time.Second:
		return fmt.Errorf("%w: repost span %v is under one second", ErrInvalidArgument, c.repostAfter)
	case c.hasEdit && c.editWindow < time.Second:
		return fmt.Errorf("%w: edit window %v is under one second", ErrInvalidArgument, c.editWindow)
	}
	if err := points("karma per vote", c.perUp, c.perDown); err != nil {
		return err
	}
	return points("vote cost", c.costUp, c.costDown)
}

// storeRules are a store's rules, laid out for its scripts.
type storeRules struct {
	// vote holds vote.lua's rule arguments after the time (lib.lua
	// readRules), boxed once; nil when the store has no vote rule.
	vote []interface{}
	// Post's and Edit's, in milliseconds; 0 for a rule that is off.
	interval, repost, edit int64
}

// ruleTTL is how long, on Redis's clock, a key that a rule of span d
// reads lives after its last write: twice d and a minute more, so that a
// Redis clock running ahead of the store's by up to d and a minute
// cannot drop the key while the store's clock still needs it. A rule may
// then refuse early, as when the key outlives its use, but never lets a
// call through that it should refuse.
// Spans past about 146 years, whose TTL would overflow a Duration, get
// the longest TTL a Duration holds: a negative one fails the SET or
// PEXPIRE, after Post's or Vote's other writes.
func ruleTTL(d time.Duration) int64 {
	if d > (math.MaxInt64-time.Minute)/2 {
		return time.Duration(math.MaxInt64).Milliseconds()
	}
	return (2*d + time.Minute).Milliseconds()
}

// newRules lays out c for the scripts of a store with keys k.
func newRules(c ruleConfig, k keys) storeRules {
	var r storeRules
	if c.karma || c.voteLimit {
		opt := func(on bool, v int64) interface{} {
			if !on {
				return ""
			}
			return v
		}
		karmaKey := ""
		if c.karma {
			karmaKey = k.karma
		}
		var per time.Duration
		if c.voteLimit {
			per = c.per
		}
		r.vote = []interface{}{karmaKey, k.voteLog,
			opt(c.karma, c.perUp), opt(c.karma, c.perDown),
			opt(c.cost, c.costUp), opt(c.cost, c.costDown),
			opt(c.minKarma, c.minUp), opt(c.minKarma, c.minDown),
			opt(c.voteLimit, int64(c.limit)), opt(c.voteLimit, per.Milliseconds()),
			opt(c.voteLimit, ruleTTL(per))}
	}
	if c.hasInterval {
		r.interval = c.postInterval.Milliseconds()
	}
	if c.hasRepost {
		r.repost = c.repostAfter.Milliseconds()
	}
	if c.hasEdit {
		r.edit = c.editWindow.Milliseconds()
	}
	return r
}

// appendVoteRules appends the vote rules, at the time t, to the
// arguments of vote.lua: nothing for a store without them.
func (s *Store) appendVoteRules(args []interface{}, t time.Time) []interface{} {
	if s.rules.vote == nil {
		return args
	}
	args = append(args, t.UnixMilli())
	return append(args, s.rules.vote...)
}

// voteBatchRules returns vote_batch.lua's rule arguments at the time t:
// how many follow, then the rules as vote.lua takes them.
func (s *Store) voteBatchRules(t time.Time) []interface{} {
	if s.rules.vote == nil {
		return []interface{}{0}
	}
	return s.appendVoteRules([]interface{}{1 + len(s.rules.vote)}, t)
}

// appendPostRules appends the rules of Post (lib.lua postRules) at the
// time t to post.lua's arguments: nothing for a store without them.
func (s *Store) appendPostRules(args []interface{}, poster string, t time.Time) []interface{} {
	r := s.rules
	if r.interval == 0 && r.repost == 0 {
		return args
	}
	opt := func(v int64) interface{} {
		if v == 0 {
			return ""
		}
		return v
	}
	return append(args, t.UnixMilli(), s.keys.lastPostKey(poster),
		opt(r.interval), ruleTTL(time.Duration(r.interval)*time.Millisecond),
		opt(r.repost), ruleTTL(time.Duration(r.repost)*time.Millisecond))
}

func (s *Store) editArgs(id, user, title, link string, t time.Time) []interface{} {
	repost := interface{}("")
	if s.rules.repost > 0 {
		repost = s.rules.repost
	}
	k := s.keys
	return []interface{}{k.orderingKey("score"), id, user, title, link, t.UnixMilli(), s.rules.edit,
		flag(s.uniqueLinks), repost, ruleTTL(time.Duration(s.rules.repost) * time.Millisecond),
		k.article, k.link}
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
	const op = "edit"
	if err := checkName("user", user); err != nil {
		return Article{}, opErr(op, err)
	}
	if err := checkText("title", title, MaxTitleLen, true); err != nil {
		return Article{}, opErr(op, err)
	}
	if err := checkText("link", link, MaxLinkLen, false); err != nil {
		return Article{}, opErr(op, err)
	}
	if !canonicalID(id) {
		return Article{}, notFound(op, id)
	}
	status, rest, err := decode(s.eval(ctx, editScript, s.editArgs(id, user, title, link, s.now())))
	if err != nil {
		return Article{}, opErr(op, err)
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
		return list[0], nil
	case statusNotAllowed:
		detail := fmt.Sprintf("article %q is not %q's to edit, or its edit window has passed", id, user)
		if s.rules.edit == 0 {
			detail = "editing is off (WithEditWindow)"
		}
		return Article{}, &opError{op: op, err: ErrNotAllowed, detail: detail}
	}
	return Article{}, statusErr(op, status, id)
}

// retryError is the error of a rate-limited call: it wraps ErrRateLimited
// and tells how long until the call would pass.
type retryError struct{ after time.Duration }

func (e *retryError) Error() string {
	return fmt.Sprintf("%v: retry after %v", ErrRateLimited, e.after)
}

func (e *retryError) Unwrap() error { return ErrRateLimited }

// parseRetry decodes the rest of a RATE_LIMITED reply, {milliseconds},
// into its error.
func parseRetry(rest []interface{}) error {
	if len(rest) != 1 {
		return fmt.Errorf("rate limited reply of %d fields, want 2", len(rest)+1)
	}
	ms, err := redis.Int64(rest[0], nil)
	if err != nil {
		return fmt.Errorf("rate limited reply: %w", err)
	}
	return &retryError{after: time.Duration(max(ms, 1)) * time.Millisecond}
}

// RetryAfter returns, for an error wrapping [ErrRateLimited] that the
// store returned, how long until the call would pass on the store's
// clock, to the millisecond; 0 for any other error. Another call in the
// meantime may of course take the place again.
func RetryAfter(err error) time.Duration {
	var e *retryError
	if errors.As(err, &e) {
		return e.after
	}
	return 0
}
