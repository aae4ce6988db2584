package voting

// The moderation hooks of a vote (the vote log, the vote events, shadow
// votes), and the vote log turned off and on again with Reconfigure.

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/layout"
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

// TestReverseAfterVoteLogOffAndOn: Reconfigure turning WithVoteLog off
// removes every user's log (reconfigure.lua phase 'logs'), and turning it
// on again removes any left before it records the log on: a vote changed
// while the log was off is in no log, where a log kept would list it as
// it was (VotesBy), and ReverseVotes would take the stale entry's vote
// off a closed article's frozen counts. A vote cast once the log is on
// again is logged, and taken back.
func TestReverseAfterVoteLogOffAndOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		logged, clock := newStore(t, b, WithVoteLog(), WithVoteWindow(time.Hour))
		plain, err := New(b.pool, WithKeyPrefix(logged.keys.prefix), WithClock(clock.Now), WithVoteWindow(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		plain.pool = logged.pool
		a := mustPost(t, logged, "p", "title")
		c := mustPost(t, logged, "p", "another")
		mustVote(t, logged, "u", a.ID, Upvote)            // logged: up
		if _, err := plain.Reconfigure(ctx); err != nil { // the log off
			t.Fatal(err)
		}
		if n, _ := redis.Int(b.do(t, "EXISTS", logged.keys.userVotesKey("u")), nil); n != 0 {
			t.Errorf("u's log is kept with the log off")
		}
		mustVote(t, plain, "u", a.ID, Downvote) // not logged
		// A log the store kept when it was turned off before this fix,
		// or whose removal was cut short, goes when it is turned on.
		b.do(t, "APPEND", logged.keys.userVotesKey("u"), layout.LogEntry{ID: a.ID, At: a.Posted.Unix(), Vote: 1}.Line())
		if _, err := logged.Reconfigure(ctx); err != nil { // the log on again
			t.Fatal(err)
		}
		if page, _, err := logged.VotesBy(ctx, "u", "", 10); err != nil || len(page) != 0 {
			t.Errorf("VotesBy after the log on again: %v, %v; want none (u's downvote was cast with the log off)", page, err)
		}
		mustVote(t, logged, "u", c.ID, Upvote) // logged
		// Voting closes, and the voter record expires (deleted here, as
		// its expiry on the server's clock would).
		clock.Add(2 * time.Hour)
		b.do(t, "DEL", logged.keys.votedKey(a.ID))
		if n, err := logged.ReverseVotes(ctx, "u"); err != nil || n != 1 {
			t.Fatalf("ReverseVotes: %d, %v; want the one logged vote", n, err)
		}
		for _, w := range []struct {
			id       string
			up, down int64
		}{{a.ID, 1, 1}, {c.ID, 1, 0}} { // a: the poster's upvote and u's unlogged downvote; c: u's upvote taken back
			got, err := logged.Article(ctx, w.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Upvotes != w.up || got.Downvotes != w.down {
				t.Errorf("article %s after ReverseVotes: %d up, %d down; want %d, %d", w.id, got.Upvotes, got.Downvotes, w.up, w.down)
			}
		}
	})
}
