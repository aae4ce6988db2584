package voting

import (
	"errors"
	"math"
	"strconv"
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
		if err != nil || id.String() != strconv.Itoa(LayoutVersion)+" karma votelimit" {
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
		if _, err := m.Vote(ctx, "bob", a.ID, Upvote); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "layout 5, this library reads "+strconv.Itoa(LayoutVersion)+": Reconfigure") {
			t.Fatalf("a vote on layout 5 = %v", err)
		}
		was, err := m.Reconfigure(ctx)
		if err != nil || was.String() != "5 karma=4,-2 votelimit=3,60000" {
			t.Fatalf("Reconfigure of layout 5 = %v, %v", was, err)
		}
		if id, _, err := m.Recorded(ctx); err != nil || id.String() != strconv.Itoa(LayoutVersion)+" karma votelimit" {
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
// rule of internal/layout, in its order, each with as many numbers as
// the rules record's codec gives it, and each at the place the package
// names it by (ruleKarma...).
func TestRuleNames(t *testing.T) {
	if len(ruleList) != len(layout.RuleNames) {
		t.Fatalf("ruleList has %d rules, internal/layout %d", len(ruleList), len(layout.RuleNames))
	}
	for i, r := range ruleList {
		if r.name != layout.RuleNames[i] {
			t.Errorf("rule %d: %s here, %s in internal/layout", i, r.name, layout.RuleNames[i])
		}
		if n := len(r.get(&ruleConfig{})); n != layout.RuleArity[i] {
			t.Errorf("rule %s: %d numbers here, %d in internal/layout", r.name, n, layout.RuleArity[i])
		}
		// Its option: the one that turns it on, named by its errors.
		var c config
		ruleOption(i, func(*ruleConfig) {})(&c)
		if i >= len(ruleOptionNames) || !strings.HasPrefix(ruleOptionNames[i], "With") || !*r.on(&c.rules) {
			t.Errorf("rule %s: option %q", r.name, ruleOptionNames[min(i, len(ruleOptionNames)-1)])
		}
	}
	if len(ruleOptionNames) != len(ruleList) {
		t.Errorf("%d rule options are named, of %d rules", len(ruleOptionNames), len(ruleList))
	}
	for place, name := range map[int]string{ruleKarma: layout.RuleKarma, ruleCost: layout.RuleCost,
		ruleMinKarma: layout.RuleMinKarma, ruleVoteLimit: layout.RuleVoteLimit, rulePostInterval: layout.RulePostInterval,
		ruleRepostAfter: layout.RuleRepostAfter, ruleEditWindow: layout.RuleEditWindow, ruleCommentInterval: layout.RuleCommentInterval} {
		if ruleList[place].name != name {
			t.Errorf("rule %s is at %d, which is %s's", name, place, ruleList[place].name)
		}
	}
}

// TestRulesCodecAgrees: lua/lib/rules.lua reads the rules record as
// internal/layout's codec writes it, and writes it as the codec reads
// it. Each record the codec formats, ruleWords and ruleNumbers read as
// the same rules in the same order, with the same numbers; mergeRules of
// a record with itself, of its bare names with it, and of it with a
// record of other numbers gives the codec's record of the numbers it
// keeps, and names the rule that has none as parseRules does.
func TestRulesCodecAgrees(t *testing.T) {
	words := func(text string) []layout.RuleWord {
		t.Helper()
		w, err := layout.ParseRules(text)
		if err != nil {
			t.Fatalf("ParseRules(%q): %v", text, err)
		}
		return w
	}
	var all, other []layout.RuleWord // every rule, with numbers at their limits and with others
	for i, name := range layout.RuleNames {
		hi := []int64{MaxKarmaPoints, -MaxKarmaPoints, MaxKarma, -MaxKarma, MaxVoteLimit, time.Duration(math.MaxInt64).Milliseconds()}
		w, o := layout.RuleWord{Name: name}, layout.RuleWord{Name: name}
		for j := 0; j < layout.RuleArity[i]; j++ {
			w.Numbers = append(w.Numbers, hi[(i+j)%len(hi)])
			o.Numbers = append(o.Numbers, int64(i*10+j)-5)
		}
		all, other = append(all, w), append(other, o)
	}
	records := []string{layout.FormatRules(all), layout.FormatRules(other), "", "karma=1,-1 votelimit=10,60000",
		"karma=0,0 cost=1,6 minkarma=-500,30", "postinterval=1 repostafter=172800000 editwindow=900000 commentinterval=1",
		"karma votelimit=10,60000 editwindow"}
	for _, r := range records {
		if got := layout.FormatRules(words(r)); got != r {
			t.Errorf("the codec writes %q as %q", r, got)
		}
	}
	forEachBackend(t, func(t *testing.T, b *backend) {
		eval := func(body string, args ...interface{}) []interface{} {
			t.Helper()
			v, err := redis.Values(b.do(t, "EVAL", append([]interface{}{trimLib(libLuaParts, body) + body, 0}, args...)...), nil)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		// Each word as Lua reads it: its name and numbers, false for none.
		const read = `local out = {}
for _, text in ipairs(ARGV) do
  local m, names = ruleWords(text)
  local list = {}
  for _, name in ipairs(names) do
    local a, b = ruleNumbers(m[name])
    list[#list + 1] = {name, a or false, b or false}
  end
  out[#out + 1] = list
end
return out`
		for i, v := range eval(read, redis.Args{}.AddFlat(records)...) {
			list, _ := redis.Values(v, nil)
			var got []layout.RuleWord
			for _, x := range list {
				f, _ := redis.Values(x, nil)
				name, _ := redis.String(f[0], nil)
				w := layout.RuleWord{Name: name}
				for _, n := range f[1:] {
					if n != nil {
						w.Numbers = append(w.Numbers, n.(int64))
					}
				}
				got = append(got, w)
			}
			if s := layout.FormatRules(got); s != records[i] {
				t.Errorf("lib/rules.lua reads %q as %q (%v)", records[i], s, got)
			}
		}
		// mergeRules of a process's words (want) and the record (have).
		const merge = `local out = {}
for i = 1, #ARGV, 2 do
  local text, lacking = mergeRules(ARGV[i], ARGV[i + 1])
  out[#out + 1] = {text, lacking or ''}
end
return out`
		bare := func(r string) string {
			var names []string
			for _, w := range words(r) {
				names = append(names, w.Name)
			}
			return strings.Join(names, " ")
		}
		type mergeCase struct{ want, have, text string }
		var cases []mergeCase
		for _, r := range records {
			cases = append(cases, mergeCase{r, r, r}, mergeCase{bare(r), r, r}, mergeCase{r, "", r})
		}
		cases = append(cases, mergeCase{layout.FormatRules(all), layout.FormatRules(other), layout.FormatRules(other)},
			mergeCase{"karma=1,-1 votelimit=10,60000", "votelimit=6,1000 cost=9,9", "karma=1,-1 votelimit=6,1000"},
			mergeCase{"karma votelimit=10,60000 editwindow", "editwindow=5000", "karma votelimit=10,60000 editwindow=5000"})
		var args []interface{}
		for _, c := range cases {
			args = append(args, c.want, c.have)
		}
		for i, v := range eval(merge, args...) {
			c := cases[i]
			pair, _ := redis.Strings(v, nil)
			if len(pair) != 2 || pair[0] != c.text {
				t.Errorf("mergeRules(%q, %q) = %q, want %q", c.want, c.have, pair, c.text)
				continue
			}
			r, lacking, err := parseRules(pair[0])
			if err != nil || lacking != pair[1] || lacking == "" && r.String() != pair[0] {
				t.Errorf("parseRules(%q) = %+v, lacking %q, %v; mergeRules names %q lacking", pair[0], r, lacking, err, pair[1])
			}
		}
	})
}
