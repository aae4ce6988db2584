package voting

// Moderation (issue 37), hunt h2: each test fails on a defect of the
// moderation calls' contracts (moderation.go's godoc, docs/OPERATIONS.md
// "Moderation").

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestHuntSuspendFarFuture: Suspend accepts an end up to
// time.UnixMilli(layout.MaxExact) (year ~287,000), but Suspended and the
// refused call's RetryAfter turn the ms left into a time.Duration, which
// overflows past ~292 years: a "permanent" suspension until 9999-12-31
// reads back as ending in the past, and RetryAfter is negative.
func TestHuntSuspendFarFuture(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "poster", "title")
		until := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
		if err := s.Suspend(ctx, "bad", Refuse, until); err != nil {
			t.Fatal(err)
		}
		mode, got, err := s.Suspended(ctx, "bad")
		if err != nil || mode != Refuse || !got.Equal(until) {
			t.Errorf("Suspended = %v %v %v, want refuse until %v", mode, got, err, until)
		}
		_, err = s.Vote(ctx, "bad", a.ID, Upvote)
		if !errors.Is(err, ErrNotAllowed) || RetryAfter(err) <= 0 {
			t.Errorf("Vote of a refused user: %v, RetryAfter %v; want ErrNotAllowed with a positive RetryAfter", err, RetryAfter(err))
		}
	})
}

// TestHuntReverseVotesDropsZeroKarmaUser: a user listed in TopUsers
// with karma 0 (their article got an upvote and a downvote) casts one
// vote, on a store without vote costs, and has it taken back: no refund
// moved their karma, yet ReverseVotes removes them from TopUsers, which
// a twin that never saw the vote lists them in.
func TestHuntReverseVotesDropsZeroKarmaUser(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog(), WithKarma(1, -1))
		a := mustPost(t, s, "u", "u's article")
		mustVote(t, s, "x", a.ID, Upvote)
		mustVote(t, s, "y", a.ID, Downvote)
		before, err := s.TopUsers(ctx, 1)
		if err != nil || fmt.Sprint(before) != "[{u 0}]" {
			t.Fatalf("TopUsers before: %v, %v", before, err)
		}
		other := mustPost(t, s, "p", "p's article")
		mustVote(t, s, "u", other.ID, Upvote)
		if n, err := s.ReverseVotes(ctx, "u"); err != nil || n != 1 {
			t.Fatalf("ReverseVotes: %d, %v", n, err)
		}
		if k, _ := s.Karma(ctx, "u"); k != 0 {
			t.Fatalf("u's karma %d", k)
		}
		after, err := s.TopUsers(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, uk := range after {
			found = found || uk.User == "u"
		}
		if !found {
			t.Errorf("TopUsers after ReverseVotes of a vote that moved no karma of u's: %v; want u listed (0) as before", after)
		}
	})
}

// TestHuntReverseVotesPosterInTopUsers: a poster whose only karma came
// from a user's votes is listed in TopUsers at 0 after ReverseVotes of
// that user; a twin store that never saw the votes does not list them.
func TestHuntReverseVotesPosterInTopUsers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s1, _ := newStore(t, b, WithVoteLog(), WithKarma(1, -1))
		s2, _ := newStore(t, b, WithVoteLog(), WithKarma(1, -1))
		a1 := mustPost(t, s1, "poster", "title")
		mustPost(t, s2, "poster", "title")
		mustVote(t, s1, "ring", a1.ID, Upvote)
		if n, err := s1.ReverseVotes(ctx, "ring"); err != nil || n != 1 {
			t.Fatalf("ReverseVotes: %d, %v", n, err)
		}
		u1, err1 := s1.TopUsers(ctx, 1)
		u2, err2 := s2.TopUsers(ctx, 1)
		if err1 != nil || err2 != nil || fmt.Sprint(u1) != fmt.Sprint(u2) {
			t.Errorf("TopUsers after ReverseVotes %v (%v), on a twin that never saw the vote %v (%v)", u1, err1, u2, err2)
		}
	})
}

// TestHuntVoteEventsAfterLastID: an after that is a stream entry ID, the
// greatest one, has no events after it: VoteEvents should return none
// (or ErrInvalidArgument), not Redis's raw "invalid start ID for the
// interval" error wrapping no sentinel.
func TestHuntVoteEventsAfterLastID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteEvents(100))
		a := mustPost(t, s, "poster", "title")
		mustVote(t, s, "u", a.ID, Upvote)
		const after = "18446744073709551615-18446744073709551615"
		list, next, err := s.VoteEvents(ctx, after, 10)
		if err != nil && !errors.Is(err, ErrInvalidArgument) || err == nil && (len(list) != 0 || next != after) {
			t.Errorf("VoteEvents after %s: %v %q %v; want no events and %q", after, list, next, err, after)
		}
	})
}

// TestHuntVotesByForgedCursor: a cursor that no call returned gets
// ErrInvalidArgument; one whose item can be no vote log entry (not
// "a<id>" or "c<id>", layout.ParseLogEntry) is taken as a stale cursor
// and silently ends the walk.
func TestHuntVotesByForgedCursor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog())
		a := mustPost(t, s, "poster", "title")
		mustVote(t, s, "u", a.ID, Upvote)
		for _, c := range []string{"1:x", "5:a1:b", "-3:zz", "99:c"} {
			page, next, err := s.VotesBy(ctx, "u", c, 10)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("VotesBy cursor %q: %v %q %v; want ErrInvalidArgument", c, page, next, err)
			}
		}
	})
}

// TestHuntSuspendNameVoteRefuses: Suspend and Unsuspend promise
// ErrInvalidArgument for "a user name Vote refuses"; Vote refuses a name
// with white space at either end, Suspend and Unsuspend take it (they
// check with the lax checkName, not the store's text rules).
func TestHuntSuspendNameVoteRefuses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b)
		a := mustPost(t, s, "poster", "title")
		for _, name := range []string{" bad", "bad "} {
			if _, err := s.Vote(ctx, name, a.ID, Upvote); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Vote(%q): %v", name, err)
			}
			if err := s.Suspend(ctx, name, Refuse, clock.Now().Add(time.Hour)); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Suspend(%q): %v; want ErrInvalidArgument", name, err)
			}
			if err := s.Unsuspend(ctx, name); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Unsuspend(%q): %v; want ErrInvalidArgument", name, err)
			}
		}
	})
}
