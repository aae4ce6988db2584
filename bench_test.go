package voting

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/redistest"
	"github.com/votekit/voting/internal/testclock"
)

// The benchmarks run against a real redis-server, the package's shared
// one (realServer), or for memory one of their own, and skip without
// redis-server. See BENCHMARKS.md for how to run them and what their
// numbers mean.
//
// Every benchmark reports, besides ns/op and (with -benchmem) the Go
// allocations of the client, roundtrips/op counted by hooks (whose
// wrapper costs one of the allocations of each call), the server's CPU
// and script time per op from INFO, and fails if SLOWLOG caught a
// command of 10 ms or more while it ran.
//
// The data sets are built once per process, under a prefix each, and kept
// while the server runs: large ones are written by pipelining the store's
// own scripts with the arguments its methods pass (scripts.go's postArgs
// and voteArgs), much faster than one call at a time, and checked by
// reading them back.

// benchFixture is a data set on the real server and a store over it.
type benchFixture struct {
	store *Store      // over hooks
	hooks *hooks      // count the store's round trips
	pool  *redis.Pool // not hooked, for setup and INFO
	n     int         // articles, with ids "1" to n
}

var (
	benchFixtures = map[string]*benchFixture{}
	benchPool     *redis.Pool // to realServer, shared by the fixtures
)

// fixture returns the data set called name, building it with build on
// first use. build gets an empty store.
func fixture(b *testing.B, name string, build func(b *testing.B, f *benchFixture)) *benchFixture {
	b.Helper()
	if f, ok := benchFixtures[name]; ok {
		return f
	}
	if benchPool == nil {
		benchPool = realServer(b).Pool()
	}
	f := newBenchStore(b, benchPool, name)
	start := time.Now()
	build(b, f)
	b.Logf("fixture %s: %d articles, built in %v", name, f.n, time.Since(start).Round(time.Millisecond))
	benchFixtures[name] = f
	return f
}

// newBenchStore returns an empty store on pool's server under a prefix of
// its own, on a test clock at epoch, with every script loaded.
func newBenchStore(b *testing.B, pool *redis.Pool, name string) *benchFixture {
	b.Helper()
	s, err := New(pool, WithKeyPrefix("bench:"+name), WithClock(testclock.New(epoch).Now))
	if err != nil {
		b.Fatal(err)
	}
	f := &benchFixture{store: s, hooks: &hooks{}, pool: pool}
	hook(s, f.hooks)
	loadScripts(b, pool)
	return f
}

// post posts n more articles to f, one a second up to the clock's now
// (postMany).
func (f *benchFixture) post(b *testing.B, n int) {
	b.Helper()
	now := f.store.now().Unix()
	postMany(b, f.pool, f.store, n, now-int64(n), now, 0, 0)
	f.n += n
}

// sized returns the data set of n articles.
func sized(b *testing.B, n int) *benchFixture {
	return fixture(b, "articles"+strconv.Itoa(n), func(b *testing.B, f *benchFixture) {
		f.post(b, n)
	})
}

// measure starts counting f's round trips for b, the time Redis spends
// running scripts and the CPU time of the Redis process, and empties the
// server's SLOWLOG; the function it returns reports the three per op and
// fails b for any command of 10 ms or more. Call it after setup, with the
// timer reset.
func measure(b *testing.B, f *benchFixture) (report func()) {
	m := meter(b, f.pool, 10*time.Millisecond)
	start := f.hooks.trips.Load()
	return func() {
		b.StopTimer()
		n := float64(b.N)
		cpu, _, usec := m.used(b)
		b.ReportMetric(float64(f.hooks.trips.Load()-start)/n, "roundtrips/op")
		b.ReportMetric(float64(usec)/n, "redis-µs/op")
		b.ReportMetric(cpu*1e6/n, "redis-cpu-µs/op")
		for _, e := range slowLog(b, f.pool) {
			b.Errorf("SLOWLOG: a command took %v: %s", e.took, e)
		}
	}
}

// The server-side measures of every benchmark, and of the tests that
// check a command's cost on a redis-server of their own: INFO cpu and
// commandstats, SLOWLOG, and the CPU time of one script.

// serverDo runs one command on pool and fails tb on an error.
func serverDo(tb testing.TB, pool *redis.Pool, cmd string, args ...interface{}) interface{} {
	tb.Helper()
	return (&backend{pool: pool}).do(tb, cmd, args...)
}

// info returns the lines of INFO section.
func info(tb testing.TB, pool *redis.Pool, section string) []string {
	tb.Helper()
	s, err := redis.String(serverDo(tb, pool, "INFO", section), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(s, "\r\n")
}

// cpuSeconds returns the sum of the INFO cpu fields named.
func cpuSeconds(tb testing.TB, pool *redis.Pool, names ...string) float64 {
	tb.Helper()
	var total float64
	for _, line := range info(tb, pool, "cpu") {
		name, v, _ := strings.Cut(line, ":")
		if slices.Contains(names, name) {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("INFO cpu %q: %v", line, err)
			}
			total += n
		}
	}
	return total
}

// serverCPU returns the CPU seconds, user and system, that the server
// process has used.
func serverCPU(tb testing.TB, pool *redis.Pool) float64 {
	return cpuSeconds(tb, pool, "used_cpu_user", "used_cpu_sys")
}

// mainCPU returns the CPU time, user and system, of the server's main
// thread, which runs the commands.
func mainCPU(tb testing.TB, pool *redis.Pool) time.Duration {
	s := cpuSeconds(tb, pool, "used_cpu_user_main_thread", "used_cpu_sys_main_thread")
	return time.Duration(s * float64(time.Second))
}

// scriptStats returns the calls of EVALSHA and EVAL the server has run,
// and the microseconds it spent in them, from INFO commandstats.
func scriptStats(tb testing.TB, pool *redis.Pool) (calls, usec int64) {
	tb.Helper()
	for _, line := range info(tb, pool, "commandstats") {
		name, stats, _ := strings.Cut(line, ":")
		if name != "cmdstat_evalsha" && name != "cmdstat_eval" {
			continue
		}
		for _, field := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

// serverMeter measures a server's work from meter to used.
type serverMeter struct {
	pool        *redis.Pool
	cpu         float64 // serverCPU at the start
	calls, usec int64   // scriptStats at the start
}

// meter empties the server's SLOWLOG, which from then logs every command
// of from or more (resetSlowLog), and starts measuring the server's CPU
// and its scripts.
func meter(tb testing.TB, pool *redis.Pool, from time.Duration) *serverMeter {
	tb.Helper()
	resetSlowLog(tb, pool, from)
	m := &serverMeter{pool: pool}
	m.calls, m.usec = scriptStats(tb, pool)
	m.cpu = serverCPU(tb, pool) // last: the INFO commands above are not counted
	return m
}

// used returns, since meter, the server's CPU seconds, and the calls of
// scripts and the microseconds spent in them.
func (m *serverMeter) used(tb testing.TB) (cpu float64, calls, usec int64) {
	tb.Helper()
	cpu = serverCPU(tb, m.pool) - m.cpu
	calls, usec = scriptStats(tb, m.pool)
	return cpu, calls - m.calls, usec - m.usec
}

// slowLogMax is the SLOWLOG length resetSlowLog sets; a log that holds as
// many entries may have lost some.
const slowLogMax = 1 << 20

// resetSlowLog empties the server's SLOWLOG and makes it log every command
// of from or more.
func resetSlowLog(tb testing.TB, pool *redis.Pool, from time.Duration) {
	tb.Helper()
	serverDo(tb, pool, "CONFIG", "SET", "slowlog-log-slower-than", from.Microseconds())
	serverDo(tb, pool, "CONFIG", "SET", "slowlog-max-len", slowLogMax)
	serverDo(tb, pool, "SLOWLOG", "RESET")
}

// slowEntry is a command in SLOWLOG.
type slowEntry struct {
	took time.Duration
	args []string // the command and its arguments
}

// slowLog returns the commands in the server's SLOWLOG, newest first, but
// for the measuring's own (SLOWLOG, CONFIG, INFO). A log that may have
// lost entries fails tb.
func slowLog(tb testing.TB, pool *redis.Pool) []slowEntry {
	tb.Helper()
	entries, err := redis.Values(serverDo(tb, pool, "SLOWLOG", "GET", -1), nil)
	if err != nil {
		tb.Fatal(err)
	}
	if len(entries) >= slowLogMax {
		tb.Fatalf("SLOWLOG overflowed (%d entries): commands may be lost", len(entries))
	}
	var list []slowEntry
	for _, e := range entries {
		// id, time, µs, the command and its arguments, ...
		f, err := redis.Values(e, nil)
		if err != nil || len(f) < 4 {
			tb.Fatalf("SLOWLOG entry %v: %v", e, err)
		}
		us, err1 := redis.Int64(f[2], nil)
		args, err2 := redis.Strings(f[3], nil)
		if err1 != nil || err2 != nil || len(args) == 0 {
			tb.Fatalf("SLOWLOG entry %v: %v, %v", e, err1, err2)
		}
		switch strings.ToUpper(args[0]) {
		case "SLOWLOG", "CONFIG", "INFO":
			continue
		}
		list = append(list, slowEntry{time.Duration(us) * time.Microsecond, args})
	}
	return list
}

// isScript reports whether e ran a script (EVALSHA or EVAL).
func (e slowEntry) isScript() bool {
	cmd := strings.ToUpper(e.args[0])
	return cmd == "EVALSHA" || cmd == "EVAL"
}

// String returns the command and the name of the store's script it ran,
// or its arguments, the long ones cut.
func (e slowEntry) String() string {
	if len(e.args) > 1 {
		if name := scriptName(strings.ToUpper(e.args[0]), []interface{}{e.args[1]}); name != "" {
			return e.args[0] + " " + name
		}
	}
	args := slices.Clone(e.args)
	for i, a := range args {
		if len(a) > 40 {
			args[i] = a[:40] + "…"
		}
	}
	return fmt.Sprintf("%q", args)
}

// longest returns the longest of entries; none took no time.
func longest(entries []slowEntry) slowEntry {
	var l slowEntry
	for _, e := range entries {
		if e.took > l.took {
			l = e
		}
	}
	return l
}

// scriptCPU runs call with s's scripts called name timed by the CPU time
// of the server's main thread, which runs the commands, read with INFO
// before and after each; it returns the longest. A script sent in a
// pipeline is timed with those sent after it and before its reply.
func scriptCPU(tb testing.TB, pool *redis.Pool, s *Store, name string, call func()) time.Duration {
	tb.Helper()
	saved := s.pool
	defer func() { s.pool = saved }()
	var start, longest time.Duration
	hook(s, &hooks{
		before: func(cmd string, args []interface{}) error {
			if scriptName(cmd, args) == name {
				start = mainCPU(tb, pool)
			}
			return nil
		},
		after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if scriptName(cmd, args) == name {
				longest = max(longest, mainCPU(tb, pool)-start)
			}
			return v, err
		},
	})
	call()
	return longest
}

// usedMemory returns INFO memory's used_memory.
func usedMemory(tb testing.TB, pool *redis.Pool) int64 {
	tb.Helper()
	for _, line := range info(tb, pool, "memory") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatal("INFO memory without used_memory")
	return 0
}

// memoryUsage returns MEMORY USAGE of key, counting every element.
func memoryUsage(tb testing.TB, pool *redis.Pool, key string) int64 {
	tb.Helper()
	n, err := redis.Int64(serverDo(tb, pool, "MEMORY", "USAGE", key, "SAMPLES", 0), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// mallocs returns the heap allocations made by the process so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// BenchmarkVote votes from many goroutines at once, a random mix of up,
// down and cancel by 10,000 users over 1,000 articles: the throughput of
// the vote path, and Redis's. Its context is context.Background.
func BenchmarkVote(b *testing.B) {
	benchVote(b, context.Background())
}

// BenchmarkVoteCancelable is BenchmarkVote with a context that can be
// canceled, as a server's request contexts can: redigo watches such a
// context with a goroutine per call.
func BenchmarkVoteCancelable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchVote(b, ctx)
}

func benchVote(b *testing.B, ctx context.Context) {
	const nArticles, nUsers = 1000, 10000
	f := fixture(b, "vote", func(b *testing.B, f *benchFixture) { f.post(b, nArticles) })
	users := make([]string, nUsers)
	for i := range users {
		users[i] = benchUser(i)
	}
	ids := make([]string, nArticles)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	votes := []VoteType{Upvote, Downvote, NoVote}
	var seed atomic.Int64
	b.SetParallelism(4) // 4 × GOMAXPROCS callers: keep Redis busy
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewSource(seed.Add(1)))
		for pb.Next() {
			_, err := f.store.Vote(ctx, users[r.Intn(nUsers)], ids[r.Intn(nArticles)], votes[r.Intn(3)])
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	report()
}

// BenchmarkPost posts articles one after another.
func BenchmarkPost(b *testing.B) {
	f := fixture(b, "post", func(*testing.B, *benchFixture) {})
	ctx := context.Background()
	title, link := benchTitle(1), benchLink(1)
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	for i := 0; i < b.N; i++ {
		if _, err := f.store.Post(ctx, "poster0001", title, link); err != nil {
			b.Fatal(err)
		}
	}
	report()
}

// BenchmarkArticlesPage reads the front page of 1,000 articles: 25
// articles with all their fields.
func BenchmarkArticlesPage(b *testing.B) {
	benchArticlesPage(b, sized(b, 1000), 1)
}

func benchArticlesPage(b *testing.B, f *benchFixture, page int) {
	ctx := context.Background()
	want := min(f.store.pageSize, f.n-(page-1)*f.store.pageSize)
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	m := mallocs()
	for i := 0; i < b.N; i++ {
		list, err := f.store.Articles(ctx, ScoreDesc, page)
		if err != nil || len(list) != want {
			b.Fatalf("page %d: %d articles, %v; want %d", page, len(list), err, want)
		}
	}
	b.ReportMetric(float64(mallocs()-m)/float64(b.N*want), "allocs/article")
	report()
}

// BenchmarkVotesOf reads one user's votes on a page of 25 articles.
func BenchmarkVotesOf(b *testing.B) {
	f := sized(b, 1000)
	ctx := context.Background()
	ids := make([]string, 25)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	user := benchPoster(1) // the poster of some of them
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	for i := 0; i < b.N; i++ {
		if _, err := f.store.VotesOf(ctx, user, ids); err != nil {
			b.Fatal(err)
		}
	}
	report()
}

// BenchmarkScaleArticlesPage reads the front page of sites of 1k, 100k
// and 1M articles, and a page from the middle of the largest.
func BenchmarkScaleArticlesPage(b *testing.B) {
	for _, n := range []int{1000, 100_000, 1_000_000} {
		b.Run(sizeName(n), func(b *testing.B) { benchArticlesPage(b, sized(b, n), 1) })
	}
	b.Run("1M/page20000", func(b *testing.B) { benchArticlesPage(b, sized(b, 1_000_000), 20000) })
}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// BenchmarkScaleMemory measures the Redis memory of articles and of
// votes, on a server of its own that holds nothing else. It reports bytes
// only, not time.
//
// article: the growth of INFO memory's used_memory over 100,000 posts,
// per article, and MEMORY USAGE of the parts of one article: its hash,
// its voter record (the "" field and the poster's vote), and its share of
// the score and time sorted sets.
//
// vote/N-per-article: the growth of MEMORY USAGE of every voter record
// while articles get N votes each (the poster's and N-1 more), per vote;
// N is chosen on both sides of hash-max-listpack-entries, where a record
// turns from a compact listpack into a hash table.
func BenchmarkScaleMemory(b *testing.B) {
	srv := redistest.Start(b)
	pool := srv.Pool()
	defer pool.Close()

	const n = 100_000
	f := newBenchStore(b, pool, "memory-articles")
	before := usedMemory(b, pool)
	f.post(b, n)
	perArticle := float64(usedMemory(b, pool)-before) / n
	k := f.store.keys
	id := strconv.Itoa(n / 2)
	hash, voters := memoryUsage(b, pool, k.articleKey(id)), memoryUsage(b, pool, k.votedKey(id))
	zsets := memoryUsage(b, pool, k.orderingKey("score")) + memoryUsage(b, pool, k.orderingKey("time"))
	encodings := fmt.Sprintf("encodings: article hash %s, voter record %s, score and time %s",
		encoding(b, pool, k.articleKey(id)), encoding(b, pool, k.votedKey(id)), encoding(b, pool, k.orderingKey("score")))
	b.Run("article", func(b *testing.B) {
		reportBytes(b, encodings)
		b.ReportMetric(perArticle, "B/article")
		b.ReportMetric(float64(hash), "hash-B/article")
		b.ReportMetric(float64(voters), "voters-B/article")
		b.ReportMetric(float64(zsets)/n, "zsets-B/article")
	})

	config, err := redis.StringMap(srv.Do("CONFIG", "GET", "hash-max-listpack-entries"))
	if err != nil {
		b.Fatal(err)
	}
	listpackMax, err := strconv.Atoi(config["hash-max-listpack-entries"])
	if err != nil {
		b.Fatal(err)
	}
	// A record holds the "" field and the poster's vote besides the N-1
	// votes: N = max-1 is the largest listpack, N = max the smallest
	// hash table.
	for _, per := range []int{10, 100, listpackMax - 1, listpackMax, 2000} {
		const nVotes = 100_000 // besides the posters'
		articles := nVotes / (per - 1)
		f := newBenchStore(b, pool, "memory-votes"+strconv.Itoa(per))
		f.post(b, articles)
		s := f.store
		now := s.now().Unix()
		before := recordsUsage(b, f)
		pipe(b, pool, articles*(per-1), func(c redis.Conn, i int) error {
			id := strconv.Itoa(1 + i/(per-1))
			return voteScript.SendHash(c, s.voteArgs(benchUser(i%(per-1)), id, Upvote, now)...)
		})
		perVote := float64(recordsUsage(b, f)-before) / float64(articles*(per-1))
		if a, err := s.Article(context.Background(), "1"); err != nil || a.Upvotes != int64(per) {
			b.Fatalf("article 1 after the votes: %+v, %v", a, err)
		}
		note := fmt.Sprintf("hash-max-listpack-entries %d: a record of %d votes is a %s", listpackMax, per,
			encoding(b, pool, s.keys.votedKey("1")))
		b.Run(fmt.Sprintf("vote/%d-per-article", per), func(b *testing.B) {
			reportBytes(b, note)
			b.ReportMetric(perVote, "B/vote")
		})
	}
}

// recordsUsage returns the sum of MEMORY USAGE of the voter records of
// all of f's articles.
func recordsUsage(b *testing.B, f *benchFixture) int64 {
	b.Helper()
	c := f.pool.Get()
	defer c.Close()
	for i := 1; i <= f.n; i++ {
		if err := c.Send("MEMORY", "USAGE", f.store.keys.votedKey(strconv.Itoa(i)), "SAMPLES", 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		b.Fatal(err)
	}
	var total int64
	for i := 1; i <= f.n; i++ {
		n, err := redis.Int64(c.Receive())
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return total
}

// encoding returns OBJECT ENCODING of key.
func encoding(b *testing.B, pool *redis.Pool, key string) string {
	b.Helper()
	e, err := redis.String(serverDo(b, pool, "OBJECT", "ENCODING", key), nil)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// reportBytes makes b, a benchmark that reports Redis memory measured
// before it started, report that alone: no time, no allocations. Its note
// is logged once.
func reportBytes(b *testing.B, note string) {
	if b.N == 1 {
		b.Log(note)
	}
	b.ResetTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(0, "B/op")
	b.ReportMetric(0, "allocs/op")
}
