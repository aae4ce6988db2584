package voting

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
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

// Titles, links and names of the shapes of the book's examples: a title of
// about 40 bytes, a link of about 35, user names of 10.
func benchTitle(i int) string  { return "Benchmark article number " + strconv.Itoa(i) + " on Redis" }
func benchLink(i int) string   { return "https://example.com/articles/" + strconv.Itoa(i) }
func benchPoster(i int) string { return fmt.Sprintf("poster%04d", i%10000) }
func benchUser(i int) string   { return fmt.Sprintf("user%06d", i) }

// pipeline sends n commands, made by send, in batches on one connection,
// and fails b on the first error reply.
func pipeline(b *testing.B, pool *redis.Pool, n int, send func(c redis.Conn, i int) error) {
	b.Helper()
	const batch = 1000
	c := pool.Get()
	defer c.Close()
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		for i := lo; i < hi; i++ {
			if err := send(c, i); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Flush(); err != nil {
			b.Fatal(err)
		}
		for i := lo; i < hi; i++ {
			if _, err := c.Receive(); err != nil {
				b.Fatalf("pipelined command %d: %v", i, err)
			}
		}
	}
}

// postMany posts n articles, one a second up to the clock's now, as Post
// would; article i (from 1) is by benchPoster(i).
func postMany(b *testing.B, f *benchFixture, n int) {
	b.Helper()
	s := f.store
	now := s.now().Unix()
	first := f.n + 1
	pipeline(b, f.pool, n, func(c redis.Conn, i int) error {
		id := first + i
		return postScript.SendHash(c, s.postArgs(benchPoster(id), benchTitle(id), benchLink(id), now-int64(n-i))...)
	})
	f.n += n
	a, err := s.Article(context.Background(), strconv.Itoa(f.n))
	if err != nil || a.Title != benchTitle(f.n) || a.Poster != benchPoster(f.n) || a.Upvotes != 1 {
		b.Fatalf("article %d after the fill: %+v, %v", f.n, a, err)
	}
}

// sized returns the data set of n articles.
func sized(b *testing.B, n int) *benchFixture {
	return fixture(b, "articles"+strconv.Itoa(n), func(b *testing.B, f *benchFixture) {
		postMany(b, f, n)
	})
}

// measure starts counting f's round trips for b, the time Redis spends
// running scripts and the CPU time of the Redis process, and empties the
// server's SLOWLOG; the function it returns reports the three per op and
// fails b for any command of 10 ms or more. Call it after setup, with the
// timer reset.
func measure(b *testing.B, f *benchFixture) (report func()) {
	benchDo(b, f.pool, "CONFIG", "SET", "slowlog-log-slower-than", 10000)
	benchDo(b, f.pool, "SLOWLOG", "RESET")
	start, usec, cpu := f.hooks.trips.Load(), scriptUsec(b, f.pool), serverCPU(b, f.pool)
	return func() {
		b.StopTimer()
		n := float64(b.N)
		b.ReportMetric(float64(f.hooks.trips.Load()-start)/n, "roundtrips/op")
		b.ReportMetric(float64(scriptUsec(b, f.pool)-usec)/n, "redis-µs/op")
		b.ReportMetric((serverCPU(b, f.pool)-cpu)*1e6/n, "redis-cpu-µs/op")
		slow, err := redis.Values(benchDo(b, f.pool, "SLOWLOG", "GET", 10), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, entry := range slow {
			// id, time, µs, the command and its arguments, ...
			fields, _ := redis.Values(entry, nil)
			us, _ := redis.Int64(fields[2], nil)
			args, _ := redis.Strings(fields[3], nil)
			name := ""
			if len(args) > 1 {
				name = scriptName(strings.ToUpper(args[0]), []interface{}{args[1]})
			}
			for i, a := range args {
				if len(a) > 40 {
					args[i] = a[:40] + "…"
				}
			}
			b.Errorf("SLOWLOG: a command took %v: %s %q", time.Duration(us)*time.Microsecond, name, args)
		}
	}
}

// benchDo runs one command on pool.
func benchDo(b *testing.B, pool *redis.Pool, cmd string, args ...interface{}) interface{} {
	b.Helper()
	return (&backend{pool: pool}).do(b, cmd, args...)
}

// serverCPU returns the CPU seconds, user and system, that the server
// process has used, from INFO cpu.
func serverCPU(b *testing.B, pool *redis.Pool) float64 {
	b.Helper()
	var total float64
	for _, line := range info(b, pool, "cpu") {
		name, v, _ := strings.Cut(line, ":")
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu %q: %v", line, err)
			}
			total += n
		}
	}
	return total
}

// scriptUsec returns the microseconds the server has spent in EVALSHA and
// EVAL, from INFO commandstats.
func scriptUsec(b *testing.B, pool *redis.Pool) int64 {
	b.Helper()
	var total int64
	for _, line := range info(b, pool, "commandstats") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") {
			continue
		}
		for _, field := range strings.Split(line[strings.IndexByte(line, ':')+1:], ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					b.Fatalf("commandstats %q: %v", line, err)
				}
				total += n
			}
		}
	}
	return total
}

// info returns the lines of INFO section.
func info(b *testing.B, pool *redis.Pool, section string) []string {
	b.Helper()
	s, err := redis.String(benchDo(b, pool, "INFO", section), nil)
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(s, "\r\n")
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
	f := fixture(b, "vote", func(b *testing.B, f *benchFixture) { postMany(b, f, nArticles) })
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
	postMany(b, f, n)
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
		postMany(b, f, articles)
		s := f.store
		now := s.now().Unix()
		before := recordsUsage(b, f)
		pipeline(b, pool, articles*(per-1), func(c redis.Conn, i int) error {
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

// usedMemory returns INFO memory's used_memory.
func usedMemory(b *testing.B, pool *redis.Pool) int64 {
	b.Helper()
	for _, line := range info(b, pool, "memory") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("INFO memory without used_memory")
	return 0
}

// memoryUsage returns MEMORY USAGE of key, counting every element.
func memoryUsage(b *testing.B, pool *redis.Pool, key string) int64 {
	b.Helper()
	n, err := redis.Int64(benchDo(b, pool, "MEMORY", "USAGE", key, "SAMPLES", 0), nil)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// encoding returns OBJECT ENCODING of key.
func encoding(b *testing.B, pool *redis.Pool, key string) string {
	b.Helper()
	e, err := redis.String(benchDo(b, pool, "OBJECT", "ENCODING", key), nil)
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
