package voting

import (
	"errors"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCommentBasics: a thread of comments and replies, voted, edited and
// deleted, read back in every way, with the article's live count.
func TestCommentBasics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages(), WithEditWindow(time.Hour), WithOrders(Hot))
		a := mustPost(t, s, "alice", "t")
		c1 := mustComment(t, s, a.ID, "", "bob", "first")
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
		if err != nil || r.Points != 2 || r.Score != 0 || r.Upvotes != 2 {
			t.Fatalf("vote = %+v, %v", r, err)
		}
		r, err = s.VoteComment(ctx, "bob", c1.ID, Downvote)
		if err != nil || r.Previous != Upvote || r.Points != -1 {
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

// wantUnchanged fails t when the store's data differs from before.
func wantUnchanged(t *testing.T, b *backend, s *Store, what, before string) {
	t.Helper()
	if after := dumpStore(t, b, s); after != before {
		t.Errorf("%s changed the store:\n%s\nwas\n%s", what, after, before)
	}
}

// TestCommentBadInput: every bad input is refused with its sentinel and
// changes nothing: no id taken, no key written.
func TestCommentBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		other, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		b2 := mustPost(t, s, "alice", "u")
		c1, err := s.Comment(ctx, a.ID, "", "bob", "first")
		if err != nil {
			t.Fatal(err)
		}
		oc := mustPost(t, other, "alice", "t")
		if _, err := other.Comment(ctx, oc.ID, "", "bob", "other store"); err != nil {
			t.Fatal(err)
		}
		before := dumpStore(t, b, s)
		long := strings.Repeat("x", MaxCommentLen+1)
		for _, tc := range []struct {
			name              string
			aid, parent, user string
			body              string
			want              error
		}{
			{"blank body", a.ID, "", "bob", " \n\t", ErrInvalidArgument},
			{"empty body", a.ID, "", "bob", "", ErrInvalidArgument},
			{"oversize body", a.ID, "", "bob", long, ErrInvalidArgument},
			{"invalid UTF-8", a.ID, "", "bob", "\xff", ErrInvalidArgument},
			{"blank poster", a.ID, "", " ", "x", ErrInvalidArgument},
			{"malformed article", "x", "", "bob", "x", ErrNotFound},
			{"unknown article", "999", "", "bob", "x", ErrNotFound},
			{"malformed parent", a.ID, "01", "bob", "x", ErrNotFound},
			{"unknown parent", a.ID, "999", "bob", "x", ErrNotFound},
			{"parent of another article", b2.ID, c1.ID, "bob", "x", ErrInvalidArgument},
		} {
			if _, err := s.Comment(ctx, tc.aid, tc.parent, tc.user, tc.body); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
		for name, call := range map[string]func() error{
			"limit 0":          func() error { _, err := s.Thread(ctx, a.ID, Best, 0); return err },
			"limit past max":   func() error { _, err := s.Thread(ctx, a.ID, Best, MaxThread+1); return err },
			"replies limit 0":  func() error { _, err := s.Replies(ctx, c1.ID, Top, 0); return err },
			"hot not kept":     func() error { _, err := s.Thread(ctx, a.ID, Hot, 10); return err },
			"score not kept":   func() error { _, err := s.Thread(ctx, a.ID, ScoreDesc, 10); return err },
			"score-asc":        func() error { _, err := s.Thread(ctx, a.ID, ScoreAsc, 10); return err },
			"unknown order":    func() error { _, err := s.Replies(ctx, c1.ID, Order(99), 10); return err },
			"too many ids":     func() error { _, err := s.CommentsByID(ctx, make([]string, MaxBatch+1)); return err },
			"too many votes":   func() error { _, err := s.CommentVotesOf(ctx, "bob", make([]string, MaxBatch+1)); return err },
			"no user pages":    func() error { _, err := s.UserComments(ctx, "bob", 1); return err },
			"invalid vote":     func() error { _, err := s.VoteComment(ctx, "bob", c1.ID, 3); return err },
			"blank voter":      func() error { _, err := s.VoteComment(ctx, "", c1.ID, Upvote); return err },
			"blank edit":       func() error { _, err := s.EditComment(ctx, c1.ID, "bob", " "); return err },
			"oversize edit":    func() error { _, err := s.EditComment(ctx, c1.ID, "bob", long); return err },
			"unknown replies":  func() error { _, err := s.Replies(ctx, "999", Best, 10); return err },
			"unknown thread":   func() error { _, err := s.Thread(ctx, "999", Best, 10); return err },
			"unknown vote":     func() error { _, err := s.VoteComment(ctx, "bob", "999", Upvote); return err },
			"malformed vote":   func() error { _, err := s.VoteComment(ctx, "bob", "1x", Upvote); return err },
			"unknown edit":     func() error { _, err := s.EditComment(ctx, "999", "bob", "x"); return err },
			"unknown delete":   func() error { return s.DeleteComment(ctx, "999") },
			"malformed delete": func() error { return s.DeleteComment(ctx, "") },
		} {
			want := ErrInvalidArgument
			switch {
			case strings.HasPrefix(name, "unknown") && name != "unknown order", strings.HasPrefix(name, "malformed"):
				want = ErrNotFound
			case name == "invalid vote":
				want = ErrInvalidVote
			}
			if err := call(); !errors.Is(err, want) {
				t.Errorf("%s: %v, want %v", name, err, want)
			}
		}
		wantUnchanged(t, b, s, "bad input", before)
		// Foreign and malformed ids read as nothing, or NoVote.
		list, err := s.CommentsByID(ctx, []string{"x", "999", c1.ID, "", "01"})
		if err != nil || len(list) != 1 || list[0].ID != c1.ID {
			t.Errorf("CommentsByID = %+v, %v", list, err)
		}
		votes, err := s.CommentVotesOf(ctx, "bob", []string{"x", "999", c1.ID})
		if err != nil || len(votes) != 3 || votes[0] != NoVote || votes[1] != NoVote || votes[2] != Upvote {
			t.Errorf("CommentVotesOf = %v, %v", votes, err)
		}
		// A deleted parent takes replies; the next id is the next.
		if err := s.DeleteComment(ctx, c1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Comment(ctx, a.ID, c1.ID, "carol", "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a reply to a removed comment: %v, want ErrNotFound", err)
		}
		c2, err := s.Comment(ctx, a.ID, "", "bob", "second")
		if err != nil || c2.ID != "2" {
			t.Fatalf("comment after refusals = %+v, %v; want id 2", c2, err)
		}
		c3, err := s.Comment(ctx, a.ID, c2.ID, "carol", "reply")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteComment(ctx, c2.ID); err != nil {
			t.Fatal(err)
		}
		c4, err := s.Comment(ctx, a.ID, c2.ID, "dave", "reply to a deleted comment")
		if err != nil || c4.Parent != c2.ID {
			t.Fatalf("reply to a deleted comment = %+v, %v", c4, err)
		}
		list, err = s.CommentsByID(ctx, []string{c2.ID})
		if err != nil || len(list) != 1 || !list[0].Deleted || list[0].Replies != 2 || list[0].Body != "" {
			t.Fatalf("deleted parent = %+v, %v", list, err)
		}
		if err := s.DeleteComment(ctx, c2.ID); err != nil {
			t.Fatalf("deleting a deleted comment again: %v", err)
		}
		// Its replies gone, the placeholder goes too.
		for _, id := range []string{c3.ID, c4.ID} {
			if err := s.DeleteComment(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if list, err := s.CommentsByID(ctx, []string{c2.ID}); err != nil || len(list) != 0 {
			t.Fatalf("the placeholder without replies = %+v, %v", list, err)
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Comments != 0 {
			t.Fatalf("article = %+v, %v", got, err)
		}
		if th, err := s.Thread(ctx, a.ID, TimeAsc, 10); err != nil || len(th) != 0 {
			t.Fatalf("thread = %+v, %v", th, err)
		}
	})
}

// TestCommentRules: karma, cost and least karma apply to comment votes
// as to article votes, the vote limit counts both, the comment interval
// and the edit window hold, and each refusal changes nothing.
func TestCommentRules(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithKarma(1, -1), WithVoteCost(0, 1), WithMinKarma(0, 1),
			WithVoteLimit(3, time.Minute), WithCommentInterval(time.Minute), WithEditWindow(time.Hour))
		a := mustPost(t, s, "alice", "t")
		c, err := s.Comment(ctx, a.ID, "", "bob", "first")
		if err != nil {
			t.Fatal(err)
		}
		karma := func(user string) int64 {
			t.Helper()
			k, err := s.Karma(ctx, user)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		// The comment interval.
		before := dumpStore(t, b, s)
		_, err = s.Comment(ctx, a.ID, "", "bob", "too soon")
		if !errors.Is(err, ErrRateLimited) || RetryAfter(err) != time.Minute {
			t.Fatalf("a second comment at once: %v (retry after %v)", err, RetryAfter(err))
		}
		wantUnchanged(t, b, s, "a comment too soon", before)
		// Karma: carol's upvote gives bob 1; bob's own vote moves nothing.
		if r, err := s.VoteComment(ctx, "carol", c.ID, Upvote); err != nil || r.Upvotes != 2 {
			t.Fatalf("carol's upvote = %+v, %v", r, err)
		}
		if karma("bob") != 1 || karma("carol") != 0 {
			t.Fatalf("karma bob %d, carol %d", karma("bob"), karma("carol"))
		}
		if _, err := s.VoteComment(ctx, "bob", c.ID, CancelVote); err != nil {
			t.Fatal(err)
		}
		if karma("bob") != 1 {
			t.Fatalf("bob's own cancel moved his karma to %d", karma("bob"))
		}
		// Least karma: dave has none to downvote with.
		before = dumpStore(t, b, s)
		if _, err := s.VoteComment(ctx, "dave", c.ID, Downvote); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("dave's downvote: %v, want ErrNotAllowed", err)
		}
		wantUnchanged(t, b, s, "a refused downvote", before)
		// Cost: bob (karma 1) downvotes alice's comment: it costs him 1 and
		// takes 1 from her.
		clock.Add(time.Minute)
		ca, err := s.Comment(ctx, a.ID, c.ID, "alice", "a reply")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.VoteComment(ctx, "bob", ca.ID, Downvote); err != nil {
			t.Fatal(err)
		}
		if karma("bob") != 0 || karma("alice") != -1 {
			t.Fatalf("after bob's downvote: bob %d, alice %d", karma("bob"), karma("alice"))
		}
		// The vote limit counts article and comment votes: erin's third
		// vote in a minute is refused (bob has cast 2 already: his
		// cancel and his downvote; erin casts 2, then the third).
		mustVote(t, s, "erin", a.ID, Upvote)
		if _, err := s.VoteComment(ctx, "erin", c.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		if _, err := s.VoteComment(ctx, "erin", ca.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		before = dumpStore(t, b, s)
		_, err = s.VoteComment(ctx, "erin", c.ID, CancelVote)
		if !errors.Is(err, ErrRateLimited) || RetryAfter(err) <= 0 {
			t.Fatalf("erin's fourth vote: %v", err)
		}
		wantUnchanged(t, b, s, "a vote over the limit", before)
		// The edit window: the poster only, within the window.
		if e, err := s.EditComment(ctx, ca.ID, "alice", "in time"); err != nil || e.Body != "in time" {
			t.Fatalf("alice's edit = %+v, %v", e, err)
		}
		before = dumpStore(t, b, s)
		if _, err := s.EditComment(ctx, c.ID, "carol", "not hers"); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("carol's edit: %v", err)
		}
		clock.Add(time.Hour)
		if _, err := s.EditComment(ctx, c.ID, "bob", "too late"); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("a late edit: %v", err)
		}
		wantUnchanged(t, b, s, "refused edits", before)
	})
}

// TestCommentVoting: one vote per user per comment, whatever the
// repeats and the interleaving; voting closes with the store's window
// after the comment, and with the article's comment voter record on the
// server's clock, which a later record never reopens.
func TestCommentVoting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteWindow(time.Hour))
		a := mustPost(t, s, "alice", "t")
		c, err := s.Comment(ctx, a.ID, "", "bob", "first")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					v := []VoteType{Upvote, Downvote, Upvote}[(w+i)%3]
					if _, err := s.VoteComment(ctx, "u"+strconv.Itoa(w%4), c.ID, ballot(v)); err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		votes, err := s.CommentVotesOf(ctx, "u0", []string{c.ID})
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.CommentsByID(ctx, []string{c.ID})
		if err != nil {
			t.Fatal(err)
		}
		var up, down int64 = 1, 0 // bob's own
		for u := 0; u < 4; u++ {
			v, err := s.CommentVotesOf(ctx, "u"+strconv.Itoa(u), []string{c.ID})
			if err != nil {
				t.Fatal(err)
			}
			switch v[0] {
			case Upvote:
				up++
			case Downvote:
				down++
			}
		}
		if list[0].Upvotes != up || list[0].Downvotes != down {
			t.Fatalf("counts %d, %d; the voters' votes %d, %d (u0 %v)", list[0].Upvotes, list[0].Downvotes, up, down, votes)
		}
		// Repeats change nothing.
		r1, _ := s.VoteComment(ctx, "u9", c.ID, Upvote)
		r2, err := s.VoteComment(ctx, "u9", c.ID, Upvote)
		if err != nil || r2.Previous != Upvote || r2.Upvotes != r1.Upvotes {
			t.Fatalf("a repeat = %+v, %v after %+v", r2, err, r1)
		}
		// Closed on the store's clock an hour after the comment.
		clock.Add(time.Hour)
		if _, err := s.VoteComment(ctx, "u9", c.ID, CancelVote); !errors.Is(err, ErrVotingClosed) {
			t.Fatalf("a vote after the window: %v", err)
		}
		if _, err := s.Comment(ctx, a.ID, "", "bob", "late"); !errors.Is(err, ErrVotingClosed) {
			t.Fatalf("a comment after the article's window: %v", err)
		}
	})
}

// TestCommentVoterRecordReborn: the article's comment voter record
// went (expired early on a server clock ahead of the store's) while the
// article is open: a new comment makes a new record, which does not
// reopen the older comments' voting (a vote there could count twice).
func TestCommentVoterRecordReborn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		long, _ := newStore(t, b, WithVoteWindow(time.Hour))
		a := mustPost(t, long, "alice", "t")
		short, _ := otherStore(t, long, epoch, WithVoteWindow(time.Hour)) // another process
		c, err := short.Comment(ctx, a.ID, "", "bob", "first")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := short.VoteComment(ctx, "carol", c.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		b.do(t, "DEL", long.keys.cvoted+a.ID) // as if it expired
		if _, err := short.VoteComment(ctx, "carol", c.ID, Upvote); !errors.Is(err, ErrVotingClosed) {
			t.Fatalf("a vote once the record is gone: %v", err)
		}
		c2, err := short.Comment(ctx, a.ID, "", "dave", "second")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := short.VoteComment(ctx, "carol", c.ID, Upvote); !errors.Is(err, ErrVotingClosed) {
			t.Fatalf("a vote on the older comment under a new record: %v", err)
		}
		if v, err := short.CommentVotesOf(ctx, "bob", []string{c.ID, c2.ID}); err != nil || v[0] != NoVote || v[1] != NoVote {
			t.Fatalf("votes = %v, %v", v, err)
		}
		if r, err := short.VoteComment(ctx, "carol", c2.ID, Upvote); err != nil || r.Upvotes != 2 {
			t.Fatalf("a vote on the new comment = %+v, %v", r, err)
		}
		if ttl := b.ttl(t, long.keys.cvoted+a.ID); ttl <= 59*time.Minute || ttl > time.Hour {
			t.Fatalf("the record's TTL %v, want about an hour", ttl)
		}
	})
}

// TestReconfigureLayout3: a store recorded as layout 3 refuses this
// library's calls with a message that names Reconfigure; Reconfigure
// records this layout and moves nothing; then comments work.
func TestReconfigureLayout3(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithKarma(1, -1))
		a := mustPost(t, s, "alice", "t")
		b.do(t, "SET", s.keys.record, "3 karma=1,-1")
		before := dumpStore(t, b, s)
		_, err := s.Vote(ctx, "bob", a.ID, Upvote)
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "Reconfigure") {
			t.Fatalf("a vote on layout 3: %v", err)
		}
		if _, err := s.Article(ctx, a.ID); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("a read of layout 3: %v", err)
		}
		wantUnchanged(t, b, s, "refused calls", before)
		opts, err := Identity{Layout: 3, Options: []string{"karma=1,-1"}}.StoreOptions()
		if err != nil || len(opts) != 1 {
			t.Fatalf("StoreOptions of layout 3 = %d options, %v", len(opts), err)
		}
		was, err := s.Reconfigure(ctx)
		if err != nil || was.String() != "3 karma=1,-1" {
			t.Fatalf("Reconfigure = %v, %v", was, err)
		}
		if id, ok, err := s.Recorded(ctx); err != nil || !ok || id.String() != strconv.Itoa(LayoutVersion)+" karma" {
			t.Fatalf("Recorded = %v, %v, %v", id, ok, err)
		}
		mustVote(t, s, "bob", a.ID, Upvote)
		if _, err := s.Comment(ctx, a.ID, "", "bob", "now"); err != nil {
			t.Fatal(err)
		}
		// Layout 2 is not migrated.
		b.do(t, "SET", s.keys.record, "2")
		if _, err := s.Reconfigure(ctx); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("Reconfigure of layout 2: %v", err)
		}
	})
}

// TestCommentDepth: a chain of MaxCommentDepth comments, the deepest
// taking no reply; Thread shows MaxThreadDepth levels of it, and the
// deepest shown counts the rest in More; deleting the deepest updates
// every ancestor's count. On the real server only: the walks up the
// chain take a million commands.
func TestCommentDepth(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		if b.name != "redis" {
			t.Skip("the real server only")
		}
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		parent := ""
		ids := make([]string, 0, MaxCommentDepth)
		for i := 0; i < MaxCommentDepth; i++ {
			c, err := s.Comment(ctx, a.ID, parent, "bob", "level "+strconv.Itoa(i))
			if err != nil {
				t.Fatalf("level %d: %v", i, err)
			}
			parent = c.ID
			ids = append(ids, c.ID)
		}
		before := dumpStore(t, b, s)
		if _, err := s.Comment(ctx, a.ID, parent, "bob", "too deep"); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("a reply at depth %d: %v", MaxCommentDepth, err)
		}
		wantUnchanged(t, b, s, "a reply too deep", before)
		th, err := s.Thread(ctx, a.ID, Best, MaxThread)
		if err != nil || len(th) != MaxThreadDepth {
			t.Fatalf("thread of %d, %v", len(th), err)
		}
		last := th[MaxThreadDepth-1]
		if last.Depth != MaxThreadDepth-1 || last.More != int64(MaxCommentDepth-MaxThreadDepth) || th[0].More != last.More {
			t.Fatalf("deepest shown = %+v, first %+v", last, th[0])
		}
		if err := s.DeleteComment(ctx, parent); err != nil {
			t.Fatal(err)
		}
		list, err := s.CommentsByID(ctx, []string{ids[0], ids[MaxCommentDepth-2]})
		if err != nil || list[0].Replies != int64(MaxCommentDepth-2) || list[1].Replies != 0 {
			t.Fatalf("counts after the delete = %+v, %v", list, err)
		}
		if got, _ := s.Article(ctx, a.ID); got.Comments != MaxCommentDepth-1 {
			t.Fatalf("article's comments %d", got.Comments)
		}
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if keys := b.storeKeys(t, s); len(keys) > 3 {
			t.Fatalf("keys left after Delete: %v", keys)
		}
	})
}

// TestDeleteArticleWithComments: Delete and Prune of an article with
// more comments than one step removes (a tree of them, with deleted
// placeholders) take a round trip a step, and leave no key of the
// article's comments; the other article's comments stay whole.
func TestDeleteArticleWithComments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		rec := &recorder{}
		s, clock := newStore(t, b, WithHook(rec), WithOrders(Hot, Controversial, ScoreDesc))
		old := mustPost(t, s, "alice", "old")
		clock.Add(time.Hour)
		doomed := mustPost(t, s, "alice", "doomed")
		kept := mustPost(t, s, "alice", "kept")
		rng := rand.New(rand.NewSource(1))
		fill := func(aid string, n int) []string {
			var ids []string
			for i := 0; i < n; i++ {
				parent := ""
				if len(ids) > 0 && rng.Intn(4) > 0 {
					parent = ids[rng.Intn(len(ids))]
				}
				c, err := s.Comment(ctx, aid, parent, "u"+strconv.Itoa(i), "c")
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
			}
			for _, id := range ids[:20] {
				if err := s.DeleteComment(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			return ids
		}
		n := 2*purgeStep + 50
		fill(old.ID, n)
		fill(doomed.ID, n)
		keptIDs := fill(kept.ID, 30)
		before := map[string]bool{}
		for _, k := range b.storeKeys(t, s) {
			before[k] = true
		}
		keptThread, err := s.Thread(ctx, kept.ID, Best, MaxThread)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "999"); !errors.Is(err, ErrNotFound) { // the script loaded
			t.Fatal(err)
		}
		rec.take()
		if err := s.Delete(ctx, doomed.ID); err != nil {
			t.Fatal(err)
		}
		calls, _ := rec.take()
		if len(calls) != 1 || calls[0].RoundTrips != 3 {
			t.Errorf("Delete of an article with %d comments: %+v, want 3 round trips", n, calls)
		}
		if _, err := s.Prune(ctx, epoch.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, a := range []Article{old, doomed} {
			if _, err := s.Article(ctx, a.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("article %s: %v", a.ID, err)
			}
		}
		for _, k := range b.storeKeys(t, s) {
			if !before[k] {
				t.Errorf("key %s made by Delete or Prune", k)
			}
			for _, a := range []string{old.ID, doomed.ID} {
				for _, part := range []string{"thread:" + a, "cvoted:" + a, ":a" + a} {
					if strings.HasSuffix(k, part) {
						t.Errorf("key %s left", k)
					}
				}
			}
		}
		got, err := s.Thread(ctx, kept.ID, Best, MaxThread)
		if err != nil || !reflect.DeepEqual(got, keptThread) {
			t.Errorf("the kept thread = %d comments, %v; was %d", len(got), err, len(keptThread))
		}
		list, err := s.CommentsByID(ctx, keptIDs)
		if err != nil || len(list) < 10 {
			t.Errorf("kept comments = %d, %v", len(list), err)
		}
		// Every comment left is the kept article's.
		for _, k := range b.storeKeys(t, s) {
			if rest, ok := strings.CutPrefix(k, s.keys.comment); ok {
				if l, err := s.CommentsByID(ctx, []string{rest}); err != nil || len(l) != 1 || l[0].Article != kept.ID {
					t.Errorf("comment %s left: %+v, %v", rest, l, err)
				}
			}
		}
		if a, err := s.Article(ctx, kept.ID); err != nil || a.Comments != int64(len(list)-countDeleted(list)) {
			t.Errorf("kept article = %+v, %v", a, err)
		}
	})
}

// countDeleted counts the deleted comments of list.
func countDeleted(list []Comment) int {
	return countIf(list, func(c Comment) bool { return c.Deleted })
}

// TestArticleCommentsInEveryRead: every read of articles carries their
// live comment counts.
func TestArticleCommentsInEveryRead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		a := mustPost(t, s, "alice", "t")
		other := mustPost(t, s, "alice", "none")
		if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := s.Comment(ctx, a.ID, "", "bob", "c"); err != nil {
				t.Fatal(err)
			}
		}
		counts := func(list []Article) map[string]int64 {
			m := map[string]int64{}
			for _, x := range list {
				m[x.ID] = x.Comments
			}
			return m
		}
		reads := map[string]func() ([]Article, error){
			"Articles":      func() ([]Article, error) { return s.Articles(ctx, ScoreDesc, 1) },
			"Articles Top":  func() ([]Article, error) { return s.Articles(ctx, Top, 1) },
			"ArticlesByID":  func() ([]Article, error) { return s.ArticlesByID(ctx, []string{a.ID, other.ID}) },
			"GroupArticles": func() ([]Article, error) { return s.GroupArticles(ctx, "g", TimeDesc, 1) },
			"TopSince":      func() ([]Article, error) { return s.TopSince(ctx, time.Hour, 1) },
			"Submitted":     func() ([]Article, error) { return s.Submitted(ctx, "alice", 1) },
			"Upvoted":       func() ([]Article, error) { return s.Upvoted(ctx, "alice", 1) },
			"Article": func() ([]Article, error) {
				x, err := s.Article(ctx, a.ID)
				return []Article{x}, err
			},
		}
		for name, read := range reads {
			list, err := read()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := counts(list)
			if got[a.ID] != 3 || got[other.ID] != 0 {
				t.Errorf("%s: comments %v, want 3 on %s", name, got, a.ID)
			}
		}
	})
}

// TestCommentNotFoundWording: a missing comment's error wraps ErrNotFound
// and names the comment, not an article.
func TestCommentNotFoundWording(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		mustPost(t, s, "alice", "t")
		for name, call := range map[string]func() error{
			"VoteComment":   func() error { _, err := s.VoteComment(ctx, "bob", "999", Upvote); return err },
			"EditComment":   func() error { _, err := s.EditComment(ctx, "999", "bob", "x"); return err },
			"Replies":       func() error { _, err := s.Replies(ctx, "999", Best, 10); return err },
			"DeleteComment": func() error { return s.DeleteComment(ctx, "999") },
		} {
			err := call()
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `comment not found: "999"`) || strings.Contains(err.Error(), "article") {
				t.Errorf("%s of a missing comment: %v; want ErrNotFound, `comment not found: \"999\"`", name, err)
			}
		}
	})
}
