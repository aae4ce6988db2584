package voting

import (
	"context"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// BenchmarkPagesReplicas reads pages of 25 of 10,000 articles (Articles,
// ScoreDesc, one of the first 40 pages at random) from many goroutines:
// on the primary alone (replicas=0), and through a read pool spread over
// 1 and 2 replicas of it. It reports pages/s and the Redis time per page
// (redis-µs/op, INFO commandstats), the CPU time of the reading servers
// per page (redis-cpu-µs/op) and the cores they kept busy (redis-cores),
// and the same for the client, this process (client-cpu-µs/op,
// client-cores), on servers of its own. See BENCHMARKS.md, "Sizing guide".
func BenchmarkPagesReplicas(b *testing.B) {
	const n, pages = 10000, 40
	primary := redistest.Start(b)
	replicas := []*redistest.Server{redistest.StartReplica(b, primary), redistest.StartReplica(b, primary)}
	pp := primary.Pool()
	b.Cleanup(func() { pp.Close() })
	writer, clock := newStore(b, &backend{pool: pp})
	postMany(b, pp, writer, n, epoch.Unix()-n, epoch.Unix(), 0, 0)
	pools := []*redis.Pool{pp}
	for _, r := range replicas {
		if err := primary.WaitReplica(r, 30*time.Second); err != nil {
			b.Fatal(err)
		}
		p := r.Pool()
		b.Cleanup(func() { p.Close() })
		pools = append(pools, p)
	}
	for _, r := range []int{0, 1, 2} {
		b.Run("replicas="+string(rune('0'+r)), func(b *testing.B) {
			opts := []Option{WithKeyPrefix(writer.keys.prefix), WithClock(clock.Now)}
			servers := pools[:1]
			if r > 0 {
				servers = pools[1 : 1+r]
				opts = append(opts, WithReadPool(&roundRobin{pools: servers}))
			}
			s, err := New(pp, opts...)
			if err != nil {
				b.Fatal(err)
			}
			// usage sums the reading servers' script time (µs) and CPU
			// (seconds).
			usage := func() (usec int64, cpu float64) {
				for _, p := range servers {
					_, u := scriptStats(b, p)
					usec += u
					cpu += serverCPU(b, p)
				}
				return usec, cpu
			}
			usec0, cpu0 := usage()
			var seed atomic.Int64
			b.SetParallelism(8) // 8 × GOMAXPROCS callers: keep every server busy
			b.ResetTimer()
			start, client0 := time.Now(), processCPU()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewSource(seed.Add(1)))
				for pb.Next() {
					list, err := s.Articles(context.Background(), ScoreDesc, 1+rng.Intn(pages))
					if err != nil || len(list) != 25 {
						b.Errorf("page: %d articles, %v", len(list), err)
						return
					}
				}
			})
			elapsed, client := time.Since(start), processCPU()-client0
			b.StopTimer()
			usec, cpu := usage()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pages/s")
			b.ReportMetric(float64(usec-usec0)/float64(b.N), "redis-µs/op")
			b.ReportMetric((cpu-cpu0)*1e6/float64(b.N), "redis-cpu-µs/op")
			// The reading servers' and the client's shares of the
			// machine's cores.
			b.ReportMetric((cpu-cpu0)/elapsed.Seconds(), "redis-cores")
			b.ReportMetric(float64(client.Microseconds())/float64(b.N), "client-cpu-µs/op")
			b.ReportMetric(client.Seconds()/elapsed.Seconds(), "client-cores")
		})
	}
}

// roundRobin is a read pool spread over several servers' pools, one
// connection from each in turn.
type roundRobin struct {
	pools []*redis.Pool
	next  atomic.Uint64
}

func (r *roundRobin) pool() *redis.Pool {
	return r.pools[int(r.next.Add(1)%uint64(len(r.pools)))]
}

func (r *roundRobin) Get() redis.Conn { return r.pool().Get() }

func (r *roundRobin) GetContext(ctx context.Context) (redis.Conn, error) {
	return r.pool().GetContext(ctx)
}
