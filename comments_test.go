package voting

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCommentBasics: a thread of comments and replies, voted, edited and
// deleted, read back in every way, with the article's live count.
func TestCommentBasics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages(), WithEditWindow(time.Hour), WithOrders(Hot))
		a, err := s.Post(ctx, "alice", "t", "")
		if err != nil {
			t.Fatal(err)
		}
		c1, err := s.Comment(ctx, a.ID, "", "bob", "first")
		if err != nil {
			t.Fatal(err)
		}
		if c1.ID != "1" || c1.Article != a.ID || c1.Parent != "" || c1.Poster != "bob" || c1.Body != "first" || c1.Upvotes != 1 {
			t.Fatalf("comment = %+v", c1)
		}
		clock.Add(time.Second)
		c2, err := s.Comment(ctx, a.ID, c1.ID, "carol", "reply")
		if err != nil {
			t.Fatal(err)
		}
		c3, err := s.Comment(ctx, a.ID, "", "dave", "second")
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Article(ctx, a.ID)
		if err != nil || got.Comments != 3 {
			t.Fatalf("article = %+v, %v", got, err)
		}
		page, err := s.Articles(ctx, ScoreDesc, 1)
		if err != nil || len(page) != 1 || page[0].Comments != 3 {
			t.Fatalf("page = %+v, %v", page, err)
		}
		r, err := s.VoteComment(ctx, "erin", c3.ID, Upvote)
		if err != nil || r.Score != 2 || r.Upvotes != 2 {
			t.Fatalf("vote = %+v, %v", r, err)
		}
		r, err = s.VoteComment(ctx, "bob", c1.ID, Downvote)
		if err != nil || r.Previous != Upvote || r.Score != -1 {
			t.Fatalf("own downvote = %+v, %v", r, err)
		}
		for _, o := range []Order{Best, Top, TimeDesc, TimeAsc, Hot} {
			th, err := s.Thread(ctx, a.ID, o, 10)
			if err != nil || len(th) != 3 {
				t.Fatalf("thread %v = %+v, %v", o, th, err)
			}
			ids := []string{}
			for _, c := range th {
				ids = append(ids, c.ID)
			}
			want := map[Order]string{Best: "3 1 2", Top: "3 1 2", TimeDesc: "3 1 2", TimeAsc: "1 2 3", Hot: "3 1 2"}[o]
			if strings.Join(ids, " ") != want {
				t.Errorf("thread %v = %v, want %s", o, ids, want)
			}
		}
		if _, err := s.Thread(ctx, a.ID, Controversial, 10); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("controversial: %v", err)
		}
		th, err := s.Thread(ctx, a.ID, Best, 1)
		if err != nil || len(th) != 1 || th[0].More != 0 {
			t.Fatalf("thread of 1 = %+v, %v", th, err)
		}
		th, err = s.Thread(ctx, a.ID, TimeAsc, 1)
		if err != nil || len(th) != 1 || th[0].ID != "1" || th[0].More != 1 {
			t.Fatalf("thread of 1 = %+v, %v", th, err)
		}
		rep, err := s.Replies(ctx, c1.ID, Best, 10)
		if err != nil || len(rep) != 1 || rep[0].ID != c2.ID || rep[0].Depth != 0 {
			t.Fatalf("replies = %+v, %v", rep, err)
		}
		votes, err := s.CommentVotesOf(ctx, "bob", []string{"1", "2", "3", "x", "99"})
		if err != nil || votes[0] != Downvote || votes[1] != NoVote {
			t.Fatalf("votes = %v, %v", votes, err)
		}
		votes, err = s.CommentVotesOf(ctx, "carol", []string{"2"})
		if err != nil || votes[0] != Upvote {
			t.Fatalf("votes = %v, %v", votes, err)
		}
		e, err := s.EditComment(ctx, c2.ID, "carol", "edited")
		if err != nil || e.Body != "edited" {
			t.Fatalf("edit = %+v, %v", e, err)
		}
		if _, err := s.EditComment(ctx, c2.ID, "bob", "x"); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("edit by another: %v", err)
		}
		uc, err := s.UserComments(ctx, "carol", 1)
		if err != nil || len(uc) != 1 || uc[0].Body != "edited" {
			t.Fatalf("user comments = %+v, %v", uc, err)
		}
		if err := s.DeleteComment(ctx, c1.ID); err != nil {
			t.Fatal(err)
		}
		list, err := s.CommentsByID(ctx, []string{"1", "2", "3"})
		if err != nil || len(list) != 3 || !list[0].Deleted || list[0].Poster != "" || list[0].Replies != 1 {
			t.Fatalf("by id = %+v, %v", list, err)
		}
		if got, _ := s.Article(ctx, a.ID); got.Comments != 2 {
			t.Fatalf("comments = %d", got.Comments)
		}
		if err := s.DeleteComment(ctx, c2.ID); err != nil {
			t.Fatal(err)
		}
		list, err = s.CommentsByID(ctx, []string{"1", "2", "3"})
		if err != nil || len(list) != 1 || list[0].ID != "3" {
			t.Fatalf("by id after = %+v, %v", list, err)
		}
		if err := s.DeleteComment(ctx, c2.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("delete again: %v", err)
		}
		if got, _ := s.Article(ctx, a.ID); got.Comments != 1 {
			t.Fatalf("comments = %d", got.Comments)
		}
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		for _, k := range b.storeKeys(t, s) {
			if strings.Contains(k, "comment") || strings.Contains(k, "kids") || strings.Contains(k, "thread") || strings.Contains(k, "cvoted") {
				if !strings.Contains(k, "cseq") && !strings.Contains(k, "commented") {
					t.Errorf("key %s left", k)
				}
			}
		}
	})
}
