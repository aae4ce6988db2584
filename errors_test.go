package voting

import (
	"errors"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
)

// TestRefusals turns each of Redis's refusals of a call, and redisc's
// RetryConn spent on them, into its sentinel, for every kind of call: a
// script, a read, a batch's pipeline; other errors wrap neither.
func TestRefusals(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	for _, tc := range []struct {
		reply error
		want  error
	}{
		{redis.Error("TRYAGAIN Multiple keys request during rehashing of slot"), ErrTryAgain},
		{redis.Error("ASK 3999 127.0.0.1:6381"), ErrTryAgain},
		{redis.Error("MOVED 3999 127.0.0.1:6381"), ErrTryAgain},
		{redis.Error("CLUSTERDOWN The cluster is down"), ErrTryAgain},
		{redis.Error("LOADING Redis is loading the dataset in memory"), ErrTryAgain},
		{redis.Error("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), ErrTryAgain},
		{errors.New("redisc: too many attempts"), ErrTryAgain},
		{redis.Error("OOM command not allowed when used memory > 'maxmemory'."), ErrOutOfMemory},
		{redis.Error("OOM command not allowed when used memory > 'maxmemory'. script: 4a2b, on @user_script:9."), ErrOutOfMemory},
		{redis.Error("ERR something else"), nil},
		{redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"), nil},
		{redis.Error("READONLY You can't write against a read only replica."), nil},
	} {
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
			"vote": func() error { _, err := s.Vote(ctx, "bob", a.ID, Upvote); return err },
			"post": func() error { _, err := s.Post(ctx, "bob", "t", ""); return err },
			"page": func() error { _, err := s.Articles(ctx, ScoreDesc, 1); return err },
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
	srv := realServer(t)
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
		before := dump(t, b, s)
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
		if after := dump(t, b, s); !equalDumps(before, after) {
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

// dump returns every key of s with its DUMP, which tells any change of
// value.
func dump(t testing.TB, b *backend, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range b.storeKeys(t, s) {
		v, _ := redis.String(b.do(t, "DUMP", k), nil)
		out[k] = v
	}
	return out
}

func equalDumps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
