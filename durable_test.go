package voting

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// The tests of WithWaitReplicas and WithWaitAOF (durable.go): which
// calls wait, in the same round trip as their script on every path of
// exec; a caller gets the result with ErrNotReplicated when the replicas
// fall short; and a failover loses no vote acknowledged without error.

// writingMethods are the methods of methods that wait after each round
// trip; every other sends no WAIT.
var writingMethods = map[string]bool{
	"Post": true, "Vote": true, "VoteBatch": true, "AddToGroups": true,
	"RemoveFromGroups": true, "Edit": true, "Delete": true, "Prune": true, "Drop": true,
	"Reconfigure": true, "Comment": true, "VoteComment": true, "EditComment": true, "DeleteComment": true,
	"ReverseVotes": true, "Suspend": true, "Unsuspend": true,
}

func TestWaitOptionsValidate(t *testing.T) {
	pool := &redis.Pool{}
	for _, tc := range []struct {
		name string
		opts []Option
		ok   bool
	}{
		{"replicas 1, 1ms", []Option{WithWaitReplicas(1, time.Millisecond)}, true},
		{"replicas 3, 1s", []Option{WithWaitReplicas(3, time.Second)}, true},
		{"replicas 0", []Option{WithWaitReplicas(0, time.Second)}, false},
		{"replicas -1", []Option{WithWaitReplicas(-1, time.Second)}, false},
		{"timeout 0", []Option{WithWaitReplicas(1, 0)}, false},
		{"timeout negative", []Option{WithWaitReplicas(1, -time.Second)}, false},
		{"timeout under 1ms", []Option{WithWaitReplicas(1, 999*time.Microsecond)}, false},
		{"aof local", []Option{WithWaitAOF(1, 0, time.Second)}, true},
		{"aof replicas", []Option{WithWaitAOF(0, 2, time.Second)}, true},
		{"aof both", []Option{WithWaitAOF(1, 1, time.Millisecond)}, true},
		{"aof none", []Option{WithWaitAOF(0, 0, time.Second)}, false},
		{"aof local 2", []Option{WithWaitAOF(2, 0, time.Second)}, false},
		{"aof local -1", []Option{WithWaitAOF(-1, 1, time.Second)}, false},
		{"aof replicas -1", []Option{WithWaitAOF(1, -1, time.Second)}, false},
		{"aof timeout 0", []Option{WithWaitAOF(1, 0, 0)}, false},
		{"aof timeout negative", []Option{WithWaitAOF(1, 0, -time.Millisecond)}, false},
		{"both", []Option{WithWaitReplicas(1, time.Second), WithWaitAOF(1, 1, time.Second)}, true},
		{"both, aof bad", []Option{WithWaitReplicas(1, time.Second), WithWaitAOF(0, 0, time.Second)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(pool, tc.opts...)
			if tc.ok {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if len(s.waits) == 0 {
					t.Fatal("no waits")
				}
				return
			}
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("New: %v, want ErrInvalidArgument", err)
			}
		})
	}
	s, err := New(pool)
	if err != nil || s.waits != nil {
		t.Fatalf("a store without the options: waits %v, %v", s.waits, err)
	}
	s, err = New(pool, WithWaitReplicas(2, 1500*time.Microsecond), WithWaitAOF(1, 0, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.waits[0].name, s.waits[0].args, s.waits[1].name, s.waits[1].args); got != "WAIT[2 1]WAITAOF[1 0 2000]" {
		t.Errorf("waits %s, want WAIT 2 1 then WAITAOF 1 0 2000", got)
	}
}

// TestWaitAfter keeps scriptTable's waits in step with the scripts:
// every script that writes is waited after, but for the caches.
func TestWaitAfter(t *testing.T) {
	caches := map[string]bool{"group_page": true, "group_renew": true, "user_page": true, "user_comments": true}
	for _, sc := range registry {
		if want := !sc.readOnly && !caches[sc.name]; sc.wait != want {
			t.Errorf("script %s: waited after %v, want %v", sc.name, sc.wait, want)
		}
	}
}

// TestWaitReplicasCommands runs every method on the shared server, which
// has a replica, and counts the WAITs: one in each round trip of a
// method that writes (so none costs a round trip more), none for the
// others, on every path of exec: FCALL, the library missing (FUNCTION
// LOAD and FCALL again), EVALSHA, and EVAL after NOSCRIPT. A store
// without the option sends none.
func TestWaitReplicasCommands(t *testing.T) {
	primary := redistest.Shared(t)
	redistest.SharedReplica(t)
	b := newBackend(t, "redis", primary.Addr, nil)
	for _, mode := range []struct {
		name    string
		wait    bool
		scripts bool   // Functions off
		flush   string // FUNCTION or SCRIPT, flushed before each method
	}{
		{"functions", true, false, ""},
		{"library missing", true, false, "FUNCTION"},
		{"scripts", true, true, ""},
		{"noscript", true, true, "SCRIPT"},
		{"no option", false, false, ""},
	} {
		t.Run(mode.name, func(t *testing.T) {
			opts := []Option{WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100)}
			if mode.wait {
				opts = append(opts, WithWaitReplicas(1, 10*time.Second))
			}
			s, _ := newStore(t, b, opts...)
			s.funcs.off.Store(mode.scripts)
			loadScripts(t, b.pool)
			var waits, others atomic.Int64
			h := &hooks{before: func(cmd string, _ []interface{}) error {
				switch cmd {
				case "WAIT":
					waits.Add(1)
				case "WAITAOF":
					others.Add(1)
				}
				return nil
			}}
			hook(s, h)
			check := func(m method, call func() error) {
				t.Helper()
				if mode.flush != "" {
					serverDo(t, b.pool, mode.flush, "FLUSH")
				}
				w0, t0 := waits.Load(), h.trips.Load()
				if err := call(); err != nil {
					t.Fatalf("%s: %v", m.name, err)
				}
				w, trips := waits.Load()-w0, h.trips.Load()-t0
				want := int64(0)
				if mode.wait && writingMethods[m.name] {
					want = trips // one WAIT in each round trip
					if m.name == "Post" || m.name == "Comment" {
						want-- // but their PING's (liveConn)
					}
				}
				if w != want || (writingMethods[m.name] && trips == 0) {
					t.Errorf("%s: %d WAITs in %d round trips, want %d", m.name, w, trips, want)
				}
				if mode.flush == "" && m.trips > 0 && trips != m.trips {
					t.Errorf("%s: %d round trips, want %d as without waits", m.name, trips, m.trips)
				}
			}
			eachMethod(t, s, func(m method, id string) {
				check(m, func() error { return m.call(ctx, s, id) })
			})
			check(method{name: "Drop"}, func() error { return s.Drop(ctx) })
			if others.Load() != 0 {
				t.Errorf("%d WAITAOF without WithWaitAOF", others.Load())
			}
			if s.funcs.off.Load() != mode.scripts {
				t.Errorf("Functions off: %v, want %v", s.funcs.off.Load(), mode.scripts)
			}
		})
	}
}

// TestWaitReplicasResults checks how a caller gets both a result and
// ErrNotReplicated, on miniredis, whose WAIT answers 0 replicas at once:
// every call that writes returns what it returns without the option,
// with an error wrapping ErrNotReplicated that counts the replicas; a
// refused call returns its own error alone; reads return no error.
func TestWaitReplicasResults(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	s, _ := newStore(t, b, WithWaitReplicas(1, 10*time.Millisecond), WithEditWindow(time.Hour), WithUserPages())
	const msg = "not replicated: 0 of 1 replicas acknowledged within 10ms"
	late := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotReplicated) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error wrapping ErrNotReplicated saying %q", what, err, msg)
		}
	}
	a, err := s.Post(ctx, "alice", "title", "https://example.com")
	late("Post", err)
	if a.ID == "" || a.Upvotes != 1 {
		t.Fatalf("Post returned %+v", a)
	}
	r, err := s.Vote(ctx, "bob", a.ID, Upvote)
	late("Vote", err)
	if r.Upvotes != 2 || r.Previous != NoVote {
		t.Errorf("Vote returned %+v", r)
	}
	if got := err.Error(); got != "voting: vote: "+msg {
		t.Errorf("Vote's error reads %q", got)
	}
	results, err := s.VoteBatch(ctx, []Ballot{{"carol", a.ID, Upvote}, {"dave", "99", Upvote}})
	late("VoteBatch", err)
	if len(results) != 2 || results[0].Err != nil || results[0].Upvotes != 3 || !errors.Is(results[1].Err, ErrNotFound) {
		t.Errorf("VoteBatch returned %+v", results)
	}
	results, err = s.VoteBatch(ctx, []Ballot{{"dave", "99", Upvote}})
	if err != nil || len(results) != 1 || !errors.Is(results[0].Err, ErrNotFound) {
		t.Errorf("VoteBatch of refused ballots only: %+v, %v; want no error for the call", results, err)
	}
	e, err := s.Edit(ctx, a.ID, "alice", "edited", "")
	late("Edit", err)
	if e.Title != "edited" || e.Upvotes != 3 {
		t.Errorf("Edit returned %+v", e)
	}
	late("AddToGroups", s.AddToGroups(ctx, a.ID, "go"))
	late("RemoveFromGroups", s.RemoveFromGroups(ctx, a.ID, "go"))
	if err := s.AddToGroups(ctx, a.ID); err != nil {
		t.Errorf("AddToGroups without groups, which writes nothing: %v", err)
	}
	for what, err := range map[string]error{
		"Vote on a missing article": func() error { _, err := s.Vote(ctx, "bob", "99", Upvote); return err }(),
		"Delete of a missing one":   s.Delete(ctx, "99"),
	} {
		if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: %v, want ErrNotFound alone", what, err)
		}
	}
	if v, err := s.VoteOf(ctx, "bob", a.ID); err != nil || v != Upvote {
		t.Errorf("VoteOf: %v, %v", v, err)
	}
	if _, err := s.GroupArticles(ctx, "go", ScoreDesc, 1); err != nil {
		t.Errorf("GroupArticles: %v", err)
	}
	if _, err := s.Upvoted(ctx, "bob", 1); err != nil {
		t.Errorf("Upvoted: %v", err)
	}
	late("Delete", s.Delete(ctx, a.ID))
	mustPostLate := func(title string) {
		if _, err := s.Post(ctx, "alice", title, ""); !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("Post: %v", err)
		}
	}
	mustPostLate("one")
	mustPostLate("two")
	n, err := s.Prune(ctx, epoch.Add(time.Second))
	late("Prune", err)
	if n != 2 {
		t.Errorf("Prune deleted %d, want 2", n)
	}
	late("Drop", s.Drop(ctx))
}

// startPair starts a redis-server and a replica of it for t, and
// returns them with a pool to the primary.
func startPair(t testing.TB, replicaConf ...string) (primary, replica *redistest.Server, pool *redis.Pool) {
	t.Helper()
	primary = redistest.Start(t)
	replica = redistest.StartReplica(t, primary, replicaConf...)
	pool = primary.Pool()
	t.Cleanup(func() { pool.Close() })
	return primary, replica, pool
}

// TestWaitReplicasStalled stalls the replica (DEBUG SLEEP 2): a vote
// with WithWaitReplicas(1, 100ms) returns ErrNotReplicated in about the
// timeout, with its result, and is applied on the primary; VoteBatch
// likewise. Once the replica is back, votes are replicated again.
func TestWaitReplicasStalled(t *testing.T) {
	primary, replica, pool := startPair(t, "--enable-debug-command", "yes")
	s, err := New(pool, WithKeyPrefix("stall"), WithWaitReplicas(1, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	// A live replica on a loaded machine may take over 100ms: the store
	// that must see it acknowledge waits long.
	patient, err := New(pool, WithKeyPrefix("stall"), WithWaitReplicas(1, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	a, err := patient.Post(ctx, "alice", "title", "")
	if err != nil {
		t.Fatalf("Post with a live replica: %v", err)
	}

	slept := make(chan error, 1)
	go func() { _, err := replica.Do("DEBUG", "SLEEP", 2); slept <- err }()
	if err := replica.WaitAsleep(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := s.Vote(ctx, "bob", a.ID, Upvote)
	elapsed := time.Since(start)
	if !errors.Is(err, ErrNotReplicated) || !strings.Contains(err.Error(), "0 of 1 replicas acknowledged within 100ms") {
		t.Fatalf("Vote with the replica asleep: %v, want ErrNotReplicated", err)
	}
	// Not a timing test: it only shows the call does not wait for the
	// replica to wake.
	if elapsed > 1500*time.Millisecond {
		t.Errorf("Vote took %v with a 100ms wait", elapsed)
	}
	if r.Upvotes != 2 {
		t.Errorf("Vote returned %+v with ErrNotReplicated, want its result", r)
	}
	results, err := s.VoteBatch(ctx, []Ballot{{"carol", a.ID, Upvote}})
	if !errors.Is(err, ErrNotReplicated) || len(results) != 1 || results[0].Err != nil || results[0].Upvotes != 3 {
		t.Errorf("VoteBatch with the replica asleep: %+v, %v", results, err)
	}
	primaryStore, err := New(pool, WithKeyPrefix("stall"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := primaryStore.Article(ctx, a.ID); err != nil || got.Upvotes != 3 {
		t.Errorf("on the primary: %+v, %v; want the two votes applied", got, err)
	}
	t.Logf("a vote with the replica asleep returned ErrNotReplicated after %v", elapsed)

	if err := <-slept; err != nil {
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	if _, err := patient.Vote(ctx, "dave", a.ID, Upvote); err != nil {
		t.Errorf("Vote once the replica woke: %v", err)
	}
	if err := primary.WaitReplica(replica, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestWaitReplicasContext: a context deadline bounds a wait longer than
// it, and the vote returns its result with an error wrapping both
// ErrNotReplicated and context.DeadlineExceeded.
func TestWaitReplicasContext(t *testing.T) {
	redistest.Require(t)
	srv := redistest.Start(t) // no replica: WAIT 1 waits its whole timeout
	pool := srv.Pool()
	t.Cleanup(func() { pool.Close() })
	plain, err := New(pool, WithKeyPrefix("ctx"))
	if err != nil {
		t.Fatal(err)
	}
	a := mustPost(t, plain, "alice", "title")
	s, err := New(pool, WithKeyPrefix("ctx"), WithWaitReplicas(1, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := s.Vote(c, "bob", a.ID, Upvote)
	if !errors.Is(err, ErrNotReplicated) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Vote: %v, want ErrNotReplicated and DeadlineExceeded", err)
	}
	if r.Upvotes != 2 {
		t.Errorf("Vote returned %+v", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Vote took %v under a 200ms deadline", d)
	}
}

// TestWaitAOF: WithWaitAOF sends WAITAOF, which Redis 7.2 added. On an
// older server (Debian 12's Redis 7.0) every write returns its result
// with ErrNotReplicated wrapping the server's "unknown command", which
// the test checks, and the rest of the test is skipped; from 7.2 (Redis
// 8.0; Valkey 8.1, whose redis_version is 7.2.4) it runs in full, and a
// server of 7.2 or later without WAITAOF fails it.
func TestWaitAOF(t *testing.T) {
	redistest.Require(t)
	primary := redistest.Start(t, "--appendonly", "yes")
	redistest.StartReplica(t, primary, "--appendonly", "yes")
	pool := primary.Pool()
	t.Cleanup(func() { pool.Close() })
	version, hasWaitAOF := redisVersionAtLeast(t, pool, 7, 2)
	plain, err := New(pool, WithKeyPrefix("aof"))
	if err != nil {
		t.Fatal(err)
	}
	mustPost(t, plain, "alice", "first") // loads the library
	s, err := New(pool, WithKeyPrefix("aof"), WithWaitAOF(1, 1, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	hook(s, &hooks{before: func(cmd string, _ []interface{}) error {
		if cmd == "WAITAOF" {
			sent.Add(1)
		}
		return nil
	}})
	a, err := s.Post(ctx, "alice", "title", "")
	if sent.Load() != 1 {
		t.Errorf("Post sent %d WAITAOF, want 1", sent.Load())
	}
	if !hasWaitAOF {
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unknown command") ||
			!errors.Is(err, ErrNotReplicated) || a.ID == "" {
			t.Fatalf("Post on Redis %s, which has no WAITAOF: %+v, %v; want the article and ErrNotReplicated wrapping unknown command", version, a, err)
		}
		t.Skipf("Redis %s has no WAITAOF (7.2 or later): %v", version, err)
	}
	if err != nil {
		t.Fatalf("Post on Redis %s: %v", version, err)
	}
	if _, err := s.Vote(ctx, "bob", a.ID, Upvote); err != nil {
		t.Errorf("Vote: %v", err)
	}
	serverDo(t, pool, "CONFIG", "SET", "appendonly", "no")
	if _, err := s.Vote(ctx, "carol", a.ID, Upvote); !errors.Is(err, ErrNotReplicated) {
		t.Errorf("Vote waiting for the local AOF of a primary without one: %v, want ErrNotReplicated", err)
	}
}

// redisVersionAtLeast returns the server's redis_version (INFO server;
// on Valkey, the Redis version it is compatible with) and whether it is
// major.minor or later.
func redisVersionAtLeast(tb testing.TB, pool *redis.Pool, major, minor int) (string, bool) {
	tb.Helper()
	for _, line := range info(tb, pool, "server") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			f := strings.SplitN(v, ".", 3)
			if len(f) < 2 {
				tb.Fatalf("INFO server: redis_version %q", v)
			}
			maj, err1 := strconv.Atoi(f[0])
			mnr, err2 := strconv.Atoi(f[1])
			if err1 != nil || err2 != nil {
				tb.Fatalf("INFO server: redis_version %q", v)
			}
			return v, maj > major || maj == major && mnr >= minor
		}
	}
	tb.Fatal("INFO server has no redis_version")
	return "", false
}

// TestWaitReplicasFailover kills the primary (SIGKILL) while votes run
// and promotes its replica (REPLICAOF NO ONE), a few times: with
// WithWaitReplicas(1, ...) every vote acknowledged without error is on
// the promoted replica, whose counts equal its voter records. Votes that
// returned ErrNotReplicated or another error are not counted as
// acknowledged. The same run without the option only logs what it lost.
func TestWaitReplicasFailover(t *testing.T) {
	redistest.Require(t)
	for trial := 0; trial < 3; trial++ {
		t.Run(fmt.Sprintf("wait/%d", trial), func(t *testing.T) {
			acked, lost := failover(t, true, time.Duration(200+150*trial)*time.Millisecond)
			if lost > 0 {
				t.Errorf("%d of %d acknowledged votes lost with WithWaitReplicas", lost, acked)
			}
		})
	}
	for trial := 0; trial < 2; trial++ {
		t.Run(fmt.Sprintf("plain/%d", trial), func(t *testing.T) {
			failover(t, false, time.Duration(200+150*trial)*time.Millisecond)
		})
	}
}

// failover runs one trial: votes from 32 callers on a store over a
// primary with a replica, for about after, then the primary is killed and
// its replica promoted. It returns the votes acknowledged and how many
// of them the promoted replica lacks, and fails t where the replica's
// counts and voter records disagree.
func failover(t *testing.T, wait bool, after time.Duration) (acked, lost int64) {
	primary, replica, pool := startPair(t)
	opts := []Option{WithKeyPrefix("failover")}
	if wait {
		opts = append(opts, WithWaitReplicas(1, 2*time.Second))
	}
	s, err := New(pool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	const nArticles, callers = 10, 32
	ids := make([]string, nArticles)
	for i := range ids {
		a, err := s.Post(ctx, "poster", fmt.Sprintf("article %d", i), "")
		if err != nil && !errors.Is(err, ErrNotReplicated) { // WaitReplica below
			t.Fatal(err)
		}
		ids[i] = a.ID
	}
	// The posts are on the replica before the votes start, with the
	// option or without.
	if err := primary.WaitReplica(replica, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var ack [nArticles]atomic.Int64
	var notReplicated, failed atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < callers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := (i + w) % nArticles
				_, err := s.Vote(ctx, fmt.Sprintf("u%d-%d", w, i), ids[k], Upvote)
				switch {
				case err == nil:
					ack[k].Add(1)
				case errors.Is(err, ErrNotReplicated):
					notReplicated.Add(1) // on the primary only: not acknowledged
				default:
					failed.Add(1) // the primary is gone
					time.Sleep(time.Millisecond)
				}
			}
		}(w)
	}
	time.Sleep(after)
	primary.Kill()
	if _, err := replica.Do("REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()

	rpool := replica.Pool()
	defer rpool.Close()
	promoted, err := New(rpool, WithKeyPrefix("failover"))
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range ids {
		a, err := promoted.Article(ctx, id)
		if err != nil {
			t.Fatalf("article %s on the promoted replica: %v", id, err)
		}
		got, want := a.Upvotes-1, ack[k].Load() // less the poster's own vote
		acked += want
		if got < want {
			lost += want - got
		}
		voters, err := redis.StringMap(serverDo(t, rpool, "HGETALL", promoted.keys.votedKey(id)), nil)
		if err != nil {
			t.Fatal(err)
		}
		var up int64
		for user, v := range voters {
			if user != "" && v == "1" {
				up++
			}
		}
		if up != a.Upvotes || a.Downvotes != 0 {
			t.Errorf("article %s on the promoted replica: %d up, %d down, %d upvoters in its voter record", id, a.Upvotes, a.Downvotes, up)
		}
	}
	t.Logf("wait %v: %d votes acknowledged, %d lost; %d not replicated, %d failed with the primary",
		wait, acked, lost, notReplicated.Load(), failed.Load())
	return acked, lost
}

// BenchmarkVoteWaitReplicas is BenchmarkVote's load (8 callers per core,
// a random mix of up, down and cancel by 10,000 users over 1,000
// articles) on a primary of its own with one replica, by a store without
// the option and one with WithWaitReplicas(1, time.Second): what the
// wait costs a vote in wall time, and that the vote's Redis time (its
// script's, in INFO commandstats; WAIT's is not in it) is the same. The
// serial runs have one caller, so their ns/op is a vote's latency; the
// others' is the inverse of throughput.
func BenchmarkVoteWaitReplicas(b *testing.B) {
	const nArticles, nUsers = 1000, 10000
	_, _, pool := startPair(b)
	f := newBenchStore(b, pool, "wait")
	f.post(b, nArticles)
	wait, err := New(pool, WithKeyPrefix(f.store.keys.prefix), WithClock(f.store.now), WithWaitReplicas(1, time.Second))
	if err != nil {
		b.Fatal(err)
	}
	hook(wait, f.hooks)
	for _, bc := range []struct {
		name        string
		s           *Store
		parallelism int // callers per GOMAXPROCS; 0 for one caller
	}{{"plain", f.store, 4}, {"wait", wait, 4}, {"plain/serial", f.store, 0}, {"wait/serial", wait, 0}} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.parallelism > 0 {
				b.SetParallelism(bc.parallelism)
			} else {
				b.SetParallelism(1)
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			}
			randomVotes(b, context.Background(), f, bc.s, nUsers, nArticles)
		})
	}
}

// TestWaitReplicasFaults replaces replies with failures: a WAIT that
// fails gives the vote's result with ErrNotReplicated wrapping the
// failure; a script that fails gives its error alone, its WAIT's reply
// read and dropped, so the connection goes back to the pool clean.
func TestWaitReplicasFaults(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	s, _ := newStore(t, b, WithWaitReplicas(1, time.Millisecond))
	plain, _ := newStore(t, b, WithKeyPrefix(s.keys.prefix), WithClock(s.now))
	a := mustPost(t, plain, "alice", "title")
	boom := errors.New("injected")
	var failWait, failScript atomic.Bool
	hook(s, &hooks{after: func(cmd string, _ []interface{}, v interface{}, err error) (interface{}, error) {
		switch {
		case cmd == "WAIT" && failWait.Load():
			return nil, boom
		case cmd == "WAIT":
			return int64(1), nil // as a replica would
		case (cmd == "EVALSHA" || cmd == "FCALL") && failScript.Load():
			return nil, redis.Error("ERR injected")
		}
		return v, err
	}})
	if _, err := s.Vote(ctx, "bob", a.ID, Upvote); err != nil {
		t.Fatalf("Vote with WAIT answering 1: %v", err)
	}
	failWait.Store(true)
	r, err := s.Vote(ctx, "carol", a.ID, Upvote)
	if !errors.Is(err, ErrNotReplicated) || !errors.Is(err, boom) || r.Upvotes != 3 {
		t.Errorf("Vote with a failing WAIT: %+v, %v; want its result, ErrNotReplicated and the failure", r, err)
	}
	failWait.Store(false)
	failScript.Store(true)
	r, err = s.Vote(ctx, "dave", a.ID, Upvote)
	if err == nil || errors.Is(err, ErrNotReplicated) || !strings.Contains(err.Error(), "injected") || r != (VoteResult{}) {
		t.Errorf("Vote with a failing script: %+v, %v; want the script's error alone", r, err)
	}
	failScript.Store(false)
	for i := 0; i < 3; i++ { // the pool's connections are in step
		if _, err := s.Vote(ctx, "erin", a.ID, Upvote); err != nil {
			t.Fatalf("Vote after the faults: %v", err)
		}
	}
	// The injected script error replaced the reply of dave's vote, which
	// ran: five upvotes.
	if got, err := plain.Article(ctx, a.ID); err != nil || got.Upvotes != 5 {
		t.Errorf("article %+v, %v; want 5 upvotes", got, err)
	}
}

// noPipelinePool hands out connections that refuse Send, Flush and
// Receive, having sent nothing, as redisc's RetryConn does.
type noPipelinePool struct{ *redis.Pool }

func (p noPipelinePool) Get() redis.Conn { return noPipelineConn{p.Pool.Get()} }

type noPipelineConn struct{ redis.Conn }

var errNoPipeline = errors.New("test: unsupported call to Send")

func (noPipelineConn) Send(string, ...interface{}) error { return errNoPipeline }
func (noPipelineConn) Flush() error                      { return errNoPipeline }
func (noPipelineConn) Receive() (interface{}, error)     { return nil, errNoPipeline }

// TestWithoutPipelining runs the store on connections that cannot
// pipeline, as redisc's RetryConn: a missing library is loaded, VoteBatch
// runs, and WithWaitReplicas waits in a round trip of its own, with and
// without Functions.
func TestWithoutPipelining(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t) // of its own: other tests give the shared one replicas
	for _, scripts := range []bool{false, true} {
		for _, wait := range []bool{false, true} {
			pool := newPool(srv.Addr, nil)
			defer pool.Close()
			var opts []Option
			if wait {
				opts = append(opts, WithWaitReplicas(1, 5*time.Millisecond)) // a server without replicas
			}
			s, err := New(noPipelinePool{pool}, append(opts, WithKeyPrefix(fmt.Sprintf("nopipe%d", prefixSeq.Add(1))))...)
			if err != nil {
				t.Fatal(err)
			}
			s.funcs.off.Store(scripts)
			serverDo(t, pool, "FUNCTION", "FLUSH")
			serverDo(t, pool, "SCRIPT", "FLUSH")
			late := func(what string, err error) {
				t.Helper()
				if wait && !errors.Is(err, ErrNotReplicated) || !wait && err != nil {
					t.Errorf("scripts %v, wait %v: %s: %v", scripts, wait, what, err)
				}
			}
			a, err := s.Post(ctx, "alice", "t", "")
			late("Post", err)
			r, err := s.Vote(ctx, "bob", a.ID, Upvote)
			late("Vote", err)
			if r.Upvotes != 2 {
				t.Errorf("scripts %v, wait %v: Vote = %+v", scripts, wait, r)
			}
			res, err := s.VoteBatch(ctx, []Ballot{{User: "carol", ID: a.ID, Vote: Upvote}})
			late("VoteBatch", err)
			if len(res) != 1 || res[0].Err != nil || res[0].Upvotes != 3 {
				t.Errorf("scripts %v, wait %v: VoteBatch = %+v", scripts, wait, res)
			}
			if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 3 {
				t.Errorf("scripts %v, wait %v: Article = %+v, %v", scripts, wait, got, err)
			}
		}
	}
}
