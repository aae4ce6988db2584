package voting

import (
	"math/rand"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// The benchmarks of BENCHMARKS.md's headline table that no other
// benchmark measures alone: a warm and a cold group page, and VoteBatch
// per vote. Each reports, with measure, redis-µs/op (INFO commandstats of
// the scripts) and roundtrips/op, and with -benchmem the client's
// allocations (one a round trip of them is the harness's hooks).

// BenchmarkGroupPage reads page 1 (ScoreDesc) of a group of 1,000 of a
// store of 10,000 articles (every 10th; each article is in one of 10
// groups): warm, its cache built and kept; cold, after deleting its
// cache (timer stopped), so each read walks the store's ordering or
// builds the cache, as it chooses.
func BenchmarkGroupPage(b *testing.B) {
	const n, groups = 10000, 10
	f := fixture(b, "groups10000", func(b *testing.B, f *benchFixture) {
		postMany(b, f.pool, f.store, n, epoch.Unix()-n, epoch.Unix(), groups, 1)
		f.n = n
	})
	s, group := f.store, groupName(0)
	ordering, _ := ScoreDesc.ordering()
	cache := s.keys.cacheKey(group, ordering)
	read := func(b *testing.B) {
		if list := mustGroupPage(b, s, group, ScoreDesc, 1); len(list) != s.pageSize {
			b.Fatalf("group page of %d", len(list))
		}
	}
	b.Run("warm", func(b *testing.B) {
		read(b)
		b.ReportAllocs()
		b.ResetTimer()
		report := measure(b, f)
		m := mallocs()
		for i := 0; i < b.N; i++ {
			read(b)
		}
		b.ReportMetric(float64(mallocs()-m)/float64(b.N*s.pageSize), "allocs/article")
		report()
	})
	// memory: per member, the group's set and the member's set of its
	// groups (one group here), and per entry the cache of one ordering.
	b.Run("memory", func(b *testing.B) {
		read(b)
		members, err := redis.Int64(serverDo(b, f.pool, "SCARD", s.keys.groupKey(group)), nil)
		if err != nil || members != n/groups {
			b.Fatalf("group of %d, %v", members, err)
		}
		entries, err := redis.Int64(serverDo(b, f.pool, "ZCARD", cache), nil)
		if err != nil || entries == 0 {
			b.Fatalf("cache of %d, %v", entries, err)
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(memoryUsage(b, f.pool, s.keys.groupKey(group)))/float64(members), "set-B/member")
		b.ReportMetric(float64(memoryUsage(b, f.pool, s.keys.groupsOfKey("10"))), "groupsof-B/member")
		b.ReportMetric(float64(memoryUsage(b, f.pool, cache))/float64(entries), "cache-B/entry")
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		report := measure(b, f)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			serverDo(b, f.pool, "DEL", cache)
			b.StartTimer()
			read(b)
		}
		report()
	})
}

// BenchmarkVoteBatchCost casts VoteBatch of 100 ballots a call (up or
// down by random users of 10,000, on 10,000 articles in no group) and
// reports per vote the Redis time (redis-µs/vote) and the client's
// allocations (allocs/vote); BenchmarkVoteBatch compares it with Vote.
func BenchmarkVoteBatchCost(b *testing.B) {
	const articles, size = 10000, 100
	f := sized(b, articles)
	rng := rand.New(rand.NewSource(28))
	b.ReportAllocs()
	b.ResetTimer()
	report := measure(b, f)
	_, usec0 := scriptStats(b, f.pool)
	var allocs uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		list := ballots(rng, size, articles)
		m := mallocs()
		b.StartTimer()
		results, err := f.store.VoteBatch(ctx, list)
		allocs += mallocs() - m
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range results {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	b.StopTimer()
	_, usec := scriptStats(b, f.pool)
	b.ReportMetric(float64(usec-usec0)/float64(b.N*size), "redis-µs/vote")
	b.ReportMetric(float64(allocs)/float64(b.N*size), "allocs/vote")
	report()
}
