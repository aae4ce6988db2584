package voting

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// The read pool tests: every read of a store with a read pool runs on a
// replica of the primary that the store writes to, and reads what the
// primary wrote. On miniredis the read pool reaches the same server; on
// the real server it reaches a replica of the shared server; on the
// cluster, a cluster-aware pool of READONLY connections to the replica
// of the store's master.

// readSide is the read pool of a backend and a way to wait for it.
type readSide struct {
	pool  Pool
	hooks *hooks // every command on the read pool
	// sync waits until the read pool's servers hold every write the
	// primaries have acknowledged.
	sync func(t testing.TB)
}

// newReadSide returns the read pool of b: on miniredis b's own server,
// on the real server its replica, on the cluster a cluster-aware pool of
// READONLY connections to the replicas.
func newReadSide(t testing.TB, b *backend) *readSide {
	t.Helper()
	h := &hooks{}
	rs := &readSide{hooks: h, sync: func(testing.TB) {}}
	switch b.name {
	case "miniredis":
		rs.pool = &hookPool{hooks: h, pool: b.pool}
	case "redis":
		primary, replica := redistest.Shared(t), redistest.SharedReplica(t)
		p := newPool(replica.Addr, h)
		t.Cleanup(func() { p.Close() })
		rs.pool = p
		rs.sync = func(t testing.TB) {
			t.Helper()
			if err := primary.WaitReplica(replica, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
	case "cluster":
		c, owners := redistest.SharedCluster(t)
		var mu sync.Mutex
		pools := map[*redistest.Server]*redis.Pool{}
		replicaPool := func(key string) *redis.Pool {
			mu.Lock()
			defer mu.Unlock()
			r := c.ReplicaOf(owners[redistest.Slot(key)])
			if pools[r] == nil {
				pools[r] = readOnlyPool(r.Addr, h)
			}
			return pools[r]
		}
		t.Cleanup(func() {
			for _, p := range pools {
				p.Close()
			}
		})
		rs.pool = &clusterPool{node: replicaPool}
		rs.sync = func(t testing.TB) {
			t.Helper()
			for i, m := range c.Nodes {
				if err := m.WaitReplica(c.Replicas[i], 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}
		}
	default:
		t.Fatalf("no read side for backend %q", b.name)
	}
	return rs
}

// pipelined are the commands of VotesOf's pipeline (votes.go).
var pipelined = map[string]bool{"GET": true, "TYPE": true, "HGET": true}

// readOnlyPool returns a pool to addr, a cluster replica, whose
// connections send READONLY first, as redisc.ReadOnlyConn makes them.
func readOnlyPool(addr string, h *hooks) *redis.Pool {
	return newPool(addr, h, "READONLY")
}

// scriptsRun returns a hooks that counts the store's scripts run through
// it by name, read-only ones with "_ro" appended, and the commands of
// VotesOf's pipeline (votes.go) by their names in lower case, and the
// counts.
func scriptsRun(h *hooks) (counts func() map[string]int) {
	var mu sync.Mutex
	got := map[string]int{}
	h.after = func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
		name, suffix := cmd, ""
		if c, ok := strings.CutSuffix(cmd, "_RO"); ok {
			name, suffix = c, "_ro"
		}
		n := scriptName(name, args)
		if pipelined[cmd] {
			n = strings.ToLower(cmd)
		}
		if n != "" && err == nil {
			mu.Lock()
			got[n+suffix]++
			mu.Unlock()
		}
		return v, err
	}
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		m := map[string]int{}
		for k, v := range got {
			m[k] = v
		}
		got = map[string]int{}
		return m
	}
}

// readCalls are the calls a read pool serves, each returning what it
// read, for comparison with the same call on the primary.
var readCalls = []struct {
	name string
	call func(s *Store, ids []string) (interface{}, error)
}{
	{"Article", func(s *Store, ids []string) (interface{}, error) { return s.Article(ctx, ids[1]) }},
	{"ArticlesByID", func(s *Store, ids []string) (interface{}, error) {
		return s.ArticlesByID(ctx, []string{ids[2], "x", ids[0], "99"})
	}},
	{"Articles", func(s *Store, ids []string) (interface{}, error) { return s.Articles(ctx, ScoreDesc, 1) }},
	{"Articles Top", func(s *Store, ids []string) (interface{}, error) { return s.Articles(ctx, Top, 1) }},
	{"ArticlesFor", func(s *Store, ids []string) (interface{}, error) {
		list, votes, err := s.ArticlesFor(ctx, "bob", Top, 1)
		return view[Article]{list, votes}, err
	}},
	{"TopSince", func(s *Store, ids []string) (interface{}, error) { return s.TopSince(ctx, time.Hour, 1) }},
	{"Count", func(s *Store, ids []string) (interface{}, error) { return s.Count(ctx) }},
	{"GroupCount", func(s *Store, ids []string) (interface{}, error) { return s.GroupCount(ctx, "go") }},
	{"Groups", func(s *Store, ids []string) (interface{}, error) { return s.Groups(ctx, ids[0]) }},
	{"VoteOf", func(s *Store, ids []string) (interface{}, error) { return s.VoteOf(ctx, "bob", ids[1]) }},
	{"VotesOf", func(s *Store, ids []string) (interface{}, error) {
		return s.VotesOf(ctx, "bob", []string{ids[0], ids[1], ids[2], "99"})
	}},
	{"GroupArticles", func(s *Store, ids []string) (interface{}, error) { return s.GroupArticles(ctx, "go", ScoreDesc, 1) }},
	{"GroupArticles Top", func(s *Store, ids []string) (interface{}, error) { return s.GroupArticles(ctx, "go", Top, 1) }},
	{"GroupArticles empty", func(s *Store, ids []string) (interface{}, error) { return s.GroupArticles(ctx, "none", Top, 1) }},
	{"GroupArticlesFor", func(s *Store, ids []string) (interface{}, error) {
		list, votes, err := s.GroupArticlesFor(ctx, "bob", "go", ScoreDesc, 1)
		return view[Article]{list, votes}, err
	}},
	{"GroupArticlesFor empty", func(s *Store, ids []string) (interface{}, error) {
		list, votes, err := s.GroupArticlesFor(ctx, "bob", "none", Top, 1)
		return view[Article]{list, votes}, err
	}},
	{"TopSinceFor", func(s *Store, ids []string) (interface{}, error) {
		list, votes, err := s.TopSinceFor(ctx, "bob", time.Hour, 1)
		return view[Article]{list, votes}, err
	}},
	{"ThreadFor", func(s *Store, ids []string) (interface{}, error) {
		list, votes, err := s.ThreadFor(ctx, "bob", ids[1], Best, 10)
		return view[ThreadComment]{list, votes}, err
	}},
	{"RepliesFor", func(s *Store, ids []string) (interface{}, error) {
		list, votes, err := s.RepliesFor(ctx, "carol", "1", TimeAsc, 10)
		return view[ThreadComment]{list, votes}, err
	}},
	{"Article missing", func(s *Store, ids []string) (interface{}, error) { return s.Article(ctx, "99") }},
	{"Groups missing", func(s *Store, ids []string) (interface{}, error) { return s.Groups(ctx, "99") }},
	{"Karma", func(s *Store, ids []string) (interface{}, error) { return s.Karma(ctx, "alice") }},
	{"TopUsers", func(s *Store, ids []string) (interface{}, error) { return s.TopUsers(ctx, 1) }},
	{"Rules", func(s *Store, ids []string) (interface{}, error) { return s.Rules(ctx) }},
	{"Thread", func(s *Store, ids []string) (interface{}, error) { return s.Thread(ctx, ids[1], Best, 10) }},
	{"Replies", func(s *Store, ids []string) (interface{}, error) { return s.Replies(ctx, "1", TimeAsc, 10) }},
	{"CommentsByID", func(s *Store, ids []string) (interface{}, error) { return s.CommentsByID(ctx, []string{"2", "x", "1"}) }},
	{"CommentVotesOf", func(s *Store, ids []string) (interface{}, error) {
		return s.CommentVotesOf(ctx, "bob", []string{"1", "2", "99"})
	}},
	{"VotesBy", func(s *Store, ids []string) (interface{}, error) {
		list, next, err := s.VotesBy(ctx, "bob", "", 10)
		return cursorPage[UserVote]{list, next}, err
	}},
	{"Voters", func(s *Store, ids []string) (interface{}, error) {
		list, next, err := s.Voters(ctx, ids[1], "", 10)
		return cursorPage[Voter]{list, next}, err
	}},
	{"CommentVoters", func(s *Store, ids []string) (interface{}, error) {
		list, next, err := s.CommentVoters(ctx, "1", "", 10)
		return cursorPage[Voter]{list, next}, err
	}},
	{"VoteEvents", func(s *Store, ids []string) (interface{}, error) {
		list, next, err := s.VoteEvents(ctx, "", 10)
		return cursorPage[VoteEvent]{list, next}, err
	}},
	{"Suspended", func(s *Store, ids []string) (interface{}, error) {
		mode, until, err := s.Suspended(ctx, "bob")
		return suspension{mode, until}, err
	}},
}

// replicaFixture writes, through s, three articles with votes and groups,
// and returns their ids.
func replicaFixture(t *testing.T, s *Store) []string {
	t.Helper()
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, mustPost(t, s, "alice", "title "+strconv.Itoa(i)).ID)
	}
	mustVote(t, s, "bob", ids[1], Upvote)
	mustVote(t, s, "carol", ids[1], Upvote)
	mustVote(t, s, "bob", ids[2], Downvote)
	if err := s.AddToGroups(ctx, ids[0], "go", "redis"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddToGroups(ctx, ids[1], "go"); err != nil {
		t.Fatal(err)
	}
	// Comments "1" and "2", a reply to it, on the second article.
	c, err := s.Comment(ctx, ids[1], "", "carol", "a comment")
	if err == nil {
		_, err = s.Comment(ctx, ids[1], c.ID, "bob", "a reply")
	}
	if err == nil {
		_, err = s.VoteComment(ctx, "bob", c.ID, Downvote)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestReadPool runs every read of a store with a read pool after writes
// through it, and checks that each read what the same call on the
// primary reads, that it ran on the read pool as a read-only script, and
// that the primary ran none of them: but for the build of a cold group
// cache, which GroupArticles does on the primary once.
func TestReadPool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		rs := newReadSide(t, b)
		s, clock := newStore(t, b, WithOrders(Top), WithVoteLog(), WithVoteEvents(100), WithReadPool(rs.pool))
		primary, err := New(s.pool, WithKeyPrefix(s.keys.prefix), WithClock(clock.Now), WithOrders(Top), WithVoteLog(), WithVoteEvents(100))
		if err != nil {
			t.Fatal(err)
		}
		ids := replicaFixture(t, s)
		rs.sync(t)

		onReplica := scriptsRun(rs.hooks)
		onPrimary := scriptsRun(hook(s, &hooks{}).hooks)
		for round := 0; round < 2; round++ {
			for _, rc := range readCalls {
				got, gotErr := rc.call(s, ids)
				want, wantErr := rc.call(primary, ids)
				if !reflect.DeepEqual(got, want) || errString(gotErr) != errString(wantErr) {
					t.Errorf("%s on the read pool = %v, %v; on the primary %v, %v", rc.name, got, gotErr, want, wantErr)
				}
			}
			replica, prim := onReplica(), onPrimary()
			for name := range replica {
				if !pipelined[strings.ToUpper(name)] && (!strings.HasSuffix(name, "_ro") || !scriptTable[strings.TrimSuffix(name, "_ro")].readOnly) {
					t.Errorf("round %d: the read pool ran %s", round, name)
				}
			}
			// The first round builds the two cold caches on the primary,
			// the replica having found them cold; the second round runs
			// nothing there.
			wantPrimary := map[string]int{}
			if round == 0 {
				wantPrimary["group_page"] = 2
			}
			if !reflect.DeepEqual(prim, wantPrimary) {
				t.Errorf("round %d: the store ran %v on the primary, want %v (the read pool ran %v)", round, prim, wantPrimary, replica)
			}
			// VoteOf runs votes.lua; VotesOf a pipeline, an HGET an id.
			if replica["group_read_ro"] != 5 || replica["articles_ro"] != 3 || replica["votes_ro"] != 1 || replica["hget"] != 4 {
				t.Errorf("round %d: the read pool ran %v", round, replica)
			}
			rs.sync(t) // the caches built
		}

		// A mutation reads on the primary: AddToGroups without groups
		// checks the article there.
		onPrimary()
		if err := s.AddToGroups(ctx, ids[2]); err != nil {
			t.Fatal(err)
		}
		if got := onPrimary(); got["groups"] != 1 {
			t.Errorf("AddToGroups without groups ran %v on the primary", got)
		}
	})
}

// TestReadPoolGroupCacheTTL reads a group page only on the read pool,
// over several TTLs: the store renews the cache on the primary when the
// replica reports under half its TTL left, so it neither expires nor is
// rebuilt.
func TestReadPoolGroupCacheTTL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		// Reads 0.2 TTL apart, the time between them passed by taking it
		// off the cache's TTL on the primary (age), so that a loaded
		// machine's stalls do not count.
		const ttl = 2 * time.Second
		rs := newReadSide(t, b)
		s, _ := newStore(t, b, WithReadPool(rs.pool), WithGroupCacheTTL(ttl))
		ids := replicaFixture(t, s)
		onReplica := scriptsRun(rs.hooks)
		onPrimary := scriptsRun(hook(s, &hooks{}).hooks)
		read := func() {
			t.Helper()
			list, err := s.GroupArticles(ctx, "go", ScoreDesc, 1)
			if err != nil || len(list) != 2 || list[0].ID != ids[1] {
				t.Fatalf("GroupArticles = %v, %v", list, err)
			}
		}
		read() // cold: built on the primary
		if got := onPrimary(); got["group_page"] != 1 {
			t.Fatalf("a cold read ran %v on the primary", got)
		}
		onReplica() // which found the cache cold
		cacheKey := s.keys.cacheKey("go", "score")
		age := func(d time.Duration) {
			t.Helper()
			left := b.ttl(t, cacheKey)
			b.do(t, "PEXPIRE", cacheKey, (left - d).Milliseconds())
		}
		renewals := 0
		for i := 0; i < 10; i++ {
			rs.sync(t)
			read()
			if got := onReplica(); got["group_read_ro"] != 1 {
				t.Fatalf("read %d ran %v on the read pool", i, got)
			}
			prim := onPrimary()
			if prim["group_page"] != 0 {
				t.Fatalf("read %d rebuilt the cache: %v on the primary", i, prim)
			}
			renewals += prim["group_renew"]
			if left := b.ttl(t, cacheKey); left <= 0 || left > ttl {
				t.Fatalf("read %d: the cache has %v left", i, left)
			}
			age(ttl / 5)
		}
		// 10 reads 0.2 TTL apart span 2 TTLs: without renewals the cache
		// would expire at the fifth; each renewal comes when under half
		// the TTL is left (every third read).
		if renewals < 2 || renewals > 4 {
			t.Errorf("%d renewals in 10 reads 0.2 TTL apart, want 2 to 4", renewals)
		}
	})
}

// TestReadPoolNeedsRedis7 checks the error of a read pool whose server
// has no EVALSHA_RO, as before Redis 7.0: it names the version needed.
func TestReadPoolNeedsRedis7(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	old := &hooks{after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
		if strings.HasSuffix(cmd, "_RO") {
			return nil, redis.Error(fmt.Sprintf("ERR unknown command '%s', with args beginning with: ", cmd))
		}
		return v, err
	}}
	s, _ := newStore(t, b, WithReadPool(&hookPool{hooks: old, pool: b.pool}))
	a := mustPost(t, s, "alice", "t")
	_, err := s.Article(ctx, a.ID)
	if !errors.Is(err, errNeedsRedis7) || !strings.HasPrefix(err.Error(), "voting: article: read pool: ") || !strings.Contains(err.Error(), "Redis 7.0") {
		t.Fatalf("Article on a read pool before Redis 7 = %v", err)
	}
	if _, err := s.Vote(ctx, "bob", a.ID, Upvote); err != nil {
		t.Fatalf("Vote, on the primary: %v", err)
	}
	if _, err := New(b.pool, WithReadPool(nil)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("New with a nil read pool = %v", err)
	}
}

// TestReadPoolCommandStats proves from the servers' own INFO commandstats
// that the reads of a store with a read pool reach the replica and not
// the primary, on a primary and replica of the test's own, as FCALL_RO
// and, on the script path, as EVALSHA_RO; and that a replica that has
// not seen a script gets it by EVAL_RO once.
func TestReadPoolCommandStats(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary)
	pp, rp := primary.Pool(), replica.Pool()
	t.Cleanup(func() { pp.Close(); rp.Close() })
	s, clock := newStore(t, &backend{pool: pp}, WithOrders(Top), WithVoteLog(), WithVoteEvents(100), WithReadPool(rp))
	ids := replicaFixture(t, s)
	// Three articles posted 307 s into a 10-minute bucket, two hours
	// later: TopSince from their post time, one member of the edge a
	// call, reads them in steps (top_since_edge).
	posted := epoch.Add(2*time.Hour + 307*time.Second)
	clock.Set(posted)
	for i := 0; i < 3; i++ {
		mustPost(t, s, "dave", "later "+strconv.Itoa(i))
	}
	clock.Set(posted.Add(20 * time.Minute))
	stepped := func() error {
		s.edge = 1
		defer func() { s.edge = edgeStep }()
		list, err := s.TopSince(ctx, 20*time.Minute, 1)
		if err == nil && len(list) != 3 {
			err = fmt.Errorf("TopSince in steps: %d articles, want 3", len(list))
		}
		return err
	}
	// Warm the group caches the reads use, on the primary.
	warm, err := New(pp, WithKeyPrefix(s.keys.prefix), WithClock(clock.Now), WithOrders(Top))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Order{ScoreDesc, Top} {
		if _, err := warm.GroupArticles(ctx, "go", o, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := primary.WaitReplica(replica, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// The primary loaded the library (the warm-up's FCALLs), and the
	// replica has it by replication: every read is one FCALL_RO there.
	// Then, as on a server without Functions, one EVALSHA_RO: a fresh
	// replica has none of the scripts, so each of the read-only scripts
	// comes once by EVAL_RO, after a NOSCRIPT.
	const rounds = 5
	for _, via := range []struct {
		cmd     string
		scripts bool // the store runs scripts, not functions
		evalRO  int  // the EVAL_RO calls expected
	}{{"fcall_ro", false, 0}, {"evalsha_ro", true, readOnlyCount()}} {
		s.funcs.off.Store(via.scripts)
		beforePrimary, beforeReplica := commandStats(t, pp), commandStats(t, rp)
		for i := 0; i < rounds; i++ {
			for _, rc := range readCalls {
				if _, err := rc.call(s, ids); err != nil && !errors.Is(err, ErrNotFound) {
					t.Fatalf("%s: %v", rc.name, err)
				}
			}
			if err := stepped(); err != nil {
				t.Fatal(err)
			}
		}
		onPrimary, onReplica := diffStats(commandStats(t, pp), beforePrimary), diffStats(commandStats(t, rp), beforeReplica)
		for _, cmd := range []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"} {
			if onPrimary[cmd] != 0 {
				t.Errorf("%s: the primary ran %s %d times: %v", via.cmd, cmd, onPrimary[cmd], onPrimary)
			}
		}
		// Every call but those that reject their input before Redis (none
		// here) is one script on the replica.
		if n := onReplica[via.cmd]; n < rounds*len(readCalls) {
			t.Errorf("the replica ran %s %d times for %d reads: %v", via.cmd, n, rounds*len(readCalls), onReplica)
		}
		if n := onReplica["eval_ro"]; n != via.evalRO {
			t.Errorf("%s: the replica ran EVAL_RO %d times, want %d: %v", via.cmd, n, via.evalRO, onReplica)
		}
		t.Logf("%s: replica: %v; primary: %v", via.cmd, onReplica, onPrimary)
	}
}

// commandStats returns the calls of each command from INFO commandstats.
func commandStats(t testing.TB, pool *redis.Pool) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, line := range info(t, pool, "commandstats") {
		name, stats, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		n, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("INFO commandstats %q: %v", line, err)
		}
		m[strings.TrimPrefix(name, "cmdstat_")] = n
	}
	return m
}

func diffStats(after, before map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// TestReadPoolWithoutLibrary: a replica whose primary has not loaded the
// store's library (here, flushed) runs a read as a script at once: its
// FCALL_RO finds no function, and the store sends EVALSHA_RO (EVAL_RO the
// first time) without trying FUNCTION LOAD, which a replica refuses.
func TestReadPoolWithoutLibrary(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary)
	pp, rp := primary.Pool(), replica.Pool()
	t.Cleanup(func() { pp.Close(); rp.Close() })
	s, _ := newStore(t, &backend{pool: pp}, WithReadPool(rp))
	mustPost(t, s, "alice", "t")
	serverDo(t, pp, "FUNCTION", "FLUSH")
	if err := primary.WaitReplica(replica, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		before := commandStats(t, rp)
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Fatalf("Count on a replica without the library = %d, %v", n, err)
		}
		got := diffStats(commandStats(t, rp), before)
		delete(got, "info")
		want := map[string]int{"fcall_ro": 1, "evalsha_ro": 1, "get": 1, "type": 1, "zcard": 1} // the record: GET; count.lua: TYPE, ZCARD
		if i == 0 {
			want["eval_ro"] = 1 // after NOSCRIPT
		}
		if !maps.Equal(got, want) {
			t.Errorf("read %d on a replica without the library ran %v, want %v", i, got, want)
		}
	}
	if s.funcs.off.Load() {
		t.Error("a replica without the library turned the store to scripts")
	}
}
