package voting

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/testclock"
)

// BenchmarkModerationRedisTime measures what moderation adds to a Vote's
// Redis time (INFO commandstats, as BenchmarkRedisTime), in interleaved
// rounds on one server, each store with 1,000 articles and the same
// random votes of 10,000 users:
//
//   - vote: a store that never suspended anyone, as it runs;
//   - vote-before: the same votes on the same store, by a function of a
//     library of its own whose vote reads the store's record with a GET,
//     as the vote did before suspensions (no voterCheck's MGET);
//   - vote-suspended: a store where another user is suspended, so that
//     each vote also reads the voter's suspension (HGET);
//   - vote-log: a store with WithVoteLog;
//   - vote-events: a store with WithVoteEvents, its stream at its cap
//     of 10,000 from the second round on.
//
// Run it with
//
//	go test -run '^$' -bench ModerationRedisTime -benchtime 5000x .
func BenchmarkModerationRedisTime(b *testing.B) {
	plain := postedFixture(b, "mod-plain", redisTimeArticles)
	mk := func(name string, opts ...Option) *benchFixture {
		return fixture(b, name, func(b *testing.B, f *benchFixture) {
			s, err := New(f.pool, append([]Option{WithKeyPrefix("bench:" + name), WithClock(f.store.now)}, opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			hook(s, f.hooks)
			f.store = s
			f.post(b, redisTimeArticles)
		})
	}
	logged := mk("mod-log", WithVoteLog())
	evented := mk("mod-events", WithVoteEvents(10_000))
	suspended := mk("mod-suspended")
	if err := suspended.store.Suspend(context.Background(), "someone-else", Refuse, epoch.AddDate(1, 0, 0)); err != nil {
		b.Fatal(err)
	}
	before := beforeSuspensions(b, plain)
	load := newRedisTimeLoad()
	for r := 0; r < redisTimeRounds; r++ {
		redisTimeRun(b, "vote", plain, load.vote(plain.store))
		redisTimeRun(b, "vote-before", plain, func(w, i int) error {
			u, a, v := load.ballot(w, i)
			return before(u, strconv.Itoa(a+1), v)
		})
		redisTimeRun(b, "vote-suspended", suspended, load.vote(suspended.store))
		redisTimeRun(b, "vote-log", logged, load.vote(logged.store))
		redisTimeRun(b, "vote-events", evented, load.vote(evented.store))
	}
}

// beforeSuspensions loads a library of its own whose vote function is
// the store's with the record read by a GET (checkStore) where it reads
// it with the suspensions' end (voterCheck), and returns a call of it
// on f's store.
func beforeSuspensions(b *testing.B, f *benchFixture) func(user, id string, v VoteType) error {
	b.Helper()
	const check = "mode, left = voterCheck(store, want, user, now)"
	if !strings.Contains(libLua, check) {
		b.Fatal("lib/ballot.lua vote calls voterCheck no more")
	}
	saved := libLua
	libLua = strings.Replace(libLua, check, "checkStore(store, want, 'w')", 1)
	lib := newLibrary([]script{voteScript})
	libLua = saved
	if _, err := redis.String(serverDo(b, f.pool, "FUNCTION", "LOAD", "REPLACE", lib.source), nil); err != nil {
		b.Fatal(err)
	}
	s, name := f.store, functionName(lib.name, voteScript.name)
	return func(user, id string, v VoteType) error {
		t := s.now()
		args := s.callArgs(voteScript, s.appendVoteRules(s.voteArgs(user, id, v, t.Unix()), t), false)
		args[0] = name
		c := f.pool.Get()
		defer c.Close()
		_, err := c.Do("FCALL", args...)
		return err
	}
}

// BenchmarkVoteLogMemory measures the vote log's memory (WithVoteLog):
// MEMORY USAGE of a user's log of 1, 100 and 10,000 votes (a journal of
// a line a vote, docs/LAYOUT.md), per user and per further vote; and
// what the lines' offsets add to the voter records while the items'
// voting is open ("1@<offset>" for "1"), against a twin store without
// the log that took the same votes.
//
//	go test -run '^$' -bench VoteLogMemory -benchtime 1x .
func BenchmarkVoteLogMemory(b *testing.B) {
	const nArticles = 10000
	pool := redistest.Shared(b).Pool()
	defer pool.Close()
	var twins [2]*Store // with the log, without
	for i := range twins {
		opts := []Option{WithKeyPrefix(fmt.Sprintf("bench:logmem%d", prefixSeq.Add(1))), WithClock(testclock.New(epoch).Now)}
		if i == 0 {
			opts = append(opts, WithVoteLog())
		}
		s, err := New(pool, opts...)
		if err != nil {
			b.Fatal(err)
		}
		twins[i] = s
		postMany(b, pool, s, nArticles, epoch.Unix()-nArticles, epoch.Unix(), 0, 0)
	}
	s := twins[0]
	for _, n := range []int{1, 100, 10000} {
		user := fmt.Sprintf("voter%d", n)
		for _, t := range twins {
			pipe(b, pool, n, func(c redis.Conn, i int) error {
				v := Upvote
				if i%4 == 0 {
					v = Downvote
				}
				return voteScript.SendHash(c, t.fenced(nil, voteScript, t.voteArgs(user, strconv.Itoa(1+i), v, epoch.Unix()+int64(i)))...)
			})
		}
		bytes := memoryUsage(b, pool, s.keys.userVotesKey(user))
		b.ReportMetric(float64(bytes), fmt.Sprintf("log-B/user-of-%d", n))
		b.ReportMetric(float64(bytes)/float64(n), fmt.Sprintf("log-B/vote-of-%d", n))
	}
	// Records of 2 to 4 voters (listpacks), then of 300 (hash tables):
	// 300 users vote on 20 articles more.
	offsets := func() float64 {
		var voters [2]int64 // the voter records' bytes of each twin
		for i, t := range twins {
			for id := 1; id <= nArticles; id++ {
				voters[i] += memoryUsage(b, pool, t.keys.votedKey(strconv.Itoa(id)))
			}
		}
		return float64(voters[0] - voters[1])
	}
	small := offsets()
	b.ReportMetric(small/(1+100+10000), "offsets-B/open-vote")
	for _, t := range twins {
		pipe(b, pool, 300*20, func(c redis.Conn, i int) error {
			return voteScript.SendHash(c, t.fenced(nil, voteScript, t.voteArgs(fmt.Sprintf("u%d", i/20), strconv.Itoa(nArticles-i%20), Upvote, epoch.Unix()))...)
		})
	}
	b.ReportMetric((offsets()-small)/(300*20), "offsets-B/open-vote-of-300")
}
