package voting

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/testclock"
)

// mustOK returns v, failing the test with what (a format and its
// arguments) and err where err is not nil: the must helpers' one body.
func mustOK[T any](t testing.TB, v T, err error, what string, args ...interface{}) T {
	t.Helper()
	if err != nil {
		t.Fatalf(what+": %v", append(args, err)...)
	}
	return v
}

// countIf counts the values of list that f holds for.
func countIf[T any](list []T, f func(T) bool) int {
	n := 0
	for _, v := range list {
		if f(v) {
			n++
		}
	}
	return n
}

func mustPost(t testing.TB, s *Store, poster, title string) Article {
	t.Helper()
	a, err := s.Post(ctx, poster, title, "https://example.com/"+url.PathEscape(title))
	return mustOK(t, a, err, "post %q", title)
}

// ballot is the ballot that leaves a user with the vote v: v itself, or
// CancelVote for NoVote, which no vote call takes.
func ballot(v VoteType) VoteType {
	if v == NoVote {
		return CancelVote
	}
	return v
}

// held is the vote a user holds after the ballot v: NoVote after
// CancelVote.
func held(v VoteType) VoteType {
	if v == CancelVote {
		return NoVote
	}
	return v
}

// mustVote sets user's vote on the article id to v, which may be NoVote:
// the test says what vote the user is to have, and ballot turns it into
// what Vote takes.
func mustVote(t testing.TB, s *Store, user, id string, v VoteType) VoteResult {
	t.Helper()
	r, err := s.Vote(ctx, user, id, ballot(v))
	return mustOK(t, r, err, "%s votes %v on %s", user, v, id)
}

func TestPostAndArticle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithRawText()) // the title's bytes come back, whatever they are
		title := "Ünïcode ✓ title\nwith a newline, a NUL \x00 and {braces}"
		a, err := s.Post(ctx, "alice", title, "")
		if err != nil {
			t.Fatal(err)
		}
		want := Article{
			ID: "1", Title: title, Link: "", Poster: "alice",
			Posted: time.Unix(epoch.Unix(), 0).UTC(), Score: float64(epoch.Unix()) + 432,
			Upvotes: 1, Downvotes: 0,
		}
		if a != want {
			t.Fatalf("Post = %+v, want %+v", a, want)
		}
		got, err := s.Article(ctx, "1")
		if err != nil {
			t.Fatal(err)
		}
		if got != want || got.Posted.Location() != time.UTC {
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

// TestRecord: an article is one string laid out as lua/lib/record.lua RECORD
// says, and its voter record's "" field as VOTE_META says, as the tests'
// record and voterMeta helpers write them; the strings come back byte for
// byte whatever they hold (the separators of the record's header among
// them; WithRawText lets any be written); votes, group changes and edits
// keep the rest of both.
func TestRecord(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithEditWindow(time.Hour), WithRawText())
		for _, c := range []struct{ poster, title, link string }{
			{"alice", "t", ""},
			{"bob", "1 2 3: a title", "https://example.com/a b?c=1:2"},
			{"carol", "ünï ✓\n:", ":"},
			{"d 1:2", " 0 0 ", " "},
		} {
			a, err := s.Post(ctx, c.poster, c.title, c.link)
			if err != nil {
				t.Fatal(err)
			}
			posted := a.Posted.Unix()
			check := func(what string, up, down, groups int, title, link string) {
				t.Helper()
				want := record(up, down, posted, "", c.poster, title, link)
				if got, err := redis.String(b.do(t, "GET", s.keys.articleKey(a.ID)), nil); err != nil || got != want {
					t.Fatalf("%s: record %q, %v; want %q", what, got, err, want)
				}
				want = voterMeta(up, down, groups, posted, posted+s.window, "")
				if got, err := redis.String(b.do(t, "HGET", s.keys.votedKey(a.ID), ""), nil); err != nil || got != want {
					t.Fatalf("%s: voter record's \"\" field %q, %v; want %q", what, got, err, want)
				}
				got, err := s.Article(ctx, a.ID)
				if err != nil || got.Poster != c.poster || got.Title != title || got.Link != link ||
					got.Upvotes != int64(up) || got.Downvotes != int64(down) || !got.Posted.Equal(a.Posted) {
					t.Fatalf("%s: Article = %+v, %v", what, got, err)
				}
			}
			check("post", 1, 0, 0, c.title, c.link)
			mustVote(t, s, "v1", a.ID, Downvote)
			mustVote(t, s, "v2", a.ID, Downvote)
			check("votes", 1, 2, 0, c.title, c.link)
			if err := s.AddToGroups(ctx, a.ID, "g1", "g2"); err != nil {
				t.Fatal(err)
			}
			check("groups", 1, 2, 2, c.title, c.link)
			if _, err := s.Edit(ctx, a.ID, c.poster, c.title+" 2", "x"); err != nil {
				t.Fatal(err)
			}
			check("edit", 1, 2, 2, c.title+" 2", "x")
		}
	})
}

// TestParseRecord: a record that is not one (written by hand) is an
// error, never a panic or a wrong article.
func TestParseRecord(t *testing.T) {
	var a Article
	if err := parseRecord("0000000003 0000000001 -5 432.0 top,hot 1 2:pab:c", &a); err != nil ||
		a.Upvotes != 3 || a.Downvotes != 1 || a.Posted.Unix() != -5 || a.Poster != "p" || a.Title != "ab" || a.Link != ":c" {
		t.Fatalf("parseRecord = %+v, %v", a, err)
	}
	for _, rec := range []string{"", "x", "1 0 5 432.0  1 1", "1 0 5 432.0  1 5:pt",
		"1 0 5 432.0  -1 1:pt", "a 0 5 432.0  1 1:pt", "1 0 5.5 432.0  1 1:pt", "1 0 5 x  1 1:pt",
		"1 0 5 432.0  99999999999999999999 1:pt", "1 0 5 432.0  9000000000000000000 9000000000000000000:pt"} {
		if err := parseRecord(rec, &a); err == nil {
			t.Errorf("parseRecord(%q) = %+v, nil; want an error", rec, a)
		}
	}
}

// TestParsePage: page.lua's rows, and replies that are not rows (a
// length past the end, a row cut short), which are errors, never a panic.
func TestParsePage(t *testing.T) {
	rec := "0000000003 0000000001 -5 432.0 top,hot 1 2:pab:c"
	page := "a7" + strconv.Itoa(len(rec)) + " " + rec + "b12" + strconv.Itoa(len(rec)) + " " + rec
	list, err := parsePage([]interface{}{[]byte(page)})
	if err != nil || len(list) != 2 || list[0].ID != "7" || list[1].ID != "12" ||
		list[1].Title != "ab" || list[1].Link != ":c" || list[1].Poster != "p" || list[1].Upvotes != 3 {
		t.Fatalf("parsePage = %+v, %v", list, err)
	}
	if list, err := parsePage([]interface{}{[]byte{}}); err != nil || len(list) != 0 {
		t.Fatalf("parsePage of no rows = %+v, %v", list, err)
	}
	for _, bad := range []string{"a", "a7", "a7 ", "a75", "a75 abc", "7 5 abcde", "`5 abcde", "a7-1 x", "a7x abc",
		"a7" + strconv.Itoa(len(rec)) + " " + rec + "8", "a75 12345", "a799999999999999999999 x", "z1"} {
		if list, err := parsePage([]interface{}{[]byte(bad)}); err == nil {
			t.Errorf("parsePage(%q) = %+v, nil; want an error", bad, list)
		}
	}
	for _, rest := range [][]interface{}{nil, {"x"}, {[]byte{}, []byte{}}} {
		if _, err := parsePage(rest); err == nil {
			t.Errorf("parsePage(%v): no error", rest)
		}
	}
}

// FuzzParsePage: any reply parses into articles or fails, without a
// panic, and a page that parses holds each article's record whole.
func FuzzParsePage(f *testing.F) {
	rec := "0000000003 0000000001 -5 432.0 top,hot 1 2:pab:c"
	f.Add("a7" + strconv.Itoa(len(rec)) + " " + rec)
	f.Add("a73 abc")
	f.Fuzz(func(t *testing.T, page string) {
		list, err := parsePage([]interface{}{[]byte(page)})
		if err != nil {
			return
		}
		for _, a := range list {
			if !strings.Contains(page, a.ID) || !strings.Contains(page, a.Poster+a.Title+a.Link) {
				t.Fatalf("article %+v is not in %q", a, page)
			}
		}
	})
}

// TestParseVoteDone: vote.lua's reply to a vote done, and strings that
// are not one, which are errors.
func TestParseVoteDone(t *testing.T) {
	r, err := parseVoteDone([]byte("-1 1900000432.5 12345 678"))
	if err != nil || r != (VoteResult{Previous: Downvote, Score: 1900000432.5, Points: 12345 - 678, Upvotes: 12345, Downvotes: 678}) {
		t.Fatalf("parseVoteDone = %+v, %v", r, err)
	}
	for _, bad := range []string{"", "1", "1 2 3", "1 2 3 ", "2 1 1 1", "1 x 1 1", "1 1 1 1 1", "1 1  1"} {
		if r, err := parseVoteDone([]byte(bad)); err == nil {
			t.Errorf("parseVoteDone(%q) = %+v, nil; want an error", bad, r)
		}
	}
}

func TestArticleNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		mustPost(t, s, "alice", "one")
		// Every id the store does not issue is not found, whatever its
		// length: one error class for every malformed id.
		for _, id := range []string{"2", "0", "01", "-1", "1:x", "1e3", "abc", "", " 1",
			"9223372036854775808", "999999999999999999999", strings.Repeat("9", 1<<20)} {
			if _, err := s.Article(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Article(%.24q) = %v, want ErrNotFound", id, err)
			}
			if _, err := s.Vote(ctx, "bob", id, Upvote); !errors.Is(err, ErrNotFound) {
				t.Errorf("Vote(%.24q) = %v, want ErrNotFound", id, err)
			}
			if _, err := s.VoteOf(ctx, "bob", id); !errors.Is(err, ErrNotFound) {
				t.Errorf("VoteOf(%.24q) = %v, want ErrNotFound", id, err)
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
						Previous: old, Upvotes: up, Downvotes: down, Points: up - down,
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
		for _, v := range []VoteType{NoVote, 3, -2, 127, -128} {
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
		s, clock, a := postWithWindow(t, b, time.Hour)
		// The window is half-open: open at posted + window - 1 s, closed
		// at posted + window, for Vote and VoteBatch alike.
		clock.Add(time.Hour - time.Second) // one second before the close
		mustBatch(t, s, []Ballot{{User: "carol", ID: a.ID, Vote: Upvote}})
		r := mustVote(t, s, "bob", a.ID, Downvote)
		clock.Add(time.Second) // at the close
		for _, v := range []VoteType{Upvote, Downvote, CancelVote} {
			if _, err := s.Vote(ctx, "bob", a.ID, v); !errors.Is(err, ErrVotingClosed) {
				t.Fatalf("Vote(%v) at the close = %v, want ErrVotingClosed", v, err)
			}
			res, err := s.VoteBatch(ctx, []Ballot{{User: "dave", ID: a.ID, Vote: v}})
			if err != nil || !errors.Is(res[0].Err, ErrVotingClosed) {
				t.Fatalf("VoteBatch(%v) at the close = %+v, %v; want ErrVotingClosed", v, res, err)
			}
		}
		// The score is frozen.
		got, err := s.Article(ctx, a.ID)
		if err != nil || got.Score != r.Score {
			t.Fatalf("Article after close = %+v, %v; want score %v", got, err, r.Score)
		}
	})
}

func TestArticlesOrderAndPaging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteWeight(1000))
		if list, err := s.Articles(ctx, TimeDesc, 1); err != nil || len(list) != 0 {
			t.Fatalf("page of an empty store = %v, %v", list, err)
		}
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
		// Malformed ids, of any length, read as NoVote like missing ones.
		got, err := s.VotesOf(ctx, "bob", []string{"1", "2", "3", "4", "99", "01", "2", "", "999999999999999999999"})
		if err != nil {
			t.Fatal(err)
		}
		want := []VoteType{Upvote, Downvote, NoVote, NoVote, NoVote, NoVote, Downvote, NoVote, NoVote}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("VotesOf = %v, want %v", got, want)
		}
		if got, err := s.VotesOf(ctx, "bob", nil); err != nil || len(got) != 0 {
			t.Fatalf("VotesOf(nil) = %v, %v", got, err)
		}
		if _, err := s.VotesOf(ctx, "", []string{"1"}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("VotesOf with no user = %v, want ErrInvalidArgument", err)
		}
		if _, err := s.VotesOf(ctx, "bob", make([]string, MaxBatch+1)); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("VotesOf over MaxBatch = %v, want ErrInvalidArgument", err)
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
					if _, err := s.Vote(ctx, user, id, ballot(v)); err != nil {
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
	})
}

// otherStore returns a second store on s's prefix, as another process
// would run it, on a test clock of its own that reads start.
func otherStore(t testing.TB, s *Store, start time.Time, opts ...Option) (*Store, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(start)
	o, err := New(s.pool, append([]Option{WithKeyPrefix(s.keys.prefix), WithClock(clock.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return o, clock
}

// expireRecord lets the server's clock pass the end of the article's voter
// record, and fails t unless the record is gone then. The stores' clocks
// do not move.
func expireRecord(t testing.TB, b *backend, s *Store, id string) {
	t.Helper()
	expireKey(t, b, s.keys.votedKey(id), "voter record of "+id)
}

// expireKey lets the server's clock pass the end of key, which what
// names in messages, and fails t unless the key is gone then.
func expireKey(t testing.TB, b *backend, key, what string) {
	t.Helper()
	ttl := b.ttl(t, key)
	if ttl == -1 {
		t.Fatalf("%s has no TTL", what)
	}
	if ttl >= 0 { // PTTL 0: under a millisecond left, not gone yet
		b.elapse(ttl + 20*time.Millisecond)
	}
	if ttl := b.ttl(t, key); ttl != -2 {
		t.Fatalf("%s: TTL %v past its end, want it gone", what, ttl)
	}
}

// wantClosed asserts that every vote of every user on the article gets
// ErrVotingClosed, alone and in a batch, and changes nothing.
func wantClosed(t testing.TB, s *Store, id string, users ...string) {
	t.Helper()
	before, err := s.Article(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var ballots []Ballot
	for _, u := range users {
		for _, v := range []VoteType{Upvote, Downvote, CancelVote} {
			if r, err := s.Vote(ctx, u, id, v); !errors.Is(err, ErrVotingClosed) {
				t.Errorf("%s votes %v on %s = %+v, %v; want ErrVotingClosed", u, v, id, r, err)
			}
			ballots = append(ballots, Ballot{u, id, v})
		}
	}
	results, err := s.VoteBatch(ctx, ballots)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if !errors.Is(r.Err, ErrVotingClosed) {
			t.Errorf("ballot %+v = %+v, want ErrVotingClosed", ballots[i], r)
		}
	}
	if after, err := s.Article(ctx, id); err != nil || after != before {
		t.Errorf("article %s after closed votes = %+v, %v; want %+v", id, after, err, before)
	}
}

// wantTTL asserts that the article's voter record exists with a TTL
// within a second under window: the server's time since the post.
func wantTTL(t testing.TB, b *backend, s *Store, id string, window time.Duration) {
	t.Helper()
	if ttl := b.ttl(t, s.keys.votedKey(id)); ttl <= window-time.Second || ttl > window {
		t.Errorf("voter record of %s: TTL %v, want about %v", id, ttl, window)
	}
}

// postWithWindow returns a store on b whose votes close window after a
// post, its clock, and an article alice posted on it, whose voter record
// it checks lives for the window on the server's clock (wantTTL).
func postWithWindow(t testing.TB, b *backend, window time.Duration) (*Store, *testclock.Clock, Article) {
	t.Helper()
	s, clock := newStore(t, b, WithVoteWindow(window))
	a := mustPost(t, s, "alice", "t")
	wantTTL(t, b, s, a.ID, window)
	return s, clock, a
}

// TestVoterRecordTTL checks the voter record's life on the server's
// clock: Post creates it with a TTL of the window; votes and cancels,
// even of every vote, neither end nor extend it, and a cancel keeps its
// field. (TestStoreClockBehindServer
// sees it go.)
func TestVoterRecordTTL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock, a := postWithWindow(t, b, time.Hour) // the TTL after Post
		mustVote(t, s, "alice", a.ID, NoVote)
		clock.Add(20 * time.Minute)
		mustVote(t, s, "bob", a.ID, Upvote)
		mustVote(t, s, "bob", a.ID, NoVote)
		wantTTL(t, b, s, a.ID, time.Hour)
		fields, err := redis.StringMap(b.do(t, "HGETALL", s.keys.votedKey(a.ID)), nil)
		posted := a.Posted.Unix()
		// A vote taken back keeps its field, "0" (lib/ballot.lua VOTES).
		if err != nil || len(fields) != 3 || fields[""] != voterMeta(0, 0, 0, posted, posted+3600, "") ||
			fields["alice"] != "0" || fields["bob"] != "0" {
			t.Fatalf("voter record with every vote cancelled = %v, %v; want the \"\" field, and alice and bob at \"0\"", fields, err)
		}
	})
}

// TestStoreClockBehindServer: the store's clock stands still while the
// server's passes the window, so the store still says "open" once the
// voter record is gone, a second after the post on the server's clock.
// Votes are closed then; none counts twice.
func TestStoreClockBehindServer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _, a := postWithWindow(t, b, time.Second)
		mustVote(t, s, "bob", a.ID, Upvote)
		mustVote(t, s, "carol", a.ID, Downvote)
		users := []string{"alice", "bob", "carol", "dave"}
		checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, users)
		expireRecord(t, b, s, a.ID)
		wantClosed(t, s, a.ID, users...)
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 2 || got.Downvotes != 1 {
			t.Fatalf("article = %+v, %v; want 2 up, 1 down", got, err)
		}
		if v, err := s.VoteOf(ctx, "bob", a.ID); err != nil || v != NoVote {
			t.Fatalf("VoteOf after the record expired = %v, %v; want none", v, err)
		}
	})
}

// TestDelayedVoteAtClose: a repeat vote read as open by the store in the
// last second before the close reaches the server 100 ms late, after the
// voter record expired (it waited for a pooled connection). It is closed,
// not counted again.
func TestDelayedVoteAtClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock, a := postWithWindow(t, b, time.Second)
		mustVote(t, s, "bob", a.ID, Upvote)
		if ttl := b.ttl(t, s.keys.votedKey(a.ID)); ttl > 50*time.Millisecond {
			b.elapse(ttl - 50*time.Millisecond)
		}
		hook(s, &hooks{before: func(cmd string, args []interface{}) error {
			if scriptName(cmd, args) == "vote" {
				b.elapse(100 * time.Millisecond)
				clock.Add(100 * time.Millisecond)
			}
			return nil
		}})
		for _, u := range []string{"bob", "carol"} {
			if r, err := s.Vote(ctx, u, a.ID, Upvote); !errors.Is(err, ErrVotingClosed) {
				t.Errorf("%s's delayed vote = %+v, %v; want ErrVotingClosed", u, r, err)
			}
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 2 || got.Downvotes != 0 {
			t.Fatalf("article = %+v, %v; want 2 up", got, err)
		}
	})
}

// skewedStores returns three stores on one prefix with a vote window of
// 5 s: s on the test clock, behind it by 25 s, ahead of it by 15 s; and
// the users the skewed-clock tests vote as. The window is the real
// server's TTL of the voter records, which a loaded machine (CI with
// -race) may take a second to get from a post to its votes: 5 s leaves
// room.
func skewedStores(t *testing.T, b *backend) (s, behind, ahead *Store, users []string) {
	const window = 5 * time.Second
	s, _ = newStore(t, b, WithVoteWindow(window))
	behind, _ = otherStore(t, s, epoch.Add(-5*window), WithVoteWindow(window))
	ahead, _ = otherStore(t, s, epoch.Add(3*window), WithVoteWindow(window))
	return s, behind, ahead, []string{"alice", "bob", "carol"}
}

// TestStoresWithSkewedClocks: stores on one prefix whose clocks differ by
// seconds. A vote counts once whichever store carries it; a clock ahead
// closes voting early, one behind never keeps it open past the record.
func TestStoresWithSkewedClocks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, behind, ahead, users := skewedStores(t, b)
		a := mustPost(t, s, "alice", "t")
		mustVote(t, behind, "bob", a.ID, Upvote)
		if r := mustVote(t, s, "bob", a.ID, Upvote); r.Previous != Upvote || r.Upvotes != 2 {
			t.Fatalf("bob's repeat through another store = %+v; want previous up, 2 up", r)
		}
		mustVote(t, s, "carol", a.ID, Downvote)
		mustVote(t, behind, "carol", a.ID, Upvote)
		wantClosed(t, ahead, a.ID, users...)
		for _, st := range []*Store{s, behind, ahead} {
			checkInvariant(t, st, DefaultVoteWeight, []string{a.ID}, users)
		}

		// An article posted by the store behind closes early on the others.
		old := mustPost(t, behind, "bob", "old")
		wantClosed(t, s, old.ID, users...)
		mustVote(t, behind, "carol", old.ID, Downvote)
		checkInvariant(t, s, DefaultVoteWeight, []string{old.ID}, users)

		expireRecord(t, b, s, a.ID)
		expireRecord(t, b, s, old.ID)
		for _, st := range []*Store{s, behind} {
			wantClosed(t, st, a.ID, users...)
			wantClosed(t, st, old.ID, users...)
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 3 || got.Downvotes != 0 {
			t.Fatalf("article = %+v, %v; want 3 up", got, err)
		}
	})
}

// TestStoresWithOwnWindowAndWeight: stores on one prefix with different
// windows and weights. Each article keeps the window and weight it was
// posted with, whichever store counts its votes: nothing is rescored or
// counted twice, and each voter record lives as long as its own window.
func TestStoresWithOwnWindowAndWeight(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		short, shortClock := newStore(t, b, WithVoteWindow(time.Second), WithVoteWeight(432))
		long, longClock := otherStore(t, short, epoch, WithVoteWindow(time.Hour), WithVoteWeight(1))
		users := []string{"alice", "bob", "carol", "dave"}

		x := mustPost(t, short, "alice", "weight 432, one second")
		y := mustPost(t, long, "bob", "weight 1, one hour")
		wantTTL(t, b, short, x.ID, time.Second)
		wantTTL(t, b, short, y.ID, time.Hour)
		if r := mustVote(t, long, "carol", x.ID, Upvote); r.Score != x.Score+432 {
			t.Fatalf("weight-1 store's upvote on a weight-432 article: score %v, want %v", r.Score, x.Score+432)
		}
		if r := mustVote(t, short, "carol", y.ID, Upvote); r.Score != y.Score+1 {
			t.Fatalf("weight-432 store's upvote on a weight-1 article: score %v, want %v", r.Score, y.Score+1)
		}
		mustVote(t, short, "dave", x.ID, Downvote)
		mustVote(t, long, "dave", y.ID, Downvote)
		for _, st := range []*Store{short, long} {
			checkInvariant(t, st, 432, []string{x.ID}, users)
			checkInvariant(t, st, 1, []string{y.ID}, users)
		}

		// x closes at its own close on the long-window store's clock, and
		// y stays open on the short-window store's.
		longClock.Add(time.Second)
		shortClock.Add(time.Minute)
		wantClosed(t, long, x.ID, users...)
		mustVote(t, short, "alice", y.ID, Upvote)
		checkInvariant(t, long, 1, []string{y.ID}, users)

		// Once x's record expired on the server, no store's clock reopens it.
		longClock.Set(epoch)
		expireRecord(t, b, short, x.ID)
		wantClosed(t, long, x.ID, users...)
		// y's record has aged on the server's clock by about the second x
		// took to expire, less the moments between the two posts.
		if ttl := b.ttl(t, short.keys.votedKey(y.ID)); ttl <= time.Hour-5*time.Second || ttl > time.Hour-100*time.Millisecond {
			t.Errorf("voter record of %s: TTL %v, want about %v", y.ID, ttl, time.Hour-time.Second)
		}
		if got, err := short.Article(ctx, x.ID); err != nil || got.Upvotes != 2 || got.Downvotes != 1 || got.Score != x.Score {
			t.Fatalf("article x = %+v, %v; want 2 up, 1 down, score %v", got, err, x.Score)
		}
	})
}

// TestTies: articles of equal score and post time list by id as a
// number, newest first in descending orders, oldest first in ascending.
func TestTies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for i := 0; i < 12; i++ {
			mustPost(t, s, "alice", "t"+strconv.Itoa(i))
		}
		desc := "12 11 10 9 8 7 6 5 4 3 2 1"
		asc := "1 2 3 4 5 6 7 8 9 10 11 12"
		for o, want := range map[Order]string{ScoreDesc: desc, TimeDesc: desc, ScoreAsc: asc, TimeAsc: asc} {
			list, err := s.Articles(ctx, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := idList(list); got != want {
				t.Errorf("%v: %s, want %s", o, got, want)
			}
		}
	})
}

func idList(list []Article) string { return strings.Join(idsOf(list), " ") }

// TestIDCounter checks ids past 2^53 and up to the int64 maximum, a
// counter behind the live articles and counters that hold no id.
func TestIDCounter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		t.Run("exact", func(t *testing.T) {
			s, _ := newStore(t, b)
			b.do(t, "SET", s.keys.seq, "99999999999999")
			b.do(t, "SET", s.keys.record, s.shared.String()) // a recorded store whose counter was set by hand
			for _, want := range []string{"100000000000000", "100000000000001"} {
				a := mustPost(t, s, "alice", want)
				if a.ID != want {
					t.Fatalf("Post id %q, want %q", a.ID, want)
				}
				mustVote(t, s, "bob", a.ID, Downvote)
				if got, err := s.Article(ctx, a.ID); err != nil || got.Title != want || got.Downvotes != 1 {
					t.Fatalf("Article(%s) = %+v, %v", a.ID, got, err)
				}
			}
			list, err := s.Articles(ctx, ScoreDesc, 1)
			if err != nil || idList(list) != "100000000000001 100000000000000" {
				t.Fatalf("ScoreDesc = %s, %v", idList(list), err)
			}
		})
		t.Run("int64 maximum", func(t *testing.T) {
			s, _ := newStore(t, b)
			b.do(t, "SET", s.keys.seq, "9223372036854775806")
			b.do(t, "SET", s.keys.record, s.shared.String()) // a recorded store whose counter was set by hand
			a := mustPost(t, s, "alice", "last")
			if a.ID != "9223372036854775807" {
				t.Fatalf("Post id %q, want the int64 maximum", a.ID)
			}
			mustVote(t, s, "bob", a.ID, Upvote)
			checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, []string{"alice", "bob"})
			wantPostFails(t, b, s, "maximum")
		})
		t.Run("behind", func(t *testing.T) {
			s, _ := newStore(t, b)
			var before []Article
			for i := 0; i < 5; i++ {
				a := mustPost(t, s, "alice", "t"+strconv.Itoa(i))
				mustVote(t, s, "bob", a.ID, Downvote)
				if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
					t.Fatal(err)
				}
				before = append(before, a)
			}
			if err := s.Delete(ctx, "4"); err != nil {
				t.Fatal(err)
			}
			b.do(t, "SET", s.keys.seq, "0")
			b.do(t, "SET", s.keys.record, s.shared.String()) // a recorded store whose counter was set by hand
			for _, want := range []string{"6", "7"} {
				if a := mustPost(t, s, "carol", "new"); a.ID != want {
					t.Fatalf("Post with the counter behind: id %q, want %q", a.ID, want)
				}
				v, err := s.VoteOf(ctx, "bob", want)
				groups, gerr := s.Groups(ctx, want)
				if err != nil || gerr != nil || v != NoVote || len(groups) != 0 {
					t.Fatalf("new article %s: bob's vote %v, %v; groups %v, %v; want none", want, v, err, groups, gerr)
				}
			}
			for _, a := range before {
				if a.ID == "4" {
					continue
				}
				got, err := s.Article(ctx, a.ID)
				if err != nil || got.Title != a.Title || got.Poster != "alice" || got.Downvotes != 1 {
					t.Errorf("article %s after the counter fell behind = %+v, %v", a.ID, got, err)
				}
				if g, err := s.Groups(ctx, a.ID); err != nil || len(g) != 1 {
					t.Errorf("groups of %s = %v, %v", a.ID, g, err)
				}
			}
			checkInvariant(t, s, DefaultVoteWeight, []string{"1", "2", "3", "5", "6", "7"}, []string{"alice", "bob", "carol"})
		})
		t.Run("far behind", func(t *testing.T) {
			// The newest article by time has the lowest id, so Post finds
			// no free id in its probes: it fails, and its retry goes on
			// from where the probes stopped.
			s, clock := newStore(t, b)
			clock.Add(time.Hour)
			mustPost(t, s, "alice", "newest")
			clock.Set(epoch)
			for i := 0; i < 149; i++ {
				mustPost(t, s, "alice", "t"+strconv.Itoa(i))
			}
			b.do(t, "SET", s.keys.seq, "0")
			b.do(t, "SET", s.keys.record, s.shared.String()) // a recorded store whose counter was set by hand
			keys := len(b.storeKeys(t, s))
			if a, err := s.Post(ctx, "mallory", "t", ""); err == nil || isSentinel(err) || !strings.Contains(err.Error(), "behind") {
				t.Fatalf("Post = %+v, %v; want an error about the counter", a, err)
			}
			if n, err := s.Count(ctx); err != nil || n != 150 || len(b.storeKeys(t, s)) != keys {
				t.Fatalf("after a failed Post: Count %d, %v; %d keys, want 150 and %d", n, err, len(b.storeKeys(t, s)), keys)
			}
			if a := mustPost(t, s, "carol", "retry"); a.ID != "151" {
				t.Fatalf("retried Post: id %q, want 151", a.ID)
			}
		})
		t.Run("not an id", func(t *testing.T) {
			for _, seq := range []string{"-5", "abc", "1.5", "", "01", " 7", "1e3", "9223372036854775808"} {
				s, _ := newStore(t, b)
				b.do(t, "SET", s.keys.seq, seq)
				b.do(t, "SET", s.keys.record, s.shared.String()) // a recorded store whose counter was set by hand
				wantPostFails(t, b, s, "counter")
			}
		})
	})
}

// wantPostFails asserts that Post fails with an error that is none of
// the sentinels and whose text holds what, changing no key of the store.
func wantPostFails(t testing.TB, b *backend, s *Store, what string) {
	t.Helper()
	keys := storeState(t, b, s)
	count, err := s.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Post(ctx, "mallory", "t", "https://example.com/x")
	if err == nil || isSentinel(err) || !strings.Contains(err.Error(), what) {
		t.Errorf("Post = %+v, %v; want an error about the %s", a, err, what)
	}
	if after := storeState(t, b, s); after != keys {
		t.Errorf("failed Post changed the store:\n%s\nwas\n%s", after, keys)
	}
	if n, err := s.Count(ctx); err != nil || n != count {
		t.Errorf("Count after a failed Post = %d, %v; want %d", n, err, count)
	}
}

// storeState returns the store's keys, each with its type and, for the
// counter, its value.
func storeState(t testing.TB, b *backend, s *Store) string {
	t.Helper()
	var out strings.Builder
	for _, k := range b.storeKeys(t, s) {
		typ, _ := redis.String(b.do(t, "TYPE", k), nil)
		fmt.Fprintf(&out, "%s %s", k, typ)
		if k == s.keys.seq && typ == "string" {
			v, _ := redis.String(b.do(t, "GET", k), nil)
			fmt.Fprintf(&out, " %q", v)
		}
		out.WriteByte('\n')
	}
	return out.String()
}

// TestVoteOverForeignValue: a vote reads its article's voter record and
// writes the record's counts in place, then the score ordering, without
// reading the record first. A foreign value at the record or the score
// ordering, a voter record left without its record, a voter record whose
// "" field is not what Post wrote (all written by hand), and counts at
// the record's width fail the vote, or find no article, and change
// nothing, on a plain store and on stores whose votes write pages or
// rules before the counts.
func TestVoteOverForeignValue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, opts := range [][]Option{nil, {WithUserPages()}, {WithKarma(1, 1)}} {
			for _, c := range []struct {
				name     string
				notFound bool
				set      func(s *Store, a Article) [][]interface{}
			}{
				{"hash at the record", false, func(s *Store, a Article) [][]interface{} {
					return [][]interface{}{{"DEL", s.keys.articleKey(a.ID)}, {"HSET", s.keys.articleKey(a.ID), "f", "v"}}
				}},
				{"no record", true, func(s *Store, a Article) [][]interface{} {
					return [][]interface{}{{"DEL", s.keys.articleKey(a.ID)}}
				}},
				{"string at the score ordering", false, func(s *Store, a Article) [][]interface{} {
					return [][]interface{}{{"DEL", s.keys.orderingKey("score")}, {"SET", s.keys.orderingKey("score"), "x"}}
				}},
				{"voter record's \"\" field", false, func(s *Store, a Article) [][]interface{} {
					return [][]interface{}{{"HSET", s.keys.votedKey(a.ID), "", "x"}}
				}},
				{"counts at the record's width", false, func(s *Store, a Article) [][]interface{} {
					posted := a.Posted.Unix()
					return [][]interface{}{{"HSET", s.keys.votedKey(a.ID), "", voterMeta(9999999999, 0, 0, posted, posted+s.window, "")}}
				}},
			} {
				s, _ := newStore(t, b, opts...)
				a := mustPost(t, s, "alice", "t")
				for _, cmd := range c.set(s, a) {
					b.do(t, cmd[0].(string), cmd[1:]...)
				}
				before := snapshot(t, b, s)
				_, err := s.Vote(ctx, "bob", a.ID, Upvote)
				if c.notFound && !errors.Is(err, ErrNotFound) || !c.notFound && (err == nil || isSentinel(err)) {
					t.Errorf("%s, %d options: Vote = %v", c.name, len(opts), err)
				}
				if after := snapshot(t, b, s); !maps.Equal(after, before) {
					t.Errorf("%s, %d options: a failed vote changed the store:\n%v\nwas\n%v", c.name, len(opts), after, before)
				}
			}
		}
	})
}

func isSentinel(err error) bool {
	for _, e := range []error{ErrNotFound, ErrVotingClosed, ErrInvalidVote, ErrInvalidArgument, ErrDuplicate} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// TestPostOverForeignValue: a value of another type at one of the keys
// Post writes fails the Post before it writes anything.
func TestPostOverForeignValue(t *testing.T) {
	const link = "https://example.com/x"
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, c := range []struct {
			name string
			opts []Option
			set  func(s *Store) []interface{} // the command that plants the value
		}{
			{"string at by:score", nil, func(s *Store) []interface{} {
				return []interface{}{"SET", s.keys.orderingKey("score"), "x"}
			}},
			{"hash at by:time", nil, func(s *Store) []interface{} {
				return []interface{}{"HSET", s.keys.orderingKey("time"), "f", "v"}
			}},
			{"set at seq", nil, func(s *Store) []interface{} { return []interface{}{"SADD", s.keys.seq, "x"} }},
			{"string at by:top", []Option{WithOrders(Top)}, func(s *Store) []interface{} {
				return []interface{}{"SET", s.keys.orderingKey("top"), "x"}
			}},
			{"list at a top bucket", []Option{WithOrders(Top)}, func(s *Store) []interface{} {
				return []interface{}{"RPUSH", fmt.Sprintf("%s86400:%d", s.keys.topBucket, epoch.Unix()/86400), "x"}
			}},
			{"hash at the link", []Option{WithUniqueLinks()}, func(s *Store) []interface{} {
				return []interface{}{"HSET", s.keys.link + link, "f", "v"}
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				s, _ := newStore(t, b, c.opts...)
				cmd := c.set(s)
				b.do(t, cmd[0].(string), cmd[1:]...)
				keys := storeState(t, b, s)
				a, err := s.Post(ctx, "mallory", "t", link)
				if err == nil || isSentinel(err) {
					t.Fatalf("Post = %+v, %v; want an error", a, err)
				}
				if after := storeState(t, b, s); after != keys {
					t.Fatalf("failed Post changed the store:\n%s\nwas\n%s", after, keys)
				}
				if _, err := s.Article(ctx, "1"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Article after a failed Post = %v, want ErrNotFound", err)
				}
				b.do(t, "DEL", cmd[1])
				if a := mustPost(t, s, "alice", "t"); a.ID != "1" {
					t.Fatalf("Post after the value is gone: id %q, want 1", a.ID)
				}
			})
		}
	})
}

// TestWeights checks that every weight reaches the scripts exactly,
// without an exponent, on every backend.
func TestWeights(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, w := range []float64{1e6, 2e6, 1e7, 1e-5, 5e-5, 1e21} {
			s, _ := newStore(t, b, WithVoteWeight(w))
			a := mustPost(t, s, "alice", "t")
			posted := float64(epoch.Unix())
			if a.Score != posted+w {
				t.Errorf("weight %g: Post score %v, want %v", w, a.Score, posted+w)
			}
			for _, v := range []struct {
				user string
				vote VoteType
				net  float64
			}{{"bob", Downvote, 0}, {"carol", Downvote, -1}, {"alice", Downvote, -3}, {"carol", NoVote, -2}} {
				r, err := s.Vote(ctx, v.user, a.ID, ballot(v.vote))
				if err != nil {
					t.Fatalf("weight %g: %v", w, err)
				}
				if r.Score != posted+w*v.net {
					t.Errorf("weight %g: score %v after %s votes %v, want %v", w, r.Score, v.user, v.vote, posted+w*v.net)
				}
				checkScore(t, b, s, a.ID, r.Score)
			}
			checkInvariant(t, s, w, []string{a.ID}, []string{"alice", "bob", "carol"})
		}
	})
}

// TestScoreFromRecord: the score a read works out from an article's
// record (store.go articleScore) is the score ordering's value bit for bit,
// for weights whose products round, as for any other.
func TestScoreFromRecord(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, w := range []float64{432, 0.1, 1.0 / 3, 86400.0 / 7, 1e-5, 123456.789} {
			s, _ := newStore(t, b, WithVoteWeight(w))
			a := mustPost(t, s, "alice", "t")
			checkScore(t, b, s, a.ID, a.Score)
			for i := range 7 {
				r := mustVote(t, s, "u"+strconv.Itoa(i), a.ID, []VoteType{Downvote, Upvote}[i%2])
				checkScore(t, b, s, a.ID, r.Score)
			}
		}
	})
}

// checkScore checks that article id's score is want in the score
// ordering and in what Article and Articles read.
func checkScore(t *testing.T, b *backend, s *Store, id string, want float64) {
	t.Helper()
	z, err := redis.Float64(b.do(t, "ZSCORE", s.keys.orderingKey("score"), member(id)), nil)
	if err != nil || z != want {
		t.Fatalf("ZSCORE = %v, %v; want %v", z, err, want)
	}
	a, err := s.Article(ctx, id)
	if err != nil || a.Score != want {
		t.Fatalf("Article's score = %v, %v; want %v", a.Score, err, want)
	}
	list, err := s.Articles(ctx, TimeDesc, 1)
	if err != nil || len(list) == 0 || list[0].ID != id || list[0].Score != want {
		t.Fatalf("Articles = %+v, %v; want article %s first, score %v", list, err, id, want)
	}
}

// TestCorruptVoterRecord: a voter record holding anything but a vote's
// value (written by hand) is an error for the user's votes and VoteOf,
// never a sentinel or an invalid VoteType, reads as NoVote in VotesOf
// (one bad record does not fail a page's arrows), and changes nothing.
// "0", a vote taken back, is no vote, and no error.
func TestCorruptVoterRecord(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for _, bad := range []string{"5", "x", "00", "0s", "1.0", "+1", " 1", "-2", ""} {
			a := mustPost(t, s, "poster", "t")
			b.do(t, "HSET", s.keys.votedKey(a.ID), "alice", bad)
			for _, v := range []VoteType{Upvote, Downvote, NoVote} {
				if r, err := s.Vote(ctx, "alice", a.ID, ballot(v)); err == nil || isSentinel(err) {
					t.Errorf("record %q: Vote %v = %+v, %v; want an error", bad, v, r, err)
				}
			}
			if v, err := s.VoteOf(ctx, "alice", a.ID); err == nil || isSentinel(err) {
				t.Errorf("record %q: VoteOf = %v, %v; want an error", bad, v, err)
			}
			if v, err := s.VotesOf(ctx, "alice", []string{a.ID, "1"}); err != nil || v[0] != NoVote || v[1] != NoVote {
				t.Errorf("record %q: VotesOf = %v, %v; want [none none]", bad, v, err)
			}
			// In a batch the ballot gets the error; the others count.
			results, err := s.VoteBatch(ctx, []Ballot{{"carol", a.ID, Upvote}, {"alice", a.ID, Upvote}, {"carol", a.ID, Downvote}})
			if err != nil {
				t.Fatalf("record %q: VoteBatch = %v", bad, err)
			}
			if err := results[1].Err; err == nil || isSentinel(err) {
				t.Errorf("record %q: alice's ballot = %+v; want an error", bad, results[1])
			}
			if results[0].Err != nil || results[2].Err != nil || results[2].Previous != Upvote {
				t.Errorf("record %q: carol's ballots = %+v, %+v", bad, results[0], results[2])
			}
			mustVote(t, s, "carol", a.ID, NoVote)
			if got, err := s.Article(ctx, a.ID); err != nil || got != a {
				t.Errorf("record %q: article = %+v, %v; want %+v", bad, got, err, a)
			}
			mustVote(t, s, "bob", a.ID, Upvote)
			checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, []string{"poster", "bob"})
		}
		a := mustPost(t, s, "poster", "t")
		b.do(t, "HSET", s.keys.votedKey(a.ID), "alice", "0")
		if v, err := s.VoteOf(ctx, "alice", a.ID); err != nil || v != NoVote {
			t.Errorf("record \"0\": VoteOf = %v, %v; want none", v, err)
		}
		if r, err := s.Vote(ctx, "alice", a.ID, Upvote); err != nil || r.Previous != NoVote || r.Upvotes != 2 {
			t.Errorf("record \"0\": Vote up = %+v, %v; want one from none", r, err)
		}
	})
}

// TestNamesLookAlike: user, poster and group names with format or
// invisible characters are refused before Redis, so two names that look
// alike are alike; ordinary names, with spaces and letters of any
// script, work.
func TestNamesLookAlike(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		h := &hooks{}
		hook(s, h)
		for _, name := range []string{
			"admin\u200b",     // zero-width space
			"\u202eadmin",     // right-to-left override
			"\ufeffadmin",     // byte order mark
			"ad\u200dmin",     // zero-width joiner
			"ad\u200cmin",     // zero-width non-joiner
			"admin\u2060",     // word joiner
			"ad\u00admin",     // soft hyphen
			"\U000e0061admin", // tag letter
			"\ue000admin",     // private use
			"admin\u2028",     // line separator
			"admin\u3164",     // Hangul filler
			"\u3164",          // Hangul filler alone
			"admin\ufe0f",     // variation selector
			"ad\u034fmin",     // combining grapheme joiner
			"admin\U000f0000", // supplementary private use
			"admin\x7f",       // delete
		} {
			before := h.trips.Load()
			calls := map[string]error{}
			_, calls["Post"] = s.Post(ctx, name, "t", "")
			_, calls["Vote"] = s.Vote(ctx, name, a.ID, Upvote)
			_, calls["VoteOf"] = s.VoteOf(ctx, name, a.ID)
			_, calls["VotesOf"] = s.VotesOf(ctx, name, []string{a.ID})
			results, err := s.VoteBatch(ctx, []Ballot{{name, a.ID, Upvote}})
			if err == nil {
				err = results[0].Err
			}
			calls["VoteBatch"] = err
			calls["AddToGroups"] = s.AddToGroups(ctx, a.ID, name)
			calls["RemoveFromGroups"] = s.RemoveFromGroups(ctx, a.ID, name)
			_, calls["GroupArticles"] = s.GroupArticles(ctx, name, ScoreDesc, 1)
			_, calls["GroupCount"] = s.GroupCount(ctx, name)
			for call, err := range calls {
				if !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("%s(%+q) = %v, want ErrInvalidArgument", call, name, err)
				}
			}
			if n := h.trips.Load() - before; n != 0 {
				t.Errorf("%+q: %d round trips, want none", name, n)
			}
		}
		for _, name := range []string{"Jane Doe", "Zoë", "José María", "李小龙", "Ωμέγα", "O'Brien-Smith",
			"e\u0301mile", "dvořák", "محمد", "user name with spaces", "a\u00a0b"} {
			p, err := s.Post(ctx, name, "by "+name, "")
			if err != nil {
				t.Errorf("Post by %+q: %v", name, err)
				continue
			}
			mustVote(t, s, name, a.ID, Downvote)
			if err := s.AddToGroups(ctx, p.ID, name); err != nil {
				t.Errorf("AddToGroups(%+q): %v", name, err)
			}
			if list, err := s.GroupArticles(ctx, name, ScoreDesc, 1); err != nil || idList(list) != p.ID {
				t.Errorf("GroupArticles(%+q) = %s, %v; want %s", name, idList(list), err, p.ID)
			}
			if v, err := s.VoteOf(ctx, name, p.ID); err != nil || v != Upvote {
				t.Errorf("VoteOf(%+q) on the own post = %v, %v", name, v, err)
			}
		}
	})
}

// TestConcurrentVotesAtClose races voters while the voter record expires
// on the server; the store's clock stands still, so only the record
// closes voting. Each user votes from one goroutine, so its last accepted
// vote is known: the counters must equal those votes, whatever reached
// the server around the close.
func TestConcurrentVotesAtClose(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteWindow(time.Second), WithVoteWeight(0.1))
		a := mustPost(t, s, "poster", "t")
		users, up, down, accepted := raceToClose(t, b, func(user string, v VoteType) error {
			_, err := s.Vote(ctx, user, a.ID, ballot(v))
			return err
		})
		got, err := s.Article(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Upvotes != up || got.Downvotes != down || got.Score != float64(epoch.Unix())+0.1*float64(up-down) {
			t.Fatalf("after %d accepted votes: article %+v, want %d up, %d down", accepted, got, up, down)
		}
		wantClosed(t, s, a.ID, users...)
	})
}

// raceToClose casts random votes through vote, by 3 users from each of
// 6 goroutines, until vote returns ErrVotingClosed: the item's voter
// record (1 s on the server's clock) expires while they vote; on
// miniredis, whose clock stands still, it fast-forwards a second once
// 300 votes are in. Each user votes from one goroutine, so its last
// accepted vote is known: raceToClose returns the users, the upvotes
// and downvotes their last accepted votes make with the poster's own
// upvote, and the votes accepted.
func raceToClose(t *testing.T, b *backend, vote func(user string, v VoteType) error) (users []string, up, down, accepted int64) {
	t.Helper()
	const workers, usersEach = 6, 3
	user := func(w, u int) string { return fmt.Sprintf("u%d.%d", w, u) }
	last := make([][]VoteType, workers) // each user's last accepted vote
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range last {
		last[w] = make([]VoteType, usersEach)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
				u, v := rng.Intn(usersEach), VoteType(rng.Intn(3)-1)
				err := vote(user(w, u), v)
				if errors.Is(err, ErrVotingClosed) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				last[w][u] = v
				n.Add(1)
			}
			errs <- errors.New("voting did not close")
		}(w)
	}
	if b.mr != nil {
		for deadline := time.Now().Add(5 * time.Second); n.Load() < 300 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		b.mr.FastForward(time.Second)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	up = 1 // the poster's upvote
	for w := range last {
		for u, v := range last[w] {
			users = append(users, user(w, u))
			switch v {
			case Upvote:
				up++
			case Downvote:
				down++
			}
		}
	}
	return users, up, down, n.Load()
}

// The benchmarks of the store's basic calls. Their harness, which builds
// the data sets and measures the server, is in backend_test.go.

// BenchmarkVote votes from many goroutines at once, a random mix of up,
// down and cancel by 10,000 users over 1,000 articles: the throughput of
// the vote path, and Redis's. Its context is context.Background.
func BenchmarkVote(b *testing.B) {
	benchVote(b, context.Background())
}

// BenchmarkVoteCancelable is BenchmarkVote with a context that can be
// canceled, as a server's request contexts can: redigo watches such a
// context with a goroutine per call.
func BenchmarkVoteCancelable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchVote(b, ctx)
}

func benchVote(b *testing.B, ctx context.Context) {
	const nArticles, nUsers = 1000, 10000
	f := postedFixture(b, "vote", nArticles)
	b.SetParallelism(4) // 4 × GOMAXPROCS callers: keep Redis busy
	randomVotes(b, ctx, f, f.store, nUsers, nArticles)
}

// BenchmarkPost posts articles one after another.
func BenchmarkPost(b *testing.B) {
	f := fixture(b, "post", func(*testing.B, *benchFixture) {})
	ctx := context.Background()
	title, link := benchTitle(1), benchLink(1)
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	for i := 0; i < b.N; i++ {
		if _, err := f.store.Post(ctx, "poster0001", title, link); err != nil {
			b.Fatal(err)
		}
	}
	report()
}

// BenchmarkArticlesPage reads the front page of 1,000 articles: 25
// articles with all their fields.
func BenchmarkArticlesPage(b *testing.B) {
	benchArticlesPage(b, sized(b, 1000), 1)
}

func benchArticlesPage(b *testing.B, f *benchFixture, page int) {
	ctx := context.Background()
	want := min(f.store.pageSize, f.n-(page-1)*f.store.pageSize)
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	m := mallocs()
	for i := 0; i < b.N; i++ {
		list, err := f.store.Articles(ctx, ScoreDesc, page)
		if err != nil || len(list) != want {
			b.Fatalf("page %d: %d articles, %v; want %d", page, len(list), err, want)
		}
	}
	b.ReportMetric(float64(mallocs()-m)/float64(b.N*want), "allocs/article")
	report()
}

// BenchmarkVotesOf reads one user's votes on a page of 25 articles; its
// redis-µs/op is the time of its pipeline's commands (votes.go).
func BenchmarkVotesOf(b *testing.B) {
	f := sized(b, 1000)
	ctx := context.Background()
	ids := make([]string, 25)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	user := benchPoster(1) // the poster of some of them
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f, "get", "type", "hget")
	for i := 0; i < b.N; i++ {
		if _, err := f.store.VotesOf(ctx, user, ids); err != nil {
			b.Fatal(err)
		}
	}
	report()
}

// BenchmarkScaleArticlesPage reads the front page of sites of 1k, 100k
// and 1M articles, and a page from the middle of the largest.
func BenchmarkScaleArticlesPage(b *testing.B) {
	for _, n := range []int{1000, 100_000, 1_000_000} {
		b.Run(sizeName(n), func(b *testing.B) { benchArticlesPage(b, sized(b, n), 1) })
	}
	b.Run("1M/page20000", func(b *testing.B) { benchArticlesPage(b, sized(b, 1_000_000), 20000) })
}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// BenchmarkScaleMemory measures the Redis memory of articles and of
// votes, on a server of its own that holds nothing else. It reports bytes
// only, not time.
//
// article: the growth of INFO memory's used_memory over 100,000 posts,
// per article, and MEMORY USAGE of the parts of one article: its record,
// its voter record (the "" field and the poster's vote), and its share of
// the score and time sorted sets.
//
// vote/N-per-article: the growth of MEMORY USAGE of every voter record
// while articles get N votes each (the poster's and N-1 more), per vote;
// N is chosen on both sides of hash-max-listpack-entries, where a record
// turns from a compact listpack into a hash table.
func BenchmarkScaleMemory(b *testing.B) {
	srv := redistest.Start(b)
	pool := srv.Pool()
	defer pool.Close()

	const n = 100_000
	f := newBenchStore(b, pool, "memory-articles")
	before := usedMemory(b, pool)
	f.post(b, n)
	perArticle := float64(usedMemory(b, pool)-before) / n
	k := f.store.keys
	id := strconv.Itoa(n / 2)
	rec, voters := memoryUsage(b, pool, k.articleKey(id)), memoryUsage(b, pool, k.votedKey(id))
	zsets := memoryUsage(b, pool, k.orderingKey("score")) + memoryUsage(b, pool, k.orderingKey("time"))
	encodings := fmt.Sprintf("encodings: article record %s, voter record %s, score and time %s",
		encoding(b, pool, k.articleKey(id)), encoding(b, pool, k.votedKey(id)), encoding(b, pool, k.orderingKey("score")))
	b.Run("article", func(b *testing.B) {
		reportBytes(b, encodings)
		b.ReportMetric(perArticle, "B/article")
		b.ReportMetric(float64(rec), "record-B/article")
		b.ReportMetric(float64(voters), "voters-B/article")
		b.ReportMetric(float64(zsets)/n, "zsets-B/article")
	})

	config, err := redis.StringMap(srv.Do("CONFIG", "GET", "hash-max-listpack-entries"))
	if err != nil {
		b.Fatal(err)
	}
	listpackMax, err := strconv.Atoi(config["hash-max-listpack-entries"])
	if err != nil {
		b.Fatal(err)
	}
	// A record holds the "" field and the poster's vote besides the N-1
	// votes: N = max-1 is the largest listpack, N = max the smallest
	// hash table.
	for _, per := range []int{10, 100, listpackMax - 1, listpackMax, 2000} {
		const nVotes = 100_000 // besides the posters'
		articles := nVotes / (per - 1)
		f := newBenchStore(b, pool, "memory-votes"+strconv.Itoa(per))
		f.post(b, articles)
		s := f.store
		now := s.now().Unix()
		before := recordsUsage(b, f)
		pipe(b, pool, articles*(per-1), func(c redis.Conn, i int) error {
			id := strconv.Itoa(1 + i/(per-1))
			return voteScript.SendHash(c, s.fenced(nil, voteScript, s.voteArgs(benchUser(i%(per-1)), id, Upvote, now))...)
		})
		perVote := float64(recordsUsage(b, f)-before) / float64(articles*(per-1))
		if a, err := s.Article(context.Background(), "1"); err != nil || a.Upvotes != int64(per) {
			b.Fatalf("article 1 after the votes: %+v, %v", a, err)
		}
		note := fmt.Sprintf("hash-max-listpack-entries %d: a record of %d votes is a %s", listpackMax, per,
			encoding(b, pool, s.keys.votedKey("1")))
		b.Run(fmt.Sprintf("vote/%d-per-article", per), func(b *testing.B) {
			reportBytes(b, note)
			b.ReportMetric(perVote, "B/vote")
		})
	}
}

// recordsUsage returns the sum of MEMORY USAGE of the voter records of
// all of f's articles.
func recordsUsage(b *testing.B, f *benchFixture) int64 {
	b.Helper()
	c := f.pool.Get()
	defer c.Close()
	for i := 1; i <= f.n; i++ {
		if err := c.Send("MEMORY", "USAGE", f.store.keys.votedKey(strconv.Itoa(i)), "SAMPLES", 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		b.Fatal(err)
	}
	var total int64
	for i := 1; i <= f.n; i++ {
		n, err := redis.Int64(c.Receive())
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return total
}

// encoding returns OBJECT ENCODING of key.
func encoding(b *testing.B, pool *redis.Pool, key string) string {
	b.Helper()
	e, err := redis.String(serverDo(b, pool, "OBJECT", "ENCODING", key), nil)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// reportBytes makes b, a benchmark that reports Redis memory measured
// before it started, report that alone: no time, no allocations. Its note
// is logged once.
func reportBytes(b *testing.B, note string) {
	if b.N == 1 {
		b.Log(note)
	}
	b.ResetTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(0, "B/op")
	b.ReportMetric(0, "allocs/op")
}
