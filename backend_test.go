package voting

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/votekit/voting/internal/redistest"
)

// The behavioural tests run on three backends, miniredis, a real
// redis-server and a 3-master Redis Cluster, through forEachBackend, so
// they cannot drift apart. The real server and the cluster are started
// once for the package, and each test works under a prefix of its own.

var shared struct {
	once sync.Once
	srv  *redistest.Server
	err  error
	dir  string
}

var sharedCluster struct {
	once    sync.Once
	cluster *redistest.Cluster
	owners  []*redistest.Server // the node of each slot
	err     error
	dir     string
}

// TestMain stops the shared servers, then fails the run if any goroutine
// is left over: a store must leak none, even on timeouts and faults.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
		os.RemoveAll(shared.dir)
	}
	if sharedCluster.cluster != nil {
		sharedCluster.cluster.Stop()
		os.RemoveAll(sharedCluster.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// realServer returns the package's shared redis-server, starting it on
// first use; it skips t (fails it under CI=true) without redis-server.
func realServer(t testing.TB) *redistest.Server {
	t.Helper()
	redistest.Require(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "voting-redis-")
		if shared.err == nil {
			shared.srv, shared.err = redistest.StartIn(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// clusterServer returns the package's shared Redis Cluster, starting it
// on first use; it skips t (fails it under CI=true) without redis-server
// and redis-cli.
func clusterServer(t testing.TB) (*redistest.Cluster, []*redistest.Server) {
	t.Helper()
	redistest.RequireCluster(t)
	c := &sharedCluster
	c.once.Do(func() {
		c.dir, c.err = os.MkdirTemp("", "voting-cluster-")
		if c.err == nil {
			c.cluster, c.err = redistest.StartClusterIn(c.dir, 3)
		}
		if c.err == nil {
			c.owners, c.err = c.cluster.Owners()
		}
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.cluster, c.owners
}

// backend is one Redis to run a test against.
type backend struct {
	name string
	// pool reaches the server; on a cluster, the node of the store that
	// newStore made last.
	pool *redis.Pool
	mr   *miniredis.Miniredis // nil on the real server
	// node, on a cluster only, returns a pool to the node that owns key's
	// hash slot: newStore connects each store to the node of its prefix,
	// and do sends a command to the node of its first argument.
	node func(key string) *redis.Pool
}

var prefixSeq atomic.Int64

// forEachBackend runs fn as a subtest on miniredis, on the real server and
// on the cluster.
func forEachBackend(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Helper()
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		fn(t, newBackend(t, "miniredis", mr.Addr(), mr))
	})
	t.Run("redis", func(t *testing.T) {
		srv := realServer(t)
		fn(t, newBackend(t, "redis", srv.Addr, nil))
	})
	t.Run("cluster", func(t *testing.T) {
		fn(t, newClusterBackend(t))
	})
}

func newBackend(t testing.TB, name, addr string, mr *miniredis.Miniredis) *backend {
	pool := newPool(addr, nil)
	t.Cleanup(func() { pool.Close() })
	return &backend{name: name, pool: pool, mr: mr}
}

// newPool returns a pool to addr; wrap, if not nil, wraps each new
// connection.
func newPool(addr string, wrap func(redis.Conn) redis.Conn) *redis.Pool {
	return &redis.Pool{
		MaxIdle: 64,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			c, err := redis.DialContext(ctx, "tcp", addr)
			if err != nil || wrap == nil {
				return c, err
			}
			return wrap(c), nil
		},
	}
}

// newClusterBackend returns a backend on the shared cluster whose pools
// each reach one node directly, as a plain redigo pool would: a command
// for a slot the node does not own fails with MOVED. Every such error, and
// CROSSSLOT and non-local-key errors from scripts, fails t at its end.
func newClusterBackend(t testing.TB) *backend {
	_, owners := clusterServer(t)
	pools := map[*redistest.Server]*redis.Pool{}
	commands := map[*redistest.Server]*atomic.Int64{}
	var redirects atomic.Int64
	var mu sync.Mutex
	b := &backend{name: "cluster"}
	b.node = func(key string) *redis.Pool {
		mu.Lock()
		defer mu.Unlock()
		n := owners[redistest.Slot(key)]
		if pools[n] == nil {
			commands[n] = new(atomic.Int64)
			pools[n] = newPool(n.Addr, func(c redis.Conn) redis.Conn {
				return &clusterConn{Conn: c, commands: commands[n], redirects: &redirects}
			})
		}
		return pools[n]
	}
	b.pool = b.node("{voting}:seq") // the default store's node, until newStore picks
	t.Cleanup(func() {
		var total, nodes int64
		for n, p := range pools {
			p.Close()
			if c := commands[n].Load(); c > 0 {
				total += c
				nodes++
			}
		}
		if n := redirects.Load(); n > 0 {
			t.Errorf("cluster: %d MOVED, CROSSSLOT or non-local-key errors in %d commands", n, total)
			return
		}
		t.Logf("cluster: %d commands to %d node(s), 0 MOVED, CROSSSLOT or non-local-key errors", total, nodes)
	})
	return b
}

// clusterConn counts the commands sent to a cluster node, and the errors
// that say a command reached the wrong node.
type clusterConn struct {
	redis.Conn
	commands, redirects *atomic.Int64
}

func (c *clusterConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	return c.count(c.Conn.Do(cmd, args...))
}

func (c *clusterConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	return c.count(redis.DoContext(c.Conn, ctx, cmd, args...))
}

func (c *clusterConn) ReceiveContext(ctx context.Context) (interface{}, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

func (c *clusterConn) count(v interface{}, err error) (interface{}, error) {
	c.commands.Add(1)
	if err != nil && isRedirect(err) {
		c.redirects.Add(1)
	}
	return v, err
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

// storeKeys returns every key under the store's prefix.
func (b *backend) storeKeys(t testing.TB, s *Store) []string {
	t.Helper()
	list, err := redis.Strings(b.do(t, "KEYS", "{"+s.keys.prefix+"}:*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// fakeClock is a settable clock, far from the servers' own, so that any
// use of server time where the store's clock is meant shows up.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

var epoch = time.Date(2031, 3, 14, 9, 0, 0, 0, time.UTC)

func newClock() *fakeClock { return &fakeClock{t: epoch} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newStore returns a store on b under a prefix no other test uses, on a
// fake clock.
func newStore(t testing.TB, b *backend, opts ...Option) (*Store, *fakeClock) {
	t.Helper()
	clock := newClock()
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
	ctx := context.Background()
	for _, id := range ids {
		a, err := s.Article(ctx, id)
		if err != nil {
			t.Fatalf("article %s: %v", id, err)
		}
		want := float64(a.Posted.Unix()) + float64(weight*float64(a.Upvotes-a.Downvotes))
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

// fakePool is a Pool that is never asked for a connection.
type fakePool struct{}

func (fakePool) GetContext(context.Context) (redis.Conn, error) {
	return nil, errors.New("fakePool: no connections")
}
