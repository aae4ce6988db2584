package voting

// Moderation's edges (issue 37), each test one defect a review found and
// the fix holds: a reversal under the vote limit, VotesBy's cursor among
// votes of one second, times before 1970, a suspension as an empty
// store's first write, votes on a deleted comment kept for its replies,
// and a poster's own upvote back on their comment.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/testclock"
)

// TestReverseVotesUnderVoteLimit: a reversal is no vote the limit
// counts or refuses (reverse.lua loads the rules with their limit off):
// a user at their vote limit has every vote taken back, on an article
// and a comment, with the posters' karma.
func TestReverseVotesUnderVoteLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog(), WithKarma(1, -1), WithVoteLimit(2, time.Hour))
		a := mustPost(t, s, "poster", "title")
		c := mustComment(t, s, a.ID, "", "cposter", "body")
		karma0, _ := s.Karma(ctx, "poster")
		ckarma0, _ := s.Karma(ctx, "cposter")
		mustVote(t, s, "u", a.ID, Upvote)
		mustVoteComment(t, s, "u", c.ID, Upvote)
		n, err := s.ReverseVotes(ctx, "u")
		if err != nil || n != 2 {
			t.Errorf("ReverseVotes at the vote limit took back %d, %v; want 2", n, err)
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 1 {
			t.Errorf("article after ReverseVotes: %d upvotes (%v), want 1 (the poster's)", got.Upvotes, err)
		}
		if list, err := s.CommentsByID(ctx, []string{c.ID}); err != nil || list[0].Upvotes != 1 {
			t.Errorf("comment after ReverseVotes: %+v (%v), want 1 upvote", list, err)
		}
		if k, _ := s.Karma(ctx, "poster"); k != karma0 {
			t.Errorf("poster's karma %d after ReverseVotes, want %d", k, karma0)
		}
		if k, _ := s.Karma(ctx, "cposter"); k != ckarma0 {
			t.Errorf("comment poster's karma %d after ReverseVotes, want %d", k, ckarma0)
		}
		// The log is empty: nothing left to retry with.
		if page, _, err := s.VotesBy(ctx, "u", "", 10); err != nil || len(page) != 0 {
			t.Errorf("log after ReverseVotes: %v, %v", page, err)
		}
	})
}

// TestVotesByCursorSameSecond: where the cursor's entry moved or went,
// VotesBy goes on after it among the entries that share its score (the
// same second and direction, as VoteBatch casts them), skipping none
// that stands throughout the walk.
func TestVotesByCursorSameSecond(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog())
		var ballots []Ballot
		for i := 0; i < 4; i++ {
			a := mustPost(t, s, "poster", fmt.Sprintf("t%d", i))
			ballots = append(ballots, Ballot{User: "u", ID: a.ID, Vote: Upvote})
		}
		if _, err := s.VoteBatch(ctx, ballots); err != nil { // one second, one score
			t.Fatal(err)
		}
		page, next, err := s.VotesBy(ctx, "u", "", 1)
		if err != nil || len(page) != 1 || next == "" {
			t.Fatalf("first page %v %q %v", page, next, err)
		}
		// The user cancels the vote the cursor names.
		mustVote(t, s, "u", page[0].ID, CancelVote)
		var rest []UserVote
		for n := 0; next != ""; n++ {
			var p []UserVote
			p, next, err = s.VotesBy(ctx, "u", next, 1)
			if err != nil || n > 10 {
				t.Fatal(err, n)
			}
			rest = append(rest, p...)
		}
		if len(rest) != 3 {
			t.Errorf("after the cursor's entry went, the walk read %d of the 3 standing votes: %v", len(rest), rest)
		}
	})
}

// TestVotesByBeforeEpoch: a vote cast on a store's clock before 1970
// (a negative Unix time) reads back as cast, at its time
// (layout.ParseLogEntry's floor).
func TestVotesByBeforeEpoch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		at := time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := testclock.New(at)
		s, _ := newStore(t, b, WithVoteLog(), WithClock(clock.Now))
		a := mustPost(t, s, "poster", "title")
		mustVote(t, s, "u", a.ID, Upvote)
		page, _, err := s.VotesBy(ctx, "u", "", 10)
		if err != nil || len(page) != 1 {
			t.Fatalf("VotesBy %v, %v", page, err)
		}
		if page[0].Vote != Upvote || !page[0].At.Equal(at) {
			t.Errorf("VotesBy before 1970: %v at %v, want up at %v", page[0].Vote, page[0].At, at)
		}
	})
}

// TestSuspendBeforeEpoch: a suspension is refused outright, or on, for
// an end before 1970, never accepted and then ignored.
func TestSuspendBeforeEpoch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		at := time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := testclock.New(at)
		s, _ := newStore(t, b, WithClock(clock.Now))
		a := mustPost(t, s, "poster", "title")
		err := s.Suspend(ctx, "bad", Refuse, at.Add(time.Hour))
		if err != nil {
			if errors.Is(err, ErrInvalidArgument) {
				return // refused outright: no defect
			}
			t.Fatal(err)
		}
		if mode, _, err := s.Suspended(ctx, "bad"); err != nil || mode != Refuse {
			t.Errorf("Suspended after Suspend (nil): %v, %v; want refuse", mode, err)
		}
		if _, err := s.Vote(ctx, "bad", a.ID, Upvote); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("vote of a user suspended with Refuse: %v, want ErrNotAllowed", err)
		}
	})
}

// TestSuspendFirstWrite: a suspension that is an empty store's first
// write records the store's rules record too, as a first Post does, so
// the store's rule numbers are the first process's for every process.
func TestSuspendFirstWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		rulesRecorded := func(suspendFirst bool) bool {
			t.Helper()
			s, _ := newStore(t, b, WithKarma(1, -1))
			if suspendFirst {
				if err := s.Suspend(ctx, "bad", Shadow, s.now().Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			mustPost(t, s, "poster", "title")
			n, err := redis.Int(b.storePool(s).Get().Do("EXISTS", s.keys.rules))
			if err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		if !rulesRecorded(false) {
			t.Skip("the first Post records no rules record on this layout")
		}
		if !rulesRecorded(true) {
			t.Errorf("a store whose first write is Suspend has no rules record after its first Post")
		}
		// What it changes: a second process, whose options give other
		// numbers, applies its own instead of the store's (as SetRules
		// and the first Post make them data of the store, rules.go).
		karmaOf := func(suspendFirst bool) int64 {
			t.Helper()
			prefix := fmt.Sprintf("review%d", prefixSeq.Add(1))
			s1, clock := newStore(t, b, WithKarma(1, -1), WithKeyPrefix(prefix))
			if suspendFirst {
				if err := s1.Suspend(ctx, "bad", Shadow, s1.now().Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			a := mustPost(t, s1, "poster", "title")
			s2, err := New(s1.pool, WithKeyPrefix(prefix), WithClock(clock.Now), WithKarma(5, -5))
			if err != nil {
				t.Fatal(err)
			}
			mustVote(t, s2, "u", a.ID, Upvote)
			k, err := s2.Karma(ctx, "poster")
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		if want, got := karmaOf(false), karmaOf(true); got != want {
			t.Errorf("another process's upvote gives the poster %d karma where Suspend came first, %d where Post did", got, want)
		}
	})
}

// TestReverseDeletedComment: a comment deleted while it has replies
// keeps its votes and the karma they moved (DeleteComment), and
// ReverseVotes takes a vote on it back as a live comment's: the poster's
// karma and the voter's cost with it.
func TestReverseDeletedComment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog(), WithKarma(1, -1), WithVoteCost(1, 1))
		a := mustPost(t, s, "poster", "title")
		c := mustComment(t, s, a.ID, "", "cposter", "body")
		mustComment(t, s, a.ID, c.ID, "other", "reply") // keeps c when deleted
		k0, _ := s.Karma(ctx, "cposter")
		u0, _ := s.Karma(ctx, "u")
		mustVoteComment(t, s, "u", c.ID, Upvote)
		if err := s.DeleteComment(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		page, _, err := s.VotesBy(ctx, "u", "", 10)
		if err != nil || len(page) != 1 {
			t.Fatalf("VotesBy after the delete: %v, %v", page, err)
		}
		n, err := s.ReverseVotes(ctx, "u")
		if err != nil {
			t.Fatal(err)
		}
		k, _ := s.Karma(ctx, "cposter")
		u, _ := s.Karma(ctx, "u")
		if n != 1 || k != k0 || u != u0 {
			t.Errorf("ReverseVotes of a vote VotesBy listed: took %d (want 1), poster's karma %d (want %d), voter's %d (want %d)",
				n, k, k0, u, u0)
		}
	})
}

// TestPosterReupvoteParity: a poster who cancels their own upvote and
// upvotes again has the vote logged, on an article and on a comment
// alike, and ReverseVotes takes both to none.
func TestPosterReupvoteParity(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog())
		a := mustPost(t, s, "p", "title")
		c := mustComment(t, s, a.ID, "", "p", "body")
		mustVote(t, s, "p", a.ID, CancelVote)
		mustVote(t, s, "p", a.ID, Upvote)
		mustVoteComment(t, s, "p", c.ID, CancelVote)
		mustVoteComment(t, s, "p", c.ID, Upvote)
		page, _, err := s.VotesBy(ctx, "p", "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 1 {
			t.Errorf("after cancel and upvote again on their own article and comment, the log has only %+v", page[0])
		}
		if _, err := s.ReverseVotes(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		got, err := s.Article(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.CommentsByID(ctx, []string{c.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Upvotes != list[0].Upvotes {
			t.Errorf("after ReverseVotes the article has %d upvotes, the comment %d", got.Upvotes, list[0].Upvotes)
		}
	})
}

// TestUnsuspendEndedAddsNoEvent: Unsuspend of a suspension that ended by
// itself ends none, and adds no "unsuspend" event; of one on, it does.
func TestUnsuspendEndedAddsNoEvent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteEvents(1000))
		if err := s.Suspend(ctx, "gone", Refuse, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Suspend(ctx, "on", Shadow, clock.Now().Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		clock.Add(2 * time.Hour)
		for _, u := range []string{"gone", "on"} {
			if err := s.Unsuspend(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		events, _, err := s.VoteEvents(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var unsuspended []string
		for _, e := range events {
			if e.Kind == "unsuspend" {
				unsuspended = append(unsuspended, e.User)
			}
		}
		if fmt.Sprint(unsuspended) != "[on]" {
			t.Errorf("unsuspend events of %v, want [on] alone", unsuspended)
		}
	})
}
