package voting

import (
	"context"
	"crypto/sha1"
	testflag "flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/testclock"
)

// The behavioural tests run on three backends, miniredis, a real
// redis-server and a 3-master Redis Cluster, through forEachBackend, so
// they cannot drift apart. The real server and the cluster are the test
// binary's shared ones (redistest.Shared, redistest.SharedCluster), and
// each test works under a prefix of its own.

// TestMain stops the shared servers, then fails the run if any goroutine
// is left over: a store must leak none, even on timeouts and faults.
//
// Unless -test.parallel is given, 4 tests run at once, not GOMAXPROCS: most
// of a test's time is spent waiting on a server, its round trips and the
// expiry of its keys, not on a core.
func TestMain(m *testing.M) {
	testflag.Parse()
	set := false
	testflag.Visit(func(f *testflag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := testflag.Set("test.parallel", "4"); err != nil {
			panic(err)
		}
	}
	os.Exit(redistest.Main(m, func() error { return goleak.Find() }))
}

// backend is one Redis to run a test against.
type backend struct {
	name string
	// pool reaches the server; on a cluster, the node of the store that
	// newStore made last.
	pool *redis.Pool
	mr   *miniredis.Miniredis // nil on the real server and the cluster
	// node, on a cluster only, returns a pool to the node that owns key's
	// hash slot: newStore connects each store to the node of its prefix,
	// and do sends a command to the node of its first argument.
	node func(key string) *redis.Pool
}

var prefixSeq atomic.Int64

// ctx is the context of calls that are not about contexts.
var ctx = context.Background()

// forEachBackend runs fn as a subtest on miniredis, on the real server and
// on the cluster, the three at once: they share no server, and the test
// that calls forEachBackend ends when all three have. The test runs at
// once with the other tests that do (t.Parallel): each works under a
// prefix of its own, and the tests that change more of the shared
// servers run before, alone (forEachBackendAlone).
func forEachBackend(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Helper()
	t.Parallel()
	forBackends(t, true, fn)
}

// forEachBackendAlone is forEachBackend for the tests that change what a
// shared server holds beyond a prefix of their own (its settings, its
// scripts or Functions library), or read its counters or count a call's
// round trips, which a library another test's store reloads would
// change: they run one at a time, before the tests that run at once.
func forEachBackendAlone(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Helper()
	forBackends(t, true, fn)
}

// forEachBackendLong is forEachBackend for the long scenarios: on the
// real server always; on miniredis, whose Lua interpreter runs them
// several times slower, and on the cluster, which runs the same scripts
// as the real server, under VOTING_LONG=1 only (see long).
func forEachBackendLong(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Helper()
	t.Parallel()
	forBackends(t, long, fn)
}

// long is whether the long scenarios run at full size: VOTING_LONG=1, as
// CI sets it for a run of the tests without -race. Without it, they run
// smaller, and on the real server only, to the same checks.
var long = os.Getenv("VOTING_LONG") == "1"

// longOr returns full under VOTING_LONG=1, short otherwise.
func longOr(short, full int) int {
	if long {
		return full
	}
	return short
}

// forBackends runs fn on the three backends at once; on miniredis and
// the cluster only if all.
func forBackends(t *testing.T, all bool, fn func(t *testing.T, b *backend)) {
	t.Helper()
	t.Run("miniredis", func(t *testing.T) {
		if !all {
			t.Skip("a long scenario: on miniredis under VOTING_LONG=1 only")
		}
		t.Parallel()
		mr := miniredis.RunT(t)
		fn(t, newBackend(t, "miniredis", mr.Addr(), mr))
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Shared(t)
		fn(t, newBackend(t, "redis", srv.Addr, nil))
	})
	t.Run("cluster", func(t *testing.T) {
		if !all {
			t.Skip("a long scenario: on the cluster under VOTING_LONG=1 only")
		}
		t.Parallel()
		fn(t, newClusterBackend(t))
	})
}

func newBackend(t testing.TB, name, addr string, mr *miniredis.Miniredis) *backend {
	pool := newPool(addr, nil)
	t.Cleanup(func() { pool.Close() })
	return &backend{name: name, pool: pool, mr: mr}
}

// ownBackend returns a backend on a redis-server of tb's own, for tests
// and benchmarks that load or configure the server beyond what the
// shared one can take.
func ownBackend(tb testing.TB) *backend {
	return newBackend(tb, "redis", redistest.Start(tb).Addr, nil)
}

// ownBackendLong is ownBackend for a test too long for -short, which it
// skips saying why; the test runs in parallel with the others, on its
// own server.
func ownBackendLong(t *testing.T, why string) *backend {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip(why)
	}
	return ownBackend(t)
}

// ownPool returns a pool, closed when tb ends, to a redis-server of tb's
// own started with conf (redistest.Start's), with the scripts loaded.
func ownPool(tb testing.TB, conf ...string) *redis.Pool {
	tb.Helper()
	pool := redistest.Start(tb, conf...).Pool()
	tb.Cleanup(func() { pool.Close() })
	loadScripts(tb, pool)
	return pool
}

// newPool returns a pool to addr; each new connection first sends the
// commands of init (such as READONLY), unhooked; h, if not nil, hooks
// every connection after that.
func newPool(addr string, h *hooks, init ...string) *redis.Pool {
	return &redis.Pool{
		MaxIdle: 64,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			c, err := redis.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			for _, cmd := range init {
				if _, err := c.Do(cmd); err != nil {
					c.Close()
					return nil, err
				}
			}
			if h == nil {
				return c, nil
			}
			return &hookConn{Conn: c, h: h}, nil
		},
	}
}

// newClusterBackend returns a backend on the shared cluster whose pools
// each reach one node directly, as a plain redigo pool would: a command
// for a slot the node does not own fails with MOVED. Every such error, and
// CROSSSLOT and non-local-key errors from scripts, fails t at its end.
func newClusterBackend(t testing.TB) *backend {
	_, owners := redistest.SharedCluster(t)
	pools := map[*redistest.Server]*redis.Pool{}
	var redirects atomic.Int64
	h := &hooks{after: func(_ string, _ []interface{}, v interface{}, err error) (interface{}, error) {
		if err != nil && isRedirect(err) {
			redirects.Add(1)
		}
		return v, err
	}}
	var mu sync.Mutex
	b := &backend{name: "cluster"}
	b.node = func(key string) *redis.Pool {
		mu.Lock()
		defer mu.Unlock()
		n := owners[redistest.Slot(key)]
		if pools[n] == nil {
			pools[n] = newPool(n.Addr, h)
		}
		return pools[n]
	}
	b.pool = b.node("{voting}:seq") // the default store's node, until newStore picks
	t.Cleanup(func() {
		for _, p := range pools {
			p.Close()
		}
		if n := redirects.Load(); n > 0 {
			t.Errorf("cluster: %d MOVED, CROSSSLOT or non-local-key errors in %d round trips", n, h.trips.Load())
		}
	})
	return b
}

// isRedirect reports whether err says a command or script touched a key
// of another node or of several slots.
func isRedirect(err error) bool {
	msg := err.Error()
	for _, s := range []string{"MOVED", "ASK ", "CROSSSLOT", "non local key", "do not hash to the same slot"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// hooks watch and steer the commands of hooked connections: the one test
// wrapper for counting round trips, losing replies, delaying calls and
// spotting cluster redirects.
type hooks struct {
	// before, if set, runs before a command is sent (Do, or Send in a
	// pipeline); an error fails the command unsent.
	before func(cmd string, args []interface{}) error
	// after, if set, runs on each reply and may replace it.
	after func(cmd string, args []interface{}, reply interface{}, err error) (interface{}, error)
	// trips counts round trips: each Do, and each Flush of a pipeline.
	trips atomic.Int64
}

// hookPool is a Pool whose connections are hooked.
type hookPool struct {
	*hooks
	pool ContextPool
}

// hook returns a pool that hooks the connections of s's pool and makes s
// use it.
func hook(s *Store, h *hooks) *hookPool {
	p := &hookPool{hooks: h, pool: s.pool.(ContextPool)}
	s.pool = p
	return p
}

func (p *hookPool) Get() redis.Conn {
	c, err := p.GetContext(context.Background())
	if err != nil {
		return errorConn{err}
	}
	return c
}

func (p *hookPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	return &hookConn{Conn: c, h: p.hooks}, nil
}

// hookConn is a hooked connection. It supports contexts, as the pool's
// own connections do, so the store takes the same path through it.
type hookConn struct {
	redis.Conn
	h    *hooks
	sent []string // the commands sent and not yet received, with their args
	args [][]interface{}
}

var _ redis.ConnWithContext = (*hookConn)(nil)

func (c *hookConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	return c.DoContext(context.Background(), cmd, args...)
}

func (c *hookConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	if cmd == "" { // every pending reply (a pipeline's), or the pool's flush on Close
		return c.pending(ctx)
	}
	c.h.trips.Add(1)
	if c.h.before != nil {
		if err := c.h.before(cmd, args); err != nil {
			return nil, err
		}
	}
	var v interface{}
	var err error
	if ctx.Done() == nil {
		// As the store does: redigo's DoContext costs a goroutine per
		// call, which would show in the benchmarks as the store's.
		v, err = c.Conn.Do(cmd, args...)
	} else {
		v, err = redis.DoContext(c.Conn, ctx, cmd, args...)
	}
	if c.h.after != nil {
		v, err = c.h.after(cmd, args, v, err)
	}
	return v, err
}

// pending is Do(""): it reads the replies of the commands sent, each
// through the after hook.
func (c *hookConn) pending(ctx context.Context) (interface{}, error) {
	var v interface{}
	var err error
	if ctx.Done() == nil { // as DoContext does: no goroutine for a context that cannot end
		v, err = c.Conn.Do("")
	} else {
		v, err = redis.DoContext(c.Conn, ctx, "")
	}
	replies, ok := v.([]interface{})
	if err != nil || !ok {
		c.sent, c.args = nil, nil
		return v, err
	}
	for i := range replies {
		if i >= len(c.sent) || c.h.after == nil {
			continue
		}
		var e error
		if re, ok := replies[i].(redis.Error); ok {
			replies[i], e = nil, re
		}
		replies[i], e = c.h.after(c.sent[i], c.args[i], replies[i], e)
		if e != nil {
			replies[i] = e
		}
	}
	c.sent, c.args = nil, nil
	return replies, nil
}

func (c *hookConn) Send(cmd string, args ...interface{}) error {
	if c.h.before != nil {
		if err := c.h.before(cmd, args); err != nil {
			return err
		}
	}
	if c.h.after != nil { // the after hook reads them with the replies
		c.sent, c.args = append(c.sent, cmd), append(c.args, args)
	}
	return c.Conn.Send(cmd, args...)
}

func (c *hookConn) Flush() error {
	c.h.trips.Add(1)
	return c.Conn.Flush()
}

func (c *hookConn) Receive() (interface{}, error) {
	return c.ReceiveContext(context.Background())
}

func (c *hookConn) ReceiveContext(ctx context.Context) (interface{}, error) {
	var v interface{}
	var err error
	if ctx.Done() == nil {
		v, err = c.Conn.Receive()
	} else {
		v, err = redis.ReceiveContext(c.Conn, ctx)
	}
	if len(c.sent) > 0 {
		cmd, args := c.sent[0], c.args[0]
		c.sent, c.args = c.sent[1:], c.args[1:]
		if c.h.after != nil {
			v, err = c.h.after(cmd, args, v, err)
		}
	}
	return v, err
}

// errorConn is a connection that fails every command, as redigo's pools
// hand out when Get fails.
type errorConn struct{ err error }

func (c errorConn) Close() error                                   { return nil }
func (c errorConn) Err() error                                     { return c.err }
func (c errorConn) Do(string, ...interface{}) (interface{}, error) { return nil, c.err }
func (c errorConn) Send(string, ...interface{}) error              { return c.err }
func (c errorConn) Flush() error                                   { return c.err }
func (c errorConn) Receive() (interface{}, error)                  { return nil, c.err }

// scriptName returns the name of the store's script that an EVALSHA or
// EVAL command runs, or "".
func scriptName(cmd string, args []interface{}) string {
	if len(args) == 0 {
		return ""
	}
	hash, _ := args[0].(string)
	if cmd == "FCALL" || cmd == "FCALL_RO" {
		name, _ := strings.CutPrefix(hash, scriptLib.name+"_")
		for _, sc := range registry {
			if name == sc.name {
				return name
			}
		}
		return ""
	}
	if cmd == "EVAL" {
		hash = fmt.Sprintf("%x", sha1.Sum([]byte(hash)))
	} else if cmd != "EVALSHA" {
		return ""
	}
	for _, sc := range registry {
		if hash == sc.Hash() {
			return sc.name
		}
	}
	return ""
}

// do runs one command on a side connection: on a cluster, to the node of
// its first argument when that is a key.
func (b *backend) do(t testing.TB, cmd string, args ...interface{}) interface{} {
	t.Helper()
	pool := b.pool
	if key, ok := firstKey(args); ok && b.node != nil {
		pool = b.node(key)
	}
	c := pool.Get()
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return v
}

func firstKey(args []interface{}) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	s, ok := args[0].(string)
	return s, ok
}

// ttl returns a key's remaining time to live; -1 without one, -2 missing.
func (b *backend) ttl(t testing.TB, key string) time.Duration {
	t.Helper()
	ms, err := redis.Int64(b.do(t, "PTTL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ms < 0 {
		return time.Duration(ms)
	}
	return time.Duration(ms) * time.Millisecond
}

// elapse lets d of the server's own time pass, for key expiry: miniredis
// is fast-forwarded, the real server is waited for.
func (b *backend) elapse(d time.Duration) {
	if b.mr != nil {
		b.mr.FastForward(d)
		return
	}
	time.Sleep(d)
}

// storePool returns the pool of the node that holds s's keys: on a
// cluster, the node of its slot.
func (b *backend) storePool(s *Store) *redis.Pool {
	if b.node != nil {
		return b.node(s.keys.seq)
	}
	return b.pool
}

// storeKeys returns every key under the store's prefix, sorted; on a
// cluster, from the node of its slot, which its pattern's escapes may not
// hash to.
func (b *backend) storeKeys(t testing.TB, s *Store) []string {
	t.Helper()
	c := b.storePool(s).Get()
	defer c.Close()
	list, err := redis.Strings(c.Do("KEYS", s.keys.pattern()))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(list)
	return list
}

// epoch is the test clocks' start, far from the servers' own time, so
// that any use of server time where the store's clock is meant shows up.
var epoch = time.Date(2031, 3, 14, 9, 0, 0, 0, time.UTC)

// newStore returns a store on b under a prefix no other test uses, on a
// test clock that reads epoch.
func newStore(t testing.TB, b *backend, opts ...Option) (*Store, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(epoch)
	opts = append([]Option{
		WithKeyPrefix(fmt.Sprintf("test%d", prefixSeq.Add(1))),
		WithClock(clock.Now),
	}, opts...)
	s, err := New(b.pool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if b.node != nil {
		// On a cluster, connect the store to the node of its prefix's slot.
		b.pool = b.node(s.keys.seq)
		s.pool = b.pool
	}
	return s, clock
}

// checkInvariant asserts, for each article, that its score is its post time
// plus the weight times its net votes, and that its counters equal the
// users among users (which must include every voter) voting each way.
func checkInvariant(t testing.TB, s *Store, weight float64, ids, users []string) {
	t.Helper()
	for _, id := range ids {
		a, err := s.Article(ctx, id)
		if err != nil {
			t.Fatalf("article %s: %v", id, err)
		}
		want := float64(a.Posted.Unix()) + weight*float64(a.Upvotes-a.Downvotes)
		if a.Score != want {
			t.Errorf("article %s: score %v, want %v (up %d, down %d)", id, a.Score, want, a.Upvotes, a.Downvotes)
		}
		var up, down int64
		for _, u := range users {
			v, err := s.VoteOf(ctx, u, id)
			if err != nil {
				t.Fatalf("vote of %s on %s: %v", u, id, err)
			}
			switch v {
			case Upvote:
				up++
			case Downvote:
				down++
			}
		}
		if up != a.Upvotes || down != a.Downvotes {
			t.Errorf("article %s: counters up %d down %d, voters up %d down %d", id, a.Upvotes, a.Downvotes, up, down)
		}
	}
}

// Data written straight into Redis, much faster than through the store's
// calls one at a time: the store's own scripts pipelined with the
// arguments its methods pass (postMany, fill), or plain commands
// (bigGroup).

// loadScripts loads every script into the server, so that the first call
// of each pays no NOSCRIPT retry.
func loadScripts(tb testing.TB, pool *redis.Pool) {
	tb.Helper()
	conn := pool.Get()
	defer conn.Close()
	for _, s := range registry {
		if err := s.Load(conn); err != nil {
			tb.Fatal(err)
		}
	}
	// And the library, where the server has Functions.
	if _, err := conn.Do("FUNCTION", "LOAD", scriptLib.source); err != nil && !isRefusal(err) &&
		!strings.Contains(err.Error(), "already exists") {
		tb.Fatal(err)
	}
}

// bigGroup writes a group of the given ids straight into Redis, with
// each id in the time ordering, faster than posting them one by one.
// record returns an article's record as lua/lib/record.lua RECORD lays it out,
// for the tests and benchmarks that write articles straight into Redis,
// with the default weight (TestRecord keeps it and Post's alike).
func record(up, down int, posted int64, orders, poster, title, link string) string {
	return fmt.Sprintf("%010d %010d %d 432.0 %s %d %d:%s%s%s", up, down, posted, orders,
		len(poster), len(title), poster, title, link)
}

// voterMeta returns the "" field of an article's voter record as
// lua/lib/record.lua VOTE_META lays it out, with the default weight.
func voterMeta(up, down, groups int, posted, closes int64, orders string) string {
	return fmt.Sprintf("%010d %010d %d %d %d 432.0 %s", up, down, groups, posted, closes, orders)
}

func bigGroup(t testing.TB, b *backend, s *Store, group string, ids []string) {
	t.Helper()
	c := b.storePool(s).Get()
	defer c.Close()
	for i, id := range ids {
		m := member(id)
		c.Send("SADD", s.keys.groupKey(group), m)
		c.Send("ZADD", s.keys.orderingKey("time"), epoch.Unix()-int64(i), m)
		c.Send("ZADD", s.keys.orderingKey("score"), epoch.Unix()-int64(i), m)
		c.Send("SET", s.keys.articleKey(id), record(0, 0, epoch.Unix()-int64(i), "", "p", "t", ""))
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
		return postScript.SendHash(c, s.fenced(nil, postScript, s.postArgs(benchPoster(id), benchTitle(id), benchLink(id), posted))...)
	})
	if perArticle > 0 {
		pipe(tb, pool, n, func(c redis.Conn, i int) error {
			id := strconv.Itoa(seq + i + 1)
			return groupAddScript.SendHash(c, s.fenced(nil, groupAddScript, s.groupAddArgs(id, articleGroups(i, groups, perArticle)))...)
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

// member is lib/base.lua's member: an id's members in the store's sets.
func member(id string) string { return string(rune('a'-1+len(id))) + id }

// The benchmarks run against a real redis-server, the package's shared
// one (redistest.Shared), or for memory one of their own, and skip without
// redis-server. See BENCHMARKS.md for how to run them and what their
// numbers mean.
//
// Every benchmark reports, besides ns/op and (with -benchmem) the Go
// allocations of the client, roundtrips/op counted by hooks (whose
// wrapper costs one of the allocations of each call), the server's CPU
// and script time per op from INFO, and fails if SLOWLOG caught a
// command of 10 ms or more while it ran.
//
// The data sets are built once per process, under a prefix each, and kept
// while the server runs: large ones are written by pipelining the store's
// own scripts with the arguments its methods pass (scripts.go's postArgs
// and voteArgs), much faster than one call at a time, and checked by
// reading them back.

// benchFixture is a data set on the real server and a store over it.
type benchFixture struct {
	store *Store      // over hooks
	hooks *hooks      // count the store's round trips
	pool  *redis.Pool // not hooked, for setup and INFO
	n     int         // articles, with ids "1" to n
}

var (
	benchFixtures = map[string]*benchFixture{}
	benchPool     *redis.Pool // to redistest.Shared, shared by the fixtures
)

// fixture returns the data set called name, building it with build on
// first use. build gets an empty store.
func fixture(b *testing.B, name string, build func(b *testing.B, f *benchFixture)) *benchFixture {
	b.Helper()
	if f, ok := benchFixtures[name]; ok {
		return f
	}
	if benchPool == nil {
		benchPool = redistest.Shared(b).Pool()
	}
	f := newBenchStore(b, benchPool, name)
	start := time.Now()
	build(b, f)
	b.Logf("fixture %s: %d articles, built in %v", name, f.n, time.Since(start).Round(time.Millisecond))
	benchFixtures[name] = f
	return f
}

// newBenchStore returns an empty store on pool's server under a prefix of
// its own, on a test clock at epoch, with every script loaded.
func newBenchStore(b *testing.B, pool *redis.Pool, name string) *benchFixture {
	b.Helper()
	s, err := New(pool, WithKeyPrefix("bench:"+name), WithClock(testclock.New(epoch).Now))
	if err != nil {
		b.Fatal(err)
	}
	f := &benchFixture{store: s, hooks: &hooks{}, pool: pool}
	hook(s, f.hooks)
	loadScripts(b, pool)
	return f
}

// post posts n more articles to f, one a second up to the clock's now
// (postMany).
func (f *benchFixture) post(b *testing.B, n int) {
	b.Helper()
	now := f.store.now().Unix()
	postMany(b, f.pool, f.store, n, now-int64(n), now, 0, 0)
	f.n += n
}

// sized returns the data set of n articles.
func sized(b *testing.B, n int) *benchFixture {
	b.Helper()
	return postedFixture(b, "articles"+strconv.Itoa(n), n)
}

// postedFixture returns the data set called name, of n articles (post).
func postedFixture(b *testing.B, name string, n int) *benchFixture {
	b.Helper()
	return fixture(b, name, func(b *testing.B, f *benchFixture) { f.post(b, n) })
}

// randomVotes is the load of the vote benchmarks, measured as measure
// does: b.RunParallel's callers (as the caller set them) cast random
// votes, up, down or none, on s, by nUsers users on the articles 1 to
// nArticles.
func randomVotes(b *testing.B, ctx context.Context, f *benchFixture, s *Store, nUsers, nArticles int) {
	users := make([]string, nUsers)
	for i := range users {
		users[i] = benchUser(i)
	}
	ids := make([]string, nArticles)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	votes := []VoteType{Upvote, Downvote, CancelVote}
	var seed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewSource(seed.Add(1)))
		for pb.Next() {
			if _, err := s.Vote(ctx, users[r.Intn(nUsers)], ids[r.Intn(nArticles)], votes[r.Intn(3)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report()
}

// measure starts counting f's round trips for b, the time Redis spends
// running scripts (and the commands cmds, lowercase, as INFO
// commandstats names them) and the CPU time of the Redis process, and empties the
// server's SLOWLOG; the function it returns reports the three per op and
// fails b for any command of 10 ms or more. Call it after setup, with the
// timer reset.
func measure(b *testing.B, f *benchFixture, cmds ...string) (report func()) {
	m := meter(b, f.pool, 10*time.Millisecond, cmds...)
	start := f.hooks.trips.Load()
	return func() {
		b.StopTimer()
		n := float64(b.N)
		cpu, _, usec := m.used(b)
		b.ReportMetric(float64(f.hooks.trips.Load()-start)/n, "roundtrips/op")
		b.ReportMetric(float64(usec)/n, "redis-µs/op")
		b.ReportMetric(cpu*1e6/n, "redis-cpu-µs/op")
		for _, e := range slowLog(b, f.pool) {
			b.Errorf("SLOWLOG: a command took %v: %s", e.took, e)
		}
	}
}

// The server-side measures of every benchmark, and of the tests that
// check a command's cost on a redis-server of their own: INFO cpu and
// commandstats, SLOWLOG, and the CPU time of one script.

// serverDo runs one command on pool and fails tb on an error.
func serverDo(tb testing.TB, pool *redis.Pool, cmd string, args ...interface{}) interface{} {
	tb.Helper()
	return (&backend{pool: pool}).do(tb, cmd, args...)
}

// info returns the lines of INFO section.
func info(tb testing.TB, pool *redis.Pool, section string) []string {
	tb.Helper()
	s, err := redis.String(serverDo(tb, pool, "INFO", section), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(s, "\r\n")
}

// cpuSeconds returns the sum of the INFO cpu fields named.
func cpuSeconds(tb testing.TB, pool *redis.Pool, names ...string) float64 {
	tb.Helper()
	var total float64
	for _, line := range info(tb, pool, "cpu") {
		name, v, _ := strings.Cut(line, ":")
		if slices.Contains(names, name) {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("INFO cpu %q: %v", line, err)
			}
			total += n
		}
	}
	return total
}

// serverCPU returns the CPU seconds, user and system, that the server
// process has used.
func serverCPU(tb testing.TB, pool *redis.Pool) float64 {
	return cpuSeconds(tb, pool, "used_cpu_user", "used_cpu_sys")
}

// mainCPU returns the CPU time, user and system, of the server's main
// thread, which runs the commands.
func mainCPU(tb testing.TB, pool *redis.Pool) time.Duration {
	s := cpuSeconds(tb, pool, "used_cpu_user_main_thread", "used_cpu_sys_main_thread")
	return time.Duration(s * float64(time.Second))
}

// scriptStats returns the calls of every form of script the server has
// run (EVAL, EVALSHA, FCALL and their _RO forms),
// and the microseconds it spent in them, from INFO commandstats.
func scriptStats(tb testing.TB, pool *redis.Pool) (calls, usec int64) {
	tb.Helper()
	return commandUsage(tb, pool, []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"})
}

// commandUsage returns the calls of the commands cmds (lowercase, as
// INFO commandstats names them) and the microseconds the server spent
// in them.
func commandUsage(tb testing.TB, pool *redis.Pool, cmds []string) (calls, usec int64) {
	tb.Helper()
	for _, line := range info(tb, pool, "commandstats") {
		name, stats, _ := strings.Cut(line, ":")
		cmd, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok || !slices.Contains(cmds, cmd) {
			continue
		}
		for _, field := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

// serverMeter measures a server's work from meter to used.
type serverMeter struct {
	pool        *redis.Pool
	cpu         float64 // serverCPU at the start
	calls, usec int64   // stats at the start
	cmds        []string
}

// stats returns the calls of scripts and of m's commands, and the
// microseconds the server spent in them.
func (m *serverMeter) stats(tb testing.TB) (calls, usec int64) {
	tb.Helper()
	calls, usec = scriptStats(tb, m.pool)
	if len(m.cmds) > 0 {
		c, u := commandUsage(tb, m.pool, m.cmds)
		calls, usec = calls+c, usec+u
	}
	return calls, usec
}

// meter empties the server's SLOWLOG, which from then logs every command
// of from or more (resetSlowLog), and starts measuring the server's CPU
// and its scripts.
func meter(tb testing.TB, pool *redis.Pool, from time.Duration, cmds ...string) *serverMeter {
	tb.Helper()
	resetSlowLog(tb, pool, from)
	m := &serverMeter{pool: pool, cmds: cmds}
	m.calls, m.usec = m.stats(tb)
	m.cpu = serverCPU(tb, pool) // last: the INFO commands above are not counted
	return m
}

// used returns, since meter, the server's CPU seconds, and the calls of
// scripts and the microseconds spent in them.
func (m *serverMeter) used(tb testing.TB) (cpu float64, calls, usec int64) {
	tb.Helper()
	cpu = serverCPU(tb, m.pool) - m.cpu
	calls, usec = m.stats(tb)
	return cpu, calls - m.calls, usec - m.usec
}

// slowLogMax is the SLOWLOG length resetSlowLog sets; a log that holds as
// many entries may have lost some.
const slowLogMax = 1 << 20

// resetSlowLog empties the server's SLOWLOG and makes it log every command
// of from or more.
func resetSlowLog(tb testing.TB, pool *redis.Pool, from time.Duration) {
	tb.Helper()
	serverDo(tb, pool, "CONFIG", "SET", "slowlog-log-slower-than", from.Microseconds())
	serverDo(tb, pool, "CONFIG", "SET", "slowlog-max-len", slowLogMax)
	serverDo(tb, pool, "SLOWLOG", "RESET")
}

// slowEntry is a command in SLOWLOG.
type slowEntry struct {
	took time.Duration
	args []string // the command and its arguments
}

// slowLog returns the commands in the server's SLOWLOG, newest first, but
// for the measuring's own (SLOWLOG, CONFIG, INFO). A log that may have
// lost entries fails tb.
func slowLog(tb testing.TB, pool *redis.Pool) []slowEntry {
	tb.Helper()
	entries, err := redis.Values(serverDo(tb, pool, "SLOWLOG", "GET", -1), nil)
	if err != nil {
		tb.Fatal(err)
	}
	if len(entries) >= slowLogMax {
		tb.Fatalf("SLOWLOG overflowed (%d entries): commands may be lost", len(entries))
	}
	var list []slowEntry
	for _, e := range entries {
		// id, time, µs, the command and its arguments, ...
		f, err := redis.Values(e, nil)
		if err != nil || len(f) < 4 {
			tb.Fatalf("SLOWLOG entry %v: %v", e, err)
		}
		us, err1 := redis.Int64(f[2], nil)
		args, err2 := redis.Strings(f[3], nil)
		if err1 != nil || err2 != nil || len(args) == 0 {
			tb.Fatalf("SLOWLOG entry %v: %v, %v", e, err1, err2)
		}
		switch strings.ToUpper(args[0]) {
		case "SLOWLOG", "CONFIG", "INFO":
			continue
		}
		list = append(list, slowEntry{time.Duration(us) * time.Microsecond, args})
	}
	return list
}

// isScript reports whether e ran a script (EVALSHA or EVAL).
func (e slowEntry) isScript() bool {
	cmd := strings.ToUpper(e.args[0])
	return cmd == "EVALSHA" || cmd == "EVAL" || cmd == "FCALL" || cmd == "FCALL_RO"
}

// String returns the command and the name of the store's script it ran,
// or its arguments, the long ones cut.
func (e slowEntry) String() string {
	if len(e.args) > 1 {
		if name := scriptName(strings.ToUpper(e.args[0]), []interface{}{e.args[1]}); name != "" {
			return e.args[0] + " " + name
		}
	}
	args := slices.Clone(e.args)
	for i, a := range args {
		if len(a) > 40 {
			args[i] = a[:40] + "…"
		}
	}
	return fmt.Sprintf("%q", args)
}

// longest returns the longest of entries; none took no time.
func longest(entries []slowEntry) slowEntry {
	var l slowEntry
	for _, e := range entries {
		if e.took > l.took {
			l = e
		}
	}
	return l
}

// scriptCPU runs call with s's scripts called name timed by the CPU time
// of the server's main thread, which runs the commands, read with INFO
// before and after each; it returns the longest. A script sent in a
// pipeline is timed with those sent after it and before its reply.
func scriptCPU(tb testing.TB, pool *redis.Pool, s *Store, name string, call func()) time.Duration {
	tb.Helper()
	saved := s.pool
	defer func() { s.pool = saved }()
	var start, longest time.Duration
	hook(s, &hooks{
		before: func(cmd string, args []interface{}) error {
			if scriptName(cmd, args) == name {
				start = mainCPU(tb, pool)
			}
			return nil
		},
		after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if scriptName(cmd, args) == name {
				longest = max(longest, mainCPU(tb, pool)-start)
			}
			return v, err
		},
	})
	call()
	return longest
}

// usedMemory returns INFO memory's used_memory.
func usedMemory(tb testing.TB, pool *redis.Pool) int64 {
	tb.Helper()
	for _, line := range info(tb, pool, "memory") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatal("INFO memory without used_memory")
	return 0
}

// memoryUsage returns MEMORY USAGE of key, counting every element.
func memoryUsage(tb testing.TB, pool *redis.Pool, key string) int64 {
	tb.Helper()
	n, err := redis.Int64(serverDo(tb, pool, "MEMORY", "USAGE", key, "SAMPLES", 0), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// mallocs returns the heap allocations made by the process so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}
