package voting

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// wantView checks a read for a user (GroupArticlesFor, TopSinceFor...)
// against its plain read and the votes VotesOf or CommentVotesOf read on
// the plain read's ids, one after the other: got and want are the lists,
// ids the plain list's ids.
func wantView[T any](t testing.TB, name string, got []T, votes []VoteType, err error,
	want []T, wantErr error, ids []string, votesOf func([]string) ([]VoteType, error)) []VoteType {
	t.Helper()
	if err != nil || wantErr != nil {
		t.Fatalf("%s: %v; plain read: %v", name, err, wantErr)
	}
	wantVotes, err := votesOf(ids)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(votes, wantVotes) {
		t.Fatalf("%s = %v, %v;\nthe plain read and the votes of its ids read %v, %v", name, got, votes, want, wantVotes)
	}
	if got == nil || votes == nil {
		t.Fatalf("%s: nil results", name)
	}
	return votes
}

// wantArticlesView is wantView of a page of articles read for user,
// whose votes VotesOf reads.
func wantArticlesView(t testing.TB, s *Store, user, name string, got []Article, votes []VoteType, err error,
	want []Article, wantErr error) {
	t.Helper()
	wantView(t, name, got, votes, err, want, wantErr, idsOf(want), func(ids []string) ([]VoteType, error) { return s.VotesOf(ctx, user, ids) })
}

func commentIDs(list []ThreadComment) []string {
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.ID
	}
	return out
}

// viewFixture is a store with articles in a group, on user pages, with
// a thread of comments, and votes of every kind on them: up, down,
// none, cancelled, and an article and a thread whose voting closed.
type viewFixture struct {
	s        *Store
	articles []string // all[3] is deleted, all[7]'s voting closed
	comments []string // comments[0] is the root of replies
	closed   string   // an article whose comments' voting closed
	closedC  []string // its comments
}

func newViewFixture(t *testing.T, b *backend) viewFixture {
	t.Helper()
	s, clock := newStore(t, b, WithPageSize(3), WithOrders(Top, Hot), WithUserPages())
	var f viewFixture
	f.s = s
	for i := 0; i < 9; i++ {
		poster := "alice"
		if i%3 == 2 {
			poster = "bob"
		}
		id := mustPost(t, s, poster, fmt.Sprintf("p%d", i)).ID
		f.articles = append(f.articles, id)
		if i%2 == 0 {
			if err := s.AddToGroups(ctx, id, "g"); err != nil {
				t.Fatal(err)
			}
		}
		clock.Add(time.Minute)
	}
	all := f.articles
	mustVote(t, s, "bob", all[0], Upvote)
	mustVote(t, s, "bob", all[1], Upvote)
	mustVote(t, s, "bob", all[4], Downvote)
	mustVote(t, s, "bob", all[6], Upvote)
	mustVote(t, s, "bob", all[6], CancelVote)
	mustVote(t, s, "bob", all[7], Upvote)
	mustVote(t, s, "carol", all[0], Downvote)
	mustVote(t, s, "carol", all[4], Upvote)
	mustVote(t, s, "carol", all[8], Upvote)
	if err := s.Delete(ctx, all[3]); err != nil {
		t.Fatal(err)
	}
	// all[7]'s voting closed: its voter record gone.
	b.do(t, "DEL", s.keys.votedKey(all[7]))

	a := all[0]
	c0 := mustComment(t, s, a, "", "bob", "c0").ID
	c1 := mustComment(t, s, a, c0, "alice", "c1").ID
	c2 := mustComment(t, s, a, c0, "carol", "c2").ID
	c3 := mustComment(t, s, a, c1, "bob", "c3").ID
	c4 := mustComment(t, s, a, "", "carol", "c4").ID
	c5 := mustComment(t, s, a, c2, "alice", "c5").ID
	f.comments = []string{c0, c1, c2, c3, c4, c5}
	mustVoteComment(t, s, "bob", c1, Upvote)
	mustVoteComment(t, s, "bob", c2, Downvote)
	mustVoteComment(t, s, "bob", c3, Downvote) // his own, switched
	mustVoteComment(t, s, "bob", c4, Upvote)
	mustVoteComment(t, s, "bob", c4, CancelVote)
	mustVoteComment(t, s, "carol", c1, Downvote)
	if err := s.DeleteComment(ctx, c2); err != nil { // kept for its reply
		t.Fatal(err)
	}
	f.closed = all[2]
	d0 := mustComment(t, s, f.closed, "", "bob", "d0").ID
	d1 := mustComment(t, s, f.closed, d0, "carol", "d1").ID
	mustVoteComment(t, s, "bob", d1, Upvote)
	f.closedC = []string{d0, d1}
	b.do(t, "DEL", s.keys.cvoted+f.closed) // the comments' voting closed
	return f
}

var viewUsers = []string{"bob", "carol", "alice", "nobody"}

// TestGroupArticlesFor: a group page and a user's votes on it in one
// call read what GroupArticles and VotesOf read, on every page, past the
// end too.
func TestGroupArticlesFor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		f := newViewFixture(t, b)
		s := f.s
		for _, order := range []Order{ScoreDesc, TimeAsc, Top, Hot} {
			for _, user := range viewUsers {
				for page := 1; page <= 3; page++ {
					list, votes, err := s.GroupArticlesFor(ctx, user, "g", order, page)
					want, wantErr := s.GroupArticles(ctx, "g", order, page)
					wantArticlesView(t, s, user, fmt.Sprintf("GroupArticlesFor(%s, %v, %d)", user, order, page), list, votes, err, want, wantErr)
					if page == 2 && len(list) != 2 || page == 3 && len(list) != 0 {
						t.Fatalf("%v page %d of 5 articles: %d", order, page, len(list))
					}
				}
			}
		}
		list, votes, err := s.GroupArticlesFor(ctx, "bob", "g", TimeAsc, 1)
		if got := fmt.Sprint(idsOf(list), votes, err); got != fmt.Sprint([]string{f.articles[0], f.articles[2], f.articles[4]}, []VoteType{Upvote, Upvote, Downvote}, nil) { // all[2] is bob's post
			t.Errorf("bob's group page = %s", got)
		}
		if list, votes, err := s.GroupArticlesFor(ctx, "bob", "none", ScoreDesc, 1); err != nil || list == nil || votes == nil || len(list)+len(votes) != 0 {
			t.Errorf("GroupArticlesFor of an empty group = %v, %v, %v", list, votes, err)
		}
		if list, votes, err := s.GroupArticlesFor(ctx, "bob", "g", ScoreDesc, int(maxRank)); err != nil || len(list)+len(votes) != 0 {
			t.Errorf("GroupArticlesFor past the last rank = %v, %v, %v", list, votes, err)
		}
	})
}

// TestTopSinceFor: as TestGroupArticlesFor, of TopSince.
func TestTopSinceFor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		f := newViewFixture(t, b)
		s := f.s
		for _, d := range []time.Duration{time.Hour, 5 * time.Minute, time.Second} {
			for _, user := range viewUsers {
				for page := 1; page <= 4; page++ {
					list, votes, err := s.TopSinceFor(ctx, user, d, page)
					want, wantErr := s.TopSince(ctx, d, page)
					wantArticlesView(t, s, user, fmt.Sprintf("TopSinceFor(%s, %v, %d)", user, d, page), list, votes, err, want, wantErr)
				}
			}
		}
		list, votes, err := s.TopSinceFor(ctx, "bob", time.Hour, 1)
		// all[8], bob's post that carol upvoted; all[7], whose voting
		// closed; all[1], bob's upvote.
		if got := fmt.Sprint(idsOf(list), votes, err); got != fmt.Sprint([]string{f.articles[8], f.articles[7], f.articles[1]}, []VoteType{Upvote, NoVote, Upvote}, nil) {
			t.Errorf("bob's TopSince page 1 = %s", got)
		}
		if list, votes, err := s.TopSinceFor(ctx, "bob", time.Hour, 1000); err != nil || list == nil || votes == nil || len(list)+len(votes) != 0 {
			t.Errorf("TopSinceFor past the end = %v, %v, %v", list, votes, err)
		}
	})
}

// TestUserPagesFor: as TestGroupArticlesFor, of Submitted and Upvoted.
func TestUserPagesFor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		f := newViewFixture(t, b)
		s := f.s
		for _, owner := range []string{"alice", "bob", "carol", "nobody"} {
			for _, user := range viewUsers {
				for page := 1; page <= 4; page++ {
					list, votes, err := s.SubmittedFor(ctx, user, owner, page)
					want, wantErr := s.Submitted(ctx, owner, page)
					wantArticlesView(t, s, user, fmt.Sprintf("SubmittedFor(%s, %s, %d)", user, owner, page), list, votes, err, want, wantErr)
					list, votes, err = s.UpvotedFor(ctx, user, owner, page)
					want, wantErr = s.Upvoted(ctx, owner, page)
					wantArticlesView(t, s, user, fmt.Sprintf("UpvotedFor(%s, %s, %d)", user, owner, page), list, votes, err, want, wantErr)
				}
			}
		}
		// bob's own upvoted page: Upvote on each article still open;
		// all[7]'s voting closed.
		list, votes, err := s.UpvotedFor(ctx, "bob", "bob", 1)
		if got := fmt.Sprint(idsOf(list), votes, err); got != fmt.Sprint([]string{f.articles[7], f.articles[1], f.articles[0]}, []VoteType{NoVote, Upvote, Upvote}, nil) {
			t.Errorf("bob's upvoted page = %s", got)
		}
	})
}

// TestThreadFor: a thread, or the replies under a comment, and a user's
// votes on it in one call read what Thread (Replies) and CommentVotesOf
// read, in every order.
func TestThreadFor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		f := newViewFixture(t, b)
		s := f.s
		for _, order := range []Order{Best, Top, Hot, TimeDesc, TimeAsc} {
			for _, user := range viewUsers {
				for _, limit := range []int{1, 3, MaxThread} {
					for _, a := range []string{f.articles[0], f.closed, f.articles[1]} {
						list, votes, err := s.ThreadFor(ctx, user, a, order, limit)
						want, wantErr := s.Thread(ctx, a, order, limit)
						wantView(t, fmt.Sprintf("ThreadFor(%s, %s, %v, %d)", user, a, order, limit), list, votes, err, want, wantErr,
							commentIDs(want), func(ids []string) ([]VoteType, error) { return s.CommentVotesOf(ctx, user, ids) })
					}
					for _, c := range append(f.comments[:3:3], f.closedC[0]) {
						list, votes, err := s.RepliesFor(ctx, user, c, order, limit)
						want, wantErr := s.Replies(ctx, c, order, limit)
						wantView(t, fmt.Sprintf("RepliesFor(%s, %s, %v, %d)", user, c, order, limit), list, votes, err, want, wantErr,
							commentIDs(want), func(ids []string) ([]VoteType, error) { return s.CommentVotesOf(ctx, user, ids) })
					}
				}
			}
		}
		c := f.comments
		list, votes, err := s.ThreadFor(ctx, "bob", f.articles[0], TimeAsc, MaxThread)
		if got := fmt.Sprint(commentIDs(list), votes, err); got != fmt.Sprint([]string{c[0], c[1], c[3], c[2], c[5], c[4]},
			[]VoteType{Upvote, Upvote, Downvote, Downvote, NoVote, NoVote}, nil) {
			t.Errorf("bob's thread = %s", got)
		}
		list, votes, err = s.ThreadFor(ctx, "bob", f.closed, TimeAsc, MaxThread)
		if got := fmt.Sprint(commentIDs(list), votes, err); got != fmt.Sprint(f.closedC, []VoteType{NoVote, NoVote}, nil) {
			t.Errorf("bob's thread whose voting closed = %s", got)
		}
		if _, _, err := s.ThreadFor(ctx, "bob", "999", Best, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("ThreadFor of no article: %v", err)
		}
		if _, _, err := s.RepliesFor(ctx, "bob", "999", Best, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("RepliesFor of no comment: %v", err)
		}
	})
}

// TestReadsForInput: a user name that VotesOf refuses, and what each
// plain read refuses, get ErrInvalidArgument naming the call, with no
// round trip.
func TestReadsForInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		a := mustPost(t, s, "alice", "t")
		c := mustComment(t, s, a.ID, "", "bob", "c")
		calls := map[string]func(user string) error{
			"group articles for": func(user string) error { _, _, err := s.GroupArticlesFor(ctx, user, "g", ScoreDesc, 1); return err },
			"top since for":      func(user string) error { _, _, err := s.TopSinceFor(ctx, user, time.Hour, 1); return err },
			"submitted for":      func(user string) error { _, _, err := s.SubmittedFor(ctx, user, "alice", 1); return err },
			"upvoted for":        func(user string) error { _, _, err := s.UpvotedFor(ctx, user, "alice", 1); return err },
			"thread for":         func(user string) error { _, _, err := s.ThreadFor(ctx, user, a.ID, Best, 10); return err },
			"replies for":        func(user string) error { _, _, err := s.RepliesFor(ctx, user, c.ID, Best, 10); return err },
		}
		for op, call := range calls {
			for _, user := range []string{"", strings.Repeat("u", MaxNameLen+1), " bob"} {
				_, errVotes := s.VotesOf(ctx, user, []string{a.ID})
				_, errComments := s.CommentVotesOf(ctx, user, []string{c.ID})
				err := call(user)
				if errors.Is(errVotes, ErrInvalidArgument) != errors.Is(err, ErrInvalidArgument) ||
					errors.Is(errComments, ErrInvalidArgument) != errors.Is(err, ErrInvalidArgument) {
					t.Errorf("%s: user %.10q: VotesOf %v, CommentVotesOf %v, this %v", op, user, errVotes, errComments, err)
				}
				if err != nil && !strings.Contains(err.Error(), op) {
					t.Errorf("%s: user %.10q: %v", op, user, err)
				}
			}
			if err := call("bob"); err != nil {
				t.Errorf("%s: %v", op, err)
			}
		}
		bad := map[string]func() error{
			"group page 0":     func() error { _, _, err := s.GroupArticlesFor(ctx, "bob", "g", ScoreDesc, 0); return err },
			"group name":       func() error { _, _, err := s.GroupArticlesFor(ctx, "bob", "", ScoreDesc, 1); return err },
			"group order":      func() error { _, _, err := s.GroupArticlesFor(ctx, "bob", "g", Hot, 1); return err },
			"top period":       func() error { _, _, err := s.TopSinceFor(ctx, "bob", 0, 1); return err },
			"top page 0":       func() error { _, _, err := s.TopSinceFor(ctx, "bob", time.Hour, 0); return err },
			"submitted page 0": func() error { _, _, err := s.SubmittedFor(ctx, "bob", "alice", 0); return err },
			"upvoted owner":    func() error { _, _, err := s.UpvotedFor(ctx, "bob", "", 1); return err },
			"thread limit":     func() error { _, _, err := s.ThreadFor(ctx, "bob", a.ID, Best, 0); return err },
			"replies order":    func() error { _, _, err := s.RepliesFor(ctx, "bob", c.ID, ScoreAsc, 10); return err },
		}
		for name, call := range bad {
			if err := call(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
			}
		}
	})
}
