package voting

// The moderation hooks of a vote (the vote log, the vote events, shadow
// votes), and the vote log turned off and on again with Reconfigure.

import (
	"testing"
	"time"
)

// eventsOf reads every vote event of s, without their IDs.
func eventsOf(t *testing.T, s *Store) []VoteEvent {
	t.Helper()
	var got []VoteEvent
	after := ""
	for {
		page, next, err := s.VoteEvents(ctx, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return got
		}
		for _, e := range page {
			e.ID = ""
			got = append(got, e)
		}
		after = next
	}
}

// TestShadowVoteCancelAddsNoEvent: a vote cast while shadowed counts
// nowhere and adds no event; once the suspension is over, the user
// cancelling it changes no count either (the vote counted before and
// after is none), and adds no "vote" event, on an article or a comment
// (lib/ballot.lua vote, comment_vote.lua).
func TestShadowVoteCancelAddsNoEvent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, opts := range [][]Option{{WithVoteEvents(1000)}, {WithVoteLog(), WithVoteEvents(1000)}} {
			s, clock := newStore(t, b, opts...)
			a := mustPost(t, s, "p", "title")
			c := mustComment(t, s, a.ID, "", "p", "body")
			if err := s.Suspend(ctx, "sh", Shadow, clock.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			mustVote(t, s, "sh", a.ID, Upvote)        // shadowed: no event
			mustVoteComment(t, s, "sh", c.ID, Upvote) // shadowed: no event
			if err := s.Unsuspend(ctx, "sh"); err != nil {
				t.Fatal(err)
			}
			before, err := s.Article(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			mustVote(t, s, "sh", a.ID, NoVote)        // cancels a vote that never counted
			mustVoteComment(t, s, "sh", c.ID, NoVote) // likewise
			after, err := s.Article(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if before.Upvotes != after.Upvotes || before.Downvotes != after.Downvotes {
				t.Fatalf("the cancel of a shadow vote changed the counts: %+v, was %+v", after, before)
			}
			var votes []VoteEvent
			for _, e := range eventsOf(t, s) {
				if e.Kind == "vote" {
					votes = append(votes, e)
				}
			}
			if len(votes) != 0 {
				t.Errorf("%s: the cancel of a shadow vote, which counted nowhere, added vote events %+v", s.Identity(), votes)
			}
		}
	})
}

// TestReverseAfterVoteLogOffAndOn: Reconfigure turning WithVoteLog
// off leaves every user's log as it was, and turning it on again trusts
// it: a vote changed while the log was off keeps its old entry. VotesBy
// then lists a vote the user does not have (the log is "the user's
// standing votes", docs/LAYOUT.md), and ReverseVotes takes the stale
// entry's vote off a closed article's frozen counts: an upvote the user
// no longer has is taken from the article, and the downvote the user
// does have stays.
func TestReverseAfterVoteLogOffAndOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		logged, clock := newStore(t, b, WithVoteLog(), WithVoteWindow(time.Hour))
		plain, err := New(b.pool, WithKeyPrefix(logged.keys.prefix), WithClock(clock.Now), WithVoteWindow(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		plain.pool = logged.pool
		a := mustPost(t, logged, "p", "title")
		mustVote(t, logged, "u", a.ID, Upvote)            // logged: up
		if _, err := plain.Reconfigure(ctx); err != nil { // the log off
			t.Fatal(err)
		}
		mustVote(t, plain, "u", a.ID, Downvote)            // not logged
		if _, err := logged.Reconfigure(ctx); err != nil { // the log on again
			t.Fatal(err)
		}
		page, _, err := logged.VotesBy(ctx, "u", "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 1 && page[0].Vote != Downvote {
			t.Errorf("VotesBy lists u's vote as %v; u's standing vote is down", page[0].Vote)
		}
		// Voting closes, and the voter record expires (deleted here, as
		// its expiry on the server's clock would).
		clock.Add(2 * time.Hour)
		b.do(t, "DEL", logged.keys.votedKey(a.ID))
		if _, err := logged.ReverseVotes(ctx, "u"); err != nil {
			t.Fatal(err)
		}
		got, err := logged.Article(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Before: the poster's upvote and u's downvote; u's downvote taken back.
		if want := [2]int64{1, 0}; [2]int64{got.Upvotes, got.Downvotes} != want {
			t.Errorf("after ReverseVotes of u's downvote: %d up, %d down; want %v", got.Upvotes, got.Downvotes, want)
		}
	})
}
