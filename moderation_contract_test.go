package voting

// Moderation's calls held to their contracts (moderation.go's godoc,
// docs/OPERATIONS.md "Moderation") where a bug hunt found them broken.

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSuspendFarFuture: a suspension until 9999-12-31 (Suspend takes
// ends up to year ~287,000) reads back as that end, and a refused call's
// RetryAfter is positive: neither goes through a time.Duration of the ms
// left, which overflows past ~292 years.
func TestSuspendFarFuture(t *testing.T) {
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

// TestReverseVotesDropsZeroKarmaUser: a user listed in TopUsers with
// karma 0 (their article got an upvote and a downvote) who casts one
// vote, on a store without vote costs, and has it taken back stays
// listed, as on a twin that never saw the vote: reverse.lua removes a
// voter only where the refunds brought their karma to 0.
func TestReverseVotesDropsZeroKarmaUser(t *testing.T) {
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

// TestVoteEventsAfterLastID: after the greatest stream entry ID,
// VoteEvents returns no events, not Redis's "invalid start ID for the
// interval".
func TestVoteEventsAfterLastID(t *testing.T) {
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

// TestVotesByForgedCursor: a cursor that no call returned, no offset,
// or one past the log or inside a line, gets ErrInvalidArgument rather
// than ending the walk or reading half a line.
func TestVotesByForgedCursor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog())
		a := mustPost(t, s, "poster", "title")
		mustVote(t, s, "u", a.ID, Upvote)
		for _, c := range []string{"1:x", "5:a1:b", "-3:zz", "99:c", "0", "01", "2", "9999"} {
			page, next, err := s.VotesBy(ctx, "u", c, 10)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("VotesBy cursor %q: %v %q %v; want ErrInvalidArgument", c, page, next, err)
			}
		}
	})
}

// TestSuspendNameVoteRefuses: Suspend and Unsuspend refuse, as their
// godoc says, a user name Vote refuses: white space at either end (the
// store's text rules, not the lax checkName).
func TestSuspendNameVoteRefuses(t *testing.T) {
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
