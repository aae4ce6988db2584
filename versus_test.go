package voting

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// BenchmarkVersusBook puts the store beside the book's logic ("Redis in
// Action" 1.3) written two ways, on one redis-server, in interleaved
// rounds so that each trio runs under the same load:
//
//   - store: the store's Vote (an upvote by a new voter), Post, and
//     Articles(ScoreDesc, 1), on 1,000 articles;
//   - script: the book's logic as one hand-written Lua script a call
//     (redistime_test.go's bareVoteScript and barePageScript, and
//     barePostScript below), on 1,000 articles of the book's shape;
//   - seed: the same logic as the seed code and the blog ports of the
//     book write it, one command a round trip from Go, on the same data
//     as script: a vote is ZSCORE, SADD, ZINCRBY and HINCRBY; a post
//     INCR, SADD, EXPIRE, HSET and two ZADDs; a page ZREVRANGE and an
//     HGETALL per article. Non-atomic, as the seeds are.
//
// One caller at a time (so ns/op is a call's latency, round trips
// included), on a pool, with an unhooked store. Each run reports
// redis-µs/op (INFO commandstats: the usec of the FCALLs or EVALSHAs
// sent, or for seed the sum over the commands it sends), main-cpu-µs/op
// (CPU of the server's main thread, which also reads requests and
// writes replies: what a round trip costs the server) and slow-cmds
// (SLOWLOG entries of 10 ms or more: a disturbed run). After the rounds,
// vote-ratio, post-ratio and page-ratio report the store's figure over
// script's and over seed's, each the median over the rounds of the
// ratio within a round, and the log prints the medians. Run it with
//
//	go test -run '^$' -bench VersusBook -benchmem -benchtime 2000x .
//
// which takes about half a minute.
func BenchmarkVersusBook(b *testing.B) {
	const nArticles, rounds = 1000, 5
	f := postedFixture(b, "versus", nArticles)
	s, err := New(f.pool, WithKeyPrefix(f.store.keys.prefix), WithClock(f.store.now))
	if err != nil {
		b.Fatal(err)
	}
	book := bareFixture(b, nArticles)
	book.loadBook(b)
	c := f.pool.Get()
	err = barePostScript.Load(c)
	c.Close()
	if err != nil {
		b.Fatal(err)
	}

	// article picks the article of the k-th vote of a style; every vote
	// is by a new user, so every vote counts, in every style.
	article := func(k int) string { return strconv.Itoa(int(uint32(k)*2654435761%nArticles) + 1) }
	type style struct {
		name string
		cmds []string // the commands seed sends; nil: scripts
		call func(k int) error
	}
	ops := []struct {
		op     string
		styles []style
	}{
		{"vote", []style{
			{"store", nil, func(k int) error {
				_, err := s.Vote(ctx, benchUser(k), article(k), Upvote)
				return err
			}},
			{"script", nil, func(k int) error { return book.bareVote(benchUser(k), article(k)) }},
			{"seed", []string{"zscore", "sadd", "zincrby", "hincrby"}, func(k int) error {
				return book.seedVote(benchUser(k), article(k))
			}},
		}},
		{"post", []style{
			{"store", nil, func(k int) error {
				_, err := s.Post(ctx, benchPoster(k), benchTitle(k), benchLink(k))
				return err
			}},
			{"script", nil, func(k int) error { return book.barePost(k) }},
			{"seed", []string{"incr", "sadd", "expire", "hset", "zadd"}, func(k int) error { return book.seedPost(k) }},
		}},
		{"page", []style{
			{"store", nil, func(int) error {
				list, err := s.Articles(ctx, ScoreDesc, 1)
				if err == nil && len(list) != 25 {
					return fmt.Errorf("page of %d", len(list))
				}
				return err
			}},
			{"script", nil, func(int) error { return book.barePage() }},
			{"seed", []string{"zrevrange", "hgetall"}, func(int) error { return book.seedPage() }},
		}},
	}

	// figures[op/style][round] is the last run's redis-µs, main-cpu-µs
	// and wall-µs per op of that round.
	figures := map[string][][3]float64{}
	next := map[string]int{} // the next k of each op and style
	for r := 0; r < rounds; r++ {
		for _, o := range ops {
			for _, st := range o.styles {
				name := o.op + "-" + st.name
				if figures[name] == nil {
					figures[name] = make([][3]float64, rounds)
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					resetSlowLog(b, f.pool, 10*time.Millisecond)
					_, usec0 := styleStats(b, f.pool, st.cmds)
					cpu0 := mainCPU(b, f.pool)
					b.ResetTimer()
					start := time.Now()
					for i := 0; i < b.N; i++ {
						if err := st.call(next[name]); err != nil {
							b.Fatal(err)
						}
						next[name]++
					}
					wall := time.Since(start)
					b.StopTimer()
					cpu := mainCPU(b, f.pool) - cpu0
					_, usec := styleStats(b, f.pool, st.cmds)
					n := float64(b.N)
					fig := [3]float64{float64(usec-usec0) / n, float64(cpu.Microseconds()) / n, float64(wall.Microseconds()) / n}
					figures[name][r] = fig
					b.ReportMetric(fig[0], "redis-µs/op")
					b.ReportMetric(fig[1], "main-cpu-µs/op")
					b.ReportMetric(float64(len(slowLog(b, f.pool))), "slow-cmds")
				})
			}
		}
	}

	// The ratios: the store's figure over the other style's, round by
	// round, and their median.
	ratio := func(op, other string, i int) float64 {
		var list []float64
		for r := 0; r < rounds; r++ {
			if d := figures[op+"-"+other][r][i]; d > 0 {
				list = append(list, figures[op+"-store"][r][i]/d)
			}
		}
		return median(list)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "medians of %d rounds, µs per op: redis (commandstats) / main-thread CPU / wall\n", rounds)
	for _, o := range ops {
		for _, st := range o.styles {
			name := o.op + "-" + st.name
			var med [3]float64
			for i := range med {
				var list []float64
				for r := 0; r < rounds; r++ {
					list = append(list, figures[name][r][i])
				}
				med[i] = median(list)
			}
			fmt.Fprintf(&table, "%-12s %8.1f %8.1f %8.1f\n", name, med[0], med[1], med[2])
		}
		fmt.Fprintf(&table, "%-12s redis ×%.2f script ×%.2f seed; cpu ×%.2f script ×%.2f seed; wall ×%.2f script ×%.2f seed\n",
			o.op+"-ratio", ratio(o.op, "script", 0), ratio(o.op, "seed", 0),
			ratio(o.op, "script", 1), ratio(o.op, "seed", 1), ratio(o.op, "script", 2), ratio(o.op, "seed", 2))
		b.Run(o.op+"-ratio", func(b *testing.B) {
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(ratio(o.op, "script", 0), "redis-x-script")
			b.ReportMetric(ratio(o.op, "seed", 0), "redis-x-seed")
			b.ReportMetric(ratio(o.op, "script", 1), "cpu-x-script")
			b.ReportMetric(ratio(o.op, "seed", 1), "cpu-x-seed")
			b.ReportMetric(ratio(o.op, "script", 2), "wall-x-script")
			b.ReportMetric(ratio(o.op, "seed", 2), "wall-x-seed")
		})
	}
	b.Log("\n" + table.String())
}

// median returns the median of list, or 0 for none.
func median(list []float64) float64 {
	if len(list) == 0 {
		return 0
	}
	list = slices.Clone(list)
	slices.Sort(list)
	if n := len(list); n%2 == 0 {
		return (list[n/2-1] + list[n/2]) / 2
	}
	return list[len(list)/2]
}

// styleStats returns the calls of the commands named (lower case) and the
// microseconds the server spent in them, from INFO commandstats; with no
// names, those of every form of script (scriptStats).
func styleStats(tb testing.TB, pool *redis.Pool, cmds []string) (calls, usec int64) {
	tb.Helper()
	if cmds == nil {
		return scriptStats(tb, pool)
	}
	return commandUsage(tb, pool, cmds)
}

// barePostScript is the book's post_article as one script: the next id,
// the poster in the voter set (for a week), the article hash, and its
// entries in the score: and time: zsets.
var barePostScript = redis.NewScript(3, `
local seq, scoreKey, timeKey = KEYS[1], KEYS[2], KEYS[3]
local tag, poster, title, link, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local id = redis.call('INCR', seq)
local voted = tag .. 'voted:' .. id
redis.call('SADD', voted, poster)
redis.call('EXPIRE', voted, 604800)
local article = tag .. 'article:' .. id
redis.call('HSET', article, 'title', title, 'link', link, 'poster', poster, 'time', now, 'votes', 1)
redis.call('ZADD', scoreKey, now + 432, article)
redis.call('ZADD', timeKey, now, article)
return id
`)

// loadBook sets the book's id counter (the key "article:") past the
// articles of d, so that posts add articles rather than overwrite them.
func (d *bareData) loadBook(b *testing.B) {
	serverDo(b, d.pool, "SETNX", d.tag+"article:", d.n)
}

func (d *bareData) barePost(k int) error {
	c := d.pool.Get()
	defer c.Close()
	_, err := barePostScript.Do(c, d.tag+"article:", d.tag+"score:", d.tag+"time:",
		d.tag, benchPoster(k), benchTitle(k), benchLink(k), epoch.Unix())
	return err
}

// seedVote is the seeds' UpvoteArticle: one command a round trip.
func (d *bareData) seedVote(user, id string) error {
	c := d.pool.Get()
	defer c.Close()
	article := d.tag + "article:" + id
	posted, err := redis.Int64(c.Do("ZSCORE", d.tag+"time:", article))
	if err != nil {
		return err
	}
	if posted < epoch.Unix()-7*86400 {
		return nil
	}
	added, err := redis.Int(c.Do("SADD", d.tag+"voted:"+id, user))
	if err != nil || added == 0 {
		return err
	}
	if _, err := c.Do("ZINCRBY", d.tag+"score:", 432, article); err != nil {
		return err
	}
	_, err = c.Do("HINCRBY", article, "votes", 1)
	return err
}

// seedPost is the seeds' PostArticle: one command a round trip.
func (d *bareData) seedPost(k int) error {
	c := d.pool.Get()
	defer c.Close()
	id, err := redis.Int(c.Do("INCR", d.tag+"article:"))
	if err != nil {
		return err
	}
	voted := d.tag + "voted:" + strconv.Itoa(id)
	if _, err := c.Do("SADD", voted, benchPoster(k)); err != nil {
		return err
	}
	if _, err := c.Do("EXPIRE", voted, 7*86400); err != nil {
		return err
	}
	now := epoch.Unix()
	article := d.tag + "article:" + strconv.Itoa(id)
	if _, err := c.Do("HSET", article, "title", benchTitle(k), "link", benchLink(k),
		"poster", benchPoster(k), "time", now, "votes", 1); err != nil {
		return err
	}
	if _, err := c.Do("ZADD", d.tag+"score:", now+432, article); err != nil {
		return err
	}
	_, err = c.Do("ZADD", d.tag+"time:", now, article)
	return err
}

// seedPage is the seeds' GetArticles: the page's ids, then each
// article's hash, one round trip each, as maps with the id.
func (d *bareData) seedPage() error {
	c := d.pool.Get()
	defer c.Close()
	ids, err := redis.Strings(c.Do("ZREVRANGE", d.tag+"score:", 0, 24))
	if err != nil {
		return err
	}
	if len(ids) != 25 {
		return errors.New("seed page of " + strconv.Itoa(len(ids)))
	}
	list := make([]map[string]string, 0, len(ids))
	for _, id := range ids {
		m, err := redis.StringMap(c.Do("HGETALL", id))
		if err != nil {
			return err
		}
		m["id"] = id
		list = append(list, m)
	}
	_ = list
	return nil
}
