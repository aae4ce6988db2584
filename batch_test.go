package voting

import (
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// sentinels are the errors a ballot may get.
var sentinels = []error{ErrNotFound, ErrVotingClosed, ErrInvalidVote, ErrInvalidArgument}

// sameError reports whether two errors read alike and wrap the same
// sentinels.
func sameError(a, b error) bool {
	if errString(a) != errString(b) {
		return false
	}
	for _, e := range sentinels {
		if errors.Is(a, e) != errors.Is(b, e) {
			return false
		}
	}
	return true
}

// TestVoteBatchLikeVote runs the same ballots as one VoteBatch on a store
// and one Vote at a time on its twin (same articles, same clock): each
// ballot must get what Vote gets, and the stores must end alike.
func TestVoteBatchLikeVote(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		opts := []Option{WithVoteWindow(time.Hour), WithOrders(extraOrders...), WithVoteWeight(0.5)}
		s, clock := newStore(t, b, opts...)
		twin, _ := newStore(t, b, append(opts, WithClock(clock.Now))...)
		const articles = 7
		for _, st := range []*Store{s, twin} {
			for i := 0; i < articles; i++ {
				clock.Set(epoch.Add(time.Duration(i) * 10 * time.Minute))
				a := mustPost(t, st, "p", "t"+strconv.Itoa(i))
				if err := st.AddToGroups(ctx, a.ID, "all", "g"+strconv.Itoa(i%2)); err != nil {
					t.Fatal(err)
				}
			}
			readAll(t, st, []string{"all", "g0", "g1"})
			if err := st.Delete(ctx, "7"); err != nil {
				t.Fatal(err)
			}
			b.do(t, "DEL", st.keys.votedKey("6")) // its voter record expired
		}
		clock.Set(epoch.Add(65 * time.Minute)) // article 1's voting closed at +60m

		users := []string{"u0", "u1", "u2", "p", "", " ", strings.Repeat("x", MaxNameLen+1), "a\nb"}
		ids := []string{"1", "2", "3", "4", "5", "6", "7", "8", "x", "01", "", "9223372036854775808"}
		rng := rand.New(rand.NewSource(1))
		pick := func(list []string, common int) string {
			if rng.Intn(10) < 8 {
				return list[rng.Intn(common)]
			}
			return list[rng.Intn(len(list))]
		}
		var ballots []Ballot
		for len(ballots) < 12*batchStep+5 {
			v := []VoteType{Upvote, Downvote, CancelVote}[rng.Intn(3)]
			if rng.Intn(30) == 0 {
				v = []VoteType{NoVote, 3, -3}[rng.Intn(3)] // refused
			}
			bal := Ballot{User: pick(users, 4), ID: pick(ids, 6), Vote: v}
			ballots = append(ballots, bal)
			if rng.Intn(5) == 0 { // the same user on the same article again
				bal.Vote = []VoteType{Upvote, Downvote, CancelVote}[rng.Intn(3)]
				ballots = append(ballots, bal)
			}
		}
		results, err := s.VoteBatch(ctx, ballots)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != len(ballots) {
			t.Fatalf("%d results for %d ballots", len(results), len(ballots))
		}
		seen := map[error]int{}
		for i, bal := range ballots {
			r, err := twin.Vote(ctx, bal.User, bal.ID, bal.Vote)
			got := results[i]
			if got.VoteResult != r || !sameError(got.Err, err) {
				t.Fatalf("ballot %d %+v: VoteBatch gave %+v, %v; Vote gave %+v, %v", i, bal, got.VoteResult, got.Err, r, err)
			}
			for _, e := range sentinels {
				if errors.Is(err, e) {
					seen[e]++
				}
			}
			if err == nil {
				seen[nil]++
			}
		}
		for _, e := range append([]error{nil}, sentinels...) {
			if seen[e] == 0 {
				t.Errorf("no ballot got %v", e)
			}
		}
		// Both stores end alike: articles, votes and group pages.
		for _, id := range ids[:articles] {
			a, errA := s.Article(ctx, id)
			w, errW := twin.Article(ctx, id)
			if a != w || !sameError(errA, errW) {
				t.Errorf("article %s: %+v, %v after VoteBatch; %+v, %v after Votes", id, a, errA, w, errW)
			}
			for _, u := range users[:4] {
				va, errA := s.VoteOf(ctx, u, id)
				vw, errW := twin.VoteOf(ctx, u, id)
				if va != vw || !sameError(errA, errW) {
					t.Errorf("vote of %s on %s: %v, %v after VoteBatch; %v, %v after Votes", u, id, va, errA, vw, errW)
				}
			}
		}
		for _, g := range []string{"all", "g0", "g1"} {
			for o := ScoreDesc; o <= Controversial; o++ {
				pa, errA := s.GroupArticles(ctx, g, o, 1)
				pw, errW := twin.GroupArticles(ctx, g, o, 1)
				if fmt.Sprint(pa) != fmt.Sprint(pw) || errA != nil || errW != nil {
					t.Errorf("group %s %v: %v, %v after VoteBatch; %v, %v after Votes", g, o, pa, errA, pw, errW)
				}
			}
		}
		checkCaches(t, b, s)
	})
}

// TestVoteBatchOrder has one user change a vote on one article at every
// ballot of a batch that spans several scripts: each ballot replaces the
// one before it, across the scripts' boundaries.
func TestVoteBatchOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		cycle := []VoteType{Upvote, Downvote, NoVote, Downvote, Upvote}
		var ballots []Ballot
		for i := 0; i < 3*batchStep+2; i++ {
			ballots = append(ballots, Ballot{"bob", a.ID, ballot(cycle[i%len(cycle)])})
			if i%7 == 0 {
				ballots = append(ballots, Ballot{"alice", a.ID, ballot(cycle[i%len(cycle)])})
			}
		}
		results, err := s.VoteBatch(ctx, ballots)
		if err != nil {
			t.Fatal(err)
		}
		last := map[string]VoteType{"alice": Upvote}
		for i, bal := range ballots {
			if r := results[i]; r.Err != nil || r.Previous != last[bal.User] {
				t.Fatalf("ballot %d (%s %v): %+v; want previous %v", i, bal.User, bal.Vote, r, last[bal.User])
			}
			last[bal.User] = held(bal.Vote)
		}
		for user, v := range last {
			if got, err := s.VoteOf(ctx, user, a.ID); err != nil || got != v {
				t.Fatalf("%s's vote after the batch = %v, %v; want %v", user, got, err, v)
			}
		}
		checkInvariant(t, s, DefaultVoteWeight, []string{a.ID}, []string{"alice", "bob"})
	})
}

// TestVoteBatchSizes checks the round trips and the scripts of batches of
// every size up to MaxBatch, without optional orders and with all (fewer
// ballots per script), and that a larger batch is refused unsent.
func TestVoteBatchSizes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, opts := range [][]Option{nil, {WithOrders(extraOrders...)}} {
			s, _ := newStore(t, b, opts...)
			step := s.ballotsPerScript()
			var ids []string
			for i := 0; i < 10; i++ {
				ids = append(ids, mustPost(t, s, "p", "t"+strconv.Itoa(i)).ID)
			}
			loadScripts(t, b.pool)
			var scripts atomic.Int64
			h := &hooks{before: func(cmd string, args []interface{}) error {
				if scriptName(cmd, args) == "vote_batch" {
					scripts.Add(1)
				}
				return nil
			}}
			hook(s, h)
			batch := func(n int) []Ballot {
				list := make([]Ballot, n)
				for i := range list {
					list[i] = Ballot{"u" + strconv.Itoa(i/len(ids)), ids[i%len(ids)], Upvote}
				}
				return list
			}
			for _, n := range []int{0, 1, step, step + 1, 100, MaxBatch} {
				trips, sent := h.trips.Load(), scripts.Load()
				results, err := s.VoteBatch(ctx, batch(n))
				if err != nil || len(results) != n {
					t.Fatalf("VoteBatch of %d = %d results, %v", n, len(results), err)
				}
				for i, r := range results {
					if r.Err != nil || r.Previous != NoVote {
						t.Fatalf("VoteBatch of %d, ballot %d: %+v", n, i, r)
					}
				}
				wantTrips, wantScripts := int64(1), int64((n+step-1)/step)
				if n == 0 {
					wantTrips = 0
				}
				if got := h.trips.Load() - trips; got != wantTrips {
					t.Errorf("VoteBatch of %d: %d round trips, want %d", n, got, wantTrips)
				}
				if got := scripts.Load() - sent; got != wantScripts {
					t.Errorf("VoteBatch of %d: %d scripts, want %d", n, got, wantScripts)
				}
				for i := 0; i < n; i++ { // cancel them, for the next size
					b.do(t, "HDEL", s.keys.votedKey(ids[i%len(ids)]), "u"+strconv.Itoa(i/len(ids)))
				}
			}
			// Ballots refused before Redis cost nothing.
			trips, sent := h.trips.Load(), scripts.Load()
			results, err := s.VoteBatch(ctx, []Ballot{{"", "1", Upvote}, {"u", "1", 3}, {"u", "x", Upvote}})
			if err != nil || !errors.Is(results[0].Err, ErrInvalidArgument) ||
				!errors.Is(results[1].Err, ErrInvalidVote) || !errors.Is(results[2].Err, ErrNotFound) {
				t.Fatalf("VoteBatch of refused ballots = %+v, %v", results, err)
			}
			results, err = s.VoteBatch(ctx, batch(MaxBatch+1))
			if !errors.Is(err, ErrInvalidArgument) || results != nil {
				t.Fatalf("VoteBatch of %d = %v, %v; want ErrInvalidArgument", MaxBatch+1, results, err)
			}
			if got, n := h.trips.Load()-trips, scripts.Load()-sent; got != 0 || n != 0 {
				t.Errorf("refused ballots cost %d round trips and %d scripts", got, n)
			}
		}
	})
}

func TestBallotsPerScript(t *testing.T) {
	for _, c := range []struct {
		orders []Order
		want   int
	}{
		{nil, 25},
		{[]Order{Top}, 12},
		{[]Order{Hot, Best}, 8},
		{[]Order{Top, Hot, Controversial}, 6},
		{extraOrders, 5},
		{[]Order{Top, Top}, 12},
	} {
		s, err := New(&redis.Pool{}, WithOrders(c.orders...))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ballotsPerScript(); got != c.want {
			t.Errorf("ballotsPerScript with orders %v = %d, want %d", c.orders, got, c.want)
		}
	}
}

// TestVoteBatchScriptFlush runs a batch on a server that has lost its
// scripts: VoteBatch sends them whole (EVAL), so it needs no retry.
func TestVoteBatchScriptFlush(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		b.do(t, "SCRIPT", "FLUSH")
		h := &hooks{}
		hook(s, h)
		results, err := s.VoteBatch(ctx, []Ballot{{"bob", a.ID, Downvote}, {"carol", a.ID, Downvote}})
		if err != nil || results[1].Err != nil || results[1].Downvotes != 2 {
			t.Fatalf("VoteBatch after SCRIPT FLUSH = %+v, %v", results, err)
		}
		if n := h.trips.Load(); n != 1 {
			t.Fatalf("VoteBatch after SCRIPT FLUSH: %d round trips, want 1", n)
		}
	})
}

// TestVoteBatchCallErrors fails a batch as a whole, unsent and with a reply
// lost mid-pipeline; the connection goes back to the pool in step.
func TestVoteBatchCallErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		refused, lost := errors.New("refused"), errors.New("lost")
		var mode atomic.Int64
		var chunk atomic.Int64
		hook(s, &hooks{
			before: func(cmd string, args []interface{}) error {
				if mode.Load() == 1 && scriptName(cmd, args) == "vote_batch" {
					return refused
				}
				return nil
			},
			after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
				if mode.Load() == 2 && scriptName(cmd, args) == "vote_batch" && chunk.Add(1) == 2 {
					return nil, lost
				}
				return v, err
			},
		})
		var ballots []Ballot
		for i := 0; i < 3*batchStep; i++ {
			ballots = append(ballots, Ballot{"u" + strconv.Itoa(i), a.ID, Upvote})
		}
		mode.Store(1)
		if results, err := s.VoteBatch(ctx, ballots); !errors.Is(err, refused) || results != nil {
			t.Fatalf("VoteBatch failing to send = %v, %v", results, err)
		}
		mode.Store(2)
		if results, err := s.VoteBatch(ctx, ballots); !errors.Is(err, lost) || results != nil {
			t.Fatalf("VoteBatch with a reply lost = %v, %v", results, err)
		}
		// The batch was applied whole; a retry is safe, on a connection
		// whose replies are in step.
		mode.Store(0)
		results, err := s.VoteBatch(ctx, ballots)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range results {
			if r.Err != nil || r.Previous != Upvote || r.Upvotes != int64(len(ballots)+1) {
				t.Fatalf("retried ballot %d: %+v", i, r)
			}
		}
	})
}

// TestVoteBatchBadKeys gives two ballots an article whose keys hold
// foreign values, a voter record and a TopSince bucket: each gets the
// error Vote gets, changing nothing, and the others of the batch, in
// their script and after it, count.
func TestVoteBatchBadKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Top))
		good := mustPost(t, s, "alice", "good")
		bad := mustPost(t, s, "alice", "bad")
		b.do(t, "HSET", s.keys.votedKey(bad.ID), "mallory", "7")
		clock.Add(time.Hour) // a TopSince bucket of its own, at 600 s
		broken := mustPost(t, s, "alice", "broken")
		bucket := s.keys.topBucket + "600:" + strconv.FormatInt(clock.Now().Unix()/600, 10)
		b.do(t, "DEL", bucket)
		b.do(t, "SET", bucket, "x")
		bad1 := Ballot{"mallory", bad.ID, Upvote}
		bad2 := Ballot{"mallory", broken.ID, Upvote}
		var ballots []Ballot
		step := s.ballotsPerScript()
		for i := 0; i < 2*step+5; i++ {
			ballots = append(ballots, Ballot{"u" + strconv.Itoa(i), good.ID, Upvote})
		}
		ballots[3], ballots[step+3] = bad1, bad2 // in the first script, and in the second
		results, err := s.VoteBatch(ctx, ballots)
		if err != nil {
			t.Fatalf("VoteBatch with bad ballots failed whole: %v", err)
		}
		up := int64(1)
		for i, r := range results {
			if bal := ballots[i]; bal == bad1 || bal == bad2 {
				_, want := s.Vote(ctx, bal.User, bal.ID, ballot(bal.Vote))
				// Redis adds the failing script's hash and line to Vote's
				// error, and miniredis garbles it.
				wantMsg, _, _ := strings.Cut(errString(want), " script: ")
				if r.Err == nil || want == nil || (b.mr == nil && r.Err.Error() != wantMsg) {
					t.Fatalf("ballot %d got %v; Vote gets %v", i, r.Err, want)
				}
				if a, err := s.Article(ctx, bal.ID); err != nil || a.Upvotes != 1 {
					t.Fatalf("article %s after a failed ballot: %+v, %v", bal.ID, a, err)
				}
				continue
			}
			up++
			if r.Err != nil || r.Upvotes != up {
				t.Fatalf("ballot %d: %+v, want %d upvotes", i, r, up)
			}
		}
	})
}

func TestArticlesByID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for i := 0; i < 5; i++ {
			mustPost(t, s, "alice", "t"+strconv.Itoa(i))
		}
		mustVote(t, s, "bob", "2", Downvote)
		if err := s.Delete(ctx, "3"); err != nil {
			t.Fatal(err)
		}
		loadScripts(t, b.pool)
		h := &hooks{}
		hook(s, h)
		byID := func(ids []string, want []string, wantTrips int64) {
			t.Helper()
			trips := h.trips.Load()
			list, err := s.ArticlesByID(ctx, ids)
			if err != nil {
				t.Fatalf("ArticlesByID(%.12q): %v", ids, err)
			}
			if list == nil || len(list) != len(want) {
				t.Fatalf("ArticlesByID(%.12q) = %d articles, want %d", ids, len(list), len(want))
			}
			for i, id := range want {
				a, err := s.Article(ctx, id)
				if err != nil || list[i] != a {
					t.Fatalf("ArticlesByID(%.12q)[%d] = %+v; want %+v (%v)", ids, i, list[i], a, err)
				}
			}
			if got := h.trips.Load() - trips - int64(len(want)); got != wantTrips {
				t.Errorf("ArticlesByID(%.12q): %d round trips, want %d", ids, got, wantTrips)
			}
		}
		byID([]string{"4", "1", "x", "3", "99", "01", "", "1", "5", "2", "4", "9223372036854775808"},
			[]string{"4", "1", "1", "5", "2", "4"}, 1)
		byID(nil, nil, 0)
		byID([]string{"x", "0", "-1"}, nil, 0)
		byID([]string{"3", "6"}, nil, 1)
		var many, want []string
		for i := 0; i < MaxBatch; i++ {
			id := strconv.Itoa(1 + i%6)
			many = append(many, id)
			if id != "3" && id != "6" {
				want = append(want, id)
			}
		}
		byID(many, want, 1)
		trips := h.trips.Load()
		if list, err := s.ArticlesByID(ctx, append(many, "1")); !errors.Is(err, ErrInvalidArgument) || list != nil {
			t.Fatalf("ArticlesByID of %d ids = %d articles, %v; want ErrInvalidArgument", MaxBatch+1, len(list), err)
		}
		if got := h.trips.Load() - trips; got != 0 {
			t.Errorf("ArticlesByID of %d ids: %d round trips, want none", MaxBatch+1, got)
		}
	})
}

// The benchmarks below run on a redis-server of their own
// (testkit/redistest) and skip without one. See BENCHMARKS.md, "Running
// the benchmarks".

// slowlogFrom is the shortest command the batch benchmarks' SLOWLOG
// logs: Redis 7 logs the commands a script calls too.
const slowlogFrom = 200 * time.Microsecond

// ballots returns n ballots of random users (of 10,000) voting up or down
// on random articles of 1 to articles.
func ballots(rng *rand.Rand, n, articles int) []Ballot {
	list := make([]Ballot, n)
	for i := range list {
		list[i] = Ballot{
			User: benchUser(rng.Intn(10000)),
			ID:   strconv.Itoa(1 + rng.Intn(articles)),
			Vote: VoteType(1 - 2*rng.Intn(2)),
		}
	}
	return list
}

// BenchmarkVoteBatch casts 100 votes per op on one connection, as 100
// Votes one at a time and as one VoteBatch, alternating, and reports the
// votes per second of each, their ratio (speedup; the target is 5) and
// the Redis CPU per vote of each. On loopback (rtt=0) a batched vote is
// bound by Redis's CPU and a single one mostly by its round trip's two
// wake-ups, which other load on the machine makes cheaper: run it on a
// quiet machine (BENCHMARKS.md, "Running the benchmarks"). rtt=1ms adds
// a wait to every round trip (a hook sleeps before the first command of
// each; wait-µs/roundtrip reports how long the sleeps took), as a network
// between the consumer and Redis would.
func BenchmarkVoteBatch(b *testing.B) {
	srv := redistest.Start(b)
	setup := srv.Pool()
	defer setup.Close()
	const articles, n = 10000, 100 // few voters per article, however long it runs: voter records are listpacks scanned per vote
	s := fill(b, setup, articles, 0, 0)
	one := srv.Pool()
	one.MaxActive, one.Wait = 1, true
	defer one.Close()
	s.pool = one
	var wait atomic.Bool // the next command starts a round trip
	var rtt, waited time.Duration
	var trips int
	hook(s, &hooks{before: func(string, []interface{}) error {
		if wait.CompareAndSwap(true, false) && rtt > 0 {
			start := time.Now()
			time.Sleep(rtt)
			waited += time.Since(start)
			trips++
		}
		return nil
	}})
	rng := rand.New(rand.NewSource(1)) // one stream: -count must not replay ballots, which would change nothing
	for _, rtt = range []time.Duration{0, time.Millisecond} {
		b.Run("rtt="+rtt.String(), func(b *testing.B) {
			var single, batch time.Duration
			var singleCPU, batchCPU float64
			waited, trips = 0, 0
			for i := 0; i < b.N; i++ {
				list := ballots(rng, n, articles)
				cpu := serverCPU(b, setup)
				start := time.Now()
				for _, bal := range list {
					wait.Store(true)
					if _, err := s.Vote(ctx, bal.User, bal.ID, ballot(bal.Vote)); err != nil {
						b.Fatal(err)
					}
				}
				single += time.Since(start)
				singleCPU += serverCPU(b, setup) - cpu

				list = ballots(rng, n, articles)
				cpu = serverCPU(b, setup)
				start = time.Now()
				wait.Store(true)
				results, err := s.VoteBatch(ctx, list)
				batch += time.Since(start)
				batchCPU += serverCPU(b, setup) - cpu
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range results {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			votes := float64(n * b.N)
			b.ReportMetric(votes/single.Seconds(), "single-votes/s")
			b.ReportMetric(votes/batch.Seconds(), "batch-votes/s")
			b.ReportMetric(single.Seconds()/batch.Seconds(), "speedup")
			b.ReportMetric(singleCPU*1e6/votes, "single-redis-cpu-µs/vote")
			b.ReportMetric(batchCPU*1e6/votes, "batch-redis-cpu-µs/vote")
			if trips > 0 {
				b.ReportMetric(float64(waited.Microseconds())/float64(trips), "wait-µs/roundtrip")
			}
		})
	}
}

// BenchmarkBatchMax runs VoteBatch and ArticlesByID at MaxBatch on 2,000
// articles with every order enabled, in no group, in 10 groups (of 20)
// and in MaxArticleGroups groups (of as many), every group with every
// ordering cached. It reports the Redis CPU per ballot or article, the
// mean time of one script (mean-cmd-µs), the longest command in SLOWLOG
// (max-cmd-µs: wall time, which a busy machine inflates; the target is
// under 10 ms), and, from 20 calls of one script each (ballotsPerScript
// ballots, or MaxBatch ids) timed apart, the most CPU time one script took
// (max-script-cpu-µs).
func BenchmarkBatchMax(b *testing.B) {
	srv := redistest.Start(b)
	pool := srv.Pool()
	defer pool.Close()
	const articles = 2000
	ids := make([]string, MaxBatch)
	for i := range ids {
		ids[i] = strconv.Itoa(1 + i*articles/MaxBatch)
	}
	for _, per := range []int{0, 10, MaxArticleGroups} {
		groups := max(20, per)
		s := fill(b, pool, articles, groups, per, WithOrders(extraOrders...), WithGroupCacheTTL(0))
		rng := rand.New(rand.NewSource(int64(per))) // one stream: -count must not replay ballots
		vote := func(b *testing.B, n int) {
			results, err := s.VoteBatch(ctx, ballots(rng, n, articles))
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range results {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
		read := func(b *testing.B) {
			list, err := s.ArticlesByID(ctx, ids)
			if err != nil || len(list) != MaxBatch {
				b.Fatalf("ArticlesByID = %d articles, %v", len(list), err)
			}
		}
		for _, c := range []struct {
			name, unit, script string
			op, oneScript      func(b *testing.B)
		}{
			{"VoteBatch", "vote", "vote_batch",
				func(b *testing.B) { vote(b, MaxBatch) }, func(b *testing.B) { vote(b, s.ballotsPerScript()) }},
			{"ArticlesByID", "article", "articles", read, read},
		} {
			b.Run(fmt.Sprintf("%s/groups=%d", c.name, per), func(b *testing.B) {
				m := meter(b, pool, slowlogFrom)
				for i := 0; i < b.N; i++ {
					c.op(b)
				}
				b.StopTimer()
				reportServer(b, m, float64(b.N*MaxBatch), c.unit)
				var longest time.Duration
				for i := 0; i < 20; i++ {
					longest = max(longest, scriptCPU(b, pool, s, c.script, func() { c.oneScript(b) }))
				}
				b.ReportMetric(float64(longest.Microseconds()), "max-script-cpu-µs")
			})
		}
	}
}

// reportServer reports, since m's meter: the server's CPU per unit, the
// mean time of a script, and the longest command in SLOWLOG
// (max-cmd-µs).
func reportServer(b *testing.B, m *serverMeter, units float64, unit string) {
	b.Helper()
	cpu, calls, usec := m.used(b)
	slow := longest(slowLog(b, m.pool))
	b.ReportMetric(cpu*1e6/units, "redis-cpu-µs/"+unit)
	if calls > 0 {
		b.ReportMetric(float64(usec)/float64(calls), "mean-cmd-µs")
	}
	b.ReportMetric(float64(slow.took.Microseconds()), "max-cmd-µs")
	if slow.took >= 10*time.Millisecond {
		b.Logf("slowest command %v (%s): over 10 ms", slow.took, slow)
	}
}

// BenchmarkPrune prunes 1,000 articles per op from a store that keeps
// 20,000 newer ones, with every order and unique links, in no group and in
// 10 groups (of 20) each with every ordering cached. It reports the Redis
// CPU per article pruned, the steps per op and their mean time
// (mean-cmd-µs), the longest command in SLOWLOG (max-cmd-µs, wall time),
// and, from one more op with each step timed apart, the most CPU time a
// step took (max-step-cpu-µs).
func BenchmarkPrune(b *testing.B) {
	srv := redistest.Start(b)
	pool := srv.Pool()
	defer pool.Close()
	const kept, per, groups = 20000, 1000, 20
	for _, inGroups := range []int{0, 10} {
		s := fill(b, pool, kept, groups, inGroups, WithOrders(extraOrders...), WithUniqueLinks(), WithGroupCacheTTL(0))
		b.Run(fmt.Sprintf("groups=%d", inGroups), func(b *testing.B) {
			old := epoch.Unix() - 10*kept // well before the kept articles
			var cpu float64
			var calls, usec int64
			var slowest time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				postMany(b, pool, s, per, old, old+per, groups, inGroups)
				m := meter(b, pool, slowlogFrom)
				b.StartTimer()
				n, err := s.Prune(ctx, time.Unix(old+per, 0))
				b.StopTimer()
				c, k, u := m.used(b)
				cpu, calls, usec = cpu+c, calls+k, usec+u
				if err != nil || n != per {
					b.Fatalf("Prune = %d, %v; want %d", n, err, per)
				}
				slow := longest(slowLog(b, pool))
				if slow.took >= 10*time.Millisecond {
					b.Logf("slowest command %v (%s): over 10 ms", slow.took, slow)
				}
				slowest = max(slowest, slow.took)
			}
			postMany(b, pool, s, per, old, old+per, groups, inGroups)
			step := scriptCPU(b, pool, s, "prune", func() {
				if n, err := s.Prune(ctx, time.Unix(old+per, 0)); err != nil || n != per {
					b.Fatalf("Prune = %d, %v; want %d", n, err, per)
				}
			})
			b.ReportMetric(float64(step.Microseconds()), "max-step-cpu-µs")
			articles := float64(b.N * per)
			b.ReportMetric(cpu*1e6/articles, "redis-cpu-µs/article")
			b.ReportMetric(float64(usec)/float64(calls), "mean-cmd-µs")
			b.ReportMetric(float64(calls)/float64(b.N), "steps/op")
			b.ReportMetric(float64(slowest.Microseconds()), "max-cmd-µs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/articles, "ns/article")
		})
	}
}
