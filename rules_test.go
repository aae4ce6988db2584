package voting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/testclock"
)

// post posts an article by poster with link, failing t on an error.
func post(t *testing.T, s *Store, poster, link string) Article {
	t.Helper()
	a, err := s.Post(ctx, poster, "title of "+poster, link)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// refused checks that err wraps want and, for ErrRateLimited, that
// RetryAfter gives retry.
func refused(t *testing.T, err, want error, retry time.Duration) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err %v, want %v", err, want)
	}
	if got := RetryAfter(err); got != retry {
		t.Errorf("RetryAfter(%v) = %v, want %v", err, got, retry)
	}
}

func TestVoteLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLimit(3, time.Minute))
		var ids []string
		for i := 0; i < 4; i++ {
			ids = append(ids, post(t, s, "p", "").ID)
		}
		vote := func(id string, v VoteType) error {
			_, err := s.Vote(ctx, "v", id, ballot(v))
			return err
		}
		t0 := clock.Now()
		at := func(d time.Duration) { clock.Set(t0.Add(d)) }
		// Three votes that change something pass: an up, an up, a switch.
		for i, c := range []struct {
			at time.Duration
			id string
			v  VoteType
		}{{0, ids[0], Upvote}, {10 * time.Second, ids[1], Upvote}, {20 * time.Second, ids[0], Downvote}} {
			at(c.at)
			if err := vote(c.id, c.v); err != nil {
				t.Fatalf("vote %d: %v", i+1, err)
			}
		}
		// A vote that changes nothing does not count, and passes.
		if err := vote(ids[1], Upvote); err != nil {
			t.Fatal(err)
		}
		// The fourth is refused until the first is a minute old, and
		// changes nothing.
		at(30 * time.Second)
		before := snapshot(t, b, s)
		err := vote(ids[2], Upvote)
		refused(t, err, ErrRateLimited, 30*time.Second)
		if want := "voting: vote: rate limited: retry after 30s"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		refused(t, vote(ids[0], CancelVote), ErrRateLimited, 30*time.Second) // cancels count too
		at(time.Minute - time.Millisecond)
		refused(t, vote(ids[2], Upvote), ErrRateLimited, time.Millisecond)
		unchanged(t, b, s, before)
		// Other users have their own limit.
		if _, err := s.Vote(ctx, "w", ids[2], Upvote); err != nil {
			t.Fatal(err)
		}
		at(time.Minute)
		if err := vote(ids[2], Upvote); err != nil {
			t.Fatalf("vote a minute after the first: %v", err)
		}
		refused(t, vote(ids[3], Upvote), ErrRateLimited, 10*time.Second)
		at(70 * time.Second)
		if err := vote(ids[3], Upvote); err != nil {
			t.Fatal(err)
		}
		// The log holds the last n votes only, and lives twice the span
		// and a minute on the server's clock.
		log := s.keys.voteLog + "v"
		if n := b.do(t, "ZCARD", log).(int64); n != 3 {
			t.Errorf("vote log holds %d votes, want 3", n)
		}
		if ttl := b.ttl(t, log); ttl <= 2*time.Minute || ttl > 3*time.Minute {
			t.Errorf("vote log TTL %v, want about 3m", ttl)
		}
		checkInvariant(t, s, DefaultVoteWeight, ids, []string{"p", "v", "w"})
	})
}

func TestVoteLimitBatch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLimit(2, time.Hour), WithKarma(1, -1), WithMinKarma(-10, 1))
		a, c := post(t, s, "p", ""), post(t, s, "q", "")
		res, err := s.VoteBatch(ctx, []Ballot{
			{"v", a.ID, Upvote}, {"v", a.ID, Upvote}, {"v", c.ID, Downvote}, {"v", c.ID, Upvote}, {"v", a.ID, CancelVote},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || res[1].Err != nil {
			t.Fatalf("first ballots: %v, %v", res[0].Err, res[1].Err)
		}
		refused(t, res[2].Err, ErrNotAllowed, 0) // v has karma 0, downvotes need 1
		if res[3].Err != nil {
			t.Fatalf("second change: %v", res[3].Err)
		}
		refused(t, res[4].Err, ErrRateLimited, time.Hour)
		if got := karmaOf(t, s, "p"); got != 1 {
			t.Errorf("karma of p: %d", got)
		}
		clock.Add(time.Hour)
		res, err = s.VoteBatch(ctx, []Ballot{{"v", a.ID, CancelVote}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("after an hour: %v, %v", err, res[0].Err)
		}
		checkInvariant(t, s, DefaultVoteWeight, []string{a.ID, c.ID}, []string{"p", "q", "v"})
	})
}

func TestMinKarma(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithKarma(1, -1), WithMinKarma(0, 2), WithVoteCost(1, 1))
		o1, o2 := post(t, s, "p", ""), post(t, s, "p", "")
		own := post(t, s, "v", "")
		vote := func(user, id string, v VoteType) error {
			_, err := s.Vote(ctx, user, id, ballot(v))
			return err
		}
		// At 0, exactly the least to upvote; the upvote costs 1.
		if err := vote("v", o1.ID, Upvote); err != nil {
			t.Fatalf("upvote at the least karma: %v", err)
		}
		// At -1, below both.
		before := snapshot(t, b, s)
		refused(t, vote("v", o2.ID, Upvote), ErrNotAllowed, 0)
		refused(t, vote("v", o2.ID, Downvote), ErrNotAllowed, 0)
		if want := `voting: vote: not allowed: "` + o2.ID + `"`; vote("v", o2.ID, Upvote).Error() != want {
			t.Errorf("error %q, want %q", vote("v", o2.ID, Upvote), want)
		}
		unchanged(t, b, s, before)
		// One's own article needs no karma.
		for _, v := range []VoteType{Downvote, NoVote, Upvote} {
			if err := vote("v", own.ID, v); err != nil {
				t.Fatal(err)
			}
		}
		for _, u := range []string{"x", "y", "z"} {
			if err := vote(u, own.ID, Upvote); err != nil {
				t.Fatal(err)
			}
		}
		// At 2, exactly the least to downvote.
		if err := vote("v", o2.ID, Downvote); err != nil {
			t.Fatalf("downvote at the least karma: %v", err)
		}
		if k := karmaOf(t, s, "v"); k != 1 {
			t.Errorf("karma after the downvote: %d, want 1", k)
		}
		refused(t, vote("v", o1.ID, Downvote), ErrNotAllowed, 0) // a switch needs the least too
		// Cancelling is always allowed, and gives the cost back.
		if err := vote("v", o2.ID, CancelVote); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		if k := karmaOf(t, s, "v"); k != 2 {
			t.Errorf("karma after cancelling: %d, want 2", k)
		}
		if k := karmaOf(t, s, "p"); k != 1 {
			t.Errorf("karma of p: %d, want 1", k)
		}
	})
}

func TestPostInterval(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithPostInterval(15*time.Minute))
		t0 := clock.Now().Add(300 * time.Millisecond)
		clock.Set(t0)
		post(t, s, "alice", "")
		clock.Set(t0.Add(15*time.Minute - time.Millisecond))
		before := snapshot(t, b, s)
		_, err := s.Post(ctx, "alice", "again", "")
		refused(t, err, ErrRateLimited, time.Millisecond)
		if !strings.HasPrefix(err.Error(), "voting: post: rate limited: retry after ") {
			t.Errorf("error %q", err)
		}
		unchanged(t, b, s, before)
		post(t, s, "bob", "") // each poster has their own interval
		clock.Set(t0.Add(15 * time.Minute))
		post(t, s, "alice", "")
		clock.Add(time.Minute)
		_, err = s.Post(ctx, "alice", "again", "")
		refused(t, err, ErrRateLimited, 14*time.Minute)
		if ttl := b.ttl(t, s.keys.lastPostKey("alice")); ttl <= 30*time.Minute || ttl > 31*time.Minute {
			t.Errorf("last post TTL %v, want about 31m", ttl)
		}
	})
}

func TestRepostAfter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithRepostAfter(48*time.Hour))
		t0 := clock.Now() // a whole second
		clock.Set(t0.Add(900 * time.Millisecond))
		first := post(t, s, "alice", "https://x")
		post(t, s, "bob", "") // empty links never collide
		post(t, s, "bob", "")
		clock.Set(t0.Add(48*time.Hour - time.Millisecond))
		before := snapshot(t, b, s)
		got, err := s.Post(ctx, "bob", "same", "https://x")
		refused(t, err, ErrDuplicate, 0)
		if got.ID != first.ID {
			t.Errorf("duplicate returned %+v, want article %s", got, first.ID)
		}
		unchanged(t, b, s, before)
		// From 48 hours after the first's post time (whole seconds).
		clock.Set(t0.Add(48 * time.Hour))
		second := post(t, s, "bob", "https://x")
		clock.Add(time.Hour)
		if got, err := s.Post(ctx, "carol", "same", "https://x"); !errors.Is(err, ErrDuplicate) || got.ID != second.ID {
			t.Errorf("third post: %v, %v", got.ID, err)
		}
		// Deleting the article frees its link.
		if err := s.Delete(ctx, second.ID); err != nil {
			t.Fatal(err)
		}
		post(t, s, "carol", "https://x")
		if ttl := b.ttl(t, s.keys.link+"https://x"); ttl <= 96*time.Hour || ttl > 96*time.Hour+time.Minute {
			t.Errorf("link TTL %v, want about 96h1m", ttl)
		}
	})
}

func TestEdit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithEditWindow(15*time.Minute), WithUniqueLinks())
		t0 := clock.Now()
		clock.Set(t0.Add(500 * time.Millisecond))
		a := post(t, s, "alice", "https://one")
		taken := post(t, s, "bob", "https://two")
		clock.Set(t0.Add(15*time.Minute - time.Millisecond))
		before := snapshot(t, b, s)
		_, err := s.Edit(ctx, a.ID, "bob", "mine", "")
		refused(t, err, ErrNotAllowed, 0)
		got, err := s.Edit(ctx, a.ID, "alice", "new", "https://two")
		refused(t, err, ErrDuplicate, 0)
		if got.ID != taken.ID {
			t.Errorf("duplicate returned %+v", got)
		}
		if _, err := s.Edit(ctx, "999", "alice", "new", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown id: %v", err)
		}
		if _, err := s.Edit(ctx, a.ID, "alice", " ", ""); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("blank title: %v", err)
		}
		unchanged(t, b, s, before)
		got, err = s.Edit(ctx, a.ID, "alice", "new title", "https://three")
		if err != nil {
			t.Fatal(err)
		}
		want := a
		want.Title, want.Link = "new title", "https://three"
		if got != want {
			t.Errorf("edited %+v, want %+v", got, want)
		}
		if read, err := s.Article(ctx, a.ID); err != nil || read != want {
			t.Errorf("read back %+v, %v", read, err)
		}
		// The old link is free, the new one taken.
		post(t, s, "carol", "https://one")
		if _, err := s.Post(ctx, "carol", "t", "https://three"); !errors.Is(err, ErrDuplicate) {
			t.Errorf("posting the new link: %v", err)
		}
		clock.Set(t0.Add(15 * time.Minute))
		_, err = s.Edit(ctx, a.ID, "alice", "late", "")
		refused(t, err, ErrNotAllowed, 0)

		plain, _ := newStore(t, b)
		c := post(t, plain, "alice", "")
		if _, err := plain.Edit(ctx, c.ID, "alice", "t", ""); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("edit without WithEditWindow: %v", err)
		}
	})
}

func TestEditRepost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithEditWindow(2*time.Hour), WithRepostAfter(2*time.Hour))
		old := post(t, s, "bob", "https://old")
		clock.Add(time.Hour)
		a := post(t, s, "alice", "https://a")
		if _, err := s.Edit(ctx, a.ID, "alice", "t", "https://old"); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("edit to a link posted an hour ago: %v", err)
		}
		clock.Add(time.Hour - time.Second)
		if _, err := s.Edit(ctx, a.ID, "alice", "t", "https://old"); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("edit to a link posted 2h-1s ago: %v", err)
		}
		clock.Add(time.Second)
		if _, err := s.Edit(ctx, a.ID, "alice", "t", "https://old"); err != nil {
			t.Fatalf("edit to a link posted two hours ago: %v", err)
		}
		if got, err := s.Post(ctx, "carol", "t", "https://old"); !errors.Is(err, ErrDuplicate) || got.ID != a.ID {
			t.Errorf("post of the edited link: %v, %v (old %s)", got.ID, err, old.ID)
		}
		post(t, s, "carol", "https://a")
	})
}

func TestRetryAfter(t *testing.T) {
	for _, err := range []error{nil, ErrRateLimited, ErrNotFound, errors.New("x")} {
		if got := RetryAfter(err); got != 0 {
			t.Errorf("RetryAfter(%v) = %v", err, got)
		}
	}
	err := fmt.Errorf("handler: %w", opErr("vote", &retryError{after: 1500 * time.Millisecond}))
	if got := RetryAfter(err); got != 1500*time.Millisecond || !errors.Is(err, ErrRateLimited) {
		t.Errorf("RetryAfter(%v) = %v", err, got)
	}
}

// TestRulesOff: a store without the vote rules sends vote.lua the same
// arguments as one before them, so its votes do no extra work.
func TestRulesOff(t *testing.T) {
	s, err := New(&struct{ Pool }{}, WithPostInterval(time.Second), WithEditWindow(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if args := s.appendVoteRules(s.voteArgs("u", "1", Upvote, now.Unix()), now); len(args) != 8 {
		t.Errorf("vote arguments without rules: %d, want 8", len(args))
	}
	if args := s.voteBatchRules(now); len(args) != 1 {
		t.Errorf("vote batch rules without rules: %v", args)
	}
	s, _ = New(&struct{ Pool }{})
	if args := s.appendPostRules(nil, "p", now); len(args) != 0 {
		t.Errorf("post rules without rules: %v", args)
	}
}

// ruleSets are the options BenchmarkVoteRules and BenchmarkRulesMemory
// measure: each vote rule alone, all of them, and none. The least karma
// and the limit are out of reach, so that every vote passes them and
// does all their work.
var ruleSets = []struct {
	name string
	opts []Option
}{
	{"none", nil},
	{"karma", []Option{WithKarma(1, -1)}},
	{"karma+cost", []Option{WithKarma(1, -1), WithVoteCost(1, 6)}},
	{"karma+min", []Option{WithKarma(1, -1), WithMinKarma(-MaxKarma, -MaxKarma)}},
	{"limit", []Option{WithVoteLimit(1000, time.Hour)}},
	{"all", []Option{WithKarma(1, -1), WithVoteCost(1, 6), WithMinKarma(-MaxKarma, -MaxKarma),
		WithVoteLimit(1000, time.Hour), WithPostInterval(time.Millisecond), WithRepostAfter(48 * time.Hour),
		WithEditWindow(15 * time.Minute)}},
	// Every option of issue 18: the rules and the user pages.
	{"all+pages", []Option{WithKarma(1, -1), WithVoteCost(1, 6), WithMinKarma(-MaxKarma, -MaxKarma),
		WithVoteLimit(1000, time.Hour), WithPostInterval(time.Millisecond), WithRepostAfter(48 * time.Hour),
		WithEditWindow(15 * time.Minute), WithUserPages()}},
}

// BenchmarkVoteRules is BenchmarkVote on stores with each set of
// ruleSets: what karma and the vote rules add to a vote's Redis time.
func BenchmarkVoteRules(b *testing.B) {
	const nArticles, nUsers = 1000, 10000
	for _, rs := range ruleSets {
		b.Run(rs.name, func(b *testing.B) {
			f := postedFixture(b, "rules-"+rs.name, nArticles)
			opts := append([]Option{WithKeyPrefix(f.store.keys.prefix), WithClock(f.store.now)}, rs.opts...)
			s, err := New(f.pool, opts...)
			if err != nil {
				b.Fatal(err)
			}
			// The fixture's store recorded its own identity: this one's
			// options take over (and, from layout 6, its rules' numbers).
			if _, err := s.Reconfigure(context.Background()); err != nil {
				b.Fatal(err)
			}
			hook(s, f.hooks)
			b.SetParallelism(4)
			randomVotes(b, context.Background(), f, s, nUsers, nArticles)
		})
	}
}

// BenchmarkRulesMemory reports what karma and the rules keep in Redis,
// from MEMORY USAGE (SAMPLES 0) of their keys, on the package's real
// server; b.N does not matter. Karma keeps one entry per user with
// karma, whatever their votes; a vote log one entry per vote up to the
// limit; a post interval one key per poster; a repost span one link key
// per article with a link.
func BenchmarkRulesMemory(b *testing.B) {
	const nArticles, nUsers = 100, 10000
	pool := redistest.Shared(b).Pool()
	defer pool.Close()
	newRuleStore := func(opts ...Option) *Store {
		opts = append([]Option{WithKeyPrefix(fmt.Sprintf("bench:mem%d", prefixSeq.Add(1))), WithClock(testclock.New(epoch).Now)}, opts...)
		s, err := New(pool, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	vote := func(s *Store, n int, user func(i int) string, at func(i int) time.Time) {
		pipe(b, pool, n, func(c redis.Conn, i int) error {
			t := at(i)
			args := s.appendVoteRules(s.voteArgs(user(i), strconv.Itoa(1+i%nArticles), Upvote, t.Unix()), t)
			return voteScript.SendHash(c, s.fenced(nil, voteScript, args)...)
		})
	}
	at := func(i int) time.Time { return epoch.Add(time.Duration(i) * time.Millisecond) }

	// Karma: every voter pays a cost, so every user has an entry.
	s := newRuleStore(WithKarma(1, -1), WithVoteCost(1, 6))
	postMany(b, pool, s, nArticles, epoch.Unix()-nArticles, epoch.Unix(), 0, 0)
	vote(s, nUsers, benchUser, at)
	users, err := redis.Int64(serverDo(b, pool, "ZCARD", s.keys.karma), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(memoryUsage(b, pool, s.keys.karma))/float64(users), "karma-B/user")

	// Vote limit: one user's log of 1 and of 100 votes.
	s = newRuleStore(WithVoteLimit(100, time.Hour))
	postMany(b, pool, s, nArticles, epoch.Unix()-nArticles, epoch.Unix(), 0, 0)
	vote(s, 1, func(int) string { return "one" }, at)
	vote(s, 100, func(int) string { return "hundred" }, at)
	one, hundred := memoryUsage(b, pool, s.keys.voteLog+"one"), memoryUsage(b, pool, s.keys.voteLog+"hundred")
	b.ReportMetric(float64(one), "votelog-B/user")
	b.ReportMetric(float64(hundred-one)/99, "votelog-B/vote")

	// Post interval and repost span: their keys after a post.
	s = newRuleStore(WithPostInterval(15*time.Minute), WithRepostAfter(48*time.Hour))
	if _, err := s.Post(ctx, benchPoster(1), benchTitle(1), benchLink(1)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(memoryUsage(b, pool, s.keys.lastPostKey(benchPoster(1)))), "lastpost-B/user")
	b.ReportMetric(float64(memoryUsage(b, pool, s.keys.link+benchLink(1))), "link-B/article")
}

// TestLongRuleSpans: spans whose TTL (ruleTTL, twice the span and a
// minute) overflows a Duration. Their keys got a negative TTL, which
// failed Post after it had written the article, and would have dropped
// a vote log at once; they get the longest TTL instead, and the rules
// hold.
func TestLongRuleSpans(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const span, link = 200 * 365 * 24 * time.Hour, "https://example.com/L"
		s, _ := newStore(t, b, WithVoteLimit(1, span), WithPostInterval(span), WithRepostAfter(span))
		a, err := s.Post(ctx, "ann", "a", link)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Post(ctx, "ann", "b", ""); !errors.Is(err, ErrRateLimited) {
			t.Errorf("a second post within the interval: %v", err)
		}
		if _, err := s.Post(ctx, "bob", "c", link); !errors.Is(err, ErrDuplicate) {
			t.Errorf("a repost within the span: %v", err)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Errorf("Count = %d, %v; want 1", n, err)
		}
		mustVote(t, s, "bob", a.ID, Upvote)
		if _, err := s.Vote(ctx, "bob", a.ID, Downvote); !errors.Is(err, ErrRateLimited) {
			t.Errorf("a second vote within the span: %v", err)
		}
		for _, key := range []string{s.keys.voteLog + "bob", s.keys.lastPostKey("ann"), s.keys.link + link} {
			if ttl := b.ttl(t, key); ttl < span {
				t.Errorf("TTL of %s = %v, want the longest", key, ttl)
			}
		}
	})
}

// TestRulesOffAtAnyClock: a rule that is off decides by its setting,
// never by the clock. A store without the rule's option, whose clock
// stands a second behind the post (another process, say), at it, or an
// hour ahead: Edit and EditComment are refused (no edit window), and a
// second post, comment, repost and vote by the same user at once all
// pass (no post interval, comment interval, repost span or vote limit).
func TestRulesOffAtAnyClock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for _, skew := range []time.Duration{-time.Second, -time.Millisecond, 0, time.Hour} {
			a := mustPost(t, s, "alice", "t"+skew.String())
			c := mustComment(t, s, a.ID, "", "alice", "body")
			other, _ := otherStore(t, s, a.Posted.Add(skew))
			before := snapshot(t, b, s)
			if _, err := other.Edit(ctx, a.ID, "alice", "edited", ""); !errors.Is(err, ErrNotAllowed) {
				t.Errorf("clock %v off the post: Edit without WithEditWindow = %v, want ErrNotAllowed", skew, err)
			}
			if _, err := other.EditComment(ctx, c.ID, "alice", "edited"); !errors.Is(err, ErrNotAllowed) {
				t.Errorf("clock %v off the post: EditComment without WithEditWindow = %v, want ErrNotAllowed", skew, err)
			}
			unchanged(t, b, s, before)
			for i := 0; i < 2; i++ {
				if _, err := other.Post(ctx, "alice", "again", a.Link); err != nil {
					t.Errorf("clock %v: a repost at once without WithPostInterval and WithRepostAfter: %v", skew, err)
				}
				if _, err := other.Comment(ctx, a.ID, "", "alice", "again"); err != nil {
					t.Errorf("clock %v: a comment at once without WithCommentInterval: %v", skew, err)
				}
			}
			for _, v := range []VoteType{Downvote, Upvote, CancelVote, Upvote} {
				if _, err := other.Vote(ctx, "bob", a.ID, v); err != nil {
					t.Errorf("clock %v: votes at once without WithVoteLimit: %v", skew, err)
				}
			}
		}
	})
}
