package voting

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// wantPageView checks that ArticlesFor reads what Articles and VotesOf
// read, one after the other, for user's view of page in order.
func wantPageView(t testing.TB, s *Store, user string, order Order, page int) ([]Article, []VoteType) {
	t.Helper()
	list, votes, err := s.ArticlesFor(ctx, user, order, page)
	if err != nil {
		t.Fatalf("ArticlesFor(%s, %v, %d): %v", user, order, page, err)
	}
	want, err := s.Articles(ctx, order, page)
	if err != nil {
		t.Fatal(err)
	}
	wantVotes, err := s.VotesOf(ctx, user, idsOf(want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(list, want) || !reflect.DeepEqual(votes, wantVotes) {
		t.Fatalf("ArticlesFor(%s, %v, %d) = %v, %v;\nArticles and VotesOf read %v, %v", user, order, page, list, votes, want, wantVotes)
	}
	if list == nil || votes == nil {
		t.Fatalf("ArticlesFor(%s, %v, %d): nil results", user, order, page)
	}
	return list, votes
}

// TestArticlesFor: a page and a user's votes on it in one call read what
// Articles and VotesOf read, in every order, on every page, past the end
// too, with articles deleted and comments counted.
func TestArticlesFor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		orders := []Order{Top, Hot, Best, Controversial}
		s, clock := newStore(t, b, WithPageSize(3), WithOrders(orders...))
		var all []string
		for i := 0; i < 8; i++ {
			all = append(all, mustPost(t, s, "alice", fmt.Sprintf("p%d", i)).ID)
			clock.Add(time.Minute)
		}
		mustVote(t, s, "bob", all[1], Upvote)
		mustVote(t, s, "bob", all[2], Downvote)
		mustVote(t, s, "bob", all[5], Upvote)
		mustVote(t, s, "bob", all[6], Upvote)
		mustVote(t, s, "bob", all[6], NoVote)
		mustVote(t, s, "carol", all[5], Downvote)
		mustVote(t, s, "carol", all[7], Upvote)
		if _, err := s.Comment(ctx, all[5], "", "carol", "a comment"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, all[3]); err != nil {
			t.Fatal(err)
		}
		for _, order := range append([]Order{ScoreDesc, ScoreAsc, TimeDesc, TimeAsc}, orders...) {
			for _, user := range []string{"bob", "carol", "alice", "nobody"} {
				for page := 1; page <= 4; page++ {
					list, _ := wantPageView(t, s, user, order, page)
					if page == 3 && len(list) != 1 || page == 4 && len(list) != 0 {
						t.Fatalf("%v page %d of 7 articles: %d", order, page, len(list))
					}
				}
			}
		}
		list, votes := wantPageView(t, s, "bob", TimeAsc, 2)
		if got := fmt.Sprint(idsOf(list), votes); got != fmt.Sprint([]string{all[4], all[5], all[6]}, []VoteType{NoVote, Upvote, NoVote}) {
			t.Errorf("bob's TimeAsc page 2 = %s", got)
		}
		if list[1].Comments != 1 {
			t.Errorf("article %s with a comment: %+v", list[1].ID, list[1])
		}
		// A page past the end of the orderings' ranks, at once.
		if list, votes, err := s.ArticlesFor(ctx, "bob", ScoreDesc, int(maxRank)); err != nil || len(list) != 0 || len(votes) != 0 {
			t.Errorf("ArticlesFor past the last rank = %v, %v, %v", list, votes, err)
		}
	})
}

// TestArticlesForClosed: once an article's voting closed (its voter
// record gone on the server's clock), its row shows no vote, as VotesOf
// reads it.
func TestArticlesForClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock, a := postWithWindow(t, b, time.Second)
		mustVote(t, s, "bob", a.ID, Upvote)
		_, votes := wantPageView(t, s, "bob", ScoreDesc, 1)
		if fmt.Sprint(votes) != fmt.Sprint([]VoteType{Upvote}) {
			t.Fatalf("bob's votes while open = %v", votes)
		}
		expireRecord(t, b, s, a.ID)
		clock.Add(time.Second)
		_, votes = wantPageView(t, s, "bob", ScoreDesc, 1)
		if fmt.Sprint(votes) != fmt.Sprint([]VoteType{NoVote}) {
			t.Fatalf("bob's votes once closed = %v", votes)
		}
	})
}

// TestArticlesForInput: bad input gets ErrInvalidArgument, as Articles
// and VotesOf give it, before any round trip; a store of another layout
// is refused as every read refuses it.
func TestArticlesForInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top))
		mustPost(t, s, "alice", "t")
		bad := map[string]func() error{
			"no user": func() error { _, _, err := s.ArticlesFor(ctx, "", ScoreDesc, 1); return err },
			"long user": func() error {
				_, _, err := s.ArticlesFor(ctx, strings.Repeat("u", MaxNameLen+1), ScoreDesc, 1)
				return err
			},
			"page 0":         func() error { _, _, err := s.ArticlesFor(ctx, "bob", ScoreDesc, 0); return err },
			"unknown order":  func() error { _, _, err := s.ArticlesFor(ctx, "bob", Order(99), 1); return err },
			"disabled order": func() error { _, _, err := s.ArticlesFor(ctx, "bob", Hot, 1); return err },
		}
		for name, call := range bad {
			if err := call(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "articles for") {
				t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
			}
		}
		for _, user := range []string{"", strings.Repeat("u", MaxNameLen+1)} {
			_, errVotes := s.VotesOf(ctx, user, []string{"1"})
			_, _, errFor := s.ArticlesFor(ctx, user, ScoreDesc, 1)
			if errors.Is(errVotes, ErrInvalidArgument) != errors.Is(errFor, ErrInvalidArgument) {
				t.Errorf("user %.10q: VotesOf %v, ArticlesFor %v", user, errVotes, errFor)
			}
		}
		b.do(t, "SET", s.keys.record, "2")
		if _, _, err := s.ArticlesFor(ctx, "bob", ScoreDesc, 1); !errors.Is(err, ErrIncompatible) {
			t.Errorf("ArticlesFor on a store of layout 2: %v, want ErrIncompatible", err)
		}
	})
}
