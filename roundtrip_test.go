package voting

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// countingPool is a Pool that counts the round trips made on the
// connections it hands out: each Do or DoContext is one, and so is each
// Flush, which sends a pipeline whose replies the Receives then read.
type countingPool struct {
	pool Pool
	n    atomic.Int64
}

func newCountingPool(p Pool) *countingPool { return &countingPool{pool: p} }

// GetContext implements Pool.
func (p *countingPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &p.n}, nil
}

// RoundTrips returns the round trips counted so far.
func (p *countingPool) RoundTrips() int64 { return p.n.Load() }

// countingConn counts the round trips of one connection. It supports
// contexts, as the pool's own connections do, so the store takes the
// same path through it as without it.
type countingConn struct {
	redis.Conn
	n *atomic.Int64
}

var _ redis.ConnWithContext = (*countingConn)(nil)

func (c *countingConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	c.n.Add(1)
	return c.Conn.Do(cmd, args...)
}

func (c *countingConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	c.n.Add(1)
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c *countingConn) Flush() error {
	c.n.Add(1)
	return c.Conn.Flush()
}

func (c *countingConn) ReceiveContext(ctx context.Context) (interface{}, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

// allScripts is every script of the store, for loadScripts.
var allScripts = []*redis.Script{
	postScript, voteScript, articleScript, pageScript, votesScript,
	groupAddScript, groupRemoveScript, groupsScript, groupPageScript, deleteScript,
}

// TestAllScriptsListed keeps allScripts in step with scripts.go, so that
// loadScripts leaves no script cold.
func TestAllScriptsListed(t *testing.T) {
	src, err := os.ReadFile("scripts.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "redis.NewScript("); n != len(allScripts) {
		t.Fatalf("scripts.go makes %d scripts, allScripts lists %d", n, len(allScripts))
	}
}

// loadScripts loads every script into the server, so that the first call
// of each pays no NOSCRIPT retry.
func loadScripts(tb testing.TB, pool Pool) {
	tb.Helper()
	conn, err := pool.GetContext(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	for _, s := range allScripts {
		if err := s.Load(conn); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRoundTrips checks the store's promise: every public method is one
// round trip, whatever its outcome, and input it rejects costs none.
func TestRoundTrips(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b) // on a cluster, points b.pool at the store's node
		cp := newCountingPool(b.pool)
		s.pool = cp
		loadScripts(t, b.pool)

		// costs runs op and checks that it made want round trips.
		costs := func(t *testing.T, name string, want int64, op func() error, wantErr error) {
			t.Helper()
			before := cp.RoundTrips()
			err := op()
			got := cp.RoundTrips() - before
			if !errors.Is(err, wantErr) {
				t.Fatalf("%s: error %v, want %v", name, err, wantErr)
			}
			if got != want {
				t.Errorf("%s: %d round trips, want %d", name, got, want)
			}
		}
		var id string
		costs(t, "Post", 1, func() error {
			a, err := s.Post(ctx, "alice", "first", "https://example.com/1")
			id = a.ID
			return err
		}, nil)
		var ids []string
		for i := 0; i < 30; i++ {
			ids = append(ids, mustPost(t, s, "bob", "post "+strconv.Itoa(i)).ID)
		}

		vote := func(user, id string, v VoteType) func() error {
			return func() error { _, err := s.Vote(ctx, user, id, v); return err }
		}
		costs(t, "Vote up", 1, vote("carol", id, Upvote), nil)
		costs(t, "Vote up again (no-op)", 1, vote("carol", id, Upvote), nil)
		costs(t, "Vote down", 1, vote("carol", id, Downvote), nil)
		costs(t, "Vote cancel", 1, vote("carol", id, NoVote), nil)
		costs(t, "Vote cancel again (no-op)", 1, vote("carol", id, NoVote), nil)
		costs(t, "Vote on a missing article", 1, vote("carol", "999", Upvote), ErrNotFound)
		costs(t, "Vote on a malformed id", 0, vote("carol", "x1", Upvote), ErrNotFound)
		costs(t, "Vote of an invalid type", 0, vote("carol", id, VoteType(5)), ErrInvalidVote)
		costs(t, "Vote by a blank user", 0, vote(" ", id, Upvote), ErrInvalidArgument)

		costs(t, "Article", 1, func() error { _, err := s.Article(ctx, id); return err }, nil)
		costs(t, "Article missing", 1, func() error { _, err := s.Article(ctx, "999"); return err }, ErrNotFound)
		costs(t, "Articles page", 1, func() error {
			list, err := s.Articles(ctx, ScoreDesc, 1)
			if err == nil && len(list) != DefaultPageSize {
				t.Errorf("page of %d articles, want %d", len(list), DefaultPageSize)
			}
			return err
		}, nil)
		costs(t, "Articles page past the end", 1, func() error { _, err := s.Articles(ctx, TimeDesc, 99); return err }, nil)
		costs(t, "VotesOf 25 ids", 1, func() error {
			votes, err := s.VotesOf(ctx, "bob", ids[:25])
			if err == nil && votes[24] != Upvote {
				t.Errorf("bob's vote on his own post = %v, want up", votes[24])
			}
			return err
		}, nil)
		costs(t, "VoteOf", 1, func() error { _, err := s.VoteOf(ctx, "bob", ids[0]); return err }, nil)

		costs(t, "AddToGroups", 1, func() error { return s.AddToGroups(ctx, id, "go", "redis", "news") }, nil)
		for _, other := range ids[:5] {
			if err := s.AddToGroups(ctx, other, "go"); err != nil {
				t.Fatal(err)
			}
		}
		costs(t, "AddToGroups missing", 1, func() error { return s.AddToGroups(ctx, "999", "go") }, ErrNotFound)
		costs(t, "Groups", 1, func() error { _, err := s.Groups(ctx, id); return err }, nil)
		groupPage := func(group string) func() error {
			return func() error {
				list, err := s.GroupArticles(ctx, group, ScoreDesc, 1)
				if err == nil && len(list) != 6 {
					t.Errorf("group page of %d articles, want 6", len(list))
				}
				return err
			}
		}
		before := s.rebuilds.Load()
		costs(t, "GroupArticles on a cache miss", 1, groupPage("go"), nil)
		costs(t, "GroupArticles on a cache hit", 1, groupPage("go"), nil)
		if n := s.rebuilds.Load() - before; n != 1 {
			t.Errorf("%d cache builds for a miss and a hit, want 1", n)
		}
		costs(t, "RemoveFromGroups", 1, func() error { return s.RemoveFromGroups(ctx, id, "go", "redis") }, nil)
		costs(t, "Delete", 1, func() error { return s.Delete(ctx, ids[29]) }, nil)
		costs(t, "Delete again", 1, func() error { return s.Delete(ctx, ids[29]) }, ErrNotFound)

		clock.Add(DefaultVoteWindow)
		costs(t, "Vote after the window", 1, vote("carol", id, Upvote), ErrVotingClosed)

		if b.mr != nil {
			// A server that lost its scripts costs one extra round trip
			// (NOSCRIPT, then EVAL), once. Only on miniredis, which this
			// test has to itself.
			b.do(t, "SCRIPT", "FLUSH")
			costs(t, "Article on a cold script", 2, func() error { _, err := s.Article(ctx, id); return err }, nil)
			costs(t, "Article on a warm script", 1, func() error { _, err := s.Article(ctx, id); return err }, nil)
		}
	})
}

// TestCountingPool checks the counter itself: a Do is one round trip, and
// a pipeline of Sends is one on Flush, however many Receives follow.
func TestCountingPool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		cp := newCountingPool(b.pool)
		conn, err := cp.GetContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Do("PING"); err != nil {
			t.Fatal(err)
		}
		if _, err := redis.DoContext(conn, ctx, "PING"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := conn.Send("PING"); err != nil {
				t.Fatal(err)
			}
		}
		if err := conn.Flush(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := redis.ReceiveContext(conn, ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := cp.RoundTrips(); n != 3 {
			t.Fatalf("%d round trips, want 3", n)
		}
	})
}
