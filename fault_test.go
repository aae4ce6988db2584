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

// The fault tests break Redis in one way while calls run (its script
// cache flushed, the server killed and restarted, its connections killed,
// the server blocked, a reply lost) and check that every call returned (a
// result or an error) without hanging, that the same Store and pool work
// afterwards, and that nothing the server acknowledged is lost. Those
// that stop or block the server start one of their own.

// faultBackend returns a backend on srv whose pool has short timeouts, as
// a service in front of traffic would configure it.
func faultBackend(t testing.TB, srv *redistest.Server) *backend {
	p := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", srv.Addr,
				redis.DialConnectTimeout(200*time.Millisecond),
				redis.DialReadTimeout(time.Second),
				redis.DialWriteTimeout(time.Second))
		},
	}
	t.Cleanup(func() { p.Close() })
	return &backend{name: "redis", pool: p}
}

// faultCall is one store call of a load: when it ran and how it ended.
type faultCall struct {
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
// for every article.
func (l *ledger) verify(t *testing.T, s *Store) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.posts) == 0 || len(l.possible) == 0 {
		t.Fatalf("%d acknowledged posts and %d voted pairs: the load did nothing", len(l.posts), len(l.possible))
	}
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
			t.Fatalf("vote of %s on %s is %v; the server may hold only %v", k[0], k[1], v, possible)
		}
	}
	var users []string
	for u := range l.users {
		users = append(users, u)
	}
	checkInvariant(t, s, DefaultVoteWeight, idsOf(allArticles(t, s, TimeAsc)), users)
}

// load runs workers that post and vote on s until stop is closed, each
// call under the given deadline, and returns every call each made.
func load(s *Store, l *ledger, ids []string, workers int, deadline time.Duration, stop <-chan struct{}) [][]faultCall {
	calls := make([][]faultCall, workers)
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
				c := faultCall{start: time.Now()}
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

// TestScriptFlush empties the server's script cache before each method
// and while a load runs: EVALSHA gets NOSCRIPT and falls back to EVAL,
// and every call succeeds. VoteBatch sends EVAL and never sees NOSCRIPT.
func TestScriptFlush(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top))
		var noscripts atomic.Int64
		hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				noscripts.Add(1)
			}
			return v, err
		}})
		flush := func() {
			t.Helper()
			c := b.pool.Get() // on a cluster, the store's node
			defer c.Close()
			if _, err := c.Do("SCRIPT", "FLUSH"); err != nil {
				t.Error(err)
			}
		}

		eachMethod(t, s, func(m method, id string) {
			flush()
			before := noscripts.Load()
			if err := m.call(ctx, s, id); err != nil {
				t.Fatalf("%s after SCRIPT FLUSH: %v", m.name, err)
			}
			if n := noscripts.Load() - before; (n == 0) != (m.name == "VoteBatch") {
				t.Errorf("%s after SCRIPT FLUSH: %d NOSCRIPT replies", m.name, n)
			}
		})

		l := newLedger()
		for _, u := range []string{"alice", "bob", "carol", "dave"} { // the voters of methods
			l.users[u] = true
		}
		ids := seed(t, s, l, 5)
		stop := make(chan struct{})
		done := make(chan [][]faultCall)
		before := noscripts.Load()
		go func() { done <- load(s, l, ids, 4, 2*time.Second, stop) }()
		for i := 0; i < 50; i++ {
			flush()
			time.Sleep(2 * time.Millisecond)
		}
		close(stop)
		for _, calls := range <-done {
			for _, c := range calls {
				if c.err != nil {
					t.Fatalf("call during SCRIPT FLUSH: %v", c.err)
				}
			}
		}
		if noscripts.Load() == before {
			t.Fatal("no NOSCRIPT during the load: the flushes were not felt")
		}
		l.verify(t, s)
	})
}

// TestServerRestart kills the server with SIGKILL in the middle of a load
// and restarts it on the same port from its append-only file (fsync on
// every write). Calls during the outage fail promptly, calls after it
// succeed on the same Store and pool, and no acknowledged post or vote is
// lost.
func TestServerRestart(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	s, _ := newStore(t, faultBackend(t, srv))
	l := newLedger()
	ids := seed(t, s, l, 8)
	const workers, deadline = 6, 500 * time.Millisecond
	stop := make(chan struct{})
	done := make(chan [][]faultCall)
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

	var before, outage, after int
	var slowest time.Duration
	for _, calls := range <-done {
		for _, c := range calls {
			slowest = max(slowest, c.end.Sub(c.start))
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
	l.verify(t, s)
}

// TestClientKill kills every client connection from a side connection,
// again and again, while a load runs: calls fail with errors, never a
// panic; once the kills stop, the pool recovers after at most one failure
// per connection it held; nothing acknowledged is lost.
func TestClientKill(t *testing.T) {
	srv := redistest.Start(t)
	b := faultBackend(t, srv)
	s, _ := newStore(t, b)
	l := newLedger()
	ids := seed(t, s, l, 8)
	side, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()

	stop := make(chan struct{})
	done := make(chan [][]faultCall)
	go func() { done <- load(s, l, ids, 6, 500*time.Millisecond, stop) }()
	for i := 0; i < 25; i++ {
		time.Sleep(10 * time.Millisecond)
		// SKIPME yes (the default): every normal client but side.
		if _, err := side.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
			t.Fatal(err)
		}
	}
	lastKill := time.Now()
	held := b.pool.ActiveCount()
	time.Sleep(200 * time.Millisecond)
	close(stop)

	var errs, afterErrs, after int
	for _, calls := range <-done {
		for _, c := range calls {
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
	if after == 0 {
		t.Fatal("no call after the last kill")
	}
	if afterErrs > held {
		t.Fatalf("%d failures after the last kill, but the pool held only %d connections", afterErrs, held)
	}
	l.verify(t, s)
}

// TestContextDeadline blocks the server with DEBUG SLEEP from a side
// connection while every method runs with a shorter deadline: each
// returns an error wrapping context.DeadlineExceeded promptly, and no
// goroutine or pool connection is left behind.
func TestContextDeadline(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // after the server stops
	srv := redistest.Start(t, "--enable-debug-command", "local")
	// No read timeout: only the context bounds a call.
	b := newBackend(t, "redis", srv.Addr, nil)
	s, _ := newStore(t, b, WithOrders(Top))
	a := mustPost(t, s, "alice", "t")
	baseline := b.pool.ActiveCount()

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
	for _, m := range methods {
		wg.Add(1)
		go func(m method) {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			err := m.call(c, s, a.ID)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			slowest = max(slowest, took)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s past its deadline = %v, want context.DeadlineExceeded", m.name, err)
			}
		}(m)
	}
	wg.Wait()
	if slowest > deadline+200*time.Millisecond {
		t.Errorf("slowest call returned after %v, deadline %v", slowest, deadline)
	}
	if inUse := b.pool.ActiveCount() - b.pool.IdleCount(); inUse != 0 {
		t.Errorf("%d pool connections still in use after the deadlines", inUse)
	}
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	// The store works on afterwards (the blocked calls may or may not have
	// run once the server woke), and the pool is back where it was.
	if _, err := s.Count(ctx); err != nil {
		t.Fatal(err)
	}
	if n := b.pool.ActiveCount(); n != baseline {
		t.Errorf("pool holds %d connections, %d before the deadlines", n, baseline)
	}
}

var errLostReply = errors.New("test: reply lost")

// loseReply returns hooks that, while armed, replace the next successful
// reply to the named script with errLostReply, as a connection dropped
// after the server ran the script would.
func loseReply(name string) (*hooks, *atomic.Bool) {
	armed := new(atomic.Bool)
	return &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
		if err == nil && scriptName(cmd, args) == name && armed.CompareAndSwap(true, false) {
			return nil, errLostReply
		}
		return v, err
	}}, armed
}

// TestLostReplyRetry loses the reply of a Vote, and of a VoteBatch, that
// the server applied, then retries it: for every pair of a previous and a
// new vote, the retry reports the new vote in place and it counts once.
func TestLostReplyRetry(t *testing.T) {
	types := []VoteType{NoVote, Upvote, Downvote}
	// want is the result of a retried vote v on an article a with the
	// poster's upvote.
	want := func(a Article, v VoteType) VoteResult {
		up, down := int64(1), int64(0)
		switch v {
		case Upvote:
			up++
		case Downvote:
			down++
		}
		return VoteResult{Previous: v, Upvotes: up, Downvotes: down,
			Score: float64(a.Posted.Unix()) + DefaultVoteWeight*float64(up-down)}
	}
	forEachBackend(t, func(t *testing.T, b *backend) {
		t.Run("Vote", func(t *testing.T) {
			s, _ := newStore(t, b)
			h, armed := loseReply("vote")
			hook(s, h)
			for _, old := range types {
				for _, v := range types {
					a := mustPost(t, s, "poster", "t")
					if old != NoVote {
						mustVote(t, s, "u", a.ID, old)
					}
					armed.Store(true)
					if _, err := s.Vote(ctx, "u", a.ID, v); !errors.Is(err, errLostReply) {
						t.Fatalf("%v->%v: Vote with a lost reply = %v", old, v, err)
					}
					if r := mustVote(t, s, "u", a.ID, v); r != want(a, v) {
						t.Fatalf("%v->%v: retried Vote = %+v, want %+v", old, v, r, want(a, v))
					}
					checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, []string{"poster", "u"})
				}
			}
		})
		t.Run("VoteBatch", func(t *testing.T) {
			s, _ := newStore(t, b)
			h, armed := loseReply("vote_batch")
			hook(s, h)
			var ballots []Ballot
			var posted []Article
			for _, old := range types {
				for _, v := range types {
					a := mustPost(t, s, "poster", "t")
					if old != NoVote {
						mustVote(t, s, "u", a.ID, old)
					}
					ballots = append(ballots, Ballot{User: "u", ID: a.ID, Vote: v})
					posted = append(posted, a)
				}
			}
			armed.Store(true)
			if _, err := s.VoteBatch(ctx, ballots); !errors.Is(err, errLostReply) {
				t.Fatalf("VoteBatch with a lost reply = %v", err)
			}
			results, err := s.VoteBatch(ctx, ballots)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for i, r := range results {
				if r.Err != nil || r.VoteResult != want(posted[i], ballots[i].Vote) {
					t.Errorf("ballot %d (%v): retried = %+v, want %+v", i, ballots[i].Vote, r, want(posted[i], ballots[i].Vote))
				}
				ids = append(ids, posted[i].ID)
			}
			checkInvariant(t, s, DefaultVoteWeight, ids, []string{"poster", "u"})
		})
		t.Run("Post with unique links", func(t *testing.T) {
			s, _ := newStore(t, b, WithUniqueLinks())
			h, armed := loseReply("post")
			hook(s, h)
			armed.Store(true)
			if _, err := s.Post(ctx, "alice", "t", "https://example.com/once"); !errors.Is(err, errLostReply) {
				t.Fatalf("Post with a lost reply = %v", err)
			}
			a, err := s.Post(ctx, "alice", "t", "https://example.com/once")
			if !errors.Is(err, ErrDuplicate) || a.ID != "1" || a.Poster != "alice" || a.Upvotes != 1 {
				t.Fatalf("retried Post = %+v, %v; want article 1 and ErrDuplicate", a, err)
			}
			if n, err := s.Count(ctx); err != nil || n != 1 {
				t.Fatalf("Count = %d, %v; want 1", n, err)
			}
		})
	})
}
