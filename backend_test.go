package voting

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/redistest"
)

// The behavioural tests run on two backends, miniredis and a real
// redis-server, through forEachBackend, so the two cannot drift apart.
// The real server is started once for the package, and each test works
// under a prefix of its own.

var shared struct {
	once sync.Once
	srv  *redistest.Server
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
		os.RemoveAll(shared.dir)
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

// backend is one Redis to run a test against.
type backend struct {
	name string
	pool *redis.Pool
	mr   *miniredis.Miniredis // nil on the real server
}

var prefixSeq atomic.Int64

// forEachBackend runs fn as a subtest on miniredis and on the real server.
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
}

func newBackend(t testing.TB, name, addr string, mr *miniredis.Miniredis) *backend {
	pool := &redis.Pool{
		MaxIdle: 64,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr)
		},
	}
	t.Cleanup(func() { pool.Close() })
	return &backend{name: name, pool: pool, mr: mr}
}

// do runs one command on a side connection.
func (b *backend) do(t testing.TB, cmd string, args ...interface{}) interface{} {
	t.Helper()
	c := b.pool.Get()
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return v
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
