package voting

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/redistest"
)

// clusterPool stands in for *redisc.Cluster (github.com/mna/redisc
// v1.4.0) with exactly the methods of it the store can use: Get() and no
// GetContext. Its connections have Bind and the plain redis.Conn methods,
// no DoContext or ReceiveContext. As with redisc, a connection is bound
// to the node of its keys' slot by Bind and cannot be bound twice; unlike
// redisc, an unbound connection sends nothing, so a store that forgot to
// bind fails. Every connection records what it was asked.
type clusterPool struct {
	node    func(key string) *redis.Pool // the pool of the node that owns key's slot
	bindErr error                        // if set, every Bind fails with it

	mu    sync.Mutex
	conns []*clusterConn
}

var (
	_ Pool   = (*clusterPool)(nil)
	_ Binder = (*clusterConn)(nil)
)

func (p *clusterPool) Get() redis.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &clusterConn{pool: p}
	p.conns = append(p.conns, c)
	return c
}

// taken returns the connections handed out so far.
func (p *clusterPool) taken() []*clusterConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*clusterConn(nil), p.conns...)
}

type clusterConn struct {
	pool  *clusterPool
	conn  redis.Conn // nil until bound
	bound string     // the key bound to
	log   []string   // "Bind key", "Do CMD", "Send CMD", "Flush", "Receive"
	keys  []string   // every KEYS element and key prefix of the scripts sent
}

var errUnbound = errors.New("clusterConn: not bound to a key")

func (c *clusterConn) Bind(keys ...string) error {
	c.log = append(c.log, "Bind "+strings.Join(keys, " "))
	switch {
	case c.pool.bindErr != nil:
		return c.pool.bindErr
	case c.conn != nil:
		return errors.New("clusterConn: already bound")
	case len(keys) == 0:
		return errors.New("clusterConn: no key to bind to")
	}
	for _, k := range keys[1:] {
		if redistest.Slot(k) != redistest.Slot(keys[0]) {
			return errors.New("clusterConn: keys in different slots")
		}
	}
	c.conn, c.bound = c.pool.node(keys[0]).Get(), keys[0]
	return nil
}

// record logs a command and the keys of a script: its KEYS and every
// argument that starts with a hash tag, the key prefixes the script
// appends names to.
func (c *clusterConn) record(how, cmd string, args []interface{}) {
	c.log = append(c.log, how+" "+cmd)
	if (cmd == "EVALSHA" || cmd == "EVAL") && len(args) > 1 {
		for _, a := range args[2:] {
			if s, ok := a.(string); ok && strings.HasPrefix(s, "{") {
				c.keys = append(c.keys, s)
			}
		}
	}
}

func (c *clusterConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if c.conn == nil {
		return nil, errUnbound
	}
	if cmd != "" {
		c.record("Do", cmd, args)
	}
	return c.conn.Do(cmd, args...)
}

func (c *clusterConn) Send(cmd string, args ...interface{}) error {
	if c.conn == nil {
		return errUnbound
	}
	c.record("Send", cmd, args)
	return c.conn.Send(cmd, args...)
}

func (c *clusterConn) Flush() error {
	if c.conn == nil {
		return errUnbound
	}
	c.log = append(c.log, "Flush")
	return c.conn.Flush()
}

func (c *clusterConn) Receive() (interface{}, error) {
	if c.conn == nil {
		return nil, errUnbound
	}
	c.log = append(c.log, "Receive")
	return c.conn.Receive()
}

func (c *clusterConn) Err() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Err()
}

func (c *clusterConn) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// methodNames returns the method names of v's type, sorted.
func methodNames(v interface{}) []string {
	typ := reflect.TypeOf(v)
	var names []string
	for i := 0; i < typ.NumMethod(); i++ {
		names = append(names, typ.Method(i).Name)
	}
	sort.Strings(names)
	return names
}

// eachMethod calls fn with every method of methods but Drop, in order,
// and the id of a live article of s for it: a fresh one after Delete.
func eachMethod(t *testing.T, s *Store, fn func(m method, id string)) {
	t.Helper()
	a := mustPost(t, s, "alice", "first")
	for _, m := range methods {
		if m.name == "Drop" {
			continue
		}
		fn(m, a.ID)
		if m.name == "Delete" {
			a = mustPost(t, s, "alice", "second")
		}
	}
}

// TestBind runs every method through clusterPool and checks what each
// connection was asked: a Bind to a key of the store first and once, then
// the method's script (VoteBatch: Send, Flush, Receive), every key and
// key prefix of which is in the bound key's slot. A failing Bind is
// returned by every method, and nothing is sent.
func TestBind(t *testing.T) {
	if got, want := methodNames(&clusterPool{}), []string{"Get"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("clusterPool has methods %v, want redisc's %v", got, want)
	}
	if got, want := methodNames(&clusterConn{}), []string{"Bind", "Close", "Do", "Err", "Flush", "Receive", "Send"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("clusterConn has methods %v, want %v", got, want)
	}
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top))
		node := func(string) *redis.Pool { return b.pool }
		if b.node != nil {
			node = b.node
		}
		p := &clusterPool{node: node}
		s.pool = p
		tag := "{" + s.keys.prefix + "}:"
		check := func(name string, conns []*clusterConn) {
			t.Helper()
			if len(conns) == 0 {
				t.Errorf("%s took no connection", name)
			}
			for _, c := range conns {
				if len(c.log) < 2 || c.log[0] != "Bind "+c.bound || !strings.HasPrefix(c.bound, tag) {
					t.Errorf("%s: connection asked %q, want a Bind to a key of %s first", name, c.log, tag)
					continue
				}
				for _, l := range c.log[1:] {
					if strings.HasPrefix(l, "Bind") {
						t.Errorf("%s: connection bound twice: %q", name, c.log)
					}
				}
				for _, k := range c.keys {
					if redistest.Slot(k) != redistest.Slot(c.bound) {
						t.Errorf("%s: script key %q is not in the slot of %q", name, k, c.bound)
					}
				}
				if len(c.keys) == 0 {
					t.Errorf("%s: %q sent no script keys", name, c.log)
				}
			}
		}
		eachMethod(t, s, func(m method, id string) {
			before := len(p.taken())
			if err := m.call(ctx, s, id); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			conns := p.taken()[before:]
			check(m.name, conns)
			if m.name == "VoteBatch" && len(conns) > 0 {
				if got, want := fmt.Sprint(conns[0].log[1:]), "[Send EVAL Flush Receive]"; got != want {
					t.Errorf("VoteBatch asked %s, want %s", got, want)
				}
			}
		})
		before := len(p.taken())
		if err := s.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		check("Drop", p.taken()[before:])

		p.bindErr = errors.New("no node for that slot")
		for _, m := range methods {
			before := len(p.taken())
			if err := m.call(ctx, s, "1"); !errors.Is(err, p.bindErr) {
				t.Errorf("%s with a failing Bind = %v, want the Bind error", m.name, err)
			}
			for _, c := range p.taken()[before:] {
				if len(c.log) != 1 {
					t.Errorf("%s: a failed Bind still asked %q", m.name, c.log[1:])
				}
			}
		}
	})
}

// prefixesOnDistinctNodes returns n prefixes whose slots are owned by n
// different nodes.
func prefixesOnDistinctNodes(t *testing.T, owners []*redistest.Server, n int) []string {
	t.Helper()
	var prefixes []string
	used := map[*redistest.Server]bool{}
	for i := 0; len(prefixes) < n && i < 1000; i++ {
		p := fmt.Sprintf("test%d", prefixSeq.Add(1))
		if node := owners[redistest.Slot(newKeys(p).seq)]; !used[node] {
			used[node] = true
			prefixes = append(prefixes, p)
		}
	}
	if len(prefixes) < n {
		t.Fatalf("found prefixes on %d nodes, want %d", len(prefixes), n)
	}
	return prefixes
}

// storesOnOwnNodes runs every method of n stores whose prefixes hash to
// n different nodes, each on the pool that pool returns for its prefix,
// and checks that each store's keys live on its node alone.
func storesOnOwnNodes(t *testing.T, n int, pool func(prefix string) Pool) {
	t.Helper()
	c, owners := clusterServer(t)
	for _, p := range prefixesOnDistinctNodes(t, owners, n) {
		s, err := New(pool(p), WithKeyPrefix(p), WithOrders(Top))
		if err != nil {
			t.Fatal(err)
		}
		eachMethod(t, s, func(m method, id string) {
			if err := m.call(ctx, s, id); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
		})
		own := owners[redistest.Slot(s.keys.seq)]
		for _, node := range c.Nodes {
			keys, err := redis.Strings(node.Do("KEYS", s.keys.pattern()))
			if err != nil {
				t.Fatal(err)
			}
			if on := node == own; on != (len(keys) > 0) {
				t.Errorf("prefix %s: node %s holds %d keys; its own node is %s", p, node.Addr, len(keys), own.Addr)
			}
		}
	}
}

// TestClusterStoresOnTheirNodes runs two stores whose prefixes hash to
// different nodes, each on a plain pool to its own node (newClusterBackend
// fails the test on any redirect). A store on a pool to another node gets
// the node's MOVED as its error.
func TestClusterStoresOnTheirNodes(t *testing.T) {
	_, owners := clusterServer(t)
	b := newClusterBackend(t)
	storesOnOwnNodes(t, 2, func(p string) Pool { return b.node(newKeys(p).seq) })

	p := prefixesOnDistinctNodes(t, owners, 2)
	wrong := newPool(owners[redistest.Slot(newKeys(p[1]).seq)].Addr, nil)
	defer wrong.Close()
	s, err := New(wrong, WithKeyPrefix(p[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Count(ctx); err == nil || !isRedirect(err) {
		t.Fatalf("a store on another node's pool: %v, want MOVED", err)
	}
}

// TestClusterBindingPool shares one clusterPool among stores on all the
// cluster's nodes: binding sends each store's scripts to the node of its
// prefix, and no call meets a redirect (newClusterBackend fails the test
// on any).
func TestClusterBindingPool(t *testing.T) {
	c, _ := clusterServer(t)
	pool := &clusterPool{node: newClusterBackend(t).node}
	storesOnOwnNodes(t, len(c.Nodes), func(string) Pool { return pool })
}
