package voting

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// Tests of the store's scripts as a Functions library (functions.go):
// its name and flags, loading it when missing, falling back to scripts
// where the server refuses Functions, and the scripts that carry only
// the helpers they use.

// countCommands hooks s and counts the commands sent by name, and the
// replies saying the library is missing.
func countCommands(s *Store) (sent map[string]*atomic.Int64, missing *atomic.Int64) {
	sent = map[string]*atomic.Int64{}
	for _, cmd := range []string{"FCALL", "FCALL_RO", "EVALSHA", "EVAL", "FUNCTION"} {
		sent[cmd] = new(atomic.Int64)
	}
	missing = new(atomic.Int64)
	hook(s, &hooks{
		before: func(cmd string, args []interface{}) error {
			if n := sent[cmd]; n != nil {
				n.Add(1)
			}
			return nil
		},
		after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if isNoFunction(err) {
				missing.Add(1)
			}
			return v, err
		},
	})
	return sent, missing
}

// TestFunctionFlush empties the server's functions before each method
// and while a load runs: FCALL finds its function missing, the store
// loads the library and calls again, and every call succeeds. VoteBatch
// sends EVAL and never misses; VotesOf runs no script (votes.go).
func TestFunctionFlush(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		if b.mr != nil {
			t.Skip("miniredis has no Functions (TestFunctionsFallback)")
		}
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		sent, missing := countCommands(s)
		flush := flusher(t, b, "FUNCTION")

		eachMethod(t, s, func(m method, id string) {
			flush()
			before, loads := missing.Load(), sent["FUNCTION"].Load()
			if err := m.call(ctx, s, id); err != nil {
				t.Fatalf("%s after FUNCTION FLUSH: %v", m.name, err)
			}
			n := missing.Load() - before
			if (n == 0) != (m.name == "VoteBatch" || m.name == "VotesOf") || sent["FUNCTION"].Load()-loads != n {
				t.Errorf("%s after FUNCTION FLUSH: %d missing functions, %d loads", m.name, n, sent["FUNCTION"].Load()-loads)
			}
		})
		if s.funcs.off.Load() {
			t.Fatal("the store turned to scripts on a server with Functions")
		}

		before := missing.Load()
		flushUnderLoad(t, s, "FUNCTION FLUSH", flush)
		if missing.Load() == before {
			t.Fatal("no missing function during the load: the flushes were not felt")
		}
	})
}

// TestFunctionRestart restarts a server without persistence, which comes
// back without the library: the next calls load it again.
func TestFunctionRestart(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "no", "--save", "")
	s, _ := newStore(t, faultBackend(t, srv))
	a := mustPost(t, s, "alice", "t")
	mustVote(t, s, "bob", a.ID, Upvote)
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 20; i++ { // the pool's old connections fail once each
		if _, err = s.Post(ctx, "alice", "t", ""); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Articles(ctx, ScoreDesc, 1); err != nil {
		t.Fatal(err)
	}
	if list, err := redis.Values(srv.Do("FUNCTION", "LIST", "LIBRARYNAME", scriptLib.name)); err != nil || len(list) != 1 {
		t.Fatalf("FUNCTION LIST after the restart = %v, %v; want the library", list, err)
	}
	if s.funcs.off.Load() {
		t.Fatal("the store turned to scripts")
	}
}

// TestFunctionsFallback runs every method on servers that refuse
// Functions: miniredis, which has neither FCALL nor FUNCTION, and
// redis-server users that may not run FCALL, or FUNCTION LOAD. Every call
// succeeds as a script; the store asks once, then sends scripts only.
func TestFunctionsFallback(t *testing.T) {
	// fcalls is how many FCALLs the first call sends: one refused, or one
	// missing its function and one after a load that was refused.
	check := func(t *testing.T, b *backend, fcalls int64) {
		t.Helper()
		s, _ := newStore(t, b, WithOrders(Top), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		sent, _ := countCommands(s)
		a := mustPost(t, s, "alice", "t")
		if !s.funcs.off.Load() {
			t.Fatal("the store did not turn to scripts")
		}
		if n := sent["FCALL"].Load() + sent["FCALL_RO"].Load(); n != fcalls {
			t.Errorf("%d FCALLs before turning to scripts, want %d", n, fcalls)
		}
		eachMethod(t, s, func(m method, id string) {
			if err := m.call(ctx, s, id); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
		})
		if n := sent["FCALL"].Load() + sent["FCALL_RO"].Load(); n != fcalls {
			t.Errorf("%d FCALLs after turning to scripts", n-fcalls)
		}
		if got := mustVote(t, s, "bob", a.ID, Downvote); got.Downvotes != 1 {
			t.Fatalf("vote = %+v", got)
		}
	}
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		if b.mr == nil {
			t.Skip("Functions: the ACL cases below")
		}
		check(t, b, 1)
	})
	for _, c := range []struct {
		name, deny string
		fcalls     int64
	}{
		{"no FCALL", "-fcall -fcall_ro", 1},
		{"no FUNCTION LOAD", "-function", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Start(t)
			args := []interface{}{"SETUSER", "voter", "on", ">pw", "~*", "+@all"}
			for _, d := range strings.Fields(c.deny) {
				args = append(args, d)
			}
			if _, err := srv.Do("ACL", args...); err != nil {
				t.Fatal(err)
			}
			pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", srv.Addr, redis.DialUsername("voter"), redis.DialPassword("pw"))
			}}
			t.Cleanup(func() { pool.Close() })
			check(t, &backend{name: "redis", pool: pool}, c.fcalls)
		})
	}
}

// TestLibrary checks the library's name and flags on the server: named
// after its content, so a library of other sources (another version of
// the package) loads beside it under another name, and the stores of both
// run; the read scripts flagged no-writes, and those that only remove
// or renew a TTL allow-oom (scriptTable).
func TestLibrary(t *testing.T) {
	if !regexp.MustCompile(`^voting_[0-9a-f]{16}$`).MatchString(scriptLib.name) {
		t.Fatalf("library name %q", scriptLib.name)
	}
	srv := redistest.Start(t)
	b := newBackend(t, "redis", srv.Addr, nil)
	s, _ := newStore(t, b)
	a := mustPost(t, s, "alice", "t")

	// Another version: the same scripts, one with an extra line.
	other := make([]script, len(registry))
	copy(other, registry)
	other[0].body = "-- another version\n" + other[0].body
	v2 := newLibrary(other)
	if v2.name == scriptLib.name {
		t.Fatal("two libraries of different sources share a name")
	}
	if _, err := srv.Do("FUNCTION", "LOAD", v2.source); err != nil {
		t.Fatal(err)
	}
	fn := functionName(v2.name, "articles")
	reply, err := redis.Values(srv.Do("FCALL_RO", fn, 2, s.keys.orderingKey("score"), s.fence, s.keys.article, a.ID))
	if err != nil || len(reply) != 1+rowFields {
		t.Fatalf("FCALL_RO of the other version's articles = %v, %v", reply, err)
	}
	if _, err := s.Article(ctx, a.ID); err != nil {
		t.Fatal(err)
	}

	list, err := redis.Values(srv.Do("FUNCTION", "LIST", "LIBRARYNAME", scriptLib.name))
	if err != nil || len(list) != 1 {
		t.Fatalf("FUNCTION LIST = %v, %v", list, err)
	}
	fields, err := redis.Values(list[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		if k, _ := redis.String(fields[i], nil); k != "functions" {
			continue
		}
		fns, _ := redis.Values(fields[i+1], nil)
		for _, f := range fns {
			m, err := redis.Values(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			var name string
			var fl []string
			for j := 0; j+1 < len(m); j += 2 {
				switch k, _ := redis.String(m[j], nil); k {
				case "name":
					name, _ = redis.String(m[j+1], nil)
				case "flags":
					fl, _ = redis.Strings(m[j+1], nil)
				}
			}
			flags[strings.TrimPrefix(name, scriptLib.name+"_")] = strings.Join(fl, " ")
		}
	}
	if len(flags) != len(registry) {
		t.Errorf("the library has %d functions, the store %d scripts", len(flags), len(registry))
	}
	for _, sc := range registry {
		want := sc.flag()
		if got, ok := flags[sc.name]; !ok || got != want {
			t.Errorf("function %s: present %v, flags %q; want %q", sc.name, ok, got, want)
		}
	}
}

// TestTrimLib checks the helpers each script carries: every lua/lib name
// its source uses is defined in it, and a script carries no helper it
// does not use, directly or through another.
func TestTrimLib(t *testing.T) {
	defined := map[string]bool{}
	for _, p := range libLuaParts {
		for _, n := range p.names {
			defined[n] = true
		}
	}
	if !defined["vote"] || !defined["OK"] || !defined["rows"] || !defined["CORRUPT"] {
		t.Fatalf("lua/lib's parts define %v", defined)
	}
	for _, sc := range registry {
		carried := map[string]bool{}
		for _, p := range libParts(strings.TrimSuffix(sc.source, sc.body)) {
			for _, n := range p.names {
				carried[n] = true
			}
		}
		for n := range usedNames(sc.source) {
			if defined[n] && !carried[n] {
				t.Errorf("%s uses %s without it", sc.name, n)
			}
		}
	}
	if strings.Contains(countScript.source, "local function vote(") {
		t.Error("count carries vote")
	}
	if !strings.Contains(voteScript.source, "local function expectIndexes(") {
		t.Error("vote lacks expectIndexes, which its vote uses")
	}
}

// TestLibParts splits a made-up lua/lib: each local definition with the
// comment above it, a table closed at the start of a line kept with its
// definition, and a script takes only what it names, directly or through
// another part.
func TestLibParts(t *testing.T) {
	src := `-- header
local A, B = 1, 2

-- T is a table.
local T = {
  x = A,
}
-- f uses T.
local function f(x)
  return T.x + x
end
local function g() return B end
`
	parts := libParts(src)
	var names []string
	for _, p := range parts {
		names = append(names, strings.Join(p.names, ","))
	}
	if got := strings.Join(names, " "); got != "A,B T f g" {
		t.Fatalf("parts %q", got)
	}
	if !strings.HasSuffix(parts[1].text, "}\n") || !strings.HasPrefix(parts[1].text, "\n-- T is a table.") {
		t.Errorf("part T = %q", parts[1].text)
	}
	got := trimLib(parts, "return f(1) -- not g()")
	if !strings.Contains(got, "local function f") || !strings.Contains(got, "local T") ||
		!strings.Contains(got, "local A, B") || strings.Contains(got, "local function g") {
		t.Errorf("trimLib took %q", got)
	}
}

// TestFullRedis runs a store on a Redis at its maxmemory (noeviction),
// as Functions and as scripts: the calls that free memory (Delete,
// RemoveFromGroups, Prune, Drop) and the reads (Karma, TopUsers, the
// user pages, a warm group page) pass, as they do as scripts, and a Post
// gets Redis's OOM error. A function flagged neither no-writes nor
// allow-oom is refused whole on a full Redis. miniredis has no
// maxmemory.
func TestFullRedis(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		if b.mr != nil {
			t.Skip("miniredis has no maxmemory")
		}
		for _, scripts := range []bool{false, true} {
			s, clock := newStore(t, b, WithKarma(1, -1), WithUserPages())
			s.funcs.off.Store(scripts)
			a := mustPost(t, s, "ann", "a")
			c := mustPost(t, s, "ann", "c")
			mustVote(t, s, "bob", a.ID, Upvote)
			if err := s.AddToGroups(ctx, a.ID, "go", "redis"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GroupArticles(ctx, "go", ScoreDesc, 1); err != nil {
				t.Fatal(err)
			}
			was, err := redis.Strings(serverDo(t, b.pool, "CONFIG", "GET", "maxmemory"), nil)
			if err != nil || len(was) != 2 {
				t.Fatalf("CONFIG GET maxmemory = %v, %v", was, err)
			}
			serverDo(t, b.pool, "CONFIG", "SET", "maxmemory", "1")
			reset := func() { serverDo(t, b.pool, "CONFIG", "SET", "maxmemory", was[1]) }
			t.Cleanup(reset)

			if _, err := s.Post(ctx, "ann", "full", ""); err == nil || !strings.Contains(err.Error(), "OOM") {
				t.Errorf("scripts %v: a Post on a full Redis: %v, want OOM", scripts, err)
			}
			if k, err := s.Karma(ctx, "ann"); err != nil || k != 1 {
				t.Errorf("scripts %v: Karma = %d, %v; want 1", scripts, k, err)
			}
			if list, err := s.TopUsers(ctx, 1); err != nil || len(list) != 1 {
				t.Errorf("scripts %v: TopUsers = %v, %v", scripts, list, err)
			}
			if list, err := s.Upvoted(ctx, "bob", 1); err != nil || len(list) != 1 {
				t.Errorf("scripts %v: Upvoted = %v, %v", scripts, list, err)
			}
			if list, err := s.GroupArticles(ctx, "go", ScoreDesc, 1); err != nil || len(list) != 1 {
				t.Errorf("scripts %v: a warm group page = %v, %v", scripts, list, err)
			}
			if err := s.RemoveFromGroups(ctx, a.ID, "redis"); err != nil {
				t.Errorf("scripts %v: RemoveFromGroups: %v", scripts, err)
			}
			if err := s.Delete(ctx, c.ID); err != nil {
				t.Errorf("scripts %v: Delete: %v", scripts, err)
			}
			if list, err := s.Submitted(ctx, "ann", 1); err != nil || len(list) != 1 {
				t.Errorf("scripts %v: Submitted = %v, %v", scripts, list, err)
			}
			if n, err := s.Prune(ctx, clock.Now().Add(time.Second)); err != nil || n != 1 {
				t.Errorf("scripts %v: Prune = %d, %v; want 1", scripts, n, err)
			}
			if err := s.Drop(ctx); err != nil {
				t.Errorf("scripts %v: Drop: %v", scripts, err)
			}
			reset()
		}
	})
}

// TestCompactLua: every script's source drops its comment and blank
// lines (compactLua), which is right only while no source has a long
// string or long comment ([[ ... ]], --[[ ... ]]), whose inner lines may
// look like comments or be blank.
func TestCompactLua(t *testing.T) {
	for _, sc := range registry {
		if strings.Contains(sc.body, "[[") || strings.Contains(sc.body, "[=") {
			t.Errorf("%s.lua has a long bracket, which compactLua would break", sc.name)
		}
	}
	if strings.Contains(libLua, "[[") || strings.Contains(libLua, "[=") {
		t.Error("lua/lib has a long bracket, which compactLua would break")
	}
	if got := compactLua("a\n  -- c\n\n  b -- d\n"); got != "a\n  b -- d\n" {
		t.Errorf("compactLua = %q", got)
	}
}

// TestFullRedisLibraryGone runs the calls that free memory (Delete and
// Prune of articles with comments, DeleteComment, RemoveFromGroups,
// Drop) on a Redis at its maxmemory whose library is gone (FUNCTION
// FLUSH, as a deploy of a new release meets on a full server), or is
// another version's: FUNCTION LOAD is refused there, and the scripts run
// with EVAL, which each passes, and frees memory; so too on a store that
// waits for a replica after each (execWait).
func TestFullRedisLibraryGone(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := redistest.Start(t)
	redistest.StartReplica(t, srv)
	other := make([]script, len(registry))
	copy(other, registry)
	other[0].body = "-- another version\n" + other[0].body
	v2 := newLibrary(other)
	for _, tc := range []struct {
		name    string
		library func()
		opts    []Option
	}{
		{"library flushed", func() {}, nil},
		{"another version", func() {
			if _, err := srv.Do("FUNCTION", "LOAD", v2.source); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"library flushed, WithWaitReplicas", func() {}, []Option{WithWaitReplicas(1, 5*time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBackend(t, "redis", srv.Addr, nil)
			s, clock := newStore(t, b, append(tc.opts, WithUserPages())...)
			old := mustPost(t, s, "ann", "old")
			clock.Add(time.Hour)
			a := mustPost(t, s, "ann", "a")
			keep := mustPost(t, s, "ann", "keep")
			for _, id := range []string{old.ID, a.ID, keep.ID} {
				if err := s.AddToGroups(ctx, id, "go", "redis"); err != nil {
					t.Fatal(err)
				}
				n := 3
				if id != keep.ID {
					n = 120 // with the replies, more than a step of Delete's and Prune's
				}
				for i := 0; i < n; i++ {
					c, err := s.Comment(ctx, id, "", "bob", "a comment")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.Comment(ctx, id, c.ID, "carol", "a reply"); err != nil {
						t.Fatal(err)
					}
				}
			}
			gone, err := s.Comment(ctx, keep.ID, "", "dave", "to delete")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.GroupArticles(ctx, "go", ScoreDesc, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Do("FUNCTION", "FLUSH"); err != nil {
				t.Fatal(err)
			}
			tc.library()
			if _, err := srv.Do("CONFIG", "SET", "maxmemory", "1"); err != nil {
				t.Fatal(err)
			}
			defer srv.Do("CONFIG", "SET", "maxmemory", "0")
			if _, err := s.Post(ctx, "ann", "full", ""); !errors.Is(err, ErrOutOfMemory) {
				t.Fatalf("Post on a full Redis = %v, want ErrOutOfMemory", err)
			}
			keys := func() int {
				n, err := redis.Int(srv.Do("DBSIZE"))
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			for _, call := range []struct {
				name  string
				call  func() error
				frees bool // removes keys
			}{
				{"DeleteComment", func() error { return s.DeleteComment(ctx, gone.ID) }, false},
				{"RemoveFromGroups", func() error {
					if err := s.RemoveFromGroups(ctx, keep.ID, "redis"); err != nil {
						return err
					}
					if groups, err := s.Groups(ctx, keep.ID); err != nil || len(groups) != 1 {
						return fmt.Errorf("Groups then = %v, %v; want go alone", groups, err)
					}
					return nil
				}, false},
				{"Delete", func() error { return s.Delete(ctx, a.ID) }, true},
				{"Prune", func() error {
					n, err := s.Prune(ctx, clock.Now().Add(-time.Minute))
					if err == nil && n != 1 {
						err = fmt.Errorf("pruned %d, want 1", n)
					}
					return err
				}, true},
				{"Drop", func() error { return s.Drop(ctx) }, true},
			} {
				before := keys()
				if err := call.call(); err != nil {
					t.Errorf("%s on a full Redis without the library: %v", call.name, err)
				} else if after := keys(); call.frees && after >= before {
					t.Errorf("%s on a full Redis: %d keys before, %d after", call.name, before, after)
				}
			}
		})
	}
}
