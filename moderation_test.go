package voting

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestVotesBy checks the vote log: votes on articles and comments, newest
// first, changes moving an entry, cancels removing it, cursors over the
// whole log, gone items left out, and the refusal without WithVoteLog.
func TestVotesBy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog(), WithKarma(1, -1))
		var ids []string
		for i := 0; i < 5; i++ {
			a, err := s.Post(ctx, "poster", fmt.Sprintf("t%d", i), "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		c, err := s.Comment(ctx, ids[0], "", "poster", "hello")
		if err != nil {
			t.Fatal(err)
		}
		vote := func(id string, v VoteType) {
			t.Helper()
			clock.Add(time.Second)
			if _, err := s.Vote(ctx, "mod", id, v); err != nil {
				t.Fatal(err)
			}
		}
		vote(ids[0], Upvote)
		vote(ids[1], Downvote)
		vote(ids[2], Upvote)
		vote(ids[3], Upvote)
		vote(ids[3], CancelVote) // removed
		vote(ids[0], Downvote)   // moves to the front
		clock.Add(time.Second)
		if _, err := s.VoteComment(ctx, "mod", c.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		// VoteBatch logs too.
		clock.Add(time.Second)
		if _, err := s.VoteBatch(ctx, []Ballot{{User: "mod", ID: ids[4], Vote: Upvote}}); err != nil {
			t.Fatal(err)
		}
		want := []UserVote{
			{ID: ids[4], Vote: Upvote},
			{ID: c.ID, Comment: true, Vote: Upvote},
			{ID: ids[0], Vote: Downvote},
			{ID: ids[2], Vote: Upvote},
			{ID: ids[1], Vote: Downvote},
		}
		for _, limit := range []int{1, 2, 3, 1000} {
			var got []UserVote
			cursor := ""
			for n := 0; ; n++ {
				page, next, err := s.VotesBy(ctx, "mod", cursor, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > limit {
					t.Fatalf("limit %d: page of %d", limit, len(page))
				}
				got = append(got, page...)
				if next == "" {
					break
				}
				if n > 10 {
					t.Fatal("no end")
				}
				cursor = next
			}
			for i := range got {
				got[i].At = time.Time{}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d: votes by %v, want %v", limit, got, want)
			}
		}
		page, _, err := s.VotesBy(ctx, "mod", "", 1)
		if err != nil || len(page) != 1 || !page[0].At.Equal(epoch.Add(8*time.Second)) {
			t.Fatalf("newest %v, %v; want at %v", page, err, epoch.Add(8*time.Second))
		}
		// An article gone leaves the log's pages.
		if err := s.Delete(ctx, ids[2]); err != nil {
			t.Fatal(err)
		}
		page, next, err := s.VotesBy(ctx, "mod", "", 1000)
		if err != nil || next != "" || len(page) != 4 {
			t.Fatalf("after delete: %v %q %v", page, next, err)
		}
		// The poster's own upvotes are no entries.
		if page, _, err := s.VotesBy(ctx, "poster", "", 10); err != nil || len(page) != 0 {
			t.Fatalf("poster's log %v, %v", page, err)
		}
		for _, bad := range []int{0, MaxModerationPage + 1} {
			if _, _, err := s.VotesBy(ctx, "mod", "", bad); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("limit %d: %v", bad, err)
			}
		}
		if _, _, err := s.VotesBy(ctx, "mod", "nope", 10); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("bad cursor: %v", err)
		}
		plain, _ := newStore(t, b)
		if _, _, err := plain.VotesBy(ctx, "mod", "", 10); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("without WithVoteLog: %v", err)
		}
	})
}

// TestVoters walks the voters of an article and a comment in small
// pages: each voter once, the poster included, with their votes.
func TestVoters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a, err := s.Post(ctx, "poster", "title", "")
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Comment(ctx, a.ID, "", "cposter", "hello")
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.Comment(ctx, a.ID, "", "x", "other")
		if err != nil {
			t.Fatal(err)
		}
		want, cwant := map[string]VoteType{"poster": Upvote}, map[string]VoteType{"cposter": Upvote}
		for i := 0; i < 300; i++ {
			u := fmt.Sprintf("u%03d", i)
			v := Upvote
			if i%3 == 0 {
				v = Downvote
			}
			if _, err := s.Vote(ctx, u, a.ID, v); err != nil {
				t.Fatal(err)
			}
			want[u] = v
			if i%2 == 0 {
				if _, err := s.VoteComment(ctx, u, c.ID, v); err != nil {
					t.Fatal(err)
				}
				cwant[u] = v
			}
			if _, err := s.VoteComment(ctx, u, other.ID, Downvote); err != nil {
				t.Fatal(err)
			}
		}
		// A cancelled vote is no voter.
		if _, err := s.Vote(ctx, "u001", a.ID, CancelVote); err != nil {
			t.Fatal(err)
		}
		delete(want, "u001")
		walk := func(read func(cursor string, limit int) ([]Voter, string, error), limit int) map[string]VoteType {
			t.Helper()
			got := map[string]VoteType{}
			cursor := ""
			for n := 0; ; n++ {
				page, next, err := read(cursor, limit)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range page {
					if _, dup := got[v.User]; dup {
						t.Fatalf("voter %s twice", v.User)
					}
					got[v.User] = v.Vote
				}
				if next == "" {
					return got
				}
				if n > 1000 {
					t.Fatal("no end")
				}
				cursor = next
			}
		}
		for _, limit := range []int{7, 1000} {
			got := walk(func(cursor string, limit int) ([]Voter, string, error) { return s.Voters(ctx, a.ID, cursor, limit) }, limit)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("limit %d: voters %v, want %v", limit, got, want)
			}
			got = walk(func(cursor string, limit int) ([]Voter, string, error) {
				return s.CommentVoters(ctx, c.ID, cursor, limit)
			}, limit)
			if fmt.Sprint(got) != fmt.Sprint(cwant) {
				t.Fatalf("limit %d: comment voters %v, want %v", limit, got, cwant)
			}
		}
		if _, _, err := s.Voters(ctx, "999", "", 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown article: %v", err)
		}
		if _, _, err := s.CommentVoters(ctx, "999", "", 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown comment: %v", err)
		}
		if b.mr != nil {
			b.mr.FastForward(DefaultVoteWindow + time.Second)
			if _, _, err := s.Voters(ctx, a.ID, "", 10); !errors.Is(err, ErrVotingClosed) {
				t.Fatalf("closed article: %v", err)
			}
		}
	})
}
