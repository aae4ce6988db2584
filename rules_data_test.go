package voting

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// allRules are options with every rule on, and numbers that let the
// tests' votes, posts, comments and edits through until a test changes
// them.
func allRules(limit int) []Option {
	return []Option{WithKarma(1, -1), WithVoteCost(1, 2), WithMinKarma(-100, -100), WithVoteLimit(limit, time.Hour),
		WithPostInterval(time.Millisecond), WithCommentInterval(time.Millisecond), WithRepostAfter(time.Second),
		WithEditWindow(time.Hour)}
}

// TestRulesAreData: processes whose options give other numbers share a
// store, which applies its own, recorded by the first post; SetRules
// changes each rule's numbers for every process from its next call,
// with no restart and no ErrIncompatible.
func TestRulesAreData(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, allRules(3)...)
		o, oclock := otherStore(t, s, clock.Now(), WithKarma(7, -7), WithVoteCost(0, 0), WithMinKarma(-5, -5),
			WithVoteLimit(100, time.Minute), WithPostInterval(time.Hour), WithCommentInterval(time.Hour),
			WithRepostAfter(time.Hour), WithEditWindow(time.Second))
		if err := o.CheckIdentity(ctx); err != nil {
			t.Fatalf("CheckIdentity of a store with other numbers: %v", err)
		}
		a := mustPost(t, s, "alice", "first")
		if got, _ := redis.String(b.do(t, "GET", s.keys.rules), nil); got != s.rules.want {
			t.Fatalf("rules record after the first post = %q, want %q", got, s.rules.want)
		}
		for _, st := range []*Store{s, o} {
			r, err := st.Rules(ctx)
			if err != nil || r.VoteLimit != 3 || r.KarmaPerUpvote != 1 || r.EditWindow != time.Hour || len(r.On) != 8 {
				t.Fatalf("Rules = %+v, %v; want the first post's", r, err)
			}
		}

		// The vote limit: 3, then 4 from o's SetRules, applied by s.
		for _, u := range []string{"x", "y", "z"} {
			ar := mustPost(t, o, u, "by "+u)
			oclock.Add(2 * time.Millisecond)
			mustVote(t, o, "bob", ar.ID, Upvote)
		}
		if _, err := s.Vote(ctx, "bob", a.ID, Upvote); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("bob's 4th vote under a limit of 3 = %v", err)
		}
		if r, err := o.SetRules(ctx, WithVoteLimit(4, time.Hour)); err != nil || r.VoteLimit != 4 || r.KarmaPerUpvote != 1 {
			t.Fatalf("SetRules = %+v, %v", r, err)
		}
		mustVote(t, s, "bob", a.ID, Upvote)

		// Karma per vote and its cost: alice gets 5 for carol's upvote,
		// which costs carol 3.
		if _, err := s.SetRules(ctx, WithKarma(5, -1), WithVoteCost(3, 4)); err != nil {
			t.Fatal(err)
		}
		before, _ := o.Karma(ctx, "alice")
		mustVote(t, o, "carol", a.ID, Upvote)
		if k, _ := s.Karma(ctx, "alice"); k != before+5 {
			t.Errorf("alice's karma = %d, want %d + 5", k, before)
		}
		if k, _ := s.Karma(ctx, "carol"); k != -3 {
			t.Errorf("carol's karma = %d, want -3", k)
		}

		// The least karma: dave, at 0, may not upvote under 10.
		if _, err := o.SetRules(ctx, WithMinKarma(10, 10)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Vote(ctx, "dave", a.ID, Upvote); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("dave's upvote under a least karma of 10 = %v", err)
		}

		// The post interval: an hour, then a millisecond.
		if _, err := s.SetRules(ctx, WithPostInterval(time.Hour)); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Second)
		if _, err := s.Post(ctx, "alice", "again", ""); !errors.Is(err, ErrRateLimited) {
			t.Errorf("a post within an interval of an hour = %v", err)
		}
		if _, err := o.SetRules(ctx, WithPostInterval(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		mustPost(t, s, "alice", "again")

		// The comment interval.
		if _, err := s.Comment(ctx, a.ID, "", "erin", "one"); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Second)
		if _, err := s.Comment(ctx, a.ID, "", "erin", "two"); err != nil {
			t.Fatalf("a comment a second later under an interval of 1ms: %v", err)
		}
		if _, err := o.SetRules(ctx, WithCommentInterval(time.Hour)); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Second)
		if _, err := s.Comment(ctx, a.ID, "", "erin", "three"); !errors.Is(err, ErrRateLimited) {
			t.Errorf("a comment within an interval of an hour = %v", err)
		}

		// The repost span: a second, then an hour.
		clock.Add(2 * time.Second)
		if _, err := s.Post(ctx, "frank", "repost", a.Link); err != nil {
			t.Fatalf("a repost after the span: %v", err)
		}
		if _, err := o.SetRules(ctx, WithRepostAfter(time.Hour)); err != nil {
			t.Fatal(err)
		}
		clock.Add(2 * time.Second)
		if _, err := s.Post(ctx, "gina", "repost", a.Link); !errors.Is(err, ErrDuplicate) {
			t.Errorf("a repost within an hour = %v", err)
		}

		// The edit window: an hour, then a second.
		if _, err := s.Edit(ctx, a.ID, "alice", "edited", a.Link); err != nil {
			t.Fatalf("an edit within an hour: %v", err)
		}
		if _, err := o.SetRules(ctx, WithEditWindow(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Edit(ctx, a.ID, "alice", "again", a.Link); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("an edit past a window of a second = %v", err)
		}

		want := "karma=5,-1 cost=3,4 minkarma=10,10 votelimit=4,3600000 postinterval=1 repostafter=3600000 editwindow=1000 commentinterval=3600000"
		if got, _ := redis.String(b.do(t, "GET", s.keys.rules), nil); got != want {
			t.Errorf("rules record = %q, want %q", got, want)
		}
		if r, err := s.Rules(ctx); err != nil || r.String() != want {
			t.Errorf("Rules = %q, %v; want %q", r, err, want)
		}
	})
}

// TestSetRulesRefused: SetRules of a rule that is off, of an option
// that is no rule's, of numbers out of range, or of nothing, changes
// nothing and names what is wrong.
func TestSetRulesRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithKarma(1, -1))
		mustPost(t, s, "alice", "t")
		before := dumpStore(t, b, s)
		for _, tc := range []struct {
			opts []Option
			want error
			says string
		}{
			{[]Option{WithVoteLimit(5, time.Minute)}, ErrNotAllowed, "votelimit is off in this store (WithVoteLimit)"},
			{[]Option{WithKarma(1, -1), WithPageSize(10)}, ErrInvalidArgument, "option 2 is not a rule's"},
			{[]Option{nil}, ErrInvalidArgument, "option 1 is not a rule's"},
			{nil, ErrInvalidArgument, "no rule given"},
			{[]Option{WithKarma(MaxKarmaPoints+1, 0)}, ErrInvalidArgument, "karma per vote"},
		} {
			if _, err := s.SetRules(ctx, tc.opts...); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("SetRules = %v, want %v saying %q", err, tc.want, tc.says)
			}
		}
		wantUnchanged(t, b, s, "refused SetRules", before)
		// A store of other shared options may not set the numbers.
		o, _ := otherStore(t, s, epoch, WithKarma(1, -1), WithUserPages())
		if _, err := o.SetRules(ctx, WithKarma(2, -2)); !errors.Is(err, ErrIncompatible) {
			t.Errorf("SetRules of a store of other options = %v", err)
		}
		wantUnchanged(t, b, s, "refused SetRules", before)
	})
}

// TestRulesRecordLost: a store whose rules record is gone applies each
// process's own numbers, and a process opened as recorded, which has
// none, gets ErrIncompatible naming the rule until SetRules or a
// Reconfigure writes them again.
func TestRulesRecordLost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithKarma(2, -1), WithVoteLimit(10, time.Minute))
		a := mustPost(t, s, "alice", "t")
		id, _, err := s.Recorded(ctx)
		if err != nil || id.String() != "6 karma votelimit" {
			t.Fatalf("Recorded = %v, %v", id, err)
		}
		opts, err := id.StoreOptions()
		if err != nil {
			t.Fatal(err)
		}
		tool, _ := otherStore(t, s, clock.Now(), opts...)
		if r, err := tool.Rules(ctx); err != nil || r.KarmaPerUpvote != 2 || r.VoteLimit != 10 {
			t.Fatalf("Rules of a store opened as recorded = %+v, %v", r, err)
		}
		b.do(t, "DEL", s.keys.rules)
		if _, err := tool.Vote(ctx, "bob", a.ID, Upvote); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "no numbers for karma") {
			t.Fatalf("a vote of a store with no numbers, on no record = %v", err)
		}
		if _, err := tool.Rules(ctx); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("Rules with no numbers = %v", err)
		}
		mustVote(t, s, "bob", a.ID, Upvote) // its own numbers
		if k, _ := s.Karma(ctx, "alice"); k != 2 {
			t.Errorf("alice's karma = %d, want 2", k)
		}
		if _, err := s.SetRules(ctx, WithKarma(3, -1)); err != nil {
			t.Fatal(err)
		}
		mustVote(t, tool, "carol", a.ID, Upvote)
		if k, _ := s.Karma(ctx, "alice"); k != 5 {
			t.Errorf("alice's karma = %d, want 5", k)
		}
		if got, _ := redis.String(b.do(t, "GET", s.keys.rules), nil); got != "karma=3,-1 votelimit=10,60000" {
			t.Errorf("rules record = %q", got)
		}
	})
}

// TestReconfigureRules: Reconfigure keeps the numbers of the rules that
// stay on, records the caller's for a rule it turns on, and drops those
// of a rule it turns off; a store of layout 5, whose identity carried the
// numbers, gets them in its rules record.
func TestReconfigureRules(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithKarma(1, -1), WithVoteLimit(10, time.Minute))
		a := mustPost(t, s, "alice", "t")
		if _, err := s.SetRules(ctx, WithVoteLimit(20, time.Minute)); err != nil {
			t.Fatal(err)
		}
		u, _ := otherStore(t, s, clock.Now(), WithKarma(9, -9), WithVoteLimit(1, time.Second), WithEditWindow(time.Hour))
		if _, err := u.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := redis.String(b.do(t, "GET", s.keys.rules), nil); got != "karma=1,-1 votelimit=20,60000 editwindow=3600000" {
			t.Errorf("rules record after turning editwindow on = %q", got)
		}
		v, _ := otherStore(t, s, clock.Now(), WithEditWindow(time.Minute))
		if _, err := v.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := redis.String(b.do(t, "GET", s.keys.rules), nil); got != "editwindow=3600000" {
			t.Errorf("rules record after turning karma and the limit off = %q", got)
		}
		w, _ := otherStore(t, s, clock.Now())
		if _, err := w.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		if n, _ := redis.Int(b.do(t, "EXISTS", s.keys.rules), nil); n != 0 {
			t.Errorf("a store with no rule keeps a rules record")
		}

		// Layout 5: the numbers were the identity's.
		b.do(t, "SET", s.keys.record, "5 karma=4,-2 votelimit=3,60000")
		m, _ := otherStore(t, s, clock.Now(), WithKarma(1, -1), WithVoteLimit(100, time.Minute))
		if _, err := m.Vote(ctx, "bob", a.ID, Upvote); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "layout 5, this library reads 6: Reconfigure") {
			t.Fatalf("a vote on layout 5 = %v", err)
		}
		was, err := m.Reconfigure(ctx)
		if err != nil || was.String() != "5 karma=4,-2 votelimit=3,60000" {
			t.Fatalf("Reconfigure of layout 5 = %v, %v", was, err)
		}
		if id, _, err := m.Recorded(ctx); err != nil || id.String() != "6 karma votelimit" {
			t.Errorf("Recorded after the migration = %v, %v", id, err)
		}
		if r, err := m.Rules(ctx); err != nil || r.String() != "karma=4,-2 votelimit=3,60000" {
			t.Errorf("Rules after the migration = %v, %v", r, err)
		}
		mustVote(t, m, "bob", a.ID, Upvote)
		if k, _ := m.Karma(ctx, "alice"); k != 4 {
			t.Errorf("alice's karma = %d, want 4", k)
		}
	})
}

// TestRuleNames: ruleList, the package's table of the rules, names every
// rule of internal/layout, in its order.
func TestRuleNames(t *testing.T) {
	if len(ruleList) != len(layout.RuleNames) {
		t.Fatalf("ruleList has %d rules, internal/layout %d", len(ruleList), len(layout.RuleNames))
	}
	for i, r := range ruleList {
		if r.name != layout.RuleNames[i] {
			t.Errorf("rule %d: %s here, %s in internal/layout", i, r.name, layout.RuleNames[i])
		}
	}
}
