package voting

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
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

// keyType returns the type of a key.
func keyType(t testing.TB, b *backend, key string) string {
	t.Helper()
	typ, err := redis.String(b.do(t, "TYPE", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

// contents returns the members of a set or zset, or the value of a
// string, sorted; the fields of a hash, field by field.
func contents(t testing.TB, b *backend, key string) []string {
	t.Helper()
	var v interface{}
	switch keyType(t, b, key) {
	case "none":
		return nil
	case "string":
		v = []interface{}{b.do(t, "GET", key)}
	case "hash":
		v = b.do(t, "HGETALL", key)
	case "set":
		v = b.do(t, "SMEMBERS", key)
	case "zset":
		v = b.do(t, "ZRANGE", key, 0, -1, "WITHSCORES")
	}
	list, err := redis.Strings(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(list)
	return list
}

// snapshot returns every key of the store with its type and contents,
// as keyType and contents read them, in two pipelined round trips.
func snapshot(t testing.TB, b *backend, s *Store) map[string]string {
	t.Helper()
	keys := b.storeKeys(t, s)
	c := b.storePool(s).Get()
	defer c.Close()
	for _, key := range keys {
		if err := c.Send("TYPE", key); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	types := make([]string, len(keys))
	for i := range keys {
		typ, err := redis.String(c.Receive())
		if err != nil {
			t.Fatal(err)
		}
		types[i] = typ
	}
	read := map[string]string{"string": "GET", "hash": "HGETALL", "set": "SMEMBERS", "zset": "ZRANGE"}
	for i, key := range keys {
		switch cmd := read[types[i]]; {
		case cmd == "ZRANGE":
			if err := c.Send(cmd, key, 0, -1, "WITHSCORES"); err != nil {
				t.Fatal(err)
			}
		case cmd != "":
			if err := c.Send(cmd, key); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for i, key := range keys {
		var list []string
		if read[types[i]] != "" {
			v, err := c.Receive()
			if types[i] == "string" {
				v = []interface{}{v}
			}
			if list, err = redis.Strings(v, err); err != nil {
				t.Fatal(err)
			}
			slices.Sort(list)
		}
		m[key] = types[i] + fmt.Sprintf(" %q", list)
	}
	return m
}

// traces lists what of the articles ids is left in the store: keys named
// after one, members of one in any sorted set or set (orderings, TopSince
// buckets, groups, group caches), links naming one.
func traces(t testing.TB, b *backend, s *Store, ids []string) []string {
	t.Helper()
	members, gone, named := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		members[member(id)], gone[id] = true, true
		named[s.keys.articleKey(id)] = true
		named[s.keys.votedKey(id)] = true
		named[s.keys.groupsOfKey(id)] = true
	}
	var found []string
	for _, key := range b.storeKeys(t, s) {
		if named[key] {
			found = append(found, key)
			continue
		}
		switch typ := keyType(t, b, key); {
		case typ == "string" && strings.HasPrefix(key, s.keys.link):
			if v := contents(t, b, key); gone[v[0]] {
				found = append(found, key+" -> "+v[0])
			}
		case typ == "zset":
			list, err := redis.Strings(b.do(t, "ZRANGE", key, 0, -1), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range list {
				if members[m] {
					found = append(found, key+" holds "+m)
				}
			}
		case typ == "set" && !strings.HasPrefix(key, s.keys.groupsOf):
			for _, m := range contents(t, b, key) {
				if members[m] {
					found = append(found, key+" holds "+m)
				}
			}
		}
	}
	return found
}

// checkCaches asserts that every group cache of the store that is
// complete holds exactly its group's members, each with its value in the
// cache's ordering, and that no building cache holds a non-member.
func checkCaches(t testing.TB, b *backend, s *Store) {
	t.Helper()
	for _, key := range b.storeKeys(t, s) {
		rest, ok := strings.CutPrefix(key, s.keys.cache)
		if !ok {
			continue
		}
		ordering, group, _ := strings.Cut(rest, ":")
		inGroup := map[string]bool{}
		for _, m := range contents(t, b, s.keys.groupKey(group)) {
			inGroup[m] = true
		}
		list, err := redis.Strings(b.do(t, "ZRANGE", key, 0, -1, "WITHSCORES"), nil)
		if err != nil {
			t.Fatal(err)
		}
		complete, held := false, 0
		for i := 0; i < len(list); i += 2 {
			m, v := list[i], list[i+1]
			if strings.HasPrefix(m, "#") {
				complete = m == "#"
				continue
			}
			held++
			if !inGroup[m] {
				t.Errorf("%s holds %s, not in the group", key, m)
				continue
			}
			want, err := redis.String(b.do(t, "ZSCORE", s.keys.orderingKey(ordering), m), nil)
			if err != nil || want != v {
				t.Errorf("%s: %s at %s, in the ordering %q (%v)", key, m, v, want, err)
			}
		}
		if complete && held != len(inGroup) {
			t.Errorf("%s: complete with %d members, the group has %d", key, held, len(inGroup))
		}
	}
}

// readAll reads page 1 of every group in every order, so that every
// group has a cache in every ordering.
func readAll(t testing.TB, s *Store, groups []string) {
	t.Helper()
	for _, g := range groups {
		for o := ScoreDesc; o <= Controversial; o++ {
			if _, err := s.GroupArticles(ctx, g, o, 1); err != nil {
				t.Fatalf("group %s, %v: %v", g, o, err)
			}
		}
	}
}

var pruneUsers = []string{"p", "u0", "u1", "u2", "u3"}

// pruneStore returns a store with every order and unique links, holding
// n articles by "p", article i (from 1) posted at epoch + i-1 seconds
// with link "https://example.com/<i>", voted on by pruneUsers, in groups
// "all" and "g<i%3>", every group cached in every ordering; its clock
// reads the last post time.
func pruneStore(t testing.TB, b *backend, n int, opts ...Option) (*Store, *testclock.Clock, []string) {
	t.Helper()
	opts = append([]Option{WithOrders(extraOrders...), WithUniqueLinks(), WithGroupCacheTTL(0)}, opts...)
	s, clock := newStore(t, b, opts...)
	rng := rand.New(rand.NewSource(int64(n)))
	for i := 1; i <= n; i++ {
		clock.Set(epoch.Add(time.Duration(i-1) * time.Second))
		a, err := s.Post(ctx, "p", "t", "https://example.com/"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != strconv.Itoa(i) {
			t.Fatalf("post %d got id %s", i, a.ID)
		}
		for _, u := range pruneUsers[1:] {
			mustVote(t, s, u, a.ID, VoteType(rng.Intn(3)-1))
		}
		if err := s.AddToGroups(ctx, a.ID, "all", "g"+strconv.Itoa(i%3)); err != nil {
			t.Fatal(err)
		}
	}
	readAll(t, s, []string{"all", "g0", "g1", "g2"})
	return s, clock, []string{"all", "g0", "g1", "g2"}
}

// idRange returns the ids from first to last.
func idRange(first, last int) []string {
	var list []string
	for i := first; i <= last; i++ {
		list = append(list, strconv.Itoa(i))
	}
	return list
}

// wantPost posts link on s and fails t unless it returns article id and
// the error want: nil for a new article, ErrDuplicate for the one that
// holds the link.
func wantPost(t testing.TB, s *Store, link, id string, want error) {
	t.Helper()
	if a, err := s.Post(ctx, "alice", "t", link); a.ID != id || !errors.Is(err, want) {
		t.Fatalf("Post of %q = %+v, %v; want article %s and error %v", link, a, err, id, want)
	}
}

func TestUniqueLinks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUniqueLinks(), WithOrders(extraOrders...))
		first, err := s.Post(ctx, "alice", "first", "https://example.com/x")
		if err != nil {
			t.Fatal(err)
		}
		mustVote(t, s, "bob", first.ID, Downvote)
		if err := s.AddToGroups(ctx, first.ID, "go"); err != nil {
			t.Fatal(err)
		}
		want, err := s.Article(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, b, s)
		clock.Add(time.Minute)
		got, err := s.Post(ctx, "carol", "again", "https://example.com/x")
		if !errors.Is(err, ErrDuplicate) {
			t.Fatalf("Post of a taken link = %v, want ErrDuplicate", err)
		}
		if got != want {
			t.Fatalf("Post of a taken link returned %+v, want the article %+v", got, want)
		}
		if after := snapshot(t, b, s); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a duplicate post changed the store:\nbefore %v\nafter  %v", before, after)
		}

		// Other links, and empty ones, do not collide.
		wantPost(t, s, "https://example.com/X", "2", nil)
		wantPost(t, s, "", "3", nil)
		wantPost(t, s, "", "4", nil)

		// Delete frees the link: the next post of it is a new article,
		// which then holds it.
		if err := s.Delete(ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		wantPost(t, s, "https://example.com/x", "5", nil)
		wantPost(t, s, "https://example.com/x", "5", ErrDuplicate)

		// Prune frees it too.
		clock.Add(time.Hour)
		if n, err := s.Prune(ctx, clock.Now()); err != nil || n != 4 {
			t.Fatalf("Prune = %d, %v; want 4", n, err)
		}
		wantPost(t, s, "https://example.com/x", "6", nil)

		// A link key left by hand for an article that is gone does not
		// block the link.
		b.do(t, "SET", s.keys.link+"https://example.com/stale", "99")
		wantPost(t, s, "https://example.com/stale", "7", nil)
		wantPost(t, s, "https://example.com/stale", "7", ErrDuplicate)
	})
}

func TestUniqueLinksOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b)
		wantPost(t, s, "https://example.com/x", "1", nil)
		wantPost(t, s, "https://example.com/x", "2", nil)
		for _, key := range b.storeKeys(t, s) {
			if strings.HasPrefix(key, s.keys.link) {
				t.Fatalf("a store without WithUniqueLinks wrote %s", key)
			}
		}
		// A store with the option gets ErrIncompatible until the option
		// is recorded; Reconfigure indexes the live links, the oldest
		// article keeping a link two share.
		u, err := New(s.pool, WithKeyPrefix(s.keys.prefix), WithClock(clock.Now), WithUniqueLinks())
		if err != nil {
			t.Fatal(err)
		}
		wantPost(t, u, "https://example.com/x", "", ErrIncompatible)
		if _, err := u.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		wantPost(t, u, "https://example.com/x", "1", ErrDuplicate)
		wantPost(t, s, "https://example.com/y", "", ErrIncompatible)
	})
}

func TestUniqueLinksConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithUniqueLinks())
		const posters = 16
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([]Article, posters)
		errs := make([]error, posters)
		for i := 0; i < posters; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				got[i], errs[i] = s.Post(ctx, "p"+strconv.Itoa(i), "t", "https://example.com/same")
			}(i)
		}
		close(start)
		wg.Wait()
		var winner string
		for i, err := range errs {
			if err == nil {
				if winner != "" {
					t.Fatalf("two posts of one link succeeded: %s and %s", winner, got[i].ID)
				}
				winner = got[i].ID
			} else if !errors.Is(err, ErrDuplicate) {
				t.Fatalf("post %d: %v", i, err)
			}
		}
		if winner == "" {
			t.Fatal("no post succeeded")
		}
		for i, err := range errs {
			if err != nil && got[i].ID != winner {
				t.Errorf("post %d: duplicate of %s, want %s", i, got[i].ID, winner)
			}
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Fatalf("Count = %d, %v; want 1", n, err)
		}
	})
}

// TestUniqueLinksRetry loses the reply of a post, as a broken connection
// would: the retry gets the article the lost reply was about.
func TestUniqueLinksRetry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithUniqueLinks())
		loadScripts(t, b.pool)
		lost := errors.New("connection reset")
		var once atomic.Bool
		hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if err == nil && scriptName(cmd, args) == "post" && once.CompareAndSwap(false, true) {
				return nil, lost
			}
			return v, err
		}})
		if _, err := s.Post(ctx, "alice", "t", "https://example.com/x"); !errors.Is(err, lost) {
			t.Fatalf("Post with its reply lost = %v", err)
		}
		want, err := s.Article(ctx, "1")
		if err != nil {
			t.Fatalf("the lost post did not post: %v", err)
		}
		got, err := s.Post(ctx, "alice", "t", "https://example.com/x")
		if !errors.Is(err, ErrDuplicate) || got != want {
			t.Fatalf("retried Post = %+v, %v; want %+v and ErrDuplicate", got, err, want)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Fatalf("Count = %d, %v; want 1", n, err)
		}
	})
}

func TestPrune(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const n = 120
		s, _, _ := pruneStore(t, b, n)
		loadScripts(t, b.pool)
		h := &hooks{}
		hook(s, h)
		prune := func(before time.Time, want int) {
			t.Helper()
			trips := h.trips.Load()
			got, err := s.Prune(ctx, before)
			if err != nil || got != want {
				t.Fatalf("Prune(%v) = %d, %v; want %d", before, got, err, want)
			}
			if trips = h.trips.Load() - trips; trips != int64(want/pruneStep+1) {
				t.Errorf("Prune of %d articles: %d round trips, want %d", want, trips, want/pruneStep+1)
			}
		}
		check := func(first int) {
			t.Helper()
			if left := traces(t, b, s, idRange(1, first-1)); len(left) > 0 {
				t.Fatalf("pruned articles left: %v", left)
			}
			if c, err := s.Count(ctx); err != nil || c != int64(n-first+1) {
				t.Fatalf("Count = %d, %v; want %d", c, err, n-first+1)
			}
			if list, err := s.Articles(ctx, TimeAsc, 1); err != nil || len(list) == 0 || list[0].ID != strconv.Itoa(first) {
				t.Fatalf("oldest article after Prune: %v, %v; want %d", list, err, first)
			}
			checkInvariant(t, s, DefaultVoteWeight, idRange(first, n), pruneUsers)
			checkCaches(t, b, s)
		}
		// Exact at the second: the article posted at before stays.
		prune(epoch.Add(30*time.Second), 30)
		check(31)
		prune(epoch.Add(30*time.Second), 0)
		// A fractional before keeps the articles of its second.
		prune(epoch.Add(60*time.Second+500*time.Millisecond), 31)
		check(62)
		prune(epoch, 0)
		// All the rest, in steps.
		prune(epoch.Add(time.Hour), n-61)
		// What is left: the counter, and caches holding only a marker.
		for _, key := range b.storeKeys(t, s) {
			if key == s.keys.seq || key == s.keys.record {
				continue
			}
			if !strings.HasPrefix(key, s.keys.cache) || fmt.Sprint(contents(t, b, key)) != "[# -inf]" {
				t.Errorf("left after pruning everything: %s %q", key, contents(t, b, key))
			}
		}
		// Every link is free again.
		for i := 1; i <= n; i += 37 {
			if _, err := s.Post(ctx, "p", "t", "https://example.com/"+strconv.Itoa(i)); err != nil {
				t.Fatalf("Post of pruned article %d's link: %v", i, err)
			}
		}
	})
}

// TestPruneExactSteps checks the step count at a multiple of the step,
// where the last full step cannot tell that nothing is left, and that a
// member of the orderings without its article is dropped.
func TestPruneExactSteps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b)
		for i := 0; i < 2*pruneStep; i++ {
			mustPost(t, s, "p", "t"+strconv.Itoa(i))
		}
		loadScripts(t, b.pool)
		h := &hooks{}
		hook(s, h)
		clock.Add(time.Second)
		if got, err := s.Prune(ctx, clock.Now()); err != nil || got != 2*pruneStep {
			t.Fatalf("Prune = %d, %v; want %d", got, err, 2*pruneStep)
		}
		if trips := h.trips.Load(); trips != 3 {
			t.Errorf("Prune of %d articles: %d round trips, want 3", 2*pruneStep, trips)
		}
		// A member whose article is gone (written by hand) is dropped, and
		// not counted.
		b.do(t, "ZADD", s.keys.orderingKey("time"), epoch.Unix()-1, member("999"))
		b.do(t, "ZADD", s.keys.orderingKey("score"), epoch.Unix()-1, member("999"))
		if got, err := s.Prune(ctx, clock.Now()); err != nil || got != 0 {
			t.Fatalf("Prune of a stray member = %d, %v; want 0", got, err)
		}
		if keys := b.storeKeys(t, s); len(keys) != 2 || keys[0] != s.keys.seq || keys[1] != s.keys.record {
			t.Fatalf("keys left: %v", keys)
		}
	})
}

// TestPruneManyGroups prunes articles in MaxArticleGroups groups each,
// with their caches built: a step stops once its articles' memberships
// reach pruneWork, as each costs work in the group and its caches.
func TestPruneManyGroups(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithGroupCacheTTL(0), WithOrders(extraOrders...))
		var groups []string
		for g := 0; g < MaxArticleGroups; g++ {
			groups = append(groups, "g"+strconv.Itoa(g))
		}
		const n = 20
		for i := 0; i < n; i++ {
			a := mustPost(t, s, "p", "t"+strconv.Itoa(i))
			if err := s.AddToGroups(ctx, a.ID, groups...); err != nil {
				t.Fatal(err)
			}
		}
		readAll(t, s, groups[:2])
		loadScripts(t, b.pool)
		var steps []int64
		hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if scriptName(cmd, args) == "prune" {
				if _, rest, err := decode(v, err); err == nil {
					n, _ := redis.Int64(rest[0], nil)
					steps = append(steps, n)
				}
			}
			return v, err
		}})
		clock.Add(time.Second)
		if got, err := s.Prune(ctx, clock.Now()); err != nil || got != n {
			t.Fatalf("Prune = %d, %v; want %d", got, err, n)
		}
		per := int64(pruneWork / MaxArticleGroups)
		if len(steps) != int((n+per-1)/per) {
			t.Errorf("Prune of %d articles in %d groups each: steps of %v, want steps of %d", n, MaxArticleGroups, steps, per)
		}
		for _, d := range steps {
			if d > per {
				t.Errorf("Prune of %d articles in %d groups each: steps of %v, want at most %d each", n, MaxArticleGroups, steps, per)
				break
			}
		}
		if left := traces(t, b, s, idRange(1, n)); len(left) > 0 {
			t.Fatalf("pruned articles left: %v", left)
		}
		checkCaches(t, b, s)
	})
}

// TestPruneInterrupted stops Prune between steps, by a canceled context
// and by a lost reply, and runs it again to the end.
func TestPruneInterrupted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const n = 3*pruneStep + 7
		s, _, _ := pruneStore(t, b, n)
		loadScripts(t, b.pool)
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		lost := errors.New("connection reset")
		var steps atomic.Int64
		hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if err != nil || scriptName(cmd, args) != "prune" {
				return v, err
			}
			switch steps.Add(1) {
			case 1:
				cancel() // after the first step
			case 2:
				return nil, lost // the second step's reply
			}
			return v, err
		}})
		before := epoch.Add(time.Hour)
		got, err := s.Prune(c, before)
		if !errors.Is(err, context.Canceled) || got != pruneStep {
			t.Fatalf("Prune canceled after a step = %d, %v; want %d and context.Canceled", got, err, pruneStep)
		}
		got, err = s.Prune(ctx, before)
		if !errors.Is(err, lost) || got != 0 {
			t.Fatalf("Prune with a reply lost = %d, %v; want 0 and the loss", got, err)
		}
		got, err = s.Prune(ctx, before)
		if err != nil || got != n-2*pruneStep {
			t.Fatalf("Prune run again = %d, %v; want %d", got, err, n-2*pruneStep)
		}
		if left := traces(t, b, s, idRange(1, n)); len(left) > 0 {
			t.Fatalf("pruned articles left: %v", left)
		}
		checkCaches(t, b, s)
	})
}

// TestPruneWhileVoting prunes half the articles, a step at a time with
// pauses between, while voters and readers run on all of them.
func TestPruneWhileVoting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const n = 4 * pruneStep
		s, _, groups := pruneStore(t, b, n)
		loadScripts(t, b.pool)
		hook(s, &hooks{before: func(cmd string, args []interface{}) error {
			if scriptName(cmd, args) == "prune" {
				time.Sleep(5 * time.Millisecond)
			}
			return nil
		}})
		var done atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		var votes atomic.Int64
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				for !done.Load() {
					var err error
					if seed == 0 {
						_, err = s.GroupArticles(ctx, groups[rng.Intn(len(groups))], Order(rng.Intn(8)), 1+rng.Intn(4))
					} else {
						user := pruneUsers[1+rng.Intn(len(pruneUsers)-1)]
						_, err = s.Vote(ctx, user, strconv.Itoa(1+rng.Intn(n)), ballot(VoteType(rng.Intn(3)-1)))
						votes.Add(1)
					}
					if err != nil && !errors.Is(err, ErrNotFound) {
						errs <- err
						return
					}
				}
			}(int64(w))
		}
		got, err := s.Prune(ctx, epoch.Add(n/2*time.Second))
		atVotes := votes.Load()
		for votes.Load() < atVotes+50 && len(errs) == 0 {
			time.Sleep(time.Millisecond)
		}
		done.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err != nil || got != n/2 {
			t.Fatalf("Prune = %d, %v; want %d", got, err, n/2)
		}
		if atVotes == 0 {
			t.Fatal("no vote ran while Prune ran")
		}
		if left := traces(t, b, s, idRange(1, n/2)); len(left) > 0 {
			t.Fatalf("pruned articles left: %v", left)
		}
		checkInvariant(t, s, DefaultVoteWeight, idRange(n/2+1, n), pruneUsers)
		checkCaches(t, b, s)
	})
}

func TestDrop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		base := "drop" + strconv.FormatInt(prefixSeq.Add(1), 10)
		// Prefixes with glob characters, and the prefixes they would
		// match if they were not escaped.
		names := []string{"a*", "a?", "[a]", "ab", "a", `a\`, `a\b`, "a]", "[ab]"}
		stores := make([]*Store, len(names))
		for i, name := range names {
			s, _ := newStore(t, b, WithKeyPrefix(base+name), WithOrders(extraOrders...), WithUniqueLinks())
			for j := 0; j < 3; j++ {
				a := mustPost(t, s, "alice", "t"+strconv.Itoa(j))
				mustVote(t, s, "bob", a.ID, Downvote)
				if err := s.AddToGroups(ctx, a.ID, "go", "redis"); err != nil {
					t.Fatal(err)
				}
			}
			readAll(t, s, []string{"go", "redis"})
			stores[i] = s
		}
		snaps := make([]map[string]string, len(stores))
		for i, s := range stores {
			snaps[i] = snapshot(t, b, s)
		}
		for i, s := range stores {
			if err := s.Drop(ctx); err != nil {
				t.Fatalf("Drop %q: %v", names[i], err)
			}
			if keys := b.storeKeys(t, s); len(keys) != 0 {
				t.Fatalf("Drop %q left %v", names[i], keys)
			}
			for j := i + 1; j < len(stores); j++ {
				if got := snapshot(t, b, stores[j]); fmt.Sprint(got) != fmt.Sprint(snaps[j]) {
					t.Fatalf("Drop %q changed store %q:\nbefore %v\nafter  %v", names[i], names[j], snaps[j], got)
				}
			}
		}
		// A dropped store starts again from scratch.
		s := stores[0]
		if err := s.Drop(ctx); err != nil {
			t.Fatalf("Drop of an empty store: %v", err)
		}
		a, err := s.Post(ctx, "alice", "again", "https://example.com/t0")
		if err != nil || a.ID != "1" {
			t.Fatalf("Post after Drop = %+v, %v; want article 1", a, err)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Fatalf("Count after Drop = %d, %v; want 1", n, err)
		}
		if list, err := s.GroupArticles(ctx, "go", ScoreDesc, 1); err != nil || len(list) != 0 {
			t.Fatalf("group page after Drop = %v, %v; want empty", list, err)
		}
	})
}

// TestDropSteps drops a store of more keys than one SCAN step looks at.
func TestDropSteps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		// s last: on a cluster, b.pool then reaches s's node, where
		// bigGroup writes.
		other, _ := newStore(t, b)
		s, _ := newStore(t, b)
		bigGroup(t, b, s, "big", idRange(1, 3*dropStep))
		a := mustPost(t, other, "alice", "kept")
		loadScripts(t, b.pool)
		h := &hooks{}
		hook(s, h)
		if err := s.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		trips := h.trips.Load()
		if keys := b.storeKeys(t, s); len(keys) != 0 {
			t.Fatalf("Drop left %d keys: %.5v", len(keys), keys)
		}
		// miniredis's SCAN returns every key at once.
		if b.mr == nil && trips < 2 {
			t.Errorf("Drop of %d keys: %d round trip, want one per SCAN step of %d", 3*dropStep+2, trips, dropStep)
		}
		if got, err := other.Article(ctx, a.ID); err != nil || got != a {
			t.Fatalf("another store's article after Drop: %+v, %v", got, err)
		}
	})
}

// TestPruneStepBound prunes 50,000 articles in 10 groups each, with every
// ordering cached, on a redis-server of its own, and checks the bound on
// each step's work that keeps it short: at most pruneStep articles and,
// but for its first, pruneWork group memberships. What a step costs the
// server is measured by BenchmarkPrune (max-step-cpu-µs), not here: a
// timed check fails on a busy machine.
func TestPruneStepBound(t *testing.T) {
	t.Parallel() // on a server of its own
	if testing.Short() {
		t.Skip("thousands of articles: not under -short")
	}
	srv := redistest.Start(t)
	pool := srv.Pool()
	defer pool.Close()
	n, groups, perArticle := longOr(2000, 50000), 20, 10
	s := fill(t, pool, n, groups, perArticle, WithOrders(extraOrders...), WithUniqueLinks(), WithGroupCacheTTL(0))
	var steps, most int64
	hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
		if scriptName(cmd, args) == pruneScript.name && err == nil {
			status, rest, _ := decode(v, nil)
			var deleted, more int64
			if scan(status, rest, &deleted, &more) == nil {
				steps++
				most = max(most, deleted)
			}
		}
		return v, err
	}})
	got, err := s.Prune(ctx, epoch.Add(time.Hour))
	if err != nil || got != n {
		t.Fatalf("Prune = %d, %v; want %d", got, err, n)
	}
	if limit := int64(max(1, min(pruneStep, pruneWork/perArticle))); most > limit {
		t.Errorf("Prune of articles in %d groups each: a step deleted %d, want at most %d", perArticle, most, limit)
	}
	if want := int64(n * perArticle / pruneWork); steps < want {
		t.Errorf("Prune of %d articles in %d groups each: %d steps, want at least %d", n, perArticle, steps, want)
	}
	if c, err := s.Count(ctx); err != nil || c != 0 {
		t.Fatalf("Count after Prune = %d, %v", c, err)
	}
}

// TestPruneStopsBeforeAFailedCheck: a foreign value at a key that
// deleting a later article of the step writes (here its poster's
// submitted page) ends the step before that article: Prune returns the
// articles it deleted with the error, as its documentation says, and
// leaves the article whose check failed, and those after it, whole.
func TestPruneStopsBeforeAFailedCheck(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages())
		a := mustPost(t, s, "ann", "a")
		clock.Add(time.Second)
		c := mustPost(t, s, "bob", "c")
		clock.Add(time.Second)
		d := mustPost(t, s, "ann", "d")
		clock.Add(time.Second)
		b.do(t, "SET", s.keys.submittedKey("bob"), "x")
		n, err := s.Prune(ctx, clock.Now())
		if err == nil || n != 1 {
			t.Fatalf("Prune over a foreign submitted page = %d, %v; want 1 and an error", n, err)
		}
		if _, err := s.Article(ctx, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("the first article: %v, want it deleted", err)
		}
		for _, id := range []string{c.ID, d.ID} {
			if _, err := s.Article(ctx, id); err != nil {
				t.Errorf("article %s: %v, want it kept", id, err)
			}
		}
		if list, err := s.Submitted(ctx, "ann", 1); err != nil || len(list) != 1 || list[0].ID != d.ID {
			t.Errorf("ann's submitted page = %v, %v; want %s", list, err, d.ID)
		}
		b.do(t, "DEL", s.keys.submittedKey("bob"))
		if n, err := s.Prune(ctx, clock.Now()); err != nil || n != 2 {
			t.Errorf("Prune once the page is fixed = %d, %v; want 2", n, err)
		}

		// A member of the time ordering without its article, whose
		// removal from every ordering meets a foreign value.
		e := mustPost(t, s, "ann", "e")
		b.do(t, "ZADD", s.keys.orderingKey("time"), clock.Now().Unix(), "a9")
		b.do(t, "SET", s.keys.orderingKey("hot"), "x")
		clock.Add(time.Second)
		if n, err := s.Prune(ctx, clock.Now()); err == nil || n != 1 {
			t.Fatalf("Prune over a foreign ordering = %d, %v; want 1 and an error", n, err)
		}
		if _, err := s.Article(ctx, e.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("the article before the orphan: %v, want it deleted", err)
		}
		b.do(t, "DEL", s.keys.orderingKey("hot"))
		if n, err := s.Prune(ctx, clock.Now()); err != nil || n != 0 {
			t.Errorf("Prune of the orphan = %d, %v; want 0", n, err)
		}
		if n, err := s.Count(ctx); err != nil || n != 0 {
			t.Errorf("Count = %d, %v; want 0", n, err)
		}
	})
}
