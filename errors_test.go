package voting

import (
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// TestRefusals turns each of Redis's refusals of a call, and redisc's
// RetryConn spent on them, into its sentinel, for every kind of call: a
// script, a read, a batch's pipeline; other errors wrap neither.
func TestRefusals(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	type refusal struct{ reply, want error }
	var refusals []refusal
	for want, replies := range map[error][]error{
		ErrTryAgain: {
			redis.Error("TRYAGAIN Multiple keys request during rehashing of slot"),
			redis.Error("ASK 3999 127.0.0.1:6381"),
			redis.Error("MOVED 3999 127.0.0.1:6381"),
			redis.Error("CLUSTERDOWN The cluster is down"),
			redis.Error("LOADING Redis is loading the dataset in memory"),
			redis.Error("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."),
			errors.New("redisc: too many attempts"),
		},
		ErrOutOfMemory: {
			redis.Error("OOM command not allowed when used memory > 'maxmemory'."),
			redis.Error("OOM command not allowed when used memory > 'maxmemory'. script: 4a2b, on @user_script:9."),
		},
		nil: { // wrapping neither
			redis.Error("ERR something else"),
			redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"),
			redis.Error("READONLY You can't write against a read only replica."),
		},
	} {
		for _, reply := range replies {
			refusals = append(refusals, refusal{reply, want})
		}
	}
	for _, tc := range refusals {
		s, _ := newStore(t, b)
		a, err := s.Post(ctx, "alice", "t", "")
		if err != nil {
			t.Fatal(err)
		}
		hook(s, &hooks{after: func(cmd string, _ []interface{}, v interface{}, err error) (interface{}, error) {
			if cmd == "FUNCTION" {
				return v, err
			}
			return nil, tc.reply
		}})
		calls := map[string]func() error{
			"vote":    func() error { _, err := s.Vote(ctx, "bob", a.ID, Upvote); return err },
			"post":    func() error { _, err := s.Post(ctx, "bob", "t", ""); return err },
			"page":    func() error { _, err := s.Articles(ctx, ScoreDesc, 1); return err },
			"comment": func() error { _, err := s.Comment(ctx, a.ID, "", "bob", "c"); return err },
			"thread":  func() error { _, err := s.Thread(ctx, a.ID, Best, 10); return err },
			"batch": func() error {
				_, err := s.VoteBatch(ctx, []Ballot{{User: "bob", ID: a.ID, Vote: Upvote}})
				return err
			},
		}
		for name, call := range calls {
			err := call()
			if err == nil {
				t.Fatalf("%s with %q: no error", name, tc.reply)
			}
			for _, sentinel := range []error{ErrTryAgain, ErrOutOfMemory} {
				if errors.Is(err, sentinel) != (sentinel == tc.want) {
					t.Errorf("%s with %q: %v; wraps %v: %v", name, tc.reply, err, sentinel, errors.Is(err, sentinel))
				}
			}
			if !strings.Contains(err.Error(), strings.TrimPrefix(tc.reply.Error(), "ERR ")) {
				t.Errorf("%s with %q: %v does not say Redis's reply", name, tc.reply, err)
			}
		}
	}
}

// TestOutOfMemory runs the store on a redis-server at its maxmemory
// under noeviction, with Functions and with scripts: every call that
// grows the data gets ErrOutOfMemory and changes nothing (no id taken,
// no vote counted); reads and the calls that free memory run.
func TestOutOfMemory(t *testing.T) {
	srv := redistest.Shared(t)
	for _, scripts := range []bool{false, true} {
		b := newBackend(t, "redis", srv.Addr, nil)
		s, _ := newStore(t, b, WithUserPages(), WithKarma(1, -1))
		s.funcs.off.Store(scripts)
		a, err := s.Post(ctx, "alice", "first", "https://example.com/1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Post(ctx, "alice", "second", ""); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, b, s)
		b.do(t, "CONFIG", "SET", "maxmemory", "1")
		full := true
		t.Cleanup(func() {
			if full {
				b.do(t, "CONFIG", "SET", "maxmemory", "0")
			}
		})
		for name, call := range map[string]func() error{
			"post": func() error { _, err := s.Post(ctx, "bob", "t", ""); return err },
			"vote": func() error { _, err := s.Vote(ctx, "bob", a.ID, Upvote); return err },
			"batch": func() error {
				r, err := s.VoteBatch(ctx, []Ballot{{User: "bob", ID: a.ID, Vote: Downvote}})
				if err == nil {
					err = r[0].Err
				}
				return err
			},
			"add to groups": func() error { return s.AddToGroups(ctx, a.ID, "g") },
		} {
			if err := call(); !errors.Is(err, ErrOutOfMemory) {
				t.Errorf("scripts %v: %s on a full Redis: %v, want ErrOutOfMemory", scripts, name, err)
			}
		}
		if after := snapshot(t, b, s); !maps.Equal(before, after) {
			t.Errorf("scripts %v: refused calls changed the store:\nbefore %v\nafter  %v", scripts, before, after)
		}
		if _, err := s.Articles(ctx, ScoreDesc, 1); err != nil {
			t.Errorf("scripts %v: a page on a full Redis: %v", scripts, err)
		}
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Errorf("scripts %v: Delete on a full Redis: %v", scripts, err)
		}
		b.do(t, "CONFIG", "SET", "maxmemory", "0")
		full = false
		if _, err := s.Post(ctx, "bob", "t", ""); err != nil {
			t.Errorf("scripts %v: post once there is room: %v", scripts, err)
		} else if n, err := redis.Int(b.do(t, "GET", s.keys.seq), nil); err != nil || n != 3 {
			t.Errorf("scripts %v: the post after the refused one took id %d (%v), want 3", scripts, n, err)
		}
	}
}

// TestForeignValueAtEveryKey plants a value of another type at each key a
// call writes or reads, one key at a time, on a store with every option
// that adds keys, and runs the call: it either succeeds or fails having
// changed nothing. The keys are every key of the store and every key the
// call creates, found by running it once on a twin store: so no script
// writes a key before it has checked every key it will write.
func TestForeignValueAtEveryKey(t *testing.T) {
	t.Parallel() // under prefixes of its own
	srv := redistest.Shared(t)
	b := newBackend(t, "redis", srv.Addr, nil)
	opts := []Option{WithOrders(Top, Hot, Best, Controversial), WithUserPages(), WithKarma(1, -1),
		WithUniqueLinks(), WithVoteLimit(100, time.Hour), WithPostInterval(time.Second), WithEditWindow(time.Hour),
		WithCommentInterval(time.Second)}
	// fixture returns a store and its articles: a and c in groups with
	// warm caches, votes of bob and carol.
	fixture := func(t *testing.T) (*Store, []Article) {
		s, clock := newStore(t, b, opts...)
		var list []Article
		for i, poster := range []string{"alice", "dave", "erin"} {
			a, err := s.Post(ctx, poster, "title "+strconv.Itoa(i), "https://example.com/"+strconv.Itoa(i))
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, a)
			clock.Add(2 * time.Second)
		}
		for _, g := range []struct {
			id     string
			groups []string
		}{{list[0].ID, []string{"g1", "g2"}}, {list[2].ID, []string{"g1"}}} {
			if err := s.AddToGroups(ctx, g.id, g.groups...); err != nil {
				t.Fatal(err)
			}
		}
		for _, o := range []Order{ScoreDesc, TimeDesc, Top, Hot, Best, Controversial} {
			mustGroupPage(t, s, "g1", o, 1)
		}
		mustVote(t, s, "bob", list[0].ID, Upvote)
		mustVote(t, s, "carol", list[0].ID, Downvote)
		mustVote(t, s, "bob", list[2].ID, Upvote)
		// Comments on the first article: "1" by bob, "2" by carol replying
		// to it, "3" by dave; erin's upvote on "3".
		for _, c := range []struct{ parent, poster string }{{"", "bob"}, {"1", "carol"}, {"", "dave"}} {
			if _, err := s.Comment(ctx, list[0].ID, c.parent, c.poster, "a comment"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.VoteComment(ctx, "erin", "3", Upvote); err != nil {
			t.Fatal(err)
		}
		return s, list
	}
	ops := append(ballotOps[:len(ballotOps):len(ballotOps)], []storeOp{
		{"post", func(s *Store, a []Article) error {
			_, err := s.Post(ctx, "alice", "new", "https://example.com/new")
			return err
		}},
		{"add to groups", func(s *Store, a []Article) error { return s.AddToGroups(ctx, a[1].ID, "g1", "g3") }},
		{"remove from groups", func(s *Store, a []Article) error { return s.RemoveFromGroups(ctx, a[0].ID, "g1", "g2") }},
		{"edit", func(s *Store, a []Article) error {
			_, err := s.Edit(ctx, a[0].ID, "alice", "edited", "https://example.com/edited")
			return err
		}},
		{"comment", func(s *Store, a []Article) error { _, err := s.Comment(ctx, a[0].ID, "2", "frank", "new"); return err }},
		{"comment vote", func(s *Store, a []Article) error { _, err := s.VoteComment(ctx, "frank", "2", Upvote); return err }},
		{"comment own switch", func(s *Store, a []Article) error { _, err := s.VoteComment(ctx, "bob", "1", Downvote); return err }},
		{"comment cancel", func(s *Store, a []Article) error { _, err := s.VoteComment(ctx, "erin", "3", CancelVote); return err }},
		{"edit comment", func(s *Store, a []Article) error { _, err := s.EditComment(ctx, "2", "carol", "edited"); return err }},
		{"delete comment", func(s *Store, a []Article) error { return s.DeleteComment(ctx, "2") }},
		{"delete comment kept", func(s *Store, a []Article) error { return s.DeleteComment(ctx, "1") }},
		{"delete", func(s *Store, a []Article) error { return s.Delete(ctx, a[0].ID) }},
		// One article, one step: Prune is whole step by step (prune.lua).
		{"prune", func(s *Store, a []Article) error { _, err := s.Prune(ctx, a[0].Posted.Add(time.Second)); return err }},
		{"cold group page", func(s *Store, a []Article) error { _, err := s.GroupArticles(ctx, "g2", Top, 1); return err }},
	}...)
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel() // each on stores of its own
			foreignValueAtEveryKey(t, b, fixture, op.name, op.call)
		})
	}
}

// storeOp is a call a test runs on a store and its articles.
type storeOp struct {
	name string
	call func(s *Store, a []Article) error
}

// ballotOps are the votes TestForeignValueAtEveryKey and
// TestForeignValueAtModerationKeys run on their fixtures, where bob and
// carol voted up and down on the first article: frank's first vote,
// bob's switch, carol's cancel, and bob's cancel in a batch.
var ballotOps = []storeOp{
	{"vote", func(s *Store, a []Article) error { _, err := s.Vote(ctx, "frank", a[0].ID, Upvote); return err }},
	{"switch", func(s *Store, a []Article) error { _, err := s.Vote(ctx, "bob", a[0].ID, Downvote); return err }},
	{"cancel", func(s *Store, a []Article) error { _, err := s.Vote(ctx, "carol", a[0].ID, CancelVote); return err }},
	{"batch", func(s *Store, a []Article) error {
		// One ballot: a batch is atomic ballot by ballot, not whole.
		r, err := s.VoteBatch(ctx, []Ballot{{User: "bob", ID: a[0].ID, Vote: CancelVote}})
		if err == nil {
			err = r[0].Err
		}
		return err
	}},
}

// foreignValueAtEveryKey checks op against a foreign value at each key
// it writes, each on a store of its own made by fixture.
func foreignValueAtEveryKey(t *testing.T, b *backend, fixture func(*testing.T) (*Store, []Article), op string, call func(s *Store, a []Article) error) {
	// The keys the call writes, found on a twin store: each key of the
	// store, and each the call creates, by its name after the prefix.
	twin, list := fixture(t)
	before := snapshot(t, b, twin)
	if err := call(twin, list); err != nil {
		t.Fatalf("%s on a clean store: %v", op, err)
	}
	names := map[string]bool{}
	tag := "{" + twin.keys.prefix + "}:"
	for k := range snapshot(t, b, twin) {
		names[strings.TrimPrefix(k, tag)] = true
	}
	for k := range before {
		names[strings.TrimPrefix(k, tag)] = true
	}
	// One more fixture, whose keys each trial starts from: restoring
	// them (DUMP, RESTORE) costs a round trip where the fixture's calls
	// cost twenty.
	s, list := fixture(t)
	saved := saveStore(t, b, s)
	for name := range names {
		restoreStore(t, b, s, saved)
		key := "{" + s.keys.prefix + "}:" + name
		if typ, _ := redis.String(b.do(t, "TYPE", key), nil); typ == "string" {
			b.do(t, "DEL", key)
			b.do(t, "HSET", key, "foreign", "value")
		} else {
			b.do(t, "DEL", key)
			b.do(t, "SET", key, "foreign")
		}
		before := snapshot(t, b, s)
		err := call(s, list)
		if err == nil {
			continue // the call does not need the key, or tolerates it (a group cache)
		}
		if after := snapshot(t, b, s); !maps.Equal(before, after) {
			t.Errorf("%s with a foreign value at %s: %v, and it changed the store:", op, name, err)
			for k, v := range after {
				if before[k] != v {
					t.Errorf("  %s: %.120s, was %.120s", k, v, before[k])
				}
			}
			for k := range before {
				if _, ok := after[k]; !ok {
					t.Errorf("  %s: deleted", k)
				}
			}
		}
	}
}

// saveStore returns the keys of s, each with its DUMP and its PTTL, for
// restoreStore.
func saveStore(t testing.TB, b *backend, s *Store) map[string][2]interface{} {
	t.Helper()
	c := b.storePool(s).Get()
	defer c.Close()
	saved := map[string][2]interface{}{}
	for _, key := range b.storeKeys(t, s) {
		dump, err := c.Do("DUMP", key)
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := redis.Int64(c.Do("PTTL", key))
		if err != nil {
			t.Fatal(err)
		}
		saved[key] = [2]interface{}{dump, max(ttl, 0)}
	}
	return saved
}

// restoreStore makes the keys of s those of saved (saveStore), in one
// MULTI: the keys s has and saved has not are deleted.
func restoreStore(t testing.TB, b *backend, s *Store, saved map[string][2]interface{}) {
	t.Helper()
	keys := b.storeKeys(t, s)
	c := b.storePool(s).Get()
	defer c.Close()
	if err := c.Send("MULTI"); err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if err := c.Send("DEL", key); err != nil {
			t.Fatal(err)
		}
	}
	for key, v := range saved {
		if err := c.Send("RESTORE", key, v[1], v[0]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Do("EXEC"); err != nil {
		t.Fatal(err)
	}
}
