package voting

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func mustPost(t testing.TB, s *Store, poster, title string) Article {
	t.Helper()
	a, err := s.Post(ctx, poster, title, "https://example.com/"+title)
	if err != nil {
		t.Fatalf("post %q: %v", title, err)
	}
	return a
}

func mustVote(t testing.TB, s *Store, user, id string, v VoteType) VoteResult {
	t.Helper()
	r, err := s.Vote(ctx, user, id, v)
	if err != nil {
		t.Fatalf("%s votes %v on %s: %v", user, v, id, err)
	}
	return r
}

func TestPostAndArticle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b)
		title := "Ünïcode ✓ title\nwith a newline, a NUL \x00 and {braces}"
		a, err := s.Post(ctx, "alice", title, "")
		if err != nil {
			t.Fatal(err)
		}
		want := Article{
			ID: "1", Title: title, Link: "", Poster: "alice",
			Posted: time.Unix(epoch.Unix(), 0), Score: float64(epoch.Unix()) + 432,
			Upvotes: 1, Downvotes: 0,
		}
		if a != want {
			t.Fatalf("Post = %+v, want %+v", a, want)
		}
		got, err := s.Article(ctx, "1")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Article = %+v, want %+v", got, want)
		}
		if v, err := s.VoteOf(ctx, "alice", "1"); err != nil || v != Upvote {
			t.Fatalf("poster's vote = %v, %v; want up", v, err)
		}
		clock.Add(time.Minute)
		if b2 := mustPost(t, s, "bob", "second"); b2.ID != "2" || !b2.Posted.Equal(epoch.Add(time.Minute)) {
			t.Fatalf("second post = %+v", b2)
		}
		// The poster may cancel the own vote like any other.
		r := mustVote(t, s, "alice", "1", NoVote)
		if r.Previous != Upvote || r.Upvotes != 0 || r.Score != float64(epoch.Unix()) {
			t.Fatalf("poster cancel = %+v", r)
		}
	})
}

func TestArticleNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		mustPost(t, s, "alice", "one")
		for _, id := range []string{"2", "01", "-1", "1:x", "1e3", "abc", "9223372036854775808"} {
			if _, err := s.Article(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Article(%q) = %v, want ErrNotFound", id, err)
			}
			if _, err := s.Vote(ctx, "bob", id, Upvote); !errors.Is(err, ErrNotFound) {
				t.Errorf("Vote(%q) = %v, want ErrNotFound", id, err)
			}
			if _, err := s.VoteOf(ctx, "bob", id); !errors.Is(err, ErrNotFound) {
				t.Errorf("VoteOf(%q) = %v, want ErrNotFound", id, err)
			}
		}
		for _, id := range []string{"", "999999999999999999999"} {
			if _, err := s.Article(ctx, id); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Article(%q) = %v, want ErrInvalidArgument", id, err)
			}
		}
	})
}

// TestVoteTransitions covers all nine pairs of a previous and a new vote.
func TestVoteTransitions(t *testing.T) {
	types := []VoteType{NoVote, Upvote, Downvote}
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for _, old := range types {
			for _, v := range types {
				t.Run(old.String()+"->"+v.String(), func(t *testing.T) {
					a := mustPost(t, s, "poster", "t")
					if old != NoVote {
						mustVote(t, s, "u", a.ID, old)
					}
					r := mustVote(t, s, "u", a.ID, v)
					up, down := int64(1), int64(0) // the poster's upvote
					switch v {
					case Upvote:
						up++
					case Downvote:
						down++
					}
					want := VoteResult{
						Previous: old, Upvotes: up, Downvotes: down,
						Score: float64(a.Posted.Unix()) + 432*float64(up-down),
					}
					if r != want {
						t.Fatalf("Vote = %+v, want %+v", r, want)
					}
					if got, err := s.VoteOf(ctx, "u", a.ID); err != nil || got != v {
						t.Fatalf("VoteOf = %v, %v; want %v", got, err, v)
					}
					// Voting the same way again is a no-op reporting Previous == v.
					again := mustVote(t, s, "u", a.ID, v)
					want.Previous = v
					if again != want {
						t.Fatalf("repeat Vote = %+v, want %+v", again, want)
					}
					checkInvariant(t, s, 432, []string{a.ID}, []string{"poster", "u"})
				})
			}
		}
	})
}

func TestInvalidVote(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		for _, v := range []VoteType{2, -2, 127, -128} {
			if _, err := s.Vote(ctx, "bob", a.ID, v); !errors.Is(err, ErrInvalidVote) {
				t.Errorf("Vote(%d) = %v, want ErrInvalidVote", v, err)
			}
		}
		// An invalid vote is refused before Redis: even an unknown id
		// gets ErrInvalidVote.
		if _, err := s.Vote(ctx, "bob", "404", 3); !errors.Is(err, ErrInvalidVote) {
			t.Errorf("Vote(3) on unknown id = %v, want ErrInvalidVote", err)
		}
	})
}

func TestVoteWindow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteWindow(time.Hour))
		a := mustPost(t, s, "alice", "t")
		clock.Add(time.Hour - time.Second) // one second before the close
		r := mustVote(t, s, "bob", a.ID, Downvote)
		clock.Add(time.Second) // at the close
		for _, v := range []VoteType{Upvote, Downvote, NoVote} {
			if _, err := s.Vote(ctx, "bob", a.ID, v); !errors.Is(err, ErrVotingClosed) {
				t.Fatalf("Vote(%v) at the close = %v, want ErrVotingClosed", v, err)
			}
		}
		// The score is frozen.
		got, err := s.Article(ctx, a.ID)
		if err != nil || got.Score != r.Score {
			t.Fatalf("Article after close = %+v, %v; want score %v", got, err, r.Score)
		}
	})
}

func TestVoterRecordTTL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteWindow(time.Hour))
		a := mustPost(t, s, "alice", "t")
		key := s.keys.votedKey(a.ID)
		if ttl := b.ttl(t, key); ttl <= 59*time.Minute || ttl > time.Hour {
			t.Fatalf("TTL after post = %v, want about 1h", ttl)
		}
		// Every vote's record expires when voting closes by the store's
		// clock, even after cancels emptied and deleted the record.
		mustVote(t, s, "alice", a.ID, NoVote)
		if ttl := b.ttl(t, key); ttl != -2 {
			t.Fatalf("TTL after the last cancel = %v, want the key gone", ttl)
		}
		clock.Add(20 * time.Minute)
		mustVote(t, s, "bob", a.ID, Upvote)
		if ttl := b.ttl(t, key); ttl <= 39*time.Minute || ttl > 40*time.Minute {
			t.Fatalf("TTL after a vote 20m in = %v, want about 40m", ttl)
		}
		if b.mr != nil {
			b.mr.FastForward(40 * time.Minute)
			if b.mr.Exists(key) {
				t.Fatal("voter record outlived the window")
			}
		}
	})
}

func TestArticlesOrderAndPaging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteWeight(1000))
		rng := rand.New(rand.NewSource(1))
		const n = 60
		for i := 0; i < n; i++ {
			a := mustPost(t, s, "p", "t"+strconv.Itoa(i))
			for u := 0; u < rng.Intn(5); u++ {
				mustVote(t, s, "u"+strconv.Itoa(u), a.ID, []VoteType{Upvote, Downvote}[rng.Intn(2)])
			}
			clock.Add(time.Duration(1+rng.Intn(100)) * time.Second)
		}
		less := map[Order]func(a, b Article) bool{
			ScoreDesc: func(a, b Article) bool { return a.Score > b.Score },
			ScoreAsc:  func(a, b Article) bool { return a.Score < b.Score },
			TimeDesc:  func(a, b Article) bool { return a.Posted.After(b.Posted) },
			TimeAsc:   func(a, b Article) bool { return a.Posted.Before(b.Posted) },
		}
		for order, less := range less {
			var all []Article
			for page, size := range []int{25, 25, 10, 0} {
				list, err := s.Articles(ctx, order, page+1)
				if err != nil {
					t.Fatal(err)
				}
				if len(list) != size {
					t.Fatalf("%v page %d: %d articles, want %d", order, page+1, len(list), size)
				}
				all = append(all, list...)
			}
			if !sorted(all, less) {
				t.Fatalf("%v: not in order", order)
			}
			seen := map[string]bool{}
			for _, a := range all {
				seen[a.ID] = true
			}
			if len(seen) != n {
				t.Fatalf("%v: %d distinct articles over all pages, want %d", order, len(seen), n)
			}
		}
		if list, err := s.Articles(ctx, ScoreDesc, math.MaxInt); err != nil || len(list) != 0 {
			t.Fatalf("huge page = %v, %v; want empty", list, err)
		}
		checkInvariant(t, s, 1000, ids(n), []string{"p", "u0", "u1", "u2", "u3", "u4"})
	})
}

// sorted reports whether no article is strictly before its predecessor.
func sorted(list []Article, less func(a, b Article) bool) bool {
	for i := 1; i < len(list); i++ {
		if less(list[i], list[i-1]) {
			return false
		}
	}
	return true
}

func ids(n int) []string {
	list := make([]string, n)
	for i := range list {
		list[i] = strconv.Itoa(i + 1)
	}
	return list
}

func TestArticlesBadArguments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for _, c := range []struct {
			order Order
			page  int
		}{{ScoreDesc, 0}, {ScoreDesc, -1}, {Order(4), 1}, {Order(-1), 1}} {
			if _, err := s.Articles(ctx, c.order, c.page); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Articles(%v, %d) = %v, want ErrInvalidArgument", c.order, c.page, err)
			}
		}
		if list, err := s.Articles(ctx, TimeDesc, 1); err != nil || len(list) != 0 {
			t.Fatalf("empty store page = %v, %v", list, err)
		}
	})
}

func TestVotesOf(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for i := 0; i < 4; i++ {
			mustPost(t, s, "alice", "t")
		}
		mustVote(t, s, "bob", "1", Upvote)
		mustVote(t, s, "bob", "2", Downvote)
		mustVote(t, s, "bob", "3", Upvote)
		mustVote(t, s, "bob", "3", NoVote)
		got, err := s.VotesOf(ctx, "bob", []string{"1", "2", "3", "4", "99", "01", "2"})
		if err != nil {
			t.Fatal(err)
		}
		want := []VoteType{Upvote, Downvote, NoVote, NoVote, NoVote, NoVote, Downvote}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("VotesOf = %v, want %v", got, want)
		}
		if got, err := s.VotesOf(ctx, "bob", nil); err != nil || len(got) != 0 {
			t.Fatalf("VotesOf(nil) = %v, %v", got, err)
		}
		if _, err := s.VotesOf(ctx, "bob", []string{"1", ""}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("VotesOf with an empty id = %v, want ErrInvalidArgument", err)
		}
		if _, err := s.VotesOf(ctx, "", []string{"1"}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("VotesOf with no user = %v, want ErrInvalidArgument", err)
		}
		if _, err := s.VotesOf(ctx, "bob", make([]string, MaxBatch+1)); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("VotesOf over MaxBatch = %v, want ErrInvalidArgument", err)
		}
	})
}

func TestPostBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		long := func(n int) string { return string(make([]byte, n)) }
		for _, c := range []struct{ poster, title, link string }{
			{"", "t", ""},
			{"  ", "t", ""},
			{"a\nb", "t", ""},
			{"a\x00", "t", ""},
			{"\xff", "t", ""},
			{long(MaxNameLen + 1), "t", ""},
			{"p", "", ""},
			{"p", " \t", ""},
			{"p", "\xff\xfe", ""},
			{"p", "x" + long(MaxTitleLen), ""},
			{"p", "t", "x" + long(MaxLinkLen)},
			{"p", "t", "\xc3"},
		} {
			if _, err := s.Post(ctx, c.poster, c.title, c.link); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Post(%.20q, %.20q, %.20q) = %v, want ErrInvalidArgument", c.poster, c.title, c.link, err)
			}
		}
		if keys := b.storeKeys(t, s); len(keys) != 0 {
			t.Fatalf("bad posts left keys: %v", keys)
		}
	})
}

func TestNewOptions(t *testing.T) {
	bad := map[string][]Option{
		"empty prefix":      {WithKeyPrefix("")},
		"brace prefix":      {WithKeyPrefix("a{b")},
		"long prefix":       {WithKeyPrefix(string(make([]byte, MaxPrefixLen+1)))},
		"negative weight":   {WithVoteWeight(-1)},
		"NaN weight":        {WithVoteWeight(math.NaN())},
		"infinite weight":   {WithVoteWeight(math.Inf(1))},
		"zero window":       {WithVoteWindow(0)},
		"negative window":   {WithVoteWindow(-time.Hour)},
		"sub-second window": {WithVoteWindow(time.Millisecond)},
		"sub-ms TTL":        {WithGroupCacheTTL(time.Microsecond)},
		"zero page size":    {WithPageSize(0)},
		"negative page":     {WithPageSize(-5)},
		"huge page size":    {WithPageSize(MaxPageSize + 1)},
		"nil clock":         {WithClock(nil)},
	}
	p := &redis.Pool{}
	for name, opts := range bad {
		if _, err := New(p, opts...); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: New = %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := New(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New(nil) = %v, want ErrInvalidArgument", err)
	}
	s, err := New(p, WithVoteWeight(0), WithKeyPrefix("site:news"), WithPageSize(MaxPageSize))
	if err != nil {
		t.Fatal(err)
	}
	if k := s.keys.orderingKey("score"); k != "{site:news}:by:score" {
		t.Fatalf("score key = %q", k)
	}
}

func TestParseVoteType(t *testing.T) {
	for _, v := range []VoteType{Upvote, Downvote, NoVote} {
		got, err := ParseVoteType(v.String())
		if err != nil || got != v {
			t.Errorf("ParseVoteType(%q) = %v, %v", v.String(), got, err)
		}
	}
	for _, s := range []string{"", "UP", "+1", "1", "cancel", " up"} {
		if _, err := ParseVoteType(s); !errors.Is(err, ErrInvalidVote) {
			t.Errorf("ParseVoteType(%q) = %v, want ErrInvalidVote", s, err)
		}
	}
	if s := VoteType(5).String(); s != "VoteType(5)" {
		t.Errorf("VoteType(5).String() = %q", s)
	}
}

// TestConcurrentVotes races many voters over few users and articles, then
// checks the invariant for every article.
func TestConcurrentVotes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteWeight(0.1))
		const articles, users, workers, opsEach = 4, 6, 32, 150
		for i := 0; i < articles; i++ {
			mustPost(t, s, "u0", "t")
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				for i := 0; i < opsEach; i++ {
					user := "u" + strconv.Itoa(rng.Intn(users))
					id := strconv.Itoa(1 + rng.Intn(articles))
					v := VoteType(rng.Intn(3) - 1)
					if _, err := s.Vote(ctx, user, id, v); err != nil {
						errs <- err
						return
					}
				}
			}(int64(w))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		all := make([]string, users)
		for i := range all {
			all[i] = "u" + strconv.Itoa(i)
		}
		checkInvariant(t, s, 0.1, ids(articles), all)
		t.Logf("%d votes from %d goroutines on %d articles by %d users: invariant holds", workers*opsEach, workers, articles, users)
	})
}
