package voting

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// readmePool is the pool of README.md's Usage, on srv.
func readmePool(t testing.TB, srv *redistest.Server) *redis.Pool {
	p := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", srv.Addr)
		},
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// fillIdle leaves n connections idle in p, each used a moment ago.
func fillIdle(t testing.TB, p *redis.Pool, n int) {
	t.Helper()
	var conns []redis.Conn
	for i := 0; i < n; i++ {
		c := p.Get()
		if _, err := c.Do("PING"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
}

// TestReconnect closes every connection README's pool holds idle, by a
// restart of the server from its append-only file and by CLIENT KILL
// from another connection, before each method: every call succeeds, the
// calls that can run twice sent again on another connection, Post and
// Comment on one that has just answered a PING, and Post posts once;
// so do Recorded and Check, which send plain commands.
func TestReconnect(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	pool := readmePool(t, srv)
	s, _ := newStore(t, &backend{name: "redis", pool: pool}, WithOrders(Top), WithUserPages(), WithKarma(1, -1), WithVoteLog(), WithVoteEvents(100))
	side := func() {
		c, err := redis.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// SKIPME yes (the default): every normal client but this one.
		if _, err := c.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
			t.Fatal(err)
		}
	}
	for _, drop := range []struct {
		name string
		drop func()
	}{
		{"restart", func() {
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		}},
		{"CLIENT KILL", side},
	} {
		t.Run(drop.name, func(t *testing.T) {
			a := mustPost(t, s, "alice", "first")
			for _, m := range methods {
				count, err := s.Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				fillIdle(t, pool, 4)
				drop.drop()
				if err := m.call(ctx, s, a.ID); err != nil {
					t.Errorf("%s after %s: %v", m.name, drop.name, err)
				}
				switch m.name {
				case "Post":
					if n, err := s.Count(ctx); err != nil || n != count+1 {
						t.Errorf("Post after %s: Count %d, %v; want %d", drop.name, n, err, count+1)
					}
				case "Delete", "Drop":
					a = mustPost(t, s, "alice", "again")
				}
			}
			// The methods that send plain commands.
			fillIdle(t, pool, 4)
			drop.drop()
			if _, _, err := s.Recorded(ctx); err != nil {
				t.Errorf("Recorded after %s: %v", drop.name, err)
			}
			fillIdle(t, pool, 4)
			drop.drop()
			if h, err := s.Check(ctx); err != nil || !h.Reachable {
				t.Errorf("Check after %s = %+v, %v", drop.name, h.Problems, err)
			}
		})
	}
}

// TestLostReplyEOF loses the reply of a call that the server ran, as a
// connection closed after the call ran: a Vote is sent again and counts
// once; a Post or a Comment returns ErrUnknownOutcome, having posted
// once.
func TestLostReplyEOF(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, name := range []string{"vote", "post", "comment"} {
			t.Run(name, func(t *testing.T) {
				s, _ := newStore(t, b)
				a := mustPost(t, s, "poster", "t")
				armed := false
				hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
					if err == nil && armed && scriptName(cmd, args) == name {
						armed = false
						return nil, io.EOF
					}
					return v, err
				}})
				armed = true
				switch name {
				case "vote":
					r, err := s.Vote(ctx, "u", a.ID, Upvote)
					// The repeat finds the vote in place, as a repeat by the caller
					// does (TestLostReplyRetry).
					if err != nil || r.Upvotes != 2 || r.Previous != Upvote {
						t.Fatalf("Vote with its reply lost = %+v, %v; want sent again, counted once", r, err)
					}
					checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, []string{"poster", "u"})
				case "post":
					_, err := s.Post(ctx, "alice", "t2", "")
					if !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, io.EOF) {
						t.Fatalf("Post with its reply lost = %v; want ErrUnknownOutcome and EOF", err)
					}
					if n, err := s.Count(ctx); err != nil || n != 2 {
						t.Fatalf("Count = %d, %v; want 2: posted once", n, err)
					}
				case "comment":
					_, err := s.Comment(ctx, a.ID, "", "bob", "hi")
					if !errors.Is(err, ErrUnknownOutcome) {
						t.Fatalf("Comment with its reply lost = %v; want ErrUnknownOutcome", err)
					}
					th, err := s.Thread(ctx, a.ID, TimeDesc, 10)
					if err != nil || len(th) != 1 {
						t.Fatalf("Thread = %d comments, %v; want 1: commented once", len(th), err)
					}
				}
				if armed {
					t.Fatal("the reply was not lost")
				}
			})
		}
	})
}

// TestDroppedBound runs calls on a pool that hands out only connections
// the server has closed: a call tries each connection the pool held idle
// and one more, then returns the connection's error.
func TestDroppedBound(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := redistest.Start(t)
	pool := readmePool(t, srv)
	s, _ := newStore(t, &backend{name: "redis", pool: pool})
	a := mustPost(t, s, "alice", "t")
	fillIdle(t, pool, 5)
	srv.Kill()
	for _, call := range []func() error{
		func() error { _, err := s.Vote(ctx, "bob", a.ID, Upvote); return err },
		func() error { _, err := s.Post(ctx, "bob", "t", ""); return err },
	} {
		if err := call(); err == nil || errors.Is(err, ErrUnknownOutcome) {
			t.Fatalf("a call with the server down = %v; want the dial's error", err)
		}
	}
	if n := pool.IdleCount(); n != 0 {
		t.Fatalf("%d connections idle: the call left the dropped ones", n)
	}
}

// TestPingRefused runs Post and Comment as a user that may not PING
// (ACL): the refusal is the server's answer, so the connection is live,
// and the calls run.
func TestPingRefused(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := redistest.Start(t)
	if _, err := srv.Do("ACL", "SETUSER", "voter", "on", ">pw", "~*", "+@all", "-ping"); err != nil {
		t.Fatal(err)
	}
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", srv.Addr, redis.DialUsername("voter"), redis.DialPassword("pw"))
	}}
	t.Cleanup(func() { pool.Close() })
	s, _ := newStore(t, &backend{name: "redis", pool: pool})
	a := mustPost(t, s, "alice", "t")
	if _, err := s.Comment(ctx, a.ID, "", "bob", "hi"); err != nil {
		t.Fatal(err)
	}
}
