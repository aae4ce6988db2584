package voting

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/testclock"
)

// Issue 25, "Every command bounded, whatever the data": the benchmarks
// of TopSince at a busy edge bucket and of group changes of MaxBatch
// names, each on a redis-server of its own, reporting the longest
// command on the slow log and the Redis time per call. BENCHMARKS.md,
// "How cost grows with the data", sums up their results.

// fillEdge writes, for s, one article a day before start and n articles
// posted at an even rate over [start, start+20 min): in the time and top
// orderings, their TopSince buckets and the score ordering, each with its
// record. Net votes are log-uniform from -1 to 50,000 (many ties); with
// byAge, the older an article the more votes it has, the hardest case for
// a read of the edge bucket by net votes, as the articles of the period
// are the newest of the bucket.
func fillEdge(b *testing.B, pool *redis.Pool, s *Store, start time.Time, n int, byAge bool) []topEntry {
	b.Helper()
	rng := rand.New(rand.NewSource(25))
	all := []topEntry{{id: 1, posted: start.Unix() - 86400, net: 3}}
	for i := 0; i < n; i++ {
		net := int64(math.Exp(rng.Float64()*math.Log(50000))) - 2
		if byAge {
			net = int64(n-i) / 4
		}
		all = append(all, topEntry{id: int64(i + 2), posted: start.Unix() + int64(i)*1200/int64(n), net: net})
	}
	k := s.keys
	pipe(b, pool, len(all), func(c redis.Conn, i int) error {
		e := all[i]
		id := strconv.FormatInt(e.id, 10)
		m := member(id)
		up, down := e.net, int64(0)
		if e.net < 0 {
			up, down = 0, -e.net
		}
		c.Send("MULTI")
		c.Send("SET", k.articleKey(id), record(int(up), int(down), e.posted, "top", benchPoster(i), benchTitle(i), benchLink(i)))
		c.Send("ZADD", k.orderingKey("time"), e.posted, m)
		c.Send("ZADD", k.orderingKey("score"), float64(e.posted)+432*float64(e.net), m)
		c.Send("ZADD", k.orderingKey("top"), e.net, m)
		for _, size := range []int64{600, 86400, 2592000} {
			c.Send("ZADD", topBucketKey(s, size, e.posted), e.net, m)
		}
		if err := c.Flush(); err != nil {
			return err
		}
		for j := 0; j < 7; j++ {
			if _, err := c.Receive(); err != nil {
				return err
			}
		}
		return c.Send("EXEC")
	})
	return all
}

// BenchmarkTopSinceEdge measures TopSince(10 min) on a store where
// articles arrived for twenty minutes at 40 a second (24,000 in ten
// minutes) or at 167 a second (100,000): its cutoff's 10-minute bucket,
// the edge, holds every article of ten minutes. The period starts 10 s, 300 s or 590 s
// into the edge bucket (edge=590s is the part of the edge in the period);
// net votes are random (votes=random) or fall with the post time
// (votes=byage). It reads page 1 and page 40 of 25 (ranks 975 to 999).
// Each page is checked against a brute-force model first. It reports
// the Redis time per call (redis-µs/op, INFO commandstats), the round
// trips per call (trips/op), and the longest command in the slow log
// (max-cmd-µs).
//
//	go test -run '^$' -bench 'BenchmarkTopSinceEdge' -benchtime 20x -timeout 30m .
func BenchmarkTopSinceEdge(b *testing.B) {
	pool := ownPool(b)
	start := time.Date(2031, 3, 14, 0, 0, 0, 0, time.UTC) // a bucket boundary
	for _, n := range []int{24_000, 100_000} {
		for _, byAge := range []bool{false, true} {
			votes := "random"
			if byAge {
				votes = "byage"
			}
			prefix := fmt.Sprintf("edge-%d-%s", n, votes)
			clock := testclock.New(start)
			s, err := New(pool, WithKeyPrefix(prefix), WithClock(clock.Now), WithOrders(Top))
			if err != nil {
				b.Fatal(err)
			}
			all := fillEdge(b, pool, s, start, 2*n, byAge)
			for _, edge := range []int64{590, 300, 10} {
				// The cutoff is 600-edge seconds into the bucket that
				// starts at start; now is ten minutes later.
				now := start.Add(time.Duration(600-edge+600) * time.Second)
				for _, page := range []int{1, MaxTopSince / 25} {
					clock.Set(now)
					want := topOfYear(all, now.Add(-10*time.Minute).Unix())
					want = want[min((page-1)*25, len(want)):min(page*25, len(want))]
					list, err := s.TopSince(ctx, 10*time.Minute, page)
					if err != nil {
						b.Fatal(err)
					}
					if len(list) != len(want) || len(list) == 0 {
						b.Fatalf("%d articles, want %d", len(list), len(want))
					}
					for i, a := range list {
						if a.ID != strconv.FormatInt(want[i].id, 10) {
							b.Fatalf("rank %d: %s, want %d", i, a.ID, want[i].id)
						}
					}
					b.Run(fmt.Sprintf("articles=%d/votes=%s/edge=%ds/page%dof25", n, votes, edge, page), func(b *testing.B) {
						m := meter(b, pool, 0)
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							if _, err := s.TopSince(ctx, 10*time.Minute, page); err != nil {
								b.Fatal(err)
							}
						}
						b.StopTimer()
						_, calls, usec := m.used(b)
						b.ReportMetric(float64(usec)/float64(b.N), "redis-µs/op")
						b.ReportMetric(float64(calls)/float64(b.N), "trips/op")
						l := longest(slowLog(b, pool))
						b.ReportMetric(float64(l.took.Microseconds()), "max-cmd-µs")
						b.Logf("longest command: %v %s", l.took, l)
					})
				}
			}
		}
	}
}

// BenchmarkGroupChangeBatch measures AddToGroups and RemoveFromGroups of
// MaxBatch names, the MaxArticleGroups (32) groups over and over, on an
// article with every optional order, in groups of 50 articles whose
// caches are warm in every ordering (kept for good): add (the article in
// none of them before), add-again (in all of them: a change of nothing),
// remove (in all of them before) and remove-absent (in none). An op is
// one call; the calls that set the article up between them are not
// counted. It reports the time Redis spent in the measured script per
// call (redis-µs/op, INFO commandstats around each call) and the longest
// of its calls in the slow log (max-cmd-µs, threshold 0.5 ms: 0 when none
// reached it).
//
//	go test -run '^$' -bench 'BenchmarkGroupChangeBatch' -benchtime 200x .
func BenchmarkGroupChangeBatch(b *testing.B) {
	be := ownBackend(b)
	s, clock := newStore(b, be, optionalOrders, WithGroupCacheTTL(0))
	groups := make([]string, MaxArticleGroups)
	for g := range groups {
		groups[g] = fmt.Sprintf("group%02d", g)
		postGroup(b, be, s, clock, groups[g], 50)
	}
	a := mustPost(b, s, "poster", "changed")
	for _, g := range groups {
		for o := range everyOrder {
			if order := Order(o); !order.optional() || s.enabled[order] {
				mustGroupPage(b, s, g, order, 1)
			}
		}
	}
	names := make([]string, MaxBatch)
	for i := range names {
		names[i] = groups[i%len(groups)]
	}
	add := func(b *testing.B) {
		if err := s.AddToGroups(ctx, a.ID, names...); err != nil {
			b.Fatal(err)
		}
	}
	remove := func(b *testing.B) {
		if err := s.RemoveFromGroups(ctx, a.ID, names...); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name         string
		script       string
		before, call func(b *testing.B)
	}{
		{"add", groupAddScript.name, remove, add},
		{"add-again", groupAddScript.name, add, add},
		{"remove", groupRemoveScript.name, add, remove},
		{"remove-absent", groupRemoveScript.name, remove, remove},
	} {
		b.Run(c.name, func(b *testing.B) {
			resetSlowLog(b, be.pool, 500*time.Microsecond)
			var calls, usec int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c.before(b)
				calls0, usec0 := scriptStats(b, be.pool)
				b.StartTimer()
				c.call(b)
				b.StopTimer()
				calls1, usec1 := scriptStats(b, be.pool)
				calls, usec = calls+calls1-calls0, usec+usec1-usec0
				b.StartTimer()
			}
			b.StopTimer()
			if calls != int64(b.N) {
				b.Fatalf("%d script calls for %d ops", calls, b.N)
			}
			var longest time.Duration
			for _, e := range slowLog(b, be.pool) {
				if len(e.args) >= 2 && scriptName(e.args[0], []interface{}{e.args[1]}) == c.script {
					longest = max(longest, e.took)
				}
			}
			b.ReportMetric(float64(usec)/float64(b.N), "redis-µs/op")
			b.ReportMetric(float64(longest.Microseconds()), "max-cmd-µs")
		})
	}
}
