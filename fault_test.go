package voting

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/votekit/voting/internal/redistest"
)

// The fault tests each start a redis-server of their own, break it in one
// way while a load runs, and check that every call returned (an error or
// a result) without hanging, that the store works again afterwards with
// the same Store and pool, and that nothing the server acknowledged is
// lost.

// faultPool returns a pool with short timeouts, as a service in front of
// traffic would configure it.
func faultPool(t testing.TB, addr string) *redis.Pool {
	p := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr,
				redis.DialConnectTimeout(200*time.Millisecond),
				redis.DialReadTimeout(time.Second),
				redis.DialWriteTimeout(time.Second))
		},
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// call is one store call of a load: when it ran and how it ended.
type call struct {
	start, end time.Time
	err        error
}

// ledger records the writes of a load. Each (user, article) pair is voted
// on by one worker only, so its calls are ordered: after an acknowledged
// vote the server must hold exactly it; after a failed one, either it or
// what the server might have held before.
type ledger struct {
	mu       sync.Mutex
	possible map[[2]string]map[VoteType]bool // (user, id) -> votes the server may hold
	posts    map[string]Article              // acknowledged posts by id
	users    map[string]bool                 // every user and poster
}

func newLedger() *ledger {
	return &ledger{
		possible: map[[2]string]map[VoteType]bool{},
		posts:    map[string]Article{},
		users:    map[string]bool{},
	}
}

func (l *ledger) vote(user, id string, v VoteType, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{user, id}
	l.users[user] = true
	if l.possible[k] == nil {
		l.possible[k] = map[VoteType]bool{NoVote: true}
	}
	if err == nil {
		l.possible[k] = map[VoteType]bool{v: true}
	} else {
		l.possible[k][v] = true // it may have been applied before the fault
	}
}

func (l *ledger) post(poster string, a Article, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.users[poster] = true
	if err == nil {
		l.posts[a.ID] = a
	}
}

// verify checks that the server holds every acknowledged post and vote,
// that every vote is one the ledger allows, and that the invariant holds
// for every article. It returns the number of votes and posts checked
// exactly (acknowledged and not followed by a failed call).
func (l *ledger) verify(t *testing.T, s *Store) (exactVotes, posts int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, want := range l.posts {
		got, err := s.Article(ctx, id)
		if err != nil {
			t.Fatalf("acknowledged post %s: %v", id, err)
		}
		if got.Title != want.Title || got.Poster != want.Poster || !got.Posted.Equal(want.Posted) {
			t.Fatalf("acknowledged post %s = %+v, want %+v", id, got, want)
		}
		if v, err := s.VoteOf(ctx, want.Poster, id); err != nil || v != Upvote {
			t.Fatalf("acknowledged post %s: poster's vote %v, %v", id, v, err)
		}
	}
	for k, possible := range l.possible {
		v, err := s.VoteOf(ctx, k[0], k[1])
		if err != nil {
			t.Fatalf("vote of %s on %s: %v", k[0], k[1], err)
		}
		if !possible[v] {
			t.Fatalf("vote of %s on %s is %v; the server acknowledged %v", k[0], k[1], v, possible)
		}
		if len(possible) == 1 {
			exactVotes++
		}
	}
	var users []string
	for u := range l.users {
		users = append(users, u)
	}
	checkInvariant(t, s, DefaultVoteWeight, allIDs(t, s), users)
	return exactVotes, len(l.posts)
}

// allIDs returns the id of every article of s.
func allIDs(t testing.TB, s *Store) []string {
	t.Helper()
	var list []string
	for page := 1; ; page++ {
		articles, err := s.Articles(ctx, TimeAsc, page)
		if err != nil {
			t.Fatal(err)
		}
		if len(articles) == 0 {
			return list
		}
		for _, a := range articles {
			list = append(list, a.ID)
		}
	}
}

// load runs workers that post and vote on s until stop is closed, each
// call with the given deadline, and returns every call each made.
func load(s *Store, l *ledger, ids []string, workers int, deadline time.Duration, stop <-chan struct{}) [][]call {
	calls := make([][]call, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c := call{start: time.Now()}
				cctx, cancel := context.WithTimeout(ctx, deadline)
				if rng.Intn(8) == 0 {
					poster := "p" + strconv.Itoa(w)
					a, err := s.Post(cctx, poster, fmt.Sprintf("w%d-%d", w, i), "")
					l.post(poster, a, err)
					c.err = err
				} else {
					user := "u" + strconv.Itoa(w) + "-" + strconv.Itoa(rng.Intn(3))
					id := ids[rng.Intn(len(ids))]
					v := VoteType(rng.Intn(3) - 1)
					_, err := s.Vote(cctx, user, id, v)
					l.vote(user, id, v, err)
					c.err = err
				}
				cancel()
				c.end = time.Now()
				calls[w] = append(calls[w], c)
				if c.err != nil {
					time.Sleep(5 * time.Millisecond) // a client backs off
				}
			}
		}(w)
	}
	wg.Wait()
	return calls
}

// seed posts n articles and returns their ids.
func seed(t testing.TB, s *Store, l *ledger, n int) []string {
	t.Helper()
	l.users["seeder"] = true
	var list []string
	for i := 0; i < n; i++ {
		list = append(list, mustPost(t, s, "seeder", "seed"+strconv.Itoa(i)).ID)
	}
	return list
}

// TestScriptFlush empties the server's script cache between calls and
// while calls run: EVALSHA falls back to EVAL, and every call succeeds.
func TestScriptFlush(t *testing.T) {
	srv := redistest.Start(t)
	pool := faultPool(t, srv.Addr)
	s, err := New(pool, WithKeyPrefix("flush"))
	if err != nil {
		t.Fatal(err)
	}
	flushes := 0
	flush := func() {
		if _, err := srv.Do("SCRIPT", "FLUSH"); err != nil {
			t.Error(err)
		}
		flushes++
	}
	// Between calls: every method, each after a flush.
	l := newLedger()
	between := exerciseEach(t, s, l, flush)

	// During calls: a side connection flushes while workers run.
	ids := seed(t, s, l, 5)
	stop := make(chan struct{})
	done := make(chan [][]call)
	go func() { done <- load(s, l, ids, 4, 2*time.Second, stop) }()
	for i := 0; i < 100; i++ {
		flush()
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	during := 0
	for _, calls := range <-done {
		for _, c := range calls {
			during++
			if c.err != nil {
				t.Fatalf("call during SCRIPT FLUSH: %v", c.err)
			}
		}
	}
	exact, posts := l.verify(t, s)
	evals := commandCalls(t, srv, "eval")
	if evals < 2 {
		t.Fatalf("%d EVAL fallbacks: the flushes were not felt", evals)
	}
	t.Logf("%d SCRIPT FLUSHes; %d calls between and %d during them all succeeded (%d EVAL fallbacks); %d votes and %d posts verified, invariant holds",
		flushes, between, during, evals, exact, posts)
}

// exerciseEach calls every public method of s once, running between
// before each, and returns the number of calls.
func exerciseEach(t *testing.T, s *Store, l *ledger, between func()) int {
	t.Helper()
	for _, u := range []string{"alice", "bob", "carol"} {
		l.users[u] = true
	}
	steps := []func() error{
		func() error { _, err := s.Post(ctx, "alice", "one", ""); return err },
		func() error { _, err := s.Post(ctx, "bob", "two", ""); return err },
		func() error { _, err := s.Vote(ctx, "carol", "1", Upvote); return err },
		func() error { _, err := s.Article(ctx, "1"); return err },
		func() error { _, err := s.Articles(ctx, ScoreDesc, 1); return err },
		func() error { _, err := s.VoteOf(ctx, "carol", "1"); return err },
		func() error { _, err := s.VotesOf(ctx, "carol", []string{"1", "2"}); return err },
		func() error { return s.AddToGroups(ctx, "1", "go") },
		func() error { _, err := s.Groups(ctx, "1"); return err },
		func() error { _, err := s.GroupArticles(ctx, "go", TimeDesc, 1); return err },
		func() error { return s.RemoveFromGroups(ctx, "1", "go") },
		func() error { return s.Delete(ctx, "2") },
	}
	for i, step := range steps {
		between()
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return len(steps)
}

// commandCalls returns how often the server ran cmd, from INFO commandstats.
func commandCalls(t testing.TB, srv *redistest.Server, cmd string) int {
	t.Helper()
	info, err := redis.String(srv.Do("INFO", "commandstats"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// TestServerRestart kills the server with SIGKILL in the middle of a load
// and restarts it on the same port from its append-only file (fsync on
// every write). Calls during the outage fail promptly, calls after it
// succeed on the same Store and pool, and no acknowledged post or vote is
// lost.
func TestServerRestart(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	s, err := New(faultPool(t, srv.Addr), WithKeyPrefix("restart"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	ids := seed(t, s, l, 8)
	const workers, deadline = 6, 500 * time.Millisecond
	stop := make(chan struct{})
	done := make(chan [][]call)
	go func() { done <- load(s, l, ids, workers, deadline, stop) }()

	time.Sleep(150 * time.Millisecond)
	killed := time.Now()
	srv.Kill()
	// Stay down until calls have failed for a while: every connection the
	// pool held is then known dead and gone.
	time.Sleep(250 * time.Millisecond)
	restarting := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	time.Sleep(300 * time.Millisecond)
	close(stop)

	var before, outage, after, outageErrs int
	var slowest time.Duration
	for _, calls := range <-done {
		for _, c := range calls {
			if d := c.end.Sub(c.start); d > slowest {
				slowest = d
			}
			switch {
			case c.end.Before(killed):
				before++
				if c.err != nil {
					t.Fatalf("call before the kill: %v", c.err)
				}
			case c.start.After(killed) && c.end.Before(restarting):
				outage++
				if c.err == nil {
					t.Fatal("a call succeeded while the server was down")
				}
				outageErrs++
			case c.start.After(restarted):
				after++
				if c.err != nil {
					t.Fatalf("call after the restart: %v", c.err)
				}
			}
		}
	}
	if slowest > deadline+250*time.Millisecond {
		t.Fatalf("slowest call took %v, past its deadline of %v", slowest, deadline)
	}
	if before == 0 || outage == 0 || after == 0 {
		t.Fatalf("calls before, during, after the outage: %d, %d, %d; want some of each", before, outage, after)
	}
	exact, posts := l.verify(t, s)
	t.Logf("SIGKILL and AOF restart on port %d: %d calls before, %d during the outage (%d errors, slowest call %v, deadline %v), %d after, all succeeded; %d acknowledged posts and %d acknowledged votes found, invariant holds",
		srv.Port, before, outage, outageErrs, slowest.Round(time.Millisecond), deadline, after, posts, exact)
}

// TestClientKill kills every client connection from a side connection,
// again and again, while a load runs: calls fail with errors, never a
// panic; once the kills stop, the pool recovers after at most one failure
// per connection it held; nothing acknowledged is lost.
func TestClientKill(t *testing.T) {
	srv := redistest.Start(t)
	pool := faultPool(t, srv.Addr)
	s, err := New(pool, WithKeyPrefix("kill"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	ids := seed(t, s, l, 8)
	side, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()

	stop := make(chan struct{})
	done := make(chan [][]call)
	go func() { done <- load(s, l, ids, 6, 500*time.Millisecond, stop) }()
	const rounds = 25
	killedConns := 0
	for i := 0; i < rounds; i++ {
		time.Sleep(10 * time.Millisecond)
		n, err := redis.Int(side.Do("CLIENT", "KILL", "TYPE", "normal")) // SKIPME yes: not side
		if err != nil {
			t.Fatal(err)
		}
		killedConns += n
	}
	lastKill := time.Now()
	held := pool.ActiveCount()
	time.Sleep(200 * time.Millisecond)
	close(stop)

	var total, errs, afterErrs, after int
	for _, calls := range <-done {
		for _, c := range calls {
			total++
			if c.err != nil {
				errs++
			}
			if c.start.After(lastKill) {
				after++
				if c.err != nil {
					afterErrs++
				}
			}
		}
	}
	if errs == 0 {
		t.Fatal("no call failed: the kills were not felt")
	}
	if afterErrs > held {
		t.Fatalf("%d failures after the last kill, but the pool held only %d connections", afterErrs, held)
	}
	if after == 0 {
		t.Fatal("no call after the last kill")
	}
	exact, posts := l.verify(t, s)
	t.Logf("%d CLIENT KILL rounds closed %d connections: %d of %d calls failed with an error, no panic; after the kills %d of %d calls failed (pool held %d); %d acknowledged posts and %d acknowledged votes found, invariant holds",
		rounds, killedConns, errs, total, afterErrs, after, held, posts, exact)
}

// TestContextDeadline blocks the server with DEBUG SLEEP from a side
// connection while calls with a shorter deadline run: each returns an
// error wrapping context.DeadlineExceeded promptly, and no goroutine or
// pool connection is left behind.
func TestContextDeadline(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // after the server stops
	srv := redistest.Start(t, "--enable-debug-command", "local")
	pool := &redis.Pool{ // no read timeout: only the context bounds a call
		MaxIdle: 16,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", srv.Addr)
		},
	}
	t.Cleanup(func() { pool.Close() })
	s, err := New(pool, WithKeyPrefix("deadline"))
	if err != nil {
		t.Fatal(err)
	}
	mustPost(t, s, "alice", "t")
	baseline := pool.ActiveCount()

	calls := map[string]func(context.Context) error{
		"Post":          func(c context.Context) error { _, err := s.Post(c, "bob", "t", ""); return err },
		"Vote":          func(c context.Context) error { _, err := s.Vote(c, "bob", "1", Upvote); return err },
		"Article":       func(c context.Context) error { _, err := s.Article(c, "1"); return err },
		"Articles":      func(c context.Context) error { _, err := s.Articles(c, ScoreDesc, 1); return err },
		"VotesOf":       func(c context.Context) error { _, err := s.VotesOf(c, "bob", []string{"1"}); return err },
		"AddToGroups":   func(c context.Context) error { return s.AddToGroups(c, "1", "g") },
		"GroupArticles": func(c context.Context) error { _, err := s.GroupArticles(c, "g", ScoreDesc, 1); return err },
		"Delete":        func(c context.Context) error { return s.Delete(c, "1") },
	}
	const deadline, sleep = 100 * time.Millisecond, 0.6 // DEBUG SLEEP seconds
	side, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	if err := side.Send("DEBUG", "SLEEP", sleep); err != nil {
		t.Fatal(err)
	}
	if err := side.Flush(); err != nil { // sent: the server falls asleep
		t.Fatal(err)
	}
	slept := make(chan error, 1)
	go func() { _, err := side.Receive(); slept <- err }()
	time.Sleep(20 * time.Millisecond)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for name, call := range calls {
		wg.Add(1)
		go func(name string, call func(context.Context) error) {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			err := call(c)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if took > slowest {
				slowest = took
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s past its deadline = %v, want context.DeadlineExceeded", name, err)
			}
		}(name, call)
	}
	wg.Wait()
	if slowest > deadline+200*time.Millisecond {
		t.Errorf("slowest call returned after %v, deadline %v", slowest, deadline)
	}
	if inUse := pool.ActiveCount() - pool.IdleCount(); inUse != 0 {
		t.Errorf("%d pool connections still in use after the deadlines", inUse)
	}
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	// The store works on afterwards, and the pool is back where it was.
	if _, err := s.Article(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	if n := pool.ActiveCount(); n != baseline {
		t.Errorf("pool holds %d connections, %d before the deadlines", n, baseline)
	}
	t.Logf("%d calls during a %.1fs DEBUG SLEEP with a %v deadline: all DeadlineExceeded, slowest returned in %v; pool back to %d connection(s), no goroutine leaked",
		len(calls), sleep, deadline, slowest.Round(time.Millisecond), baseline)
}

// TestLostReplyRetry loses the reply of a Vote the server applied, as a
// connection dropped at the wrong moment would, then retries it: the vote
// counts once, for every pair of a previous and a new vote.
func TestLostReplyRetry(t *testing.T) {
	types := []VoteType{NoVote, Upvote, Downvote}
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		lossy := &lossyPool{Pool: s.pool}
		s.pool = lossy
		retried := 0
		for _, old := range types {
			for _, v := range types {
				a := mustPost(t, s, "poster", "t")
				if old != NoVote {
					mustVote(t, s, "u", a.ID, old)
				}
				lossy.lose.Store(true)
				if _, err := s.Vote(ctx, "u", a.ID, v); !errors.Is(err, errLostReply) {
					t.Fatalf("%v->%v: Vote with a lost reply = %v", old, v, err)
				}
				r := mustVote(t, s, "u", a.ID, v) // the retry
				retried++
				up, down := int64(1), int64(0)
				switch v {
				case Upvote:
					up++
				case Downvote:
					down++
				}
				want := VoteResult{Previous: v, Upvotes: up, Downvotes: down,
					Score: float64(a.Posted.Unix()) + DefaultVoteWeight*float64(up-down)}
				if r != want {
					t.Fatalf("%v->%v: retried Vote = %+v, want %+v", old, v, r, want)
				}
				checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, []string{"poster", "u"})
			}
		}
		t.Logf("%d votes lost their reply after the server applied them; each retry reported it in place and it counted once", retried)
	})
}

var errLostReply = errors.New("lossyConn: reply lost")

// lossyPool hands out connections that, once armed, run the next command
// that succeeds and return errLostReply instead of its reply.
type lossyPool struct {
	Pool
	lose atomic.Bool
}

func (p *lossyPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.Pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	return &lossyConn{ConnWithContext: c.(redis.ConnWithContext), pool: p}, nil
}

type lossyConn struct {
	redis.ConnWithContext
	pool *lossyPool
}

func (c *lossyConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	return c.lost(c.ConnWithContext.DoContext(ctx, cmd, args...))
}

func (c *lossyConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	return c.lost(c.ConnWithContext.Do(cmd, args...))
}

func (c *lossyConn) lost(v interface{}, err error) (interface{}, error) {
	if err == nil && c.pool.lose.CompareAndSwap(true, false) {
		return nil, errLostReply
	}
	return v, err
}
