package voting

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// Issue 29's rules on comment votes: the karma invariant with comment
// votes mixed into article votes, and one vote per user per comment
// under the clock and delay attacks that Vote's tests make
// (TestStoresWithSkewedClocks, TestDelayedVoteAtClose,
// TestConcurrentVotesAtClose).

func mustComment(t testing.TB, s *Store, article, parent, poster, body string) Comment {
	t.Helper()
	c, err := s.Comment(ctx, article, parent, poster, body)
	return mustOK(t, c, err, "comment by %s on %s/%s", poster, article, parent)
}

func mustVoteComment(t testing.TB, s *Store, user, id string, v VoteType) VoteResult {
	t.Helper()
	r, err := s.VoteComment(ctx, user, id, ballot(v)) // as mustVote
	return mustOK(t, r, err, "%s votes %v on comment %s", user, v, id)
}

func commentByID(t testing.TB, s *Store, id string) Comment {
	t.Helper()
	list, err := s.CommentsByID(ctx, []string{id})
	if err != nil || len(list) != 1 {
		t.Fatalf("comment %s: %v, %v", id, list, err)
	}
	return list[0]
}

// checkCommentCounts asserts that each comment's counters equal the users
// among users (who must include every voter) voting each way, as
// CommentVotesOf reads them.
func checkCommentCounts(t testing.TB, s *Store, ids, users []string) {
	t.Helper()
	up, down := make([]int64, len(ids)), make([]int64, len(ids))
	for _, u := range users {
		votes, err := s.CommentVotesOf(ctx, u, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range votes {
			switch v {
			case Upvote:
				up[i]++
			case Downvote:
				down[i]++
			}
		}
	}
	list, err := s.CommentsByID(ctx, ids)
	if err != nil || len(list) != len(ids) {
		t.Fatalf("CommentsByID(%v) = %v, %v", ids, list, err)
	}
	for i, c := range list {
		if c.Upvotes != up[i] || c.Downvotes != down[i] {
			t.Errorf("comment %s: counters up %d down %d, voters up %d down %d", c.ID, c.Upvotes, c.Downvotes, up[i], down[i])
		}
	}
}

// TestCommentKarmaInvariant votes, switches and cancels on articles and
// on comments from many goroutines at once, then checks every user's
// karma against the standing votes: the votes on their articles and
// comments minus the cost of their own, their own aside. A comment
// deleted with replies keeps its votes and its karma.
func TestCommentKarmaInvariant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const perUp, perDown, costUp, costDown = 3, -2, 1, 5
		s, _ := newStore(t, b, WithKarma(perUp, perDown), WithVoteCost(costUp, costDown))
		users := []string{"u0", "u1", "u2", "u3", "u4", "u5"}
		poster := map[string]string{}
		var articles, comments []string
		for i := 0; i < 3; i++ {
			a := mustPost(t, s, users[i], "t")
			articles = append(articles, a.ID)
			poster["a"+a.ID] = a.Poster
		}
		for i := 0; i < 8; i++ {
			parent := ""
			if i >= 3 {
				parent = comments[i%3]
			}
			c := mustComment(t, s, articles[i%3], parent, users[(i+1)%4], "c")
			comments = append(comments, c.ID)
			poster["c"+c.ID] = c.Poster
		}
		raceOps(t, 12, 60, func(_ int, rng *rand.Rand) error {
			u, v := users[rng.Intn(len(users))], VoteType(rng.Intn(3)-1)
			if rng.Intn(3) == 0 {
				_, err := s.Vote(ctx, u, articles[rng.Intn(len(articles))], ballot(v))
				return err
			}
			_, err := s.VoteComment(ctx, u, comments[rng.Intn(len(comments))], ballot(v))
			return err
		})
		check := func() {
			t.Helper()
			want := map[string]int64{}
			add := func(owner, voter string, v VoteType) {
				if voter == owner {
					return
				}
				want[owner] += worthOf(v, perUp, perDown)
				want[voter] -= worthOf(v, costUp, costDown)
			}
			for _, u := range users {
				for _, id := range articles {
					v, err := s.VoteOf(ctx, u, id)
					if err != nil {
						t.Fatal(err)
					}
					add(poster["a"+id], u, v)
				}
				votes, err := s.CommentVotesOf(ctx, u, comments)
				if err != nil {
					t.Fatal(err)
				}
				for i, id := range comments {
					add(poster["c"+id], u, votes[i])
				}
			}
			for _, u := range users {
				if got := karmaOf(t, s, u); got != want[u] {
					t.Errorf("karma of %s: %d, want %d", u, got, want[u])
				}
			}
			checkInvariant(t, s, DefaultVoteWeight, articles, users)
			checkCommentCounts(t, s, comments, users)
		}
		check()
		// comments[0] has replies: it stays, as a placeholder with its
		// votes, and so does its poster's karma.
		before := commentByID(t, s, comments[0])
		if err := s.DeleteComment(ctx, comments[0]); err != nil {
			t.Fatal(err)
		}
		after := commentByID(t, s, comments[0])
		if !after.Deleted || after.Poster != "" || after.Body != "" || after.Upvotes != before.Upvotes || after.Downvotes != before.Downvotes {
			t.Fatalf("placeholder %+v, was %+v", after, before)
		}
		check()
	})
}

// cvotedKey returns the key of the article's comment voter records
// (design: {p}:cvoted:<aid>), found among the store's keys.
func cvotedKey(t testing.TB, b *backend, s *Store, article string) string {
	t.Helper()
	for _, k := range b.storeKeys(t, s) {
		if strings.Contains(k, "cvoted") && strings.HasSuffix(k, ":"+article) {
			return k
		}
	}
	t.Fatalf("no comment voter record of article %s among %v", article, b.storeKeys(t, s))
	return ""
}

// expireCommentVotes lets the server's clock pass the end of the
// article's comment voter records, and fails t unless they are gone.
// The stores' clocks do not move.
func expireCommentVotes(t testing.TB, b *backend, s *Store, article string) {
	t.Helper()
	expireKey(t, b, cvotedKey(t, b, s, article), "comment voter records of "+article)
}

// wantCommentClosed asserts that every vote of every user on the comment
// gets ErrVotingClosed and changes nothing.
func wantCommentClosed(t testing.TB, s *Store, id string, users ...string) {
	t.Helper()
	before := commentByID(t, s, id)
	for _, u := range users {
		for _, v := range []VoteType{Upvote, Downvote, NoVote} {
			if r, err := s.VoteComment(ctx, u, id, ballot(v)); !errors.Is(err, ErrVotingClosed) {
				t.Errorf("%s votes %v on comment %s = %+v, %v; want ErrVotingClosed", u, v, id, r, err)
			}
		}
	}
	if after := commentByID(t, s, id); !sameComment(after, before) {
		t.Errorf("comment %s after closed votes = %+v; want %+v", id, after, before)
	}
}

// TestCommentVotesWithSkewedClocks: stores on one prefix whose clocks
// differ by seconds. A comment vote counts once whichever store carries
// it; a clock ahead closes voting early, one behind never keeps it open
// past the voter records.
func TestCommentVotesWithSkewedClocks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, behind, ahead, users := skewedStores(t, b)
		a := mustPost(t, s, "alice", "t")
		c := mustComment(t, s, a.ID, "", "alice", "first")
		mustVoteComment(t, behind, "bob", c.ID, Upvote)
		if r := mustVoteComment(t, s, "bob", c.ID, Upvote); r.Previous != Upvote || r.Upvotes != 2 || r.Points != 2 || r.Score != 0 {
			t.Fatalf("bob's repeat through another store = %+v; want previous up, 2 up, 2 points", r)
		}
		mustVoteComment(t, s, "carol", c.ID, Downvote)
		mustVoteComment(t, behind, "carol", c.ID, Upvote)
		wantCommentClosed(t, ahead, c.ID, users...)
		if _, err := ahead.Comment(ctx, a.ID, c.ID, "bob", "late"); !errors.Is(err, ErrVotingClosed) {
			t.Errorf("a reply through the store ahead: %v, want ErrVotingClosed", err)
		}
		checkCommentCounts(t, s, []string{c.ID}, users)

		// A comment posted by the store behind closes early on the others.
		old := mustComment(t, behind, a.ID, c.ID, "bob", "old")
		wantCommentClosed(t, s, old.ID, users...)
		mustVoteComment(t, behind, "carol", old.ID, Downvote)
		checkCommentCounts(t, s, []string{c.ID, old.ID}, users)

		expireCommentVotes(t, b, s, a.ID)
		for _, st := range []*Store{s, behind} {
			wantCommentClosed(t, st, c.ID, users...)
			wantCommentClosed(t, st, old.ID, users...)
		}
		if got := commentByID(t, s, c.ID); got.Upvotes != 3 || got.Downvotes != 0 {
			t.Fatalf("comment = %+v; want 3 up", got)
		}
		// The votes are gone with the records; the counts stay.
		if v, err := s.CommentVotesOf(ctx, "bob", []string{c.ID}); err != nil || len(v) != 1 || v[0] != NoVote {
			t.Fatalf("CommentVotesOf after the records expired = %v, %v; want none", v, err)
		}
	})
}

// TestDelayedCommentVoteAtClose: a repeat comment vote read as open by
// the store just before the close reaches the server 100 ms late, after
// the voter records expired. It is closed, not counted again.
func TestDelayedCommentVoteAtClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteWindow(time.Second))
		a := mustPost(t, s, "alice", "t")
		c := mustComment(t, s, a.ID, "", "alice", "c")
		mustVoteComment(t, s, "bob", c.ID, Upvote)
		if ttl := b.ttl(t, cvotedKey(t, b, s, a.ID)); ttl > 50*time.Millisecond {
			b.elapse(ttl - 50*time.Millisecond)
		}
		var name string
		hook(s, &hooks{before: func(cmd string, args []interface{}) error {
			if n := scriptName(cmd, args); n != "" {
				name = n
				b.elapse(100 * time.Millisecond)
				clock.Add(100 * time.Millisecond)
			}
			return nil
		}})
		for _, u := range []string{"bob", "carol"} {
			if r, err := s.VoteComment(ctx, u, c.ID, Upvote); !errors.Is(err, ErrVotingClosed) {
				t.Errorf("%s's delayed comment vote (script %s) = %+v, %v; want ErrVotingClosed", u, name, r, err)
			}
		}
		s.pool = b.pool // unhooked
		if got := commentByID(t, s, c.ID); got.Upvotes != 2 || got.Downvotes != 0 {
			t.Fatalf("comment = %+v; want 2 up", got)
		}
	})
}

// TestConcurrentCommentVotesAtClose races comment voters while the
// voter records expire on the server; the store's clock stands still,
// so only the records close voting. Each user votes from one goroutine,
// so its last accepted vote is known: the counters must equal those
// votes, whatever reached the server around the close.
func TestConcurrentCommentVotesAtClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteWindow(time.Second))
		a := mustPost(t, s, "poster", "t")
		c := mustComment(t, s, a.ID, "", "poster", "c")
		users, up, down, accepted := raceToClose(t, b, func(user string, v VoteType) error {
			_, err := s.VoteComment(ctx, user, c.ID, ballot(v))
			return err
		})
		if got := commentByID(t, s, c.ID); got.Upvotes != up || got.Downvotes != down {
			t.Fatalf("after %d accepted votes: comment %+v, want %d up, %d down", accepted, got, up, down)
		}
		wantCommentClosed(t, s, c.ID, users...)
	})
}
