package voting

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// method is one public method of Store that talks to Redis, called on an
// existing article.
type method struct {
	name string
	// trips is the round trips the call costs with warm scripts, on a
	// store of a few articles; 0 for Drop, which takes one per SCAN step.
	trips int64
	// one is set for methods about one article, which get ErrNotFound for
	// a missing one.
	one  bool
	call func(ctx context.Context, s *Store, id string) error
}

// methods is every public method of Store that talks to Redis: the one
// table behind the round-trip, binding, context and cluster tests.
// TestMethodsCoverStore keeps it complete. The store must enable Top.
var methods = []method{
	{"Post", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Post(ctx, "alice", "title "+id, "https://example.com/"+id)
		return err
	}},
	{"Article", 1, true, func(ctx context.Context, s *Store, id string) error { _, err := s.Article(ctx, id); return err }},
	{"ArticlesByID", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.ArticlesByID(ctx, []string{id, "x", id})
		return err
	}},
	{"Articles", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Articles(ctx, ScoreDesc, 1)
		return err
	}},
	{"TopSince", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.TopSince(ctx, time.Hour, 1)
		return err
	}},
	{"Count", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.Count(ctx); return err }},
	{"Vote", 1, true, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Vote(ctx, "bob", id, Upvote)
		return err
	}},
	{"VoteBatch", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.VoteBatch(ctx, []Ballot{{"carol", id, Downvote}, {"dave", id, Upvote}})
		return err
	}},
	{"VoteOf", 1, true, func(ctx context.Context, s *Store, id string) error { _, err := s.VoteOf(ctx, "bob", id); return err }},
	{"VotesOf", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.VotesOf(ctx, "bob", []string{id, "1"})
		return err
	}},
	{"AddToGroups", 1, true, func(ctx context.Context, s *Store, id string) error { return s.AddToGroups(ctx, id, "go", "redis") }},
	{"Groups", 1, true, func(ctx context.Context, s *Store, id string) error { _, err := s.Groups(ctx, id); return err }},
	{"GroupArticles", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.GroupArticles(ctx, "go", Top, 1)
		return err
	}},
	{"GroupCount", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.GroupCount(ctx, "go"); return err }},
	{"RemoveFromGroups", 1, true, func(ctx context.Context, s *Store, id string) error { return s.RemoveFromGroups(ctx, id, "redis") }},
	{"Delete", 1, true, func(ctx context.Context, s *Store, id string) error { return s.Delete(ctx, id) }},
	{"Prune", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Prune(ctx, epoch.Add(-time.Hour))
		return err
	}},
	{"Drop", 0, false, func(ctx context.Context, s *Store, id string) error { return s.Drop(ctx) }}, // one per SCAN step
}

// TestMethodsCoverStore keeps methods in step with Store's method set.
func TestMethodsCoverStore(t *testing.T) {
	listed := map[string]bool{}
	for _, m := range methods {
		listed[m.name] = true
	}
	typ := reflect.TypeOf(&Store{})
	for i := 0; i < typ.NumMethod(); i++ {
		if name := typ.Method(i).Name; !listed[name] {
			t.Errorf("Store.%s is not in methods", name)
		}
	}
	if len(listed) != typ.NumMethod() {
		t.Errorf("methods lists %d names, Store has %d methods", len(listed), typ.NumMethod())
	}
}

// loadScripts loads every script into the server, so that the first call
// of each pays no NOSCRIPT retry.
func loadScripts(tb testing.TB, pool *redis.Pool) {
	tb.Helper()
	conn := pool.Get()
	defer conn.Close()
	for _, s := range allScripts {
		if err := s.Load(conn); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRoundTrips checks the store's promise: every method is one round
// trip, whatever its outcome, and input it rejects costs none. The calls
// whose work grows with the data take one per step: a cold group page of
// more members than one build step, Prune of more articles than one step.
func TestRoundTrips(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Top))
		loadScripts(t, b.pool)
		h := &hooks{}
		hook(s, h)
		costs := func(t *testing.T, name string, want int64, call func() error, wantErr error) {
			t.Helper()
			before := h.trips.Load()
			err := call()
			if got := h.trips.Load() - before; got != want {
				t.Errorf("%s: %d round trips, want %d", name, got, want)
			}
			if !errors.Is(err, wantErr) {
				t.Errorf("%s: error %v, want %v", name, err, wantErr)
			}
		}
		a := mustPost(t, s, "alice", "first")
		for _, m := range methods {
			if m.name == "Drop" {
				continue
			}
			costs(t, m.name, m.trips, func() error { return m.call(ctx, s, a.ID) }, nil)
			if m.name == "Delete" {
				costs(t, "Delete again", 1, func() error { return m.call(ctx, s, a.ID) }, ErrNotFound)
				a = mustPost(t, s, "alice", "second")
			}
		}
		for _, m := range methods {
			if m.one {
				costs(t, m.name+" of a missing article", 1, func() error { return m.call(ctx, s, "999") }, ErrNotFound)
				costs(t, m.name+" of a malformed id", 0, func() error { return m.call(ctx, s, "x1") }, ErrNotFound)
			}
		}
		costs(t, "Vote of an invalid type", 0, func() error { _, err := s.Vote(ctx, "bob", a.ID, 5); return err }, ErrInvalidVote)
		costs(t, "Vote by a blank user", 0, func() error { _, err := s.Vote(ctx, " ", a.ID, Upvote); return err }, ErrInvalidArgument)
		costs(t, "Articles of a disabled order", 0, func() error { _, err := s.Articles(ctx, Hot, 1); return err }, ErrInvalidArgument)
		costs(t, "TopSince past its depth", 0, func() error { _, err := s.TopSince(ctx, time.Hour, MaxTopSince); return err }, nil)

		// A cold group of more members than one build step costs a round
		// trip per step; the warm read one.
		var ids []string
		for i := 0; i < 2*buildStep; i++ {
			ids = append(ids, strconv.Itoa(i+100))
		}
		bigGroup(t, b, s, "big", ids)
		before := h.trips.Load()
		if _, err := s.GroupArticles(ctx, "big", TimeDesc, 1); err != nil {
			t.Fatal(err)
		}
		if n := h.trips.Load() - before; n < 2 {
			t.Errorf("cold read of a %d-member group: %d round trips, want one per step", len(ids), n)
		}
		costs(t, "GroupArticles warm", 1, func() error { _, err := s.GroupArticles(ctx, "big", TimeDesc, 2); return err }, nil)

		clock.Add(DefaultVoteWindow)
		costs(t, "Vote after the window", 1, func() error { _, err := s.Vote(ctx, "bob", a.ID, Upvote); return err }, ErrVotingClosed)
		if b.mr != nil {
			// A server that lost its scripts costs one extra round trip
			// (NOSCRIPT, then EVAL), once. Only on miniredis, which this
			// test has to itself.
			b.do(t, "SCRIPT", "FLUSH")
			costs(t, "Count on a cold script", 2, func() error { _, err := s.Count(ctx); return err }, nil)
			costs(t, "Count on a warm script", 1, func() error { _, err := s.Count(ctx); return err }, nil)
		}
	})
}

// bigGroup writes a group of the given ids straight into Redis, with
// each id in the time ordering, faster than posting them one by one.
func bigGroup(t testing.TB, b *backend, s *Store, group string, ids []string) {
	t.Helper()
	pool := b.pool
	if b.node != nil {
		pool = b.node(s.keys.seq) // on a cluster, the node of s's slot
	}
	c := pool.Get()
	defer c.Close()
	for i, id := range ids {
		m := member(id)
		c.Send("SADD", s.keys.groupKey(group), m)
		c.Send("ZADD", s.keys.orderingKey("time"), epoch.Unix()-int64(i), m)
		c.Send("ZADD", s.keys.orderingKey("score"), epoch.Unix()-int64(i), m)
		c.Send("HSET", s.keys.articleKey(id), "title", "t", "link", "", "poster", "p",
			"posted", epoch.Unix()-int64(i), "closes", epoch.Unix(), "weight", 432, "orders", "", "up", 0, "down", 0)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 4 * len(ids) {
		if _, err := c.Receive(); err != nil {
			t.Fatal(err)
		}
	}
}

// Titles, links and names of the shapes of the book's examples: a title of
// about 40 bytes, a link of about 35, user names of 10.
func benchTitle(i int) string  { return "Benchmark article number " + strconv.Itoa(i) + " on Redis" }
func benchLink(i int) string   { return "https://example.com/articles/" + strconv.Itoa(i) }
func benchPoster(i int) string { return fmt.Sprintf("poster%04d", i%10000) }
func benchUser(i int) string   { return fmt.Sprintf("user%06d", i) }

// pipe sends n commands made by send on one connection, in pipelines of
// 1000, and fails tb on the first error reply.
func pipe(tb testing.TB, pool *redis.Pool, n int, send func(c redis.Conn, i int) error) {
	tb.Helper()
	c := pool.Get()
	defer c.Close()
	for lo := 0; lo < n; lo += 1000 {
		hi := min(lo+1000, n)
		for i := lo; i < hi; i++ {
			if err := send(c, i); err != nil {
				tb.Fatal(err)
			}
		}
		if err := c.Flush(); err != nil {
			tb.Fatal(err)
		}
		for i := lo; i < hi; i++ {
			if _, err := c.Receive(); err != nil {
				tb.Fatalf("pipelined command %d: %v", i, err)
			}
		}
	}
}

// postMany posts n articles to s as Post would, pipelining its scripts on
// pool, much faster than one call at a time: the next n ids, the i-th (from 0) posted at from + i*(to-from)/n
// (Unix seconds), with benchPoster, benchTitle and benchLink of its id,
// and in perArticle of groups groups (articleGroups).
func postMany(tb testing.TB, pool *redis.Pool, s *Store, n int, from, to int64, groups, perArticle int) {
	tb.Helper()
	loadScripts(tb, pool)
	count, err := s.Count(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	seq, err := redis.Int(serverDo(tb, pool, "GET", s.keys.seq), nil)
	if err != nil && err != redis.ErrNil {
		tb.Fatal(err)
	}
	pipe(tb, pool, n, func(c redis.Conn, i int) error {
		id := seq + i + 1
		posted := from + int64(i)*(to-from)/int64(n)
		return postScript.SendHash(c, s.postArgs(benchPoster(id), benchTitle(id), benchLink(id), posted)...)
	})
	if perArticle > 0 {
		pipe(tb, pool, n, func(c redis.Conn, i int) error {
			id := strconv.Itoa(seq + i + 1)
			return groupAddScript.SendHash(c, s.groupAddArgs(id, articleGroups(i, groups, perArticle))...)
		})
	}
	last := seq + n
	if a, err := s.Article(ctx, strconv.Itoa(last)); err != nil || a.Title != benchTitle(last) || a.Poster != benchPoster(last) || a.Upvotes != 1 {
		tb.Fatalf("article %d after posting %d: %+v, %v", last, n, a, err)
	}
	if c, err := s.Count(ctx); err != nil || c != count+int64(n) {
		tb.Fatalf("Count after posting %d = %d, %v; want %d", n, c, err, count+int64(n))
	}
}

func groupName(g int) string { return "group" + strconv.Itoa(g) }

// articleGroups returns the perArticle groups, of groups, article i is in.
func articleGroups(i, groups, perArticle int) []string {
	list := make([]string, perArticle)
	for j := range list {
		list[j] = groupName((i + j) % groups)
	}
	return list
}

// fill returns a new store on pool (newStore), on a clock fixed at epoch,
// holding n articles posted one a second up to a second before epoch
// (postMany), each in perArticle of groups groups, every group cached in
// every ordering.
func fill(tb testing.TB, pool *redis.Pool, n, groups, perArticle int, opts ...Option) *Store {
	tb.Helper()
	s, _ := newStore(tb, &backend{pool: pool}, opts...)
	postMany(tb, pool, s, n, epoch.Unix()-int64(n), epoch.Unix(), groups, perArticle)
	if perArticle > 0 {
		names := make([]string, groups)
		for g := range names {
			names[g] = groupName(g)
		}
		readAll(tb, s, names)
	}
	return s
}

// member is lib.lua's member: an id's members in the store's sets.
func member(id string) string { return string(rune('a'-1+len(id))) + id }

// TestOnlyGetPool runs the store on a pool with exactly the method set of
// *redisc.Cluster (Get, no GetContext), whose connections have no
// context support: a done context is still honoured before the call.
func TestOnlyGetPool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		s.pool = getOnlyPool{b.pool}
		a := mustPost(t, s, "alice", "t")
		if _, err := s.VoteBatch(ctx, []Ballot{{"bob", a.ID, Upvote}}); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Article(c, a.ID); !errors.Is(err, context.Canceled) {
			t.Fatalf("Article with a canceled context = %v", err)
		}
	})
}

// getOnlyPool is a pool with Get only, handing out connections without
// context support.
type getOnlyPool struct{ p *redis.Pool }

func (p getOnlyPool) Get() redis.Conn { return plainConn{p.p.Get()} }

type plainConn struct{ redis.Conn } // hides the pool connection's DoContext

// TestContextCanceled checks that every method returns a done context's
// error, wrapped.
func TestContextCanceled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top))
		a := mustPost(t, s, "alice", "t")
		c, cancel := context.WithCancel(ctx)
		cancel()
		var names []string
		for _, m := range methods {
			err := m.call(c, s, a.ID)
			if !errors.Is(err, context.Canceled) {
				names = append(names, m.name+": "+errString(err))
			}
		}
		sort.Strings(names)
		if len(names) > 0 {
			t.Fatalf("with a canceled context: %v", names)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
