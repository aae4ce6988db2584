package voting

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func pageIDs(list []Article) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}

func mustGroupPage(t testing.TB, s *Store, group string, order Order, page int) []Article {
	t.Helper()
	list, err := s.GroupArticles(ctx, group, order, page)
	if err != nil {
		t.Fatalf("GroupArticles(%q, %v, %d): %v", group, order, page, err)
	}
	return list
}

// TestGroupPagesMatchModel checks every page of every group, in every
// order, against a brute-force intersection of random data.
func TestGroupPagesMatchModel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithPageSize(7))
		rng := rand.New(rand.NewSource(2))
		groups := []string{"go", "redis", "go:redis", "cache:score:go", "Ünïcode group"}
		members := map[string]map[string]bool{}
		for _, g := range groups {
			members[g] = map[string]bool{}
		}
		const n = 40
		for i := 0; i < n; i++ {
			a := mustPost(t, s, "p", "t")
			for u := 0; u < rng.Intn(6); u++ {
				mustVote(t, s, "u"+strconv.Itoa(u), a.ID, VoteType(rng.Intn(3)-1))
			}
			var in []string
			for _, g := range groups {
				if rng.Intn(2) == 0 {
					in = append(in, g)
					members[g][a.ID] = true
				}
			}
			if err := s.AddToGroups(ctx, a.ID, in...); err != nil {
				t.Fatal(err)
			}
			clock.Add(time.Duration(1+rng.Intn(300)) * time.Second)
		}
		// Some removals, before any page is cached.
		for _, id := range []string{"3", "9", "27"} {
			if err := s.RemoveFromGroups(ctx, id, groups...); err != nil {
				t.Fatal(err)
			}
			for _, g := range groups {
				delete(members[g], id)
			}
		}
		all := make(map[string]Article)
		for _, id := range ids(n) {
			a, err := s.Article(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			all[id] = a
		}
		for _, g := range groups {
			for _, order := range []Order{ScoreDesc, ScoreAsc, TimeDesc, TimeAsc} {
				var got []string
				for page := 1; ; page++ {
					list := mustGroupPage(t, s, g, order, page)
					if len(list) == 0 {
						break
					}
					got = append(got, pageIDs(list)...)
				}
				want := modelOrder(all, members[g], order)
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("group %q %v:\n got %v\nwant %v", g, order, got, want)
				}
			}
			// The caches hold the real scores and post times: nothing of
			// the group set's own member scores leaks in.
			for id := range members[g] {
				a := all[id]
				for key, want := range map[string]float64{
					s.keys.cacheKey(g, ScoreDesc): a.Score,
					s.keys.cacheKey(g, TimeDesc):  float64(a.Posted.Unix()),
				} {
					got, err := redis.Float64(b.do(t, "ZSCORE", key, id), nil)
					if err != nil || got != want {
						t.Errorf("%s holds %s at %v, %v; want %v", key, id, got, err, want)
					}
				}
			}
			gs, err := s.Groups(ctx, "1")
			if err != nil || !sort.StringsAreSorted(gs) {
				t.Fatalf("Groups = %v, %v; want sorted", gs, err)
			}
		}
	})
}

// modelOrder sorts the member articles as Redis orders a sorted set: by
// score, ties by member bytes, both reversed for descending orders.
func modelOrder(all map[string]Article, in map[string]bool, order Order) []string {
	var list []Article
	for id := range in {
		list = append(list, all[id])
	}
	key := func(a Article) float64 {
		if order == TimeDesc || order == TimeAsc {
			return float64(a.Posted.Unix())
		}
		return a.Score
	}
	sort.Slice(list, func(i, j int) bool {
		ki, kj := key(list[i]), key(list[j])
		if ki != kj {
			return ki < kj
		}
		return list[i].ID < list[j].ID
	})
	ids := pageIDs(list)
	if order == ScoreDesc || order == TimeDesc {
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	}
	return ids
}

func TestGroupCacheTTLAndStaleness(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const ttl = 400 * time.Millisecond
		s, clock := newStore(t, b, WithGroupCacheTTL(ttl))
		first := mustPost(t, s, "p", "first")
		clock.Add(time.Hour)
		second := mustPost(t, s, "p", "second")
		for _, a := range []Article{first, second} {
			if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
				t.Fatal(err)
			}
		}
		checkCacheTTLs := func(when string) {
			t.Helper()
			for _, k := range b.storeKeys(t, s) {
				if strings.Contains(k, ":cache:") {
					if got := b.ttl(t, k); got <= 0 || got > ttl {
						t.Fatalf("%s: cache key %s has TTL %v, want in (0, %v]", when, k, got, ttl)
					}
				}
			}
		}
		if got := pageIDs(mustGroupPage(t, s, "g", ScoreDesc, 1)); fmt.Sprint(got) != "[2 1]" {
			t.Fatalf("page = %v, want [2 1]", got)
		}
		mustGroupPage(t, s, "g", TimeAsc, 1)
		checkCacheTTLs("after reads")
		// Within the TTL the order is stale, the fields are current.
		for i := 0; i < 10; i++ {
			mustVote(t, s, "u"+strconv.Itoa(i), first.ID, Upvote)
		}
		third := mustPost(t, s, "p", "third")
		if err := s.AddToGroups(ctx, third.ID, "g"); err != nil {
			t.Fatal(err)
		}
		checkCacheTTLs("after an addition")
		stale := mustGroupPage(t, s, "g", ScoreDesc, 1)
		if got := pageIDs(stale); fmt.Sprint(got) != "[2 1]" {
			t.Fatalf("page within the TTL = %v, want the cached [2 1]", got)
		}
		if stale[1].Upvotes != 11 {
			t.Fatalf("cached page shows %d upvotes, want the current 11", stale[1].Upvotes)
		}
		// After the TTL a read rebuilds it.
		b.elapse(ttl + 100*time.Millisecond)
		if got := pageIDs(mustGroupPage(t, s, "g", ScoreDesc, 1)); fmt.Sprint(got) != "[1 3 2]" {
			t.Fatalf("page after the TTL = %v, want [1 3 2]", got)
		}
		// Removals show at once, in both cached orderings.
		if err := s.RemoveFromGroups(ctx, first.ID, "g"); err != nil {
			t.Fatal(err)
		}
		checkCacheTTLs("after a removal")
		for _, order := range []Order{ScoreDesc, ScoreAsc, TimeDesc, TimeAsc} {
			for _, a := range mustGroupPage(t, s, "g", order, 1) {
				if a.ID == first.ID {
					t.Fatalf("%v: removed article still in the page", order)
				}
			}
		}
		if err := s.Delete(ctx, third.ID); err != nil {
			t.Fatal(err)
		}
		checkCacheTTLs("after a delete")
		if got := pageIDs(mustGroupPage(t, s, "g", TimeDesc, 1)); fmt.Sprint(got) != "[2]" {
			t.Fatalf("page after removal and delete = %v, want [2]", got)
		}
	})
}

// TestGroupColdCacheStampede has many readers hit a cold group at once:
// the cache is built once.
func TestGroupColdCacheStampede(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for i := 0; i < 30; i++ {
			a := mustPost(t, s, "p", "t")
			if err := s.AddToGroups(ctx, a.ID, "hot"); err != nil {
				t.Fatal(err)
			}
		}
		const readers = 50
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, readers)
		for i := 0; i < readers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				list, err := s.GroupArticles(ctx, "hot", ScoreDesc, 1)
				if err == nil && len(list) != DefaultPageSize {
					err = fmt.Errorf("page of %d articles", len(list))
				}
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := s.rebuilds.Load(); n != 1 {
			t.Fatalf("%d readers of a cold group built its cache %d times, want 1", readers, n)
		}
		t.Logf("%d concurrent readers of a cold group: %d build", readers, s.rebuilds.Load())
	})
}

func TestGroupMembership(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "p", "t")
		if err := s.AddToGroups(ctx, a.ID, "b", "a", "b"); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToGroups(ctx, a.ID, "a"); err != nil { // twice: a no-op
			t.Fatal(err)
		}
		if gs, err := s.Groups(ctx, a.ID); err != nil || fmt.Sprint(gs) != "[a b]" {
			t.Fatalf("Groups = %v, %v; want [a b]", gs, err)
		}
		if err := s.RemoveFromGroups(ctx, a.ID, "a", "never"); err != nil {
			t.Fatal(err)
		}
		if gs, err := s.Groups(ctx, a.ID); err != nil || fmt.Sprint(gs) != "[b]" {
			t.Fatalf("Groups = %v, %v; want [b]", gs, err)
		}
		for name, err := range map[string]error{
			"add unknown":    s.AddToGroups(ctx, "404", "a"),
			"remove unknown": s.RemoveFromGroups(ctx, "404", "a"),
			"delete unknown": s.Delete(ctx, "404"),
		} {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: %v, want ErrNotFound", name, err)
			}
		}
		if _, err := s.Groups(ctx, "404"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Groups of unknown: %v, want ErrNotFound", err)
		}
		for _, g := range []string{"", " ", "a\nb", "\xff", strings.Repeat("g", MaxNameLen+1)} {
			if err := s.AddToGroups(ctx, a.ID, g); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("AddToGroups(%.20q) = %v, want ErrInvalidArgument", g, err)
			}
			if _, err := s.GroupArticles(ctx, g, ScoreDesc, 1); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("GroupArticles(%.20q) = %v, want ErrInvalidArgument", g, err)
			}
		}
		if _, err := s.GroupArticles(ctx, "b", ScoreDesc, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("page 0: %v, want ErrInvalidArgument", err)
		}
		if _, err := s.GroupArticles(ctx, "b", Order(7), 1); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Order(7): %v, want ErrInvalidArgument", err)
		}
		if list := mustGroupPage(t, s, "unknown", ScoreDesc, 1); len(list) != 0 {
			t.Errorf("unknown group page = %v, want empty", list)
		}
		if list := mustGroupPage(t, s, "b", ScoreDesc, 2); len(list) != 0 {
			t.Errorf("page past the end = %v, want empty", list)
		}
	})
}

// TestDeleteLeavesNothing deletes an article that is voted on, grouped and
// cached, then scans every key of the store for any mention of it.
func TestDeleteLeavesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		keep := mustPost(t, s, "p", "keep")
		gone := mustPost(t, s, "p", "gone")
		for _, a := range []Article{keep, gone} {
			mustVote(t, s, "u", a.ID, Downvote)
			if err := s.AddToGroups(ctx, a.ID, "g1", "g2"); err != nil {
				t.Fatal(err)
			}
		}
		for _, order := range []Order{ScoreDesc, TimeAsc} {
			mustGroupPage(t, s, "g1", order, 1)
			mustGroupPage(t, s, "g2", order, 1)
		}
		if err := s.Delete(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		for _, k := range b.storeKeys(t, s) {
			if strings.HasSuffix(k, ":"+gone.ID) {
				t.Errorf("key %s is left", k)
			}
			switch b.do(t, "TYPE", k) {
			case "zset":
				if b.do(t, "ZSCORE", k, gone.ID) != nil {
					t.Errorf("zset %s still holds %s", k, gone.ID)
				}
			case "set":
				if b.do(t, "SISMEMBER", k, gone.ID).(int64) != 0 {
					t.Errorf("set %s still holds %s", k, gone.ID)
				}
			}
		}
		if _, err := s.Article(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("Article after Delete: %v", err)
		}
		if _, err := s.Vote(ctx, "u", gone.ID, Upvote); !errors.Is(err, ErrNotFound) {
			t.Errorf("Vote after Delete: %v", err)
		}
		if err := s.Delete(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("second Delete: %v", err)
		}
		if got := pageIDs(mustGroupPage(t, s, "g2", TimeAsc, 1)); fmt.Sprint(got) != "[1]" {
			t.Errorf("group page after Delete = %v, want [1]", got)
		}
		if list, err := s.Articles(ctx, ScoreDesc, 1); err != nil || fmt.Sprint(pageIDs(list)) != "[1]" {
			t.Errorf("front page after Delete = %v, %v", pageIDs(list), err)
		}
		checkInvariant(t, s, 432, []string{keep.ID}, []string{"p", "u"})
	})
}
