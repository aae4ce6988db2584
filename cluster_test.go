package voting

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/redistest"
)

// exercise runs every public method of s once or more and checks the
// results and the vote invariant; it returns the number of calls.
func exercise(t *testing.T, s *Store) int {
	t.Helper()
	calls := 0
	check := func(err error) {
		t.Helper()
		calls++
		if err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, title := range []string{"one", "two", "three"} {
		a, err := s.Post(ctx, "poster", title, "")
		check(err)
		ids = append(ids, a.ID)
	}
	_, err := s.Vote(ctx, "alice", ids[0], Upvote)
	check(err)
	_, err = s.Vote(ctx, "bob", ids[1], Downvote)
	check(err)
	votes, err := s.VotesOf(ctx, "alice", ids)
	check(err)
	if votes[0] != Upvote || votes[1] != NoVote {
		t.Fatalf("VotesOf = %v", votes)
	}
	v, err := s.VoteOf(ctx, "bob", ids[1])
	check(err)
	if v != Downvote {
		t.Fatalf("VoteOf = %v, want down", v)
	}
	page, err := s.Articles(ctx, ScoreDesc, 1)
	check(err)
	if len(page) != 3 || page[0].ID != ids[0] || page[2].ID != ids[1] {
		t.Fatalf("front page = %+v", page)
	}
	check(s.AddToGroups(ctx, ids[0], "go", "redis"))
	check(s.AddToGroups(ctx, ids[1], "go"))
	groups, err := s.Groups(ctx, ids[0])
	check(err)
	if fmt.Sprint(groups) != "[go redis]" {
		t.Fatalf("Groups = %v", groups)
	}
	gp, err := s.GroupArticles(ctx, "go", ScoreDesc, 1)
	check(err)
	if len(gp) != 2 || gp[0].ID != ids[0] {
		t.Fatalf("group page = %+v", gp)
	}
	check(s.RemoveFromGroups(ctx, ids[0], "redis"))
	check(s.Delete(ctx, ids[2]))
	_, err = s.Article(ctx, ids[2])
	calls++
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted article: %v", err)
	}
	checkInvariant(t, s, DefaultVoteWeight, ids[:2], []string{"poster", "alice", "bob"})
	return calls
}

// prefixesOnDistinctNodes returns n prefixes, starting with base, whose
// slots are owned by n different nodes.
func prefixesOnDistinctNodes(t *testing.T, owners []*redistest.Server, base string, n int) []string {
	t.Helper()
	var prefixes []string
	used := map[*redistest.Server]bool{}
	for i := 0; len(prefixes) < n && i < 1000; i++ {
		p := fmt.Sprintf("%s-%d-%d", base, prefixSeq.Add(1), i)
		node := owners[redistest.Slot("{"+p+"}:seq")]
		if !used[node] {
			used[node] = true
			prefixes = append(prefixes, p)
		}
	}
	if len(prefixes) < n {
		t.Fatalf("found prefixes on %d nodes, want %d", len(prefixes), n)
	}
	return prefixes
}

// TestClusterStoresOnTheirNodes runs two stores whose prefixes hash to
// different nodes, each on a plain pool to its own node, and checks that
// each store's keys live on its node alone. A store sent to the other
// node gets MOVED: plain pools must reach the node of the prefix.
func TestClusterStoresOnTheirNodes(t *testing.T) {
	c, owners := clusterServer(t)
	prefixes := prefixesOnDistinctNodes(t, owners, "site", 2)
	var nodes [2]*redistest.Server
	var stores [2]*Store
	for i, p := range prefixes {
		slot, err := c.KeySlot("{" + p + "}:seq")
		if err != nil {
			t.Fatal(err)
		}
		if nodes[i], err = c.NodeOf(slot); err != nil {
			t.Fatal(err)
		}
		pool := nodes[i].Pool()
		t.Cleanup(func() { pool.Close() })
		if stores[i], err = New(pool, WithKeyPrefix(p)); err != nil {
			t.Fatal(err)
		}
	}
	if nodes[0] == nodes[1] {
		t.Fatal("both prefixes are on one node")
	}
	calls := 0
	for _, s := range stores {
		calls += exercise(t, s)
	}
	for i, p := range prefixes {
		for _, n := range c.Nodes {
			keys, err := redis.Strings(n.Do("KEYS", "{"+p+"}:*"))
			if err != nil {
				t.Fatal(err)
			}
			if on := n == nodes[i]; on != (len(keys) > 0) {
				t.Errorf("prefix %s: node %s holds %d keys; its own node is %s", p, n.Addr, len(keys), nodes[i].Addr)
			}
		}
	}

	wrong := nodes[1].Pool()
	defer wrong.Close()
	s, err := New(wrong, WithKeyPrefix(prefixes[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Articles(ctx, ScoreDesc, 1); err == nil || !isRedirect(err) {
		t.Fatalf("store on the wrong node: %v, want MOVED", err)
	}
	t.Logf("%d calls by 2 stores on nodes %s and %s: all on their own node; the wrong node answers MOVED",
		calls, nodes[0].Addr, nodes[1].Addr)
}

// TestClusterBindingPool shares one cluster-aware pool, which routes a
// connection by the key it is bound to, among stores on all three nodes:
// the store's Bind sends each script to the node of its prefix.
func TestClusterBindingPool(t *testing.T) {
	c, owners := clusterServer(t)
	pool := newBindPool(owners)
	defer pool.Close()
	calls := 0
	for _, p := range prefixesOnDistinctNodes(t, owners, "tenant", len(c.Nodes)) {
		s, err := New(pool, WithKeyPrefix(p))
		if err != nil {
			t.Fatal(err)
		}
		calls += exercise(t, s)
	}
	if pool.redirects.Load() != 0 {
		t.Fatalf("%d MOVED, CROSSSLOT or non-local-key errors", pool.redirects.Load())
	}
	t.Logf("%d calls by %d stores through one binding pool: bound to %d nodes, 0 MOVED, CROSSSLOT or non-local-key errors",
		calls, len(c.Nodes), len(pool.nodes()))
}

// bindPool is a minimal cluster-aware pool in the manner of mna/redisc: a
// connection it hands out reaches no node until Bind picks the node that
// owns the key's slot.
type bindPool struct {
	owners []*redistest.Server
	mu     sync.Mutex
	pools  map[*redistest.Server]*redis.Pool
	// redirects counts MOVED, CROSSSLOT and non-local-key errors.
	redirects atomic.Int64
}

func newBindPool(owners []*redistest.Server) *bindPool {
	return &bindPool{owners: owners, pools: map[*redistest.Server]*redis.Pool{}}
}

func (p *bindPool) GetContext(ctx context.Context) (redis.Conn, error) {
	return &bindConn{pool: p, ctx: ctx}, nil
}

func (p *bindPool) node(n *redistest.Server) *redis.Pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pools[n] == nil {
		p.pools[n] = n.Pool()
	}
	return p.pools[n]
}

func (p *bindPool) nodes() []*redistest.Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	var list []*redistest.Server
	for n := range p.pools {
		list = append(list, n)
	}
	return list
}

func (p *bindPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pool := range p.pools {
		pool.Close()
	}
}

// bindConn is a connection of bindPool.
type bindConn struct {
	pool *bindPool
	ctx  context.Context
	conn redis.Conn // nil until bound
}

var errUnbound = errors.New("bindConn: not bound to a key")

// Bind binds c to the node of keys' slot; all keys must share one slot.
func (c *bindConn) Bind(keys ...string) error {
	if c.conn != nil {
		return errors.New("bindConn: already bound")
	}
	if len(keys) == 0 {
		return errors.New("bindConn: no key to bind to")
	}
	slot := redistest.Slot(keys[0])
	for _, k := range keys[1:] {
		if redistest.Slot(k) != slot {
			return errors.New("bindConn: keys in different slots")
		}
	}
	conn, err := c.pool.node(c.pool.owners[slot]).GetContext(c.ctx)
	if err != nil {
		return err
	}
	c.conn = conn
	return nil
}

func (c *bindConn) count(v interface{}, err error) (interface{}, error) {
	if err != nil && isRedirect(err) {
		c.pool.redirects.Add(1)
	}
	return v, err
}

func (c *bindConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if c.conn == nil {
		return nil, errUnbound
	}
	return c.count(c.conn.Do(cmd, args...))
}

func (c *bindConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	if c.conn == nil {
		return nil, errUnbound
	}
	return c.count(redis.DoContext(c.conn, ctx, cmd, args...))
}

func (c *bindConn) Send(cmd string, args ...interface{}) error {
	if c.conn == nil {
		return errUnbound
	}
	return c.conn.Send(cmd, args...)
}

func (c *bindConn) Flush() error {
	if c.conn == nil {
		return errUnbound
	}
	return c.conn.Flush()
}

func (c *bindConn) Receive() (interface{}, error) {
	if c.conn == nil {
		return nil, errUnbound
	}
	return c.conn.Receive()
}

func (c *bindConn) ReceiveContext(ctx context.Context) (interface{}, error) {
	if c.conn == nil {
		return nil, errUnbound
	}
	return redis.ReceiveContext(c.conn, ctx)
}

func (c *bindConn) Err() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Err()
}

func (c *bindConn) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// TestBind checks, on a fake connection that records what it is asked,
// that every method binds its connection to one of the store's own keys
// before it sends its one script, and that every key of the script is in
// the bound key's slot. A failing Bind is returned, and nothing is sent.
func TestBind(t *testing.T) {
	b := newBackend(t, "miniredis", miniredis.RunT(t).Addr(), nil)
	rec := &recordPool{pool: b.pool}
	s, err := New(rec, WithKeyPrefix("bind:test"))
	if err != nil {
		t.Fatal(err)
	}
	calls := exercise(t, s)
	tag := "{bind:test}:"
	bound := 0
	for i, conn := range rec.conns {
		log := conn.log
		if len(log) < 2 || !strings.HasPrefix(log[0], "BIND ") {
			t.Fatalf("connection %d: %q, want a Bind first", i, log)
		}
		key := strings.TrimPrefix(log[0], "BIND ")
		if !strings.HasPrefix(key, tag) {
			t.Fatalf("connection %d bound to %q, not a key of the store", i, key)
		}
		for _, cmd := range log[1:] {
			if strings.HasPrefix(cmd, "BIND") {
				t.Fatalf("connection %d bound twice: %q", i, log)
			}
		}
		for _, k := range conn.keys {
			if redistest.Slot(k) != redistest.Slot(key) {
				t.Fatalf("connection %d: script key %q is not in the slot of %q", i, k, key)
			}
		}
		bound++
	}
	if bound < calls {
		t.Fatalf("%d connections bound for %d calls", bound, calls)
	}

	rec.bindErr = errors.New("no node for that slot")
	sent := len(rec.conns)
	_, err = s.Vote(ctx, "alice", "1", Upvote)
	if !errors.Is(err, rec.bindErr) {
		t.Fatalf("Vote with a failing Bind = %v, want the Bind error", err)
	}
	if last := rec.conns[sent].log; len(last) != 1 {
		t.Fatalf("a failed Bind still sent %q", last[1:])
	}
	t.Logf("%d calls (and the invariant's reads): %d connections, each bound once to a key of the store before its script, all script keys in its slot; a Bind error is returned", calls, bound)
}

// recordPool hands out connections that record their Bind and commands.
type recordPool struct {
	pool    *redis.Pool
	bindErr error
	conns   []*recordConn
}

func (p *recordPool) GetContext(ctx context.Context) (redis.Conn, error) {
	conn, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	c := &recordConn{ConnWithContext: conn.(redis.ConnWithContext), bindErr: p.bindErr}
	p.conns = append(p.conns, c)
	return c, nil
}

type recordConn struct {
	redis.ConnWithContext
	bindErr error
	log     []string // "BIND key", then the commands
	keys    []string // the KEYS of every script
}

func (c *recordConn) Bind(keys ...string) error {
	c.log = append(c.log, "BIND "+strings.Join(keys, " "))
	return c.bindErr
}

func (c *recordConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	c.record(cmd, args)
	return c.ConnWithContext.DoContext(ctx, cmd, args...)
}

func (c *recordConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	c.record(cmd, args)
	return c.ConnWithContext.Do(cmd, args...)
}

func (c *recordConn) record(cmd string, args []interface{}) {
	if cmd == "" {
		return // the pool's flush on Close
	}
	c.log = append(c.log, cmd)
	if cmd == "EVALSHA" || cmd == "EVAL" {
		n := args[1].(int)
		for _, k := range args[2 : 2+n] {
			c.keys = append(c.keys, fmt.Sprint(k))
		}
	}
}
