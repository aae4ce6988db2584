package voting

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/testclock"
)

// everyOrder is every Order constant; extraOrders the ones WithOrders
// enables.
var (
	everyOrder  = []Order{ScoreDesc, ScoreAsc, TimeDesc, TimeAsc, Top, Hot, Best, Controversial}
	extraOrders = []Order{Top, Hot, Best, Controversial}
)

func TestOrderText(t *testing.T) {
	for _, c := range []struct {
		o    Order
		name string
	}{
		{ScoreDesc, "score-desc"}, {ScoreAsc, "score-asc"}, {TimeDesc, "time-desc"}, {TimeAsc, "time-asc"},
		{Top, "top"}, {Hot, "hot"}, {Best, "best"}, {Controversial, "controversial"},
	} {
		if !c.o.Valid() {
			t.Errorf("%d: not Valid", int(c.o))
		}
		if s := c.o.String(); s != c.name {
			t.Errorf("Order(%d).String() = %q, want %q", int(c.o), s, c.name)
		}
		if o, err := ParseOrder(c.name); err != nil || o != c.o {
			t.Errorf("ParseOrder(%q) = %v, %v; want %v", c.name, o, err, c.o)
		}
		if b, err := c.o.MarshalText(); err != nil || string(b) != c.name {
			t.Errorf("%v.MarshalText() = %q, %v", c.o, b, err)
		}
		var o Order = -7
		if err := o.UnmarshalText([]byte(c.name)); err != nil || o != c.o {
			t.Errorf("UnmarshalText(%q) = %v, %v", c.name, o, err)
		}
	}
	for _, name := range []string{"", "Top", "HOT", " best", "best ", "Score", "newest", "rising", "score-", "desc", "Order(4)", "4", "top\x00"} {
		o, err := ParseOrder(name)
		if !errors.Is(err, ErrInvalidArgument) || o.Valid() {
			t.Errorf("ParseOrder(%q) = %v (valid %v), %v; want an invalid Order and ErrInvalidArgument", name, o, o.Valid(), err)
		}
		u := Hot
		if err := u.UnmarshalText([]byte(name)); !errors.Is(err, ErrInvalidArgument) || u != Hot {
			t.Errorf("UnmarshalText(%q) = %v, %v; want ErrInvalidArgument and the value untouched", name, u, err)
		}
	}
	// The short names parse, and String gives the full name back.
	for name, want := range map[string]Order{"score": ScoreDesc, "time": TimeDesc, "new": TimeDesc, "old": TimeAsc} {
		if o, err := ParseOrder(name); err != nil || o != want {
			t.Errorf("ParseOrder(%q) = %v, %v; want %v", name, o, err, want)
		}
		var u Order
		if err := u.UnmarshalText([]byte(name)); err != nil || u != want {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", name, u, err, want)
		}
	}
	for _, c := range []struct {
		o    Order
		name string
	}{{-1, "Order(-1)"}, {8, "Order(8)"}, {100, "Order(100)"}, {math.MinInt, "Order(" + strconv.Itoa(math.MinInt) + ")"}} {
		if c.o.Valid() {
			t.Errorf("%d: Valid", int(c.o))
		}
		if s := c.o.String(); s != c.name {
			t.Errorf("Order(%d).String() = %q, want %q", int(c.o), s, c.name)
		}
		if b, err := c.o.MarshalText(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Order(%d).MarshalText() = %q, %v; want ErrInvalidArgument", int(c.o), b, err)
		}
	}
}

func TestOrderJSON(t *testing.T) {
	type query struct {
		Order Order `json:"order"`
		Page  int   `json:"page"`
	}
	for _, o := range everyOrder {
		b, err := json.Marshal(query{o, 2})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"order":"` + o.String() + `","page":2}`; string(b) != want {
			t.Errorf("Marshal = %s, want %s", b, want)
		}
		var q query
		if err := json.Unmarshal(b, &q); err != nil || q != (query{o, 2}) {
			t.Errorf("Unmarshal(%s) = %+v, %v", b, q, err)
		}
	}
	if b, err := json.Marshal(query{Order(8), 1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Marshal of Order(8) = %s, %v; want ErrInvalidArgument", b, err)
	}
	var q query
	if err := json.Unmarshal([]byte(`{"order":"newest"}`), &q); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf(`Unmarshal of "newest" = %v; want ErrInvalidArgument`, err)
	}
	if err := json.Unmarshal([]byte(`{"order":4}`), &q); err == nil {
		t.Errorf("Unmarshal of a number = %+v; want an error", q)
	}
}

func TestWithOrdersInvalid(t *testing.T) {
	for _, o := range []Order{-1, 8, 42} {
		if _, err := New(&redis.Pool{}, WithOrders(Top, o)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("WithOrders(Top, %d): New = %v, want ErrInvalidArgument", int(o), err)
		}
	}
	// The orders that are always on may be named too.
	if _, err := New(&redis.Pool{}, WithOrders(ScoreDesc, Top, Top), WithOrders(Hot)); err != nil {
		t.Errorf("New with repeated and always-on orders: %v", err)
	}
}

// orderValue is an article's value in order o, computed in Go from its
// returned counts and post time; weight is the vote weight it was posted
// with. Best and Controversial are worked out here in their textbook
// forms, apart from Order.Value's steps, which follow lib/record.lua's;
// the other orders' formulas are Value's own.
func orderValue(o Order, a Article, weight float64) float64 {
	up, down := float64(a.Upvotes), float64(a.Downvotes)
	n := up + down
	switch o {
	case Best:
		// The Wilson score interval's lower bound, in its textbook form.
		if n == 0 {
			return 0
		}
		const z = 1.281551565545
		p := up / n
		return (p + z*z/(2*n) - z*math.Sqrt(p*(1-p)/n+z*z/(4*n*n))) / (1 + z*z/n)
	case Controversial:
		if up == 0 || down == 0 {
			return 0
		}
		return math.Pow(n, math.Min(up, down)/math.Max(up, down))
	}
	if !o.Valid() {
		panic(fmt.Sprintf("no formula for %v", o))
	}
	return o.Value(a.Posted, weight, a.Upvotes, a.Downvotes)
}

// near reports whether two values agree to a relative 1e-12: Lua's
// log10, sqrt and pow, and the order of its operations, may differ from
// Go's in the last bits.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// sameValue reports whether v, a value the store keeps in o's ordering,
// is Order.Value's, want: to the bit in the orders Value promises it,
// near it in the others.
func sameValue(o Order, v, want float64) bool {
	switch o {
	case ScoreDesc, ScoreAsc, TimeDesc, TimeAsc, Top:
		return v == want
	}
	return near(v, want)
}

// idNum returns an article id as a number.
func idNum(t testing.TB, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", id, err)
	}
	return n
}

// checkOrder fails t unless list is in order o by orderValue: values
// descending (ascending in ScoreAsc and TimeAsc), equal values by id as a
// number, newest first (oldest first in the ascending orders). Values
// that are only near each other may come in either order.
func checkOrder(t testing.TB, o Order, list []Article, weight float64) {
	t.Helper()
	_, desc := o.ordering()
	for i := 1; i < len(list); i++ {
		a, b := list[i-1], list[i]
		va, vb := orderValue(o, a, weight), orderValue(o, b, weight)
		ia, ib := idNum(t, a.ID), idNum(t, b.ID)
		if !desc {
			va, vb, ia, ib = -va, -vb, -ia, -ib
		}
		switch {
		case va == vb && ia < ib:
			t.Errorf("%v: tie %v broken as %s before %s", o, orderValue(o, a, weight), a.ID, b.ID)
		case va != vb && !near(va, vb) && va < vb:
			t.Errorf("%v: %s (%v, up %d down %d) before %s (%v, up %d down %d)", o,
				a.ID, orderValue(o, a, weight), a.Upvotes, a.Downvotes, b.ID, orderValue(o, b, weight), b.Upvotes, b.Downvotes)
		}
	}
}

// topBucketKey is the TopSince bucket of size seconds that an article
// posted at posted (Unix seconds) is in.
func topBucketKey(s *Store, size, posted int64) string { return s.keys.topBucketKey(size, posted) }

// checkStored checks the value each article has in the sorted set of
// each ordering, and in its TopSince buckets where it has Top, against
// orderValue. orders are the optional orders the articles were posted
// with.
func checkStored(t testing.TB, b *backend, s *Store, list []Article, weight float64, orders []Order) {
	t.Helper()
	has := map[Order]bool{ScoreDesc: true, TimeDesc: true}
	for _, o := range orders {
		has[o] = true
	}
	for _, a := range list {
		m := member(a.ID)
		for _, o := range []Order{ScoreDesc, TimeDesc, Top, Hot, Best, Controversial} {
			name, _ := o.ordering()
			v, err := redis.Float64(b.do(t, "ZSCORE", s.keys.orderingKey(name), m), nil)
			switch {
			case !has[o] && err != redis.ErrNil:
				t.Errorf("article %s without %v is in %s: %v, %v", a.ID, o, name, v, err)
			case has[o] && err != nil:
				t.Errorf("article %s: %s: %v", a.ID, name, err)
			case has[o] && !near(v, orderValue(o, a, weight)):
				t.Errorf("article %s (up %d down %d): %s value %v, want %v", a.ID, a.Upvotes, a.Downvotes, name, v, orderValue(o, a, weight))
			case has[o] && !sameValue(o, v, o.Value(a.Posted, weight, a.Upvotes, a.Downvotes)):
				t.Errorf("article %s (up %d down %d): %s value %v, %v.Value %v", a.ID, a.Upvotes, a.Downvotes, name, v, o, o.Value(a.Posted, weight, a.Upvotes, a.Downvotes))
			}
		}
		for _, size := range []int64{600, 86400, 2592000} {
			key := topBucketKey(s, size, a.Posted.Unix())
			v, err := redis.Float64(b.do(t, "ZSCORE", key, m), nil)
			switch {
			case !has[Top] && err != redis.ErrNil:
				t.Errorf("article %s without Top is in %s: %v, %v", a.ID, key, v, err)
			case has[Top] && (err != nil || v != float64(a.Upvotes-a.Downvotes)):
				t.Errorf("article %s (up %d down %d): %s holds %v, %v", a.ID, a.Upvotes, a.Downvotes, key, v, err)
			}
		}
	}
}

// readPages reads pages from 1 until an empty one and returns them joined;
// every page but the last non-empty one must be full.
func readPages(t testing.TB, size int, read func(page int) ([]Article, error)) []Article {
	t.Helper()
	var all []Article
	for page := 1; ; page++ {
		list, err := read(page)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if len(list) == 0 {
			return all
		}
		if len(all)%size != 0 || len(list) > size {
			t.Fatalf("page %d of %d articles after %d articles, with pages of %d", page, len(list), len(all), size)
		}
		all = append(all, list...)
	}
}

// allArticles returns every article of s in order, read page by page.
func allArticles(t testing.TB, s *Store, order Order) []Article {
	t.Helper()
	return readPages(t, s.pageSize, func(page int) ([]Article, error) { return s.Articles(ctx, order, page) })
}

func idsOf(list []Article) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}

func sameIDs(a, b []Article) bool {
	return strings.Join(idsOf(a), " ") == strings.Join(idsOf(b), " ")
}

// restrictTo returns the articles of list whose ids are in set, in list's order.
func restrictTo(list []Article, set map[string]bool) []Article {
	var out []Article
	for _, a := range list {
		if set[a.ID] {
			out = append(out, a)
		}
	}
	return out
}

// checkAllOrders reads every order's pages of the store and of each
// group, and checks them against the formulas, the stored values and
// each other: a group's pages are the store's restricted to its members.
// want is the set of live article ids, groups each group's members.
func checkAllOrders(t *testing.T, b *backend, s *Store, size int, weight float64, want map[string]bool, groups map[string]map[string]bool) {
	t.Helper()
	for _, o := range everyOrder {
		all := readPages(t, size, func(page int) ([]Article, error) { return s.Articles(ctx, o, page) })
		if len(all) != len(want) || len(restrictTo(all, want)) != len(want) {
			t.Fatalf("%v: articles %v, want the %d of %v", o, idsOf(all), len(want), want)
		}
		checkOrder(t, o, all, weight)
		if o == ScoreDesc {
			checkStored(t, b, s, all, weight, extraOrders)
		}
		for g, members := range groups {
			got := readPages(t, size, func(page int) ([]Article, error) { return s.GroupArticles(ctx, g, o, page) })
			if w := restrictTo(all, members); !sameIDs(got, w) {
				t.Errorf("group %s in %v: %v, want %v", g, o, idsOf(got), idsOf(w))
			}
		}
	}
}

// TestOrders checks every order, of all articles and of groups, against
// its formula over random votes, while votes, group changes and deletes
// keep the cached group pages and every index exact.
func TestOrders(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const size, weight, n = 7, 0.5, 40
		s, clock := newStore(t, b, WithOrders(Controversial, Best, Hot, Top), WithPageSize(size), WithVoteWeight(weight))
		rng := rand.New(rand.NewSource(12))
		live := map[string]bool{}
		groups := map[string]map[string]bool{"g1": {}, "g2": {}}
		var ids []string
		for i := 0; i < n; i++ {
			a := mustPost(t, s, "p"+strconv.Itoa(rng.Intn(3)), "t"+strconv.Itoa(i))
			live[a.ID] = true
			ids = append(ids, a.ID)
			for g, members := range groups {
				if rng.Intn(2) == 0 {
					if err := s.AddToGroups(ctx, a.ID, g); err != nil {
						t.Fatal(err)
					}
					members[a.ID] = true
				}
			}
			// Some posts share a second, some are hours apart.
			clock.Add(time.Duration(rng.Intn(3)) * time.Duration(rng.Intn(5000)) * time.Second)
		}
		users := []string{"p0", "p1", "p2", "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"}
		vote := func(count int) {
			for i := 0; i < count; i++ {
				id := ids[rng.Intn(len(ids))]
				if live[id] {
					mustVote(t, s, users[rng.Intn(len(users))], id, VoteType(rng.Intn(3)-1))
				}
			}
		}
		vote(300)
		checkAllOrders(t, b, s, size, weight, live, groups) // builds the group caches
		vote(300)
		checkAllOrders(t, b, s, size, weight, live, groups) // from the caches the votes kept
		// Group changes and deletes keep caches and indexes exact.
		for _, id := range ids[:12] {
			switch rng.Intn(3) {
			case 0:
				if err := s.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
				delete(live, id)
				for _, members := range groups {
					delete(members, id)
				}
			case 1:
				if err := s.RemoveFromGroups(ctx, id, "g1", "g2"); err != nil {
					t.Fatal(err)
				}
				delete(groups["g1"], id)
				delete(groups["g2"], id)
			case 2:
				if err := s.AddToGroups(ctx, id, "g1"); err != nil {
					t.Fatal(err)
				}
				groups["g1"][id] = true
			}
		}
		vote(200)
		checkAllOrders(t, b, s, size, weight, live, groups)
		checkNoTrace(t, b, s, ids, live, groups)
	})
}

// checkNoTrace checks that no sorted set of the store (orderings, TopSince
// buckets, cached group pages) holds an article of ids that is not live,
// nor a group's cache an article outside the group.
func checkNoTrace(t testing.TB, b *backend, s *Store, ids []string, live map[string]bool, groups map[string]map[string]bool) {
	t.Helper()
	for _, key := range b.storeKeys(t, s) {
		typ, err := redis.String(b.do(t, "TYPE", key), nil)
		if err != nil || typ != "zset" {
			continue
		}
		var group map[string]bool
		if strings.HasPrefix(key, s.keys.cache) {
			group = groups[key[strings.LastIndexByte(key, ':')+1:]]
		}
		for _, id := range ids {
			if live[id] && (group == nil || group[id]) {
				continue
			}
			if v := b.do(t, "ZSCORE", key, member(id)); v != nil {
				t.Errorf("%s still holds article %s (live %v)", key, id, live[id])
			}
		}
	}
}

// TestOrderTies checks that equal values are in id order, as numbers, in
// every order: newest first in descending orders, oldest first in
// ascending ones, on the store's pages, group pages and TopSince.
func TestOrderTies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Top, Hot, Best, Controversial), WithPageSize(5))
		mustPost(t, s, "p", "older") // id 1, a day before the rest
		clock.Add(24 * time.Hour)
		var desc, asc []string
		for i := 0; i < 11; i++ { // ids 2 to 12, in one second: equal in every order
			a := mustPost(t, s, "p", "t"+strconv.Itoa(i))
			if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
				t.Fatal(err)
			}
			asc = append(asc, a.ID)
			desc = append([]string{a.ID}, desc...)
		}
		// Votes that leave every article where it started.
		for _, id := range asc {
			mustVote(t, s, "u", id, Downvote)
			mustVote(t, s, "u", id, NoVote)
		}
		for _, o := range everyOrder {
			want := desc
			if _, d := o.ordering(); !d {
				want = asc
			}
			all := readPages(t, 5, func(page int) ([]Article, error) { return s.Articles(ctx, o, page) })
			if got := idsOf(all); o == TimeAsc || o == ScoreAsc {
				if strings.Join(got[1:], " ") != strings.Join(want, " ") {
					t.Errorf("%v: %v, want 1 then %v", o, got, want)
				}
			} else if strings.Join(got[:len(got)-1], " ") != strings.Join(want, " ") {
				t.Errorf("%v: %v, want %v then 1", o, got, want)
			}
			group := readPages(t, 5, func(page int) ([]Article, error) { return s.GroupArticles(ctx, "g", o, page) })
			if got := idsOf(group); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("group in %v: %v, want %v", o, got, want)
			}
		}
		for _, c := range []struct {
			d    time.Duration
			want []string
		}{
			{time.Second, desc},                         // the buckets
			{48 * time.Hour, append(desc[:11:11], "1")}, // the shortcut
		} {
			top := readPages(t, 5, func(page int) ([]Article, error) { return s.TopSince(ctx, c.d, page) })
			if got := idsOf(top); strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("TopSince(%v): %v, want %v", c.d, got, c.want)
			}
		}
	})
}

// TestOrdersDisabled checks that a store pays nothing for orders it has
// not enabled: they are refused, and it keeps none of their keys.
func TestOrdersDisabled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, enabled := range [][]Order{nil, {Hot}, {Top}, {Best, Controversial}} {
			t.Run(fmt.Sprint(enabled), func(t *testing.T) {
				s, clock := newStore(t, b, WithOrders(enabled...))
				on := map[Order]bool{}
				for _, o := range enabled {
					on[o] = true
				}
				for i := 0; i < 3; i++ {
					a := mustPost(t, s, "p", "t"+strconv.Itoa(i))
					mustVote(t, s, "u", a.ID, Downvote)
					mustVote(t, s, "v", a.ID, Upvote)
					if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
						t.Fatal(err)
					}
					clock.Add(time.Hour)
				}
				for _, o := range everyOrder {
					if _, err := s.GroupArticles(ctx, "g", o, 1); err != nil && !errors.Is(err, ErrInvalidArgument) {
						t.Fatal(err)
					}
				}
				if err := s.Delete(ctx, "2"); err != nil {
					t.Fatal(err)
				}
				if err := s.RemoveFromGroups(ctx, "3", "g"); err != nil {
					t.Fatal(err)
				}
				for _, o := range extraOrders {
					_, err1 := s.Articles(ctx, o, 1)
					_, err2 := s.GroupArticles(ctx, "g", o, 1)
					if on[o] != (err1 == nil) || on[o] != (err2 == nil) {
						t.Errorf("%v (enabled %v): Articles %v, GroupArticles %v", o, on[o], err1, err2)
					}
					if !on[o] && (!errors.Is(err1, ErrInvalidArgument) || !errors.Is(err2, ErrInvalidArgument)) {
						t.Errorf("disabled %v: Articles %v, GroupArticles %v; want ErrInvalidArgument", o, err1, err2)
					}
				}
				if _, err := s.TopSince(ctx, time.Hour, 1); on[Top] != (err == nil) || !on[Top] && !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("TopSince with Top enabled %v: %v", on[Top], err)
				}
				for _, key := range b.storeKeys(t, s) {
					for _, o := range extraOrders {
						name, _ := o.ordering()
						if !on[o] && (key == s.keys.orderingKey(name) || strings.HasPrefix(key, s.keys.cache+name+":")) {
							t.Errorf("key %s of disabled %v", key, o)
						}
					}
					if !on[Top] && strings.HasPrefix(key, s.keys.topBucket) {
						t.Errorf("TopSince bucket %s without Top", key)
					}
				}
			})
		}
	})
}

// TestOrdersPerArticle checks that each article keeps the orders it was
// posted with, whichever store (of the same prefix) votes on it, deletes
// it or reads it.
func TestOrdersPerArticle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		with, clock := newStore(t, b, WithOrders(extraOrders...))
		without, err := New(with.pool, WithKeyPrefix(with.keys.prefix), WithClock(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		// The stores take turns on the prefix, each recording its options
		// first (Reconfigure), as a rolling deploy would.
		on := func(s *Store) *Store {
			t.Helper()
			if _, err := s.Reconfigure(ctx); err != nil {
				t.Fatal(err)
			}
			return s
		}
		a := mustPost(t, on(with), "p", "with")
		clock.Add(time.Minute)
		c := mustPost(t, on(without), "p", "without")
		for _, s := range []*Store{with, without} {
			s := on(s)
			if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
				t.Fatal(err)
			}
		}
		if err := on(with).AddToGroups(ctx, c.ID, "g"); err != nil {
			t.Fatal(err)
		}
		if _, err := on(with).GroupArticles(ctx, "g", Hot, 1); err != nil { // a cache for the votes to keep
			t.Fatal(err)
		}
		users := []string{"u1", "u2", "u3", "u4", "u5"}
		for i, u := range users {
			mustVote(t, on(without), u, a.ID, []VoteType{Upvote, Downvote}[i%2])
			mustVote(t, on(with), u, c.ID, Downvote)
		}
		mustVote(t, on(without), "p", a.ID, Downvote)
		got, err := on(with).Article(ctx, a.ID)
		if err != nil || got.Upvotes != 3 || got.Downvotes != 3 {
			t.Fatalf("article = %+v, %v", got, err)
		}
		checkStored(t, b, on(with), []Article{got}, DefaultVoteWeight, extraOrders)
		cs, err := on(with).Article(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkStored(t, b, on(with), []Article{cs}, DefaultVoteWeight, nil)
		for _, o := range extraOrders {
			for _, group := range []bool{false, true} {
				list, err := on(with).Articles(ctx, o, 1)
				if group {
					list, err = on(with).GroupArticles(ctx, "g", o, 1)
				}
				if err != nil || len(list) != 1 || list[0] != got {
					t.Errorf("%v (group %v): %+v, %v; want only %+v", o, group, list, err, got)
				}
			}
		}
		// TopSince sees the article posted with Top, on the shortcut, and
		// not the other, from the edge of the period.
		clock.Add(time.Minute)
		if list, err := on(with).TopSince(ctx, time.Hour, 1); err != nil || len(list) != 1 || list[0] != got {
			t.Errorf("TopSince(1h) = %+v, %v; want only %+v", list, err, got)
		}
		if list, err := on(with).TopSince(ctx, 90*time.Second, 1); err != nil || len(list) != 0 {
			t.Errorf("TopSince(90s) = %+v, %v; want none", list, err)
		}
		for _, s := range []*Store{without, with} {
			s := on(s)
			if n, err := s.Count(ctx); err != nil || n != 2 {
				t.Errorf("Count = %d, %v; want 2", n, err)
			}
		}
		// Deleted by the store without orders, it leaves none behind.
		if err := on(without).Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		checkNoTrace(t, b, on(with), []string{a.ID, c.ID}, map[string]bool{c.ID: true}, map[string]map[string]bool{"g": {c.ID: true}})
		for _, o := range extraOrders {
			if list, err := on(with).Articles(ctx, o, 1); err != nil || len(list) != 0 {
				t.Errorf("%v after the delete: %v, %v", o, idsOf(list), err)
			}
		}
	})
}

// topSinceModel is TopSince by brute force: the articles of all posted at
// or after now minus d, by net votes, ties by id newest first, cut at
// MaxTopSince, then paged.
func topSinceModel(t testing.TB, all []Article, now time.Time, d time.Duration, page, size int) []Article {
	t.Helper()
	cutoff := now.Add(-d)
	var list []Article
	for _, a := range all {
		if !a.Posted.Before(cutoff) {
			list = append(list, a)
		}
	}
	slices.SortFunc(list, func(a, b Article) int {
		return cmp.Or(
			cmp.Compare(b.Upvotes-b.Downvotes, a.Upvotes-a.Downvotes),
			cmp.Compare(idNum(t, b.ID), idNum(t, a.ID)),
		)
	})
	list = list[:min(len(list), MaxTopSince)]
	lo, hi := min((page-1)*size, len(list)), min(page*size, len(list))
	return list[lo:hi]
}

// checkTopSince compares every page of TopSince(d), to the first empty
// one, with the model.
func checkTopSince(t testing.TB, s *Store, all []Article, now time.Time, d time.Duration, size int) {
	t.Helper()
	for page := 1; ; page++ {
		got, err := s.TopSince(ctx, d, page)
		if err != nil {
			t.Fatalf("TopSince(%v, %d): %v", d, page, err)
		}
		want := topSinceModel(t, all, now, d, page, size)
		if len(got) != len(want) {
			t.Fatalf("TopSince(%v, %d) at %v: %v, want %v", d, page, now.Format(time.RFC3339Nano), idsOf(got), idsOf(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("TopSince(%v, %d) at %v: %v, want %v", d, page, now.Format(time.RFC3339Nano), idsOf(got), idsOf(want))
			}
		}
		// TopSinceFor reads the same page, in the same steps, and u1's
		// votes on it in its last.
		list, votes, err := s.TopSinceFor(ctx, "u1", d, page)
		wantArticlesView(t, s, "u1", fmt.Sprintf("TopSinceFor(u1, %v, %d)", d, page), list, votes, err, got, nil)
		if len(got) == 0 {
			return
		}
	}
}

// TestTopSinceEdges checks that a period includes an article posted at
// its start, to the second, and not one a second earlier, for whole and
// fractional periods starting at a day's first 10-minute bucket, in the
// middle of a bucket, and right after the oldest article (the shortcut).
func TestTopSinceEdges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		day := time.Date(2031, 3, 16, 0, 0, 0, 0, time.UTC)
		for _, c := range []struct {
			name  string
			start time.Time
			older bool // an article a day before the start
		}{
			{"day boundary", day, true},
			{"mid bucket", day.Add(10*time.Minute + 17*time.Second), true},
			{"oldest", day.Add(3*time.Hour + 59*time.Minute + 59*time.Second), false},
		} {
			s, clock := newStore(t, b, WithOrders(Top))
			if c.older {
				clock.Set(c.start.Add(-30 * time.Hour))
				mustPost(t, s, "p", "older")
			}
			clock.Set(c.start.Add(-time.Second))
			before := mustPost(t, s, "p", "before")
			clock.Set(c.start)
			at := mustPost(t, s, "p", "at")
			clock.Set(c.start.Add(time.Second))
			after := mustPost(t, s, "p", "after")
			now := c.start.Add(5*time.Hour + 3*time.Minute)
			clock.Set(now)
			d := now.Sub(c.start)
			for _, p := range []struct {
				d    time.Duration
				want []Article
			}{
				{d, []Article{after, at}},
				{d + time.Second, []Article{after, at, before}},
				{d - time.Second, []Article{after}},
				{d + time.Second/2, []Article{after, at}},
				{d - time.Second/2, []Article{after}},
				{d + time.Nanosecond, []Article{after, at}},
				{d - time.Nanosecond, []Article{after}},
			} {
				got, err := s.TopSince(ctx, p.d, 1)
				if err != nil || !sameIDs(got, p.want) || len(got) > 0 && got[0] != after {
					t.Errorf("%s: TopSince(%v) = %v, %v; want %v", c.name, p.d, idsOf(got), err, idsOf(p.want))
				}
			}
			// A clock a fraction past the second moves the start by that
			// fraction.
			clock.Set(now.Add(time.Second / 4))
			if got, err := s.TopSince(ctx, d, 1); err != nil || !sameIDs(got, []Article{after}) {
				t.Errorf("%s: TopSince(%v) a quarter second later = %v, %v; want %s", c.name, d, idsOf(got), err, after.ID)
			}
		}
	})
}

// TestTopSince compares TopSince with a brute-force model, for periods
// starting at every post time and a second or a fraction either side,
// over posts placed around 10-minute and day bucket boundaries over
// several days, posted out of time order, with many ties of net votes.
func TestTopSince(t *testing.T) {
	forEachBackendLong(t, func(t *testing.T, b *backend) {
		const size = 6
		s, clock := newStore(t, b, WithOrders(Top), WithPageSize(size))
		rng := rand.New(rand.NewSource(3))
		day := time.Date(2031, 3, 17, 0, 0, 0, 0, time.UTC)
		now := day.Add(26*time.Hour + 17*time.Minute + 23*time.Second)
		times := []time.Time{day.Add(-4 * 24 * time.Hour), now}
		for _, edge := range []time.Time{day.Add(-24 * time.Hour), day, day.Add(10 * time.Minute), day.Add(24 * time.Hour),
			day.Add(24*time.Hour + 20*time.Minute), now.Truncate(10 * time.Minute)} {
			for _, off := range []time.Duration{-601, -600, -599, -1, 0, 1, 599} {
				times = append(times, edge.Add(off*time.Second))
			}
		}
		for i := 0; i < 20; i++ {
			times = append(times, day.Add(-3*24*time.Hour+time.Duration(rng.Int63n(int64(now.Sub(day)+3*24*time.Hour)))).Truncate(time.Second))
		}
		rng.Shuffle(len(times), func(i, j int) { times[i], times[j] = times[j], times[i] })
		for i, at := range times {
			clock.Set(at)
			a := mustPost(t, s, "p", "t"+strconv.Itoa(i))
			for u := 0; u < rng.Intn(5); u++ {
				mustVote(t, s, "u"+strconv.Itoa(u), a.ID, VoteType(rng.Intn(3)-1))
			}
		}
		clock.Set(now)
		all := readPages(t, size, func(page int) ([]Article, error) { return s.Articles(ctx, TimeDesc, page) })
		if len(all) != len(times) {
			t.Fatalf("%d articles, want %d", len(all), len(times))
		}
		periods := []time.Duration{time.Nanosecond, time.Second, time.Hour, 400 * 24 * time.Hour}
		for i, at := range times {
			if !long && i%4 != 0 {
				continue // a quarter of the articles' ages, all under VOTING_LONG
			}
			d := now.Sub(at)
			periods = append(periods, d, d-time.Second, d+time.Second, d+time.Second/2, d-time.Second/2)
		}
		// With the edge read in one call, and in many: one member of the
		// edge bucket a call, so that the read by net votes gives up at
		// once and the edge is read in steps.
		var steps atomic.Int64
		hook(s, &hooks{before: func(cmd string, args []interface{}) error {
			if scriptName(cmd, args) == topSinceEdge.name {
				steps.Add(1)
			}
			return nil
		}})
		edges := []int{edgeStep, 1}
		if long {
			edges = []int{edgeStep, 2, 1}
		}
		for _, edge := range edges {
			s.edge = edge
			steps.Store(0)
			clock.Set(now)
			for _, d := range periods {
				if d > 0 {
					checkTopSince(t, s, all, now, d, size)
				}
			}
			// A fraction past the second.
			clock.Set(now.Add(700 * time.Millisecond))
			for _, d := range periods[:20] {
				checkTopSince(t, s, all, now.Add(700*time.Millisecond), d, size)
			}
			if edge < edgeStep && steps.Load() == 0 {
				t.Errorf("edge %d: no step of the edge", edge)
			}
		}
	})
}

// TestTopSinceDepth checks that TopSince lists the first MaxTopSince
// articles of a period, with a page size that does not divide it, and no
// more.
func TestTopSinceDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("posts over a thousand articles")
	}
	forEachBackendLong(t, func(t *testing.T, b *backend) {
		const size = 7
		s, clock := newStore(t, b, WithOrders(Top), WithPageSize(size))
		loadScripts(t, b.pool)
		rng := rand.New(rand.NewSource(5))
		clock.Add(-48 * time.Hour)
		mustPost(t, s, "p", "oldest")
		clock.Add(time.Hour)
		var ids []string
		for i := 0; i < MaxTopSince+5; i++ {
			a := mustPost(t, s, "p", "t"+strconv.Itoa(i))
			ids = append(ids, a.ID)
			clock.Add(time.Duration(rng.Intn(300)) * time.Second)
		}
		for i := 0; i < 200; i++ {
			mustVote(t, s, "u"+strconv.Itoa(rng.Intn(3)), ids[rng.Intn(len(ids))], VoteType(rng.Intn(3)-1))
		}
		now := clock.Now()
		all := readPages(t, size, func(page int) ([]Article, error) { return s.Articles(ctx, TimeDesc, page) })
		for _, edge := range []int{edgeStep, 1} {
			s.edge = edge
			for _, d := range []time.Duration{now.Sub(epoch.Add(-47 * time.Hour)), 100 * time.Hour} { // the buckets; the shortcut
				got := readPages(t, size, func(page int) ([]Article, error) { return s.TopSince(ctx, d, page) })
				want := topSinceModel(t, all, now, d, 1, MaxTopSince)
				if len(want) != MaxTopSince || !sameIDs(got, want) {
					t.Errorf("edge %d: TopSince(%v): %d articles, want the first %d of %d", edge, d, len(got), len(want), len(all))
				}
			}
		}
	})
}

func TestTopSinceBadArguments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top))
		mustPost(t, s, "p", "t")
		for _, c := range []struct {
			d    time.Duration
			page int
		}{{0, 1}, {-time.Second, 1}, {math.MinInt64, 1}, {time.Hour, 0}, {time.Hour, -1}, {time.Hour, math.MinInt}} {
			if list, err := s.TopSince(ctx, c.d, c.page); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("TopSince(%v, %d) = %v, %v; want ErrInvalidArgument", c.d, c.page, list, err)
			}
		}
		// Pages past the first MaxTopSince articles are empty, however long
		// the period.
		for _, page := range []int{MaxTopSince/DefaultPageSize + 1, MaxTopSince, math.MaxInt} {
			if list, err := s.TopSince(ctx, math.MaxInt64, page); err != nil || len(list) != 0 {
				t.Errorf("TopSince(forever, %d) = %v, %v; want empty", page, list, err)
			}
		}
		if list, err := s.TopSince(ctx, math.MaxInt64, 1); err != nil || len(list) != 1 {
			t.Errorf("TopSince(forever, 1) = %v, %v", list, err)
		}
		// An empty store.
		e, _ := newStore(t, b, WithOrders(Top))
		for _, d := range []time.Duration{time.Second, math.MaxInt64} {
			if list, err := e.TopSince(ctx, d, 1); err != nil || len(list) != 0 {
				t.Errorf("empty store: TopSince(%v) = %v, %v", d, list, err)
			}
		}
	})
}

// TestCount checks Count and GroupCount after posts, deletes, prunes and
// group changes.
func TestCount(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b)
		count := func(want int64, wantGroups map[string]int64) {
			t.Helper()
			if n, err := s.Count(ctx); err != nil || n != want {
				t.Errorf("Count = %d, %v; want %d", n, err, want)
			}
			for g, want := range wantGroups {
				if n, err := s.GroupCount(ctx, g); err != nil || n != want {
					t.Errorf("GroupCount(%q) = %d, %v; want %d", g, n, err, want)
				}
			}
		}
		count(0, map[string]int64{"a": 0})
		for i := 0; i < 5; i++ {
			mustPost(t, s, "p", "t"+strconv.Itoa(i))
			clock.Add(time.Minute)
		}
		count(5, map[string]int64{"a": 0})
		for _, c := range []struct {
			id     string
			groups []string
		}{{"1", []string{"a", "b"}}, {"2", []string{"a"}}, {"3", []string{"a", "a", "b"}}, {"1", []string{"a"}}, {"4", nil}} {
			if err := s.AddToGroups(ctx, c.id, c.groups...); err != nil {
				t.Fatal(err)
			}
		}
		count(5, map[string]int64{"a": 3, "b": 2, "c": 0, "ä b": 0})
		if err := s.RemoveFromGroups(ctx, "3", "b", "c"); err != nil {
			t.Fatal(err)
		}
		count(5, map[string]int64{"a": 3, "b": 1})
		if err := s.Delete(ctx, "2"); err != nil {
			t.Fatal(err)
		}
		count(4, map[string]int64{"a": 2, "b": 1})
		if err := s.Delete(ctx, "2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Delete again = %v", err)
		}
		count(4, map[string]int64{"a": 2, "b": 1})
		if n, err := s.Prune(ctx, epoch.Add(time.Minute+time.Second)); err != nil || n != 1 { // article 1
			t.Fatalf("Prune = %d, %v", n, err)
		}
		count(3, map[string]int64{"a": 1, "b": 0})
		if err := s.RemoveFromGroups(ctx, "3", "a"); err != nil {
			t.Fatal(err)
		}
		count(3, map[string]int64{"a": 0})
		for _, g := range []string{"", " ", "a\nb", string(make([]byte, MaxNameLen+1))} {
			if _, err := s.GroupCount(ctx, g); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("GroupCount(%.10q) = %v, want ErrInvalidArgument", g, err)
			}
		}
		// A foreign value at a key the count reads is an error, not a count.
		b.do(t, "SET", s.keys.groupKey("x"), "v")
		if n, err := s.GroupCount(ctx, "x"); err == nil {
			t.Errorf("GroupCount of a string = %d, want an error", n)
		}
	})
}

// TestOrderKeysForeign checks that a foreign value at one of the optional
// orders' keys fails Post, Vote and Delete before they write anything.
func TestOrderKeysForeign(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, c := range []struct {
			name string
			key  func(s *Store) string
		}{
			{"by:top", func(s *Store) string { return s.keys.orderingKey("top") }},
			{"by:controversial", func(s *Store) string { return s.keys.orderingKey("controversial") }},
			{"top:600", func(s *Store) string { return topBucketKey(s, 600, epoch.Unix()) }},
			{"top:86400", func(s *Store) string { return topBucketKey(s, 86400, epoch.Unix()) }},
		} {
			s, _ := newStore(t, b, WithOrders(extraOrders...))
			a := mustPost(t, s, "p", "t")
			if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
				t.Fatal(err)
			}
			key := c.key(s)
			b.do(t, "DEL", key)
			b.do(t, "SET", key, "foreign")
			if _, err := s.Post(ctx, "p", "u", ""); err == nil {
				t.Errorf("%s: Post succeeded", c.name)
			}
			if _, err := s.Vote(ctx, "u", a.ID, Downvote); err == nil {
				t.Errorf("%s: Vote succeeded", c.name)
			}
			if err := s.Delete(ctx, a.ID); err == nil {
				t.Errorf("%s: Delete succeeded", c.name)
			}
			got, err := s.Article(ctx, a.ID)
			if err != nil || got != a {
				t.Errorf("%s: article after the failures = %+v, %v; want %+v", c.name, got, err, a)
			}
			if v, err := s.VoteOf(ctx, "u", a.ID); err != nil || v != NoVote {
				t.Errorf("%s: vote of u = %v, %v", c.name, v, err)
			}
			if n, err := s.GroupCount(ctx, "g"); err != nil || n != 1 {
				t.Errorf("%s: group count = %d, %v", c.name, n, err)
			}
			if list, err := s.Articles(ctx, TimeDesc, 1); err != nil || !sameIDs(list, []Article{a}) {
				t.Errorf("%s: articles = %v, %v", c.name, idsOf(list), err)
			}
		}
	})
}

// The benchmarks below run on a private redis-server each
// (testkit/redistest), which they skip without; BENCHMARKS.md, "Other
// costs" and "Running the benchmarks", sums them up.

// reportPerOp reports per op, since m's meter: the scripts' time
// (redis-µs/op) and the server's CPU (redis-cpu-µs/op); and the longest
// script run in SLOWLOG (max-cmd-µs), which m's meter must log from 0. An
// op is one script call.
func reportPerOp(b *testing.B, m *serverMeter) {
	b.Helper()
	cpu, calls, usec := m.used(b)
	n := float64(b.N)
	b.ReportMetric(float64(usec)/n, "redis-µs/op")
	b.ReportMetric(cpu*1e6/n, "redis-cpu-µs/op")
	if calls != int64(b.N) {
		b.Fatalf("%d script calls for %d ops", calls, b.N)
	}
	var scripts []slowEntry
	for _, e := range slowLog(b, m.pool) {
		if e.isScript() {
			scripts = append(scripts, e)
		}
	}
	b.ReportMetric(float64(longest(scripts).took.Microseconds()), "max-cmd-µs")
}

// BenchmarkVoteOrders measures a vote's cost in Redis with no optional
// order, with Top alone, and with all four, on articles in no group. Each
// vote changes the user's vote (none to up, later up to down), so every
// one rewrites every ordering the article has.
func BenchmarkVoteOrders(b *testing.B) {
	pool := ownPool(b)
	const articles, users = 1000, 100
	for _, c := range []struct {
		name   string
		orders []Order
	}{{"none", nil}, {"top", []Order{Top}}, {"all", extraOrders}} {
		s, err := New(pool, WithKeyPrefix("vote-"+c.name), WithClock(testclock.New(epoch).Now), WithOrders(c.orders...))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < articles; i++ {
			mustPost(b, s, "poster", "t"+strconv.Itoa(i))
		}
		next := 0 // the vote to cast next, across the runs of the benchmark
		b.Run("orders="+c.name, func(b *testing.B) {
			m := meter(b, pool, 0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := strconv.Itoa(next%articles + 1)
				user := "user" + strconv.Itoa(next/articles%users)
				v := Upvote
				if next/(articles*users)%2 == 1 {
					v = Downvote
				}
				next++
				if _, err := s.Vote(ctx, user, id, ballot(v)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportPerOp(b, m)
		})
	}
}

// A year of TopSince buckets at topPerDay articles a day, built straight
// into Redis (posting 36 million articles is out of reach). Day k before
// the last midnight holds ids topFirstID + (366-k)*topPerDay + j for j
// from 0, posted j*86400/topPerDay seconds into the day. Its day bucket
// holds every topSample-th of them; the days a benchmarked period starts
// on (topFull) hold all of them, in their day bucket, in their 10-minute
// buckets and in the top and time orderings, so the cutoff's day is read
// at full size: a 10-minute bucket of about 700 articles at the edge and
// 143 more after it. The last day holds two articles.
const (
	topPerDay  = 100000
	topSample  = 33 // about 3,000 articles per day bucket
	topFirstID = 30000000
)

// topEntry is one article of the synthetic year.
type topEntry struct {
	id, posted int64
	net        int64
}

// buildTopYear writes the synthetic year ending at last (a midnight) for
// s, fully on the days full (counted back from last), and returns its
// articles.
func buildTopYear(b *testing.B, pool *redis.Pool, s *Store, last time.Time, full map[int]bool) []topEntry {
	b.Helper()
	rng := rand.New(rand.NewSource(12))
	var all []topEntry
	c := pool.Get()
	defer c.Close()
	pending := 0
	flush := func() {
		if err := c.Flush(); err != nil {
			b.Fatal(err)
		}
		for ; pending > 0; pending-- {
			if _, err := c.Receive(); err != nil {
				b.Fatal(err)
			}
		}
	}
	// zadd adds the pairs to key, in commands of 500 members.
	zadd := func(key string, score func(e topEntry) int64, list []topEntry) {
		for lo := 0; lo < len(list); lo += 500 {
			args := []interface{}{key}
			for _, e := range list[lo:min(lo+500, len(list))] {
				args = append(args, score(e), member(strconv.FormatInt(e.id, 10)))
			}
			if err := c.Send("ZADD", args...); err != nil {
				b.Fatal(err)
			}
			if pending++; pending >= 200 {
				flush()
			}
		}
	}
	net := func(e topEntry) int64 { return e.net }
	posted := func(e topEntry) int64 { return e.posted }
	for k := 366; k >= 0; k-- {
		day := last.Unix() - int64(k)*86400
		step, n := topSample, topPerDay
		if full[k] {
			step = 1
		}
		if k == 0 {
			n = 2
		}
		var list []topEntry
		for j := 0; j < n; j += step {
			// Net votes spread over five orders of magnitude, most small,
			// with many ties; a few below zero.
			e := topEntry{id: topFirstID + int64(366-k)*topPerDay + int64(j), posted: day + int64(j)*86400/topPerDay,
				net: int64(math.Exp(rng.Float64()*math.Log(50000))) - 2}
			list = append(list, e)
		}
		all = append(all, list...)
		zadd(topBucketKey(s, 86400, day), net, list)
		zadd(topBucketKey(s, 2592000, day), net, list)
		if full[k] || k == 0 || k == 366 {
			zadd(s.keys.orderingKey("time"), posted, list)
			zadd(s.keys.orderingKey("top"), net, list)
			for lo := 0; lo < len(list); {
				hi := lo
				for hi < len(list) && list[hi].posted/600 == list[lo].posted/600 {
					hi++
				}
				zadd(topBucketKey(s, 600, list[lo].posted), net, list[lo:hi])
				lo = hi
			}
		}
	}
	flush()
	return all
}

// topOfYear returns the first MaxTopSince of the articles posted at or
// after cutoff, as TopSince orders them.
func topOfYear(all []topEntry, cutoff int64) []topEntry {
	var list []topEntry
	for _, e := range all {
		if e.posted >= cutoff {
			list = append(list, e)
		}
	}
	slices.SortFunc(list, func(a, b topEntry) int {
		return cmp.Or(cmp.Compare(b.net, a.net), cmp.Compare(b.id, a.id))
	})
	return list[:min(len(list), MaxTopSince)]
}

// BenchmarkTopSinceYear measures TopSince over a synthetic year at
// 100,000 articles a day (buildTopYear), for periods from an hour to a
// year, each starting a second after a 10-minute bucket boundary (and,
// from a day up, after midnight), so the edge bucket is full and the rest
// of its day is read in 143 10-minute buckets: the most sources a period
// can have. It reads the first page and the deepest (ranks 975 to 999) of
// 25, and the first of 1,000 (every row of MaxTopSince); and, for
// comparison, a page of 1,000 of Articles. max-cmd-µs is the longest
// script run in the slow log.
func BenchmarkTopSinceYear(b *testing.B) {
	pool := ownPool(b)
	last := time.Date(2031, 3, 14, 0, 0, 0, 0, time.UTC)
	now := last.Add(time.Second)
	clock := testclock.New(now)
	s25, err := New(pool, WithKeyPrefix("year"), WithClock(clock.Now), WithOrders(Top))
	if err != nil {
		b.Fatal(err)
	}
	s1000, err := New(pool, WithKeyPrefix("year"), WithClock(clock.Now), WithOrders(Top), WithPageSize(1000))
	if err != nil {
		b.Fatal(err)
	}
	periods := []struct {
		name string
		d    time.Duration
	}{{"1h", time.Hour}, {"1d", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"30d", 30 * 24 * time.Hour}, {"365d", 365 * 24 * time.Hour}}
	full := map[int]bool{}
	for _, p := range periods {
		full[int((p.d+24*time.Hour-1)/(24*time.Hour))] = true
	}
	all := buildTopYear(b, pool, s25, last, full)
	// Article hashes for every article a page can show.
	c := pool.Get()
	defer c.Close()
	shown := map[int64]bool{}
	for _, p := range periods {
		for _, e := range topOfYear(all, now.Add(-p.d).Unix()) {
			if shown[e.id] {
				continue
			}
			shown[e.id] = true
			up, down := e.net, int64(0)
			if e.net < 0 {
				up, down = 0, -e.net
			}
			id := strconv.FormatInt(e.id, 10)
			c.Send("SET", s25.keys.articleKey(id), record(int(up), int(down), e.posted, "top",
				"poster0001", benchTitle(int(e.id)), benchLink(int(e.id))))
			c.Send("ZADD", s25.keys.orderingKey("score"), float64(e.posted)+432*float64(e.net), member(id))
		}
	}
	if _, err := c.Do(""); err != nil {
		b.Fatal(err)
	}
	for _, p := range periods {
		want := topOfYear(all, now.Add(-p.d).Unix())
		for _, q := range []struct {
			name string
			s    *Store
			page int
		}{{"page1of25", s25, 1}, {"page40of25", s25, MaxTopSince / 25}, {"page1of1000", s1000, 1}} {
			size := q.s.pageSize
			list, err := q.s.TopSince(ctx, p.d, q.page)
			if err != nil {
				b.Fatal(err)
			}
			w := want[min((q.page-1)*size, len(want)):min(q.page*size, len(want))]
			if len(list) != len(w) || len(list) == 0 || list[0].ID != strconv.FormatInt(w[0].id, 10) || list[len(list)-1].ID != strconv.FormatInt(w[len(w)-1].id, 10) {
				b.Fatalf("%s %s: %d articles from %v, want %d", p.name, q.name, len(list), idsOf(list[:min(3, len(list))]), len(w))
			}
			b.Run(p.name+"/"+q.name, func(b *testing.B) {
				m := meter(b, pool, 0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := q.s.TopSince(ctx, p.d, q.page); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				reportPerOp(b, m)
			})
		}
	}
	// For comparison, the rows alone: a page of the front page of 1,000
	// of the same articles, which costs what TopSince adds to its merge.
	b.Run("Articles/page1of1000", func(b *testing.B) {
		m := meter(b, pool, 0)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if list, err := s1000.Articles(ctx, ScoreDesc, 1); err != nil || len(list) != 1000 {
				b.Fatal(len(list), err)
			}
		}
		b.StopTimer()
		reportPerOp(b, m)
	})
}

// BenchmarkTopIndexMemory posts a day of 100,000 articles with all four
// orders through the post script, with ids of 8 digits (a year at that
// rate passes 36 million), and reports the memory of each order's index
// per article: MEMORY USAGE (every element counted) of its sorted sets,
// divided by the articles. Top's index is its ordering and the two levels
// of TopSince buckets.
func BenchmarkTopIndexMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		conf []string
	}{
		{"zset-max-listpack-entries=128", nil}, // the default
		{"zset-max-listpack-entries=1024", []string{"--zset-max-listpack-entries", "1024"}},
	} {
		metrics := topIndexMemory(b, c.conf...)
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
			}
			for unit, v := range metrics {
				b.ReportMetric(v, unit)
			}
		})
	}
}

// topIndexMemory posts the day of BenchmarkTopIndexMemory on a server of
// its own started with conf, and returns the bytes per article of each
// index.
func topIndexMemory(b *testing.B, conf ...string) map[string]float64 {
	b.Helper()
	pool := ownPool(b, conf...)
	const n = 100000
	day := time.Date(2031, 3, 14, 0, 0, 0, 0, time.UTC).Unix()
	s, err := New(pool, WithKeyPrefix("mem"), WithOrders(extraOrders...))
	if err != nil {
		b.Fatal(err)
	}
	serverDo(b, pool, "SET", s.keys.seq, topFirstID)
	serverDo(b, pool, "SET", s.keys.record, s.shared.String()) // a recorded store whose counter was set by hand
	postMany(b, pool, s, n, day, day+86400, 0, 0)
	usage := func(pattern string) (bytes, keys int64) {
		list, err := redis.Strings(serverDo(b, pool, "KEYS", pattern), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range list {
			bytes += memoryUsage(b, pool, k)
		}
		return bytes, int64(len(list))
	}
	byTop, _ := usage(s.keys.orderingKey("top"))
	small, smallKeys := usage(s.keys.topBucket + "600:*")
	days, dayKeys := usage(s.keys.topBucket + "86400:*")
	if smallKeys != 144 || dayKeys != 1 {
		b.Fatalf("%d 10-minute buckets and %d day buckets, want 144 and 1", smallKeys, dayKeys)
	}
	metrics := map[string]float64{
		"top-index-B/article": float64(byTop+small+days) / n,
		"by-top-B/article":    float64(byTop) / n,
		"top-600-B/article":   float64(small) / n,
		"top-86400-B/article": float64(days) / n,
	}
	for _, name := range []string{"score", "hot", "best", "controversial"} {
		m, _ := usage(s.keys.orderingKey(name))
		metrics["by-"+name+"-B/article"] = float64(m) / n
	}
	return metrics
}
