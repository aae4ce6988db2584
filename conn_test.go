package voting

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// method is one public method of Store that talks to Redis, called on an
// existing article.
type method struct {
	name string
	// trips is the round trips the call costs with warm scripts, on a
	// store of a few articles: Post and Comment PING first (liveConn); 0
	// for Drop, which takes one per SCAN step.
	trips int64
	// one is set for methods about one article, which get ErrNotFound for
	// a missing one.
	one  bool
	call func(ctx context.Context, s *Store, id string) error
}

// methods is every public method of Store that talks to Redis: the one
// table behind the round-trip, binding, context and cluster tests.
// TestMethodsCoverStore keeps it complete. The store must enable Top,
// WithUserPages, WithVoteLog and WithVoteEvents.
var methods = []method{
	{"Post", 2, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Post(ctx, "alice", "title "+id, "https://example.com/"+id)
		return err
	}},
	{"Article", 1, true, func(ctx context.Context, s *Store, id string) error { _, err := s.Article(ctx, id); return err }},
	{"ArticlesByID", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.ArticlesByID(ctx, []string{id, "x", id})
		return err
	}},
	{"Articles", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Articles(ctx, ScoreDesc, 1)
		return err
	}},
	{"ArticlesFor", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.ArticlesFor(ctx, "bob", ScoreDesc, 1)
		return err
	}},
	{"TopSince", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.TopSince(ctx, time.Hour, 1)
		return err
	}},
	{"TopSinceFor", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.TopSinceFor(ctx, "bob", time.Hour, 1)
		return err
	}},
	{"Count", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.Count(ctx); return err }},
	{"Vote", 1, true, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Vote(ctx, "bob", id, Upvote)
		return err
	}},
	{"VoteBatch", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.VoteBatch(ctx, []Ballot{{"carol", id, Downvote}, {"dave", id, Upvote}})
		return err
	}},
	{"VoteOf", 1, true, func(ctx context.Context, s *Store, id string) error { _, err := s.VoteOf(ctx, "bob", id); return err }},
	{"VotesOf", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.VotesOf(ctx, "bob", []string{id, "1"})
		return err
	}},
	{"AddToGroups", 1, true, func(ctx context.Context, s *Store, id string) error { return s.AddToGroups(ctx, id, "go", "redis") }},
	{"Groups", 1, true, func(ctx context.Context, s *Store, id string) error { _, err := s.Groups(ctx, id); return err }},
	{"GroupArticles", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.GroupArticles(ctx, "go", Top, 1)
		return err
	}},
	{"GroupArticlesFor", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.GroupArticlesFor(ctx, "bob", "go", Top, 1)
		return err
	}},
	{"GroupCount", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.GroupCount(ctx, "go"); return err }},
	{"RemoveFromGroups", 1, true, func(ctx context.Context, s *Store, id string) error { return s.RemoveFromGroups(ctx, id, "redis") }},
	{"Karma", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.Karma(ctx, "alice"); return err }},
	{"TopUsers", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.TopUsers(ctx, 1); return err }},
	{"Rules", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.Rules(ctx); return err }},
	{"SetRules", 1, false, func(ctx context.Context, s *Store, id string) error {
		if !s.rules.config.karma {
			// A store with no rule has none to set (ErrNotAllowed,
			// before Redis): its Rules is the round trip.
			_, err := s.Rules(ctx)
			return err
		}
		_, err := s.SetRules(ctx, WithKarma(1, -1))
		return err
	}},
	{"Edit", 1, true, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Edit(ctx, id, "alice", "edited", "")
		if errors.Is(err, ErrNotAllowed) {
			// The tests' stores have no edit window: the script refuses
			// the edit, after the same round trip.
			return nil
		}
		return err
	}},
	{"Comment", 2, true, func(ctx context.Context, s *Store, id string) error {
		c, err := s.Comment(ctx, id, "", "bob", "a comment")
		if err == nil {
			lastComments.Store(s, c.ID)
		}
		return err
	}},
	{"VoteComment", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.VoteComment(ctx, "carol", lastComment(s), Upvote)
		return err
	}},
	{"Thread", 1, true, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Thread(ctx, id, Best, 10)
		return err
	}},
	{"Replies", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Replies(ctx, lastComment(s), TimeDesc, 10)
		return err
	}},
	{"ThreadFor", 1, true, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.ThreadFor(ctx, "bob", id, Best, 10)
		return err
	}},
	{"RepliesFor", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.RepliesFor(ctx, "bob", lastComment(s), TimeDesc, 10)
		return err
	}},
	{"CommentsByID", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.CommentsByID(ctx, []string{lastComment(s), "x"})
		return err
	}},
	{"CommentVotesOf", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.CommentVotesOf(ctx, "carol", []string{lastComment(s), "x"})
		return err
	}},
	{"EditComment", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.EditComment(ctx, lastComment(s), "bob", "edited")
		if errors.Is(err, ErrNotAllowed) {
			return nil // no edit window, as Edit's
		}
		return err
	}},
	{"UserComments", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.UserComments(ctx, "bob", 1)
		return err
	}},
	{"CommentVoters", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.CommentVoters(ctx, lastComment(s), "", 10)
		return err
	}},
	{"DeleteComment", 1, false, func(ctx context.Context, s *Store, id string) error { return s.DeleteComment(ctx, lastComment(s)) }},
	{"VotesBy", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.VotesBy(ctx, "carol", "", 10)
		return err
	}},
	{"Voters", 1, true, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.Voters(ctx, id, "", 10)
		return err
	}},
	{"ReverseVotes", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.ReverseVotes(ctx, "dave")
		return err
	}},
	{"Suspend", 1, false, func(ctx context.Context, s *Store, id string) error {
		return s.Suspend(ctx, "eve", Refuse, s.now().Add(time.Hour))
	}},
	{"Suspended", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.Suspended(ctx, "eve")
		return err
	}},
	{"Unsuspend", 1, false, func(ctx context.Context, s *Store, id string) error { return s.Unsuspend(ctx, "eve") }},
	{"VoteEvents", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.VoteEvents(ctx, "", 10)
		return err
	}},
	{"Delete", 1, true, func(ctx context.Context, s *Store, id string) error { return s.Delete(ctx, id) }},
	{"Prune", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Prune(ctx, epoch.Add(-time.Hour))
		return err
	}},
	{"Drop", 0, false, func(ctx context.Context, s *Store, id string) error { return s.Drop(ctx) }}, // one per SCAN step
	{"Reconfigure", 1, false, func(ctx context.Context, s *Store, id string) error { _, err := s.Reconfigure(ctx); return err }},
	{"Submitted", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Submitted(ctx, "alice", 1)
		return err
	}},
	{"Upvoted", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, err := s.Upvoted(ctx, "bob", 1)
		return err
	}},
	{"SubmittedFor", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.SubmittedFor(ctx, "bob", "alice", 1)
		return err
	}},
	{"UpvotedFor", 1, false, func(ctx context.Context, s *Store, id string) error {
		_, _, err := s.UpvotedFor(ctx, "alice", "bob", 1)
		return err
	}},
}

// lastComments holds, for each store, the comment its method Comment made
// last, on which the other comment methods are called.
var lastComments sync.Map

// lastComment is the comment of s that the comment methods call on:
// the one Comment made last, or "1".
func lastComment(s *Store) string {
	if id, ok := lastComments.Load(s); ok {
		return id.(string)
	}
	return "1"
}

// TestMethodsCoverStore keeps methods in step with Store's method set.
func TestMethodsCoverStore(t *testing.T) {
	listed := map[string]bool{}
	for _, m := range methods {
		listed[m.name] = true
	}
	// The methods that run no script: Check, Recorded and CheckIdentity
	// send plain commands (identity_test.go, health_test.go), Identity
	// none.
	plain := map[string]bool{"Check": true, "Recorded": true, "CheckIdentity": true, "Identity": true}
	typ := reflect.TypeOf(&Store{})
	for i := 0; i < typ.NumMethod(); i++ {
		if name := typ.Method(i).Name; !listed[name] && !plain[name] {
			t.Errorf("Store.%s is not in methods", name)
		}
	}
	if len(listed)+len(plain) != typ.NumMethod() {
		t.Errorf("methods lists %d names, Store has %d methods", len(listed), typ.NumMethod())
	}
}

// TestRoundTrips checks the store's promise: every method is one round
// trip, whatever its outcome, and input it rejects costs none. The calls
// whose work grows with the data take one per step: a cold group page of
// more members than one build step, Prune of more articles than one step.
func TestRoundTrips(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		loadScripts(t, b.pool)
		h := &hooks{}
		hook(s, h)
		costs := func(t *testing.T, name string, want int64, call func() error, wantErr error) {
			t.Helper()
			before := h.trips.Load()
			err := call()
			if got := h.trips.Load() - before; got != want {
				t.Errorf("%s: %d round trips, want %d", name, got, want)
			}
			if !errors.Is(err, wantErr) {
				t.Errorf("%s: error %v, want %v", name, err, wantErr)
			}
		}
		a := mustPost(t, s, "alice", "first")
		for _, m := range methods {
			if m.name == "Drop" {
				continue
			}
			costs(t, m.name, m.trips, func() error { return m.call(ctx, s, a.ID) }, nil)
			if m.name == "Delete" {
				costs(t, "Delete again", 1, func() error { return m.call(ctx, s, a.ID) }, ErrNotFound)
				a = mustPost(t, s, "alice", "second")
			}
		}
		for _, m := range methods {
			if m.one {
				costs(t, m.name+" of a missing article", m.trips, func() error { return m.call(ctx, s, "999") }, ErrNotFound)
				costs(t, m.name+" of a malformed id", 0, func() error { return m.call(ctx, s, "x1") }, ErrNotFound)
			}
		}
		costs(t, "Vote of an invalid type", 0, func() error { _, err := s.Vote(ctx, "bob", a.ID, 5); return err }, ErrInvalidVote)
		costs(t, "Vote by a blank user", 0, func() error { _, err := s.Vote(ctx, " ", a.ID, Upvote); return err }, ErrInvalidArgument)
		costs(t, "Articles of a disabled order", 0, func() error { _, err := s.Articles(ctx, Hot, 1); return err }, ErrInvalidArgument)
		costs(t, "TopSince past its depth", 0, func() error { _, err := s.TopSince(ctx, time.Hour, MaxTopSince); return err }, nil)

		// A cold group of more members than one build step costs a round
		// trip per step; the warm read one.
		var ids []string
		for i := 0; i < 2*buildStep; i++ {
			ids = append(ids, strconv.Itoa(i+100))
		}
		bigGroup(t, b, s, "big", ids)
		// A dense group's cold page is one round trip: a walk of the
		// store's ordering and a build step.
		costs(t, "GroupArticles cold, dense", 1, func() error { _, err := s.GroupArticles(ctx, "big", TimeDesc, 1); return err }, nil)
		b.do(t, "DEL", s.keys.cacheKey("big", "time"))
		s.walk = 0 // the build alone
		before := h.trips.Load()
		if _, err := s.GroupArticles(ctx, "big", TimeDesc, 1); err != nil {
			t.Fatal(err)
		}
		s.walk = walkStep
		if n := h.trips.Load() - before; n < 2 {
			t.Errorf("cold read of a %d-member group: %d round trips, want one per step", len(ids), n)
		}
		costs(t, "GroupArticles warm", 1, func() error { _, err := s.GroupArticles(ctx, "big", TimeDesc, 2); return err }, nil)

		clock.Add(DefaultVoteWindow)
		costs(t, "Vote after the window", 1, func() error { _, err := s.Vote(ctx, "bob", a.ID, Upvote); return err }, ErrVotingClosed)
		if b.mr != nil {
			// A server that lost its scripts costs one extra round trip
			// (NOSCRIPT, then EVAL), once. Only on miniredis, which this
			// test has to itself.
			b.do(t, "SCRIPT", "FLUSH")
			costs(t, "Count on a cold script", 2, func() error { _, err := s.Count(ctx); return err }, nil)
			costs(t, "Count on a warm script", 1, func() error { _, err := s.Count(ctx); return err }, nil)
		}
	})
}

// TestOnlyGetPool runs the store on a pool with exactly the method set of
// *redisc.Cluster (Get, no GetContext), whose connections have no
// context support: a done context is still honoured before the call.
func TestOnlyGetPool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		s.pool = getOnlyPool{b.pool}
		a := mustPost(t, s, "alice", "t")
		if _, err := s.VoteBatch(ctx, []Ballot{{"bob", a.ID, Upvote}}); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Article(c, a.ID); !errors.Is(err, context.Canceled) {
			t.Fatalf("Article with a canceled context = %v", err)
		}
	})
}

// getOnlyPool is a pool with Get only, handing out connections without
// context support.
type getOnlyPool struct{ p *redis.Pool }

func (p getOnlyPool) Get() redis.Conn { return plainConn{p.p.Get()} }

type plainConn struct{ redis.Conn } // hides the pool connection's DoContext

// TestContextCanceled checks that every method returns a done context's
// error, wrapped.
func TestContextCanceled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		a := mustPost(t, s, "alice", "t")
		c, cancel := context.WithCancel(ctx)
		cancel()
		var names []string
		for _, m := range methods {
			err := m.call(c, s, a.ID)
			if !errors.Is(err, context.Canceled) {
				names = append(names, m.name+": "+errString(err))
			}
		}
		slices.Sort(names)
		if len(names) > 0 {
			t.Fatalf("with a canceled context: %v", names)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// The binding and cluster tests: clusterPool stands in for redisc's
// cluster pool, whose connections bind to the node of their keys, on
// every backend; the cluster tests run stores on the nodes of a real
// Redis Cluster.

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
	switch {
	case (cmd == "EVALSHA" || cmd == "EVAL" || cmd == "FCALL" || cmd == "FCALL_RO") && len(args) > 1:
		for _, a := range args[2:] {
			if s, ok := a.(string); ok && strings.HasPrefix(s, "{") {
				c.keys = append(c.keys, s)
			}
		}
	case cmd == "GET" || cmd == "TYPE" || cmd == "HGET": // VotesOf's pipeline
		if s, ok := args[0].(string); ok {
			c.keys = append(c.keys, s)
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
	slices.Sort(names)
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
// the method's script (VoteBatch: Send, Flush, Receive; VotesOf: a
// pipeline of reads), every key and key prefix of which is in the bound
// key's slot. A failing Bind is
// returned by every method, and nothing is sent.
func TestBind(t *testing.T) {
	if got, want := methodNames(&clusterPool{}), []string{"Get"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("clusterPool has methods %v, want redisc's %v", got, want)
	}
	if got, want := methodNames(&clusterConn{}), []string{"Bind", "Close", "Do", "Err", "Flush", "Receive", "Send"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("clusterConn has methods %v, want %v", got, want)
	}
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
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
	c, owners := redistest.SharedCluster(t)
	for _, p := range prefixesOnDistinctNodes(t, owners, n) {
		s, err := New(pool(p), WithKeyPrefix(p), WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
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
	_, owners := redistest.SharedCluster(t)
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
	c, _ := redistest.SharedCluster(t)
	pool := &clusterPool{node: newClusterBackend(t).node}
	storesOnOwnNodes(t, len(c.Nodes), func(string) Pool { return pool })
}

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
	eachWorker(workers, func(w int, rng *rand.Rand) {
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
				_, err := s.Vote(cctx, user, id, ballot(v))
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
	})
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
// and every call succeeds. VoteBatch sends EVAL and never sees NOSCRIPT;
// VotesOf runs no script (votes.go).
// The store runs scripts, as on a server without Functions;
// TestFunctionFlush flushes the library.
func TestScriptFlush(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		s.funcs.off.Store(true)
		var noscripts atomic.Int64
		hook(s, &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				noscripts.Add(1)
			}
			return v, err
		}})
		flush := flusher(t, b, "SCRIPT")

		eachMethod(t, s, func(m method, id string) {
			flush()
			before := noscripts.Load()
			if err := m.call(ctx, s, id); err != nil {
				t.Fatalf("%s after SCRIPT FLUSH: %v", m.name, err)
			}
			if n := noscripts.Load() - before; (n == 0) != (m.name == "VoteBatch" || m.name == "VotesOf") {
				t.Errorf("%s after SCRIPT FLUSH: %d NOSCRIPT replies", m.name, n)
			}
		})

		before := noscripts.Load()
		flushUnderLoad(t, s, "SCRIPT FLUSH", flush)
		if noscripts.Load() == before {
			t.Fatal("no NOSCRIPT during the load: the flushes were not felt")
		}
	})
}

// flusher returns a function that sends cmd FLUSH (SCRIPT or FUNCTION)
// to b's server; on a cluster, to the node of the store newStore made
// last.
func flusher(t *testing.T, b *backend, cmd string) func() {
	return func() {
		t.Helper()
		c := b.pool.Get()
		defer c.Close()
		if _, err := c.Do(cmd, "FLUSH"); err != nil {
			t.Error(err)
		}
	}
}

// flushUnderLoad runs flush (what) 50 times while four workers post and
// vote on s, which must not fail one call nor lose an acknowledged one.
func flushUnderLoad(t *testing.T, s *Store, what string, flush func()) {
	t.Helper()
	l := newLedger()
	for _, u := range []string{"alice", "bob", "carol", "dave"} { // the voters of methods
		l.users[u] = true
	}
	ids := seed(t, s, l, 5)
	stop := make(chan struct{})
	done := make(chan [][]faultCall)
	go func() { done <- load(s, l, ids, 4, 2*time.Second, stop) }()
	for i := 0; i < 50; i++ {
		flush()
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	for _, calls := range <-done {
		for _, c := range calls {
			if c.err != nil {
				t.Fatalf("call during %s: %v", what, c.err)
			}
		}
	}
	l.verify(t, s)
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
		return VoteResult{Previous: v, Upvotes: up, Downvotes: down, Points: up - down,
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
					if _, err := s.Vote(ctx, "u", a.ID, ballot(v)); !errors.Is(err, errLostReply) {
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
					ballots = append(ballots, Ballot{User: "u", ID: a.ID, Vote: ballot(v)})
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
				if r.Err != nil || r.VoteResult != want(posted[i], held(ballots[i].Vote)) {
					t.Errorf("ballot %d (%v): retried = %+v, want %+v", i, ballots[i].Vote, r, want(posted[i], held(ballots[i].Vote)))
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
