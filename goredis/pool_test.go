package goredis

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/storetest"
)

// The tests run the store through the adapter on the root module's three
// backends, miniredis, a redis-server and a 3-master Redis Cluster, with
// the root's behavioural suite (testkit/storetest) and servers
// (testkit/redistest). The server and the cluster are the test binary's
// shared ones (redistest.Shared, redistest.SharedCluster).

// counter is a go-redis hook that counts the round trips of the store's
// scripts and functions and of its PINGs (a command or a pipeline each), the NOSCRIPT
// replies, and the MOVED and ASK redirects. On a cluster it hooks every
// node, so it sees each round trip and each redirect.
type counter struct {
	trips, noscripts, moved atomic.Int64
}

func (h *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isScript(cmd.Name()) || strings.EqualFold(cmd.Name(), "ping") {
			h.trips.Add(1)
		}
		err := next(ctx, cmd)
		h.saw(err)
		return err
	}
}

func (h *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.trips.Add(1)
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.saw(cmd.Err())
		}
		return err
	}
}

func (h *counter) saw(err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "NOSCRIPT") || strings.HasPrefix(msg, "ERR Function not found") {
		h.noscripts.Add(1)
	}
	if strings.HasPrefix(msg, "MOVED") || strings.HasPrefix(msg, "ASK") {
		h.moved.Add(1)
	}
}

// backend is a go-redis client to one of the three backends, hooked.
type backend struct {
	name   string
	client redis.UniversalClient
	h      *counter
	mr     *miniredis.Miniredis // on miniredis only
	side   func(key string) *redis.Client
}

// forEachBackend runs fn as a subtest on miniredis, on the real server
// and on the cluster, each with a go-redis client of its own.
func forEachBackend(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		fn(t, newBackend(t, "miniredis", mr.Addr(), mr))
	})
	t.Run("redis", func(t *testing.T) {
		fn(t, newBackend(t, "redis", redistest.Shared(t).Addr, nil))
	})
	t.Run("cluster", func(t *testing.T) {
		fn(t, newClusterBackend(t))
	})
}

func newBackend(t testing.TB, name, addr string, mr *miniredis.Miniredis) *backend {
	h := &counter{}
	client := redis.NewClient(&redis.Options{Addr: addr})
	client.AddHook(h)
	side := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close(); side.Close() })
	return &backend{name: name, client: client, h: h, mr: mr, side: func(string) *redis.Client { return side }}
}

// newClusterBackend returns a ClusterClient to the shared cluster, its
// every node hooked; any redirect fails t at its end.
func newClusterBackend(t testing.TB) *backend {
	c, _ := redistest.SharedCluster(t)
	h := &counter{}
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	client.OnNewNode(func(node *redis.Client) { node.AddHook(h) })
	sides := map[string]*redis.Client{}
	var mu sync.Mutex
	side := func(key string) *redis.Client {
		mu.Lock()
		defer mu.Unlock()
		n, err := c.NodeOfKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if sides[n.Addr] == nil {
			sides[n.Addr] = redis.NewClient(&redis.Options{Addr: n.Addr})
		}
		return sides[n.Addr]
	}
	t.Cleanup(func() {
		client.Close()
		for _, s := range sides {
			s.Close()
		}
		if n := h.moved.Load(); n > 0 {
			t.Errorf("cluster: %d MOVED or ASK redirects", n)
		}
	})
	return &backend{name: "cluster", client: client, h: h, side: side}
}

// suite returns b as a backend of testkit/storetest, over one pool.
func (b *backend) suite() storetest.Backend {
	p := NewPool(b.client)
	return storetest.Backend{
		Name: b.name,
		Pool: func(testing.TB, string) voting.Pool { return p },
		Do: func(t testing.TB, key, cmd string, args ...interface{}) (interface{}, error) {
			return b.side(key).Do(context.Background(), append([]interface{}{cmd}, args...)...).Result()
		},
		Trips: b.h.trips.Load,
		Real:  b.mr == nil,
	}
}

// TestMain stops the shared servers, then fails the run if a goroutine is
// left over: a call cut short by its context leaves one behind only until
// Redis answers.
func TestMain(m *testing.M) {
	os.Exit(redistest.Main(m, func() error { return goleak.Find() }))
}

// TestNewPool runs the root's behavioural suite through the adapter on
// the three backends: the store's results and errors, one round trip per
// call (VoteBatch's pipeline of scripts one go-redis pipeline), SCRIPT
// and FUNCTION FLUSH in the middle of the calls healed by the NOSCRIPT
// fallback and the library's reload, and
// context deadlines. On the cluster, no call is redirected.
func TestNewPool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		sb := b.suite()
		t.Run("Behaviour", func(t *testing.T) { storetest.Behaviour(t, sb) })
		t.Run("RoundTrips", func(t *testing.T) { storetest.RoundTrips(t, sb) })
		t.Run("ScriptFlush", func(t *testing.T) {
			before := b.h.noscripts.Load()
			storetest.ScriptFlush(t, sb)
			if b.h.noscripts.Load() == before {
				t.Error("no NOSCRIPT or missing-function reply: the flushes were not felt")
			}
		})
		t.Run("ContextDeadline", func(t *testing.T) { storetest.ContextDeadline(t, sb) })
	})
}

// TestNewPoolClients runs the store on the other kinds of
// UniversalClient: a Ring of one shard, what NewUniversalClient makes of
// one address, and a client that speaks RESP2 (Protocol: 2).
func TestNewPoolClients(t *testing.T) {
	srv := redistest.Shared(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr}})
	universal := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr}})
	resp2 := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2})
	defer ring.Close()
	defer universal.Close()
	defer resp2.Close()
	side := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer side.Close()
	for name, client := range map[string]redis.UniversalClient{"ring": ring, "universal": universal, "resp2": resp2} {
		t.Run(name, func(t *testing.T) {
			p := NewPool(client)
			storetest.Behaviour(t, storetest.Backend{
				Name: name,
				Pool: func(testing.TB, string) voting.Pool { return p },
				Do: func(t testing.TB, key, cmd string, args ...interface{}) (interface{}, error) {
					return side.Do(context.Background(), append([]interface{}{cmd}, args...)...).Result()
				},
			})
		})
	}
}

// TestNewPoolNil: a nil client gives a pool whose calls fail with an
// error, never a panic.
func TestNewPoolNil(t *testing.T) {
	s, err := voting.New(NewPool(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Count(context.Background()); !errors.Is(err, errNilClient) {
		t.Errorf("Count on a nil client: %v, want %v", err, errNilClient)
	}
	if _, err := s.VoteBatch(context.Background(), []voting.Ballot{{User: "u", ID: "1", Vote: voting.Upvote}}); !errors.Is(err, errNilClient) {
		t.Errorf("VoteBatch on a nil client: %v, want %v", err, errNilClient)
	}
	if err := NewPool(nil).Get().Err(); !errors.Is(err, errNilClient) {
		t.Errorf("Get().Err() on a nil client: %v", err)
	}
}

// The benchmarks compare a store on the adapter with one on redigo, on
// the shared redis-server, each pool with one connection, the same data
// and the same calls one after another, in the same run: the adapter's
// cost is the difference. See BENCHMARKS.md.

// benchStores returns two stores over the same 1,000 articles, one on a
// redigo pool and one on the adapter, each with one connection, with
// every script loaded.
func benchStores(b *testing.B) map[string]*voting.Store {
	srv := redistest.Shared(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	rp := &redigo.Pool{MaxIdle: 1, MaxActive: 1, Wait: true, DialContext: func(ctx context.Context) (redigo.Conn, error) {
		return redigo.DialContext(ctx, "tcp", srv.Addr)
	}}
	b.Cleanup(func() { rdb.Close(); rp.Close() })
	prefix := "bench" + strconv.Itoa(int(benchSeq.Add(1)))
	clock := func() time.Time { return benchEpoch }
	stores := map[string]*voting.Store{}
	for name, p := range map[string]voting.Pool{"redigo": rp, "goredis": NewPool(rdb)} {
		s, err := voting.New(p, voting.WithKeyPrefix(prefix), voting.WithClock(clock))
		if err != nil {
			b.Fatal(err)
		}
		stores[name] = s
	}
	s := stores["goredis"]
	for i := 0; i < 1000; i++ {
		if _, err := s.Post(ctx, fmt.Sprintf("poster%04d", i), "Benchmark article number "+strconv.Itoa(i)+" on Redis",
			"https://example.com/articles/"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range stores { // each pool's connection has met every script
		if _, err := s.Articles(ctx, voting.ScoreDesc, 1); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Vote(ctx, "warm", "1", voting.Upvote); err != nil {
			b.Fatal(err)
		}
	}
	return stores
}

var (
	benchSeq   atomic.Int64
	benchEpoch = time.Date(2031, 3, 14, 9, 0, 0, 0, time.UTC)
)

// BenchmarkVote votes one call at a time, a random mix of up, down and
// cancel by 10,000 users over 1,000 articles, on redigo and on the
// adapter.
func BenchmarkVote(b *testing.B) {
	stores := benchStores(b)
	votes := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}
	for _, name := range []string{"redigo", "goredis"} {
		s := stores[name]
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewSource(1))
			b.ReportAllocs()
			defer clientCPU(b)()
			for i := 0; i < b.N; i++ {
				user := "user" + strconv.Itoa(r.Intn(10000))
				if _, err := s.Vote(ctx, user, strconv.Itoa(1+r.Intn(1000)), votes[r.Intn(3)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkArticlesPage reads the front page, 25 articles with all their
// fields, on redigo and on the adapter.
func BenchmarkArticlesPage(b *testing.B) {
	stores := benchStores(b)
	for _, name := range []string{"redigo", "goredis"} {
		s := stores[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer clientCPU(b)()
			for i := 0; i < b.N; i++ {
				if list, err := s.Articles(ctx, voting.ScoreDesc, 1); err != nil || len(list) != 25 {
					b.Fatalf("page: %d articles, %v", len(list), err)
				}
			}
		})
	}
}

// clientCPU starts measuring the CPU time of this process, the client's
// (redis-server is another), and returns a function that reports it per
// op as client-cpu-µs/op: unlike ns/op, which counts the wait for Redis,
// it moves little when other jobs load the machine, and the difference
// between the two pools is the adapter's cost.
func clientCPU(b *testing.B) (report func()) {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "client-cpu-µs/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestNewPoolLoadsLibrary: a store on a go-redis client whose server has
// lost the store's library (FUNCTION FLUSH) loads it again on the node of
// its keys, FUNCTION LOAD in one pipeline with the call, so that the next
// calls are one FCALL each; on a cluster, for prefixes on each node.
func TestNewPoolLoadsLibrary(t *testing.T) {
	for _, name := range []string{"redis", "cluster"} {
		t.Run(name, func(t *testing.T) {
			var b *backend
			if name == "redis" {
				b = newBackend(t, name, redistest.Shared(t).Addr, nil)
			} else {
				b = newClusterBackend(t)
			}
			for i := 0; i < 6; i++ { // prefixes whose slots fall on every node of the cluster
				prefix := fmt.Sprintf("loads-%d-%d", i, rand.Int())
				key := "{" + prefix + "}:seq"
				node := b.side(key)
				if err := node.FunctionFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				store, err := voting.New(NewPool(b.client), voting.WithKeyPrefix(prefix))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := store.Count(ctx); err != nil {
					t.Fatal(err)
				}
				libs, err := node.FunctionList(ctx, redis.FunctionListQuery{}).Result()
				if err != nil {
					t.Fatal(err)
				}
				if len(libs) != 1 || !strings.HasPrefix(libs[0].Name, "voting_") {
					t.Fatalf("%s: libraries on the node of %s after a call: %v", name, key, libs)
				}
				trips, noscripts := b.h.trips.Load(), b.h.noscripts.Load()
				if _, err := store.Count(ctx); err != nil {
					t.Fatal(err)
				}
				if n, m := b.h.trips.Load()-trips, b.h.noscripts.Load()-noscripts; n != 1 || m != 0 {
					t.Errorf("%s: the call after the load took %d round trips, %d missing scripts or functions", name, n, m)
				}
			}
		})
	}
}

// TestReconnect restarts the server (from its append-only file), and
// apart kills its clients (CLIENT KILL TYPE normal), before each method
// of the store: every call succeeds through the adapter, with go-redis's
// own retries and without them (MaxRetries -1), where the store's rule
// alone (docs/OPERATIONS.md, "Failures") carries the calls.
func TestReconnect(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	drops := map[string]func(t testing.TB){
		"restart": func(t testing.TB) {
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		},
		"CLIENT KILL": func(t testing.TB) {
			if _, err := srv.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, retries := range []int{0, -1} { // 0: go-redis's default, 3
		for name, drop := range drops {
			t.Run(fmt.Sprintf("%s, MaxRetries %d", name, retries), func(t *testing.T) {
				client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: retries})
				t.Cleanup(func() { client.Close() })
				p := NewPool(client)
				side := redis.NewClient(&redis.Options{Addr: srv.Addr})
				t.Cleanup(func() { side.Close() })
				storetest.Reconnect(t, storetest.Backend{
					Name: "redis",
					Pool: func(testing.TB, string) voting.Pool { return p },
					Do: func(t testing.TB, key, cmd string, args ...interface{}) (interface{}, error) {
						return side.Do(context.Background(), append([]interface{}{cmd}, args...)...).Result()
					},
					Real: true,
				}, func(t testing.TB) {
					// Several connections idle, as under traffic.
					var wg sync.WaitGroup
					for i := 0; i < 4; i++ {
						wg.Add(1)
						go func() { defer wg.Done(); client.Ping(context.Background()) }()
					}
					wg.Wait()
					drop(t)
				})
			})
		}
	}
}
