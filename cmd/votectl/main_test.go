package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
)

func TestMain(m *testing.M) {
	os.Exit(redistest.Main(m, nil))
}

// backends runs fn on miniredis, on a redis-server of the test's own, and
// on the test binary's Redis Cluster (redistest.SharedCluster), where
// each store is on the node of its prefix's slot: votectl and pool reach
// it there (clusterAddr), and do sends a command to the node of its
// first argument.
func backends(t *testing.T, fn func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error))) {
	t.Run("miniredis", func(t *testing.T) {
		mr := miniredis.RunT(t)
		// miniredis keeps TTLs as durations from its clock: a fixed clock
		// makes PEXPIRETIME exact, as on Redis.
		mr.SetTime(time.Now())
		fn(t, mr.Addr(), dialDo(t, mr.Addr()))
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		fn(t, srv.Addr, srv.Do)
	})
	t.Run("cluster", func(t *testing.T) {
		c, owners := redistest.SharedCluster(t)
		// The tests share the cluster, and their prefixes: each starts on
		// an empty one.
		for _, n := range c.Nodes {
			if _, err := n.Do("FLUSHALL"); err != nil {
				t.Fatal(err)
			}
		}
		node := func(key string) string { return owners[redistest.Slot(key)].Addr }
		clusterMu.Lock()
		clusterNodes = node
		clusterMu.Unlock()
		fn(t, clusterAddr, func(cmd string, args ...interface{}) (interface{}, error) {
			key := "{" + voting.DefaultKeyPrefix + "}:" // commands of no key: the default store's node
			if len(args) > 0 && cmd != "FUNCTION" {
				if s, ok := args[0].(string); ok {
					key = s
				}
			}
			if cmd == "FLUSHALL" {
				for _, n := range c.Nodes {
					if _, err := n.Do(cmd, args...); err != nil {
						return nil, err
					}
				}
				return "OK", nil
			}
			return dialDo(t, node(key))(cmd, args...)
		})
	})
}

// clusterAddr stands for the cluster in the tests' addr: votectl and
// pool take the node of the prefix they are given.
const clusterAddr = "cluster"

var (
	clusterMu    sync.Mutex
	clusterNodes func(key string) string // the address of the node of key's slot
)

// nodeOf is addr, or on the cluster, the address of the node of the
// store under prefix.
func nodeOf(addr, prefix string) string {
	if addr != clusterAddr {
		return addr
	}
	clusterMu.Lock()
	defer clusterMu.Unlock()
	return clusterNodes("{" + prefix + "}:")
}

func dialDo(t *testing.T, addr string) func(string, ...interface{}) (interface{}, error) {
	return func(cmd string, args ...interface{}) (interface{}, error) {
		c, err := redis.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return c.Do(cmd, args...)
	}
}

// pool reaches the store under prefix.
func pool(addr, prefix string) *redis.Pool {
	addr = nodeOf(addr, prefix)
	return &redis.Pool{MaxIdle: 4, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", addr) }}
}

// votectl runs the command and returns its exit status, stdout and stderr.
func votectl(t *testing.T, addr, stdin string, args ...string) (int, string, string) {
	t.Helper()
	prefix := voting.DefaultKeyPrefix
	for i, a := range args {
		if a == "-prefix" && i+1 < len(args) {
			prefix = args[i+1]
		}
	}
	addr = nodeOf(addr, prefix)
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"-redis", addr, "-quiet"}, args...), strings.NewReader(stdin), &out, &errb, false)
	return code, out.String(), errb.String()
}

// commentedStore opens the store under prefix (opts name it) and posts
// an article of alice's with a comment of bob's on it.
func commentedStore(t *testing.T, addr, prefix string, opts ...voting.Option) (*voting.Store, voting.Article, voting.Comment) {
	t.Helper()
	ctx := context.Background()
	st, err := voting.New(pool(addr, prefix), opts...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.Post(ctx, "alice", "a", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Comment(ctx, a.ID, "", "bob", "hi")
	if err != nil {
		t.Fatal(err)
	}
	return st, a, c
}

// fullOptions is a store with every option on.
func fullOptions(prefix string) []voting.Option {
	return []voting.Option{voting.WithKeyPrefix(prefix), voting.WithOrders(voting.Top, voting.Hot, voting.Best, voting.Controversial),
		voting.WithKarma(1, -1), voting.WithVoteCost(1, 2), voting.WithUserPages(), voting.WithUniqueLinks(),
		voting.WithVoteLimit(100, time.Hour), voting.WithPostInterval(time.Millisecond), voting.WithRepostAfter(time.Hour)}
}

// fill posts, votes and groups a store with every option on; two
// articles are closed (posted over a week ago).
func fill(t *testing.T, addr, prefix string) *voting.Store {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	st, err := voting.New(pool(addr, prefix), append(fullOptions(prefix), voting.WithClock(func() time.Time { return clock() }))...)
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"alice", "bob", "carol", "dave"}
	var ids []string
	for i := 0; i < 12; i++ {
		now = now.Add(time.Second)
		a, err := st.Post(ctx, users[i%4], "title "+strings.Repeat("x", i), "https://example.com/"+string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	for i, id := range ids {
		for j, u := range users {
			v := voting.Upvote
			if (i+j)%3 == 0 {
				v = voting.Downvote
			}
			if (i+j)%5 == 0 {
				continue
			}
			if _, err := st.Vote(ctx, u, id, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.AddToGroups(ctx, ids[0], "redis", "go"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddToGroups(ctx, ids[3], "redis"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GroupArticles(ctx, "redis", voting.ScoreDesc, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, ids[5]); err != nil {
		t.Fatal(err)
	}
	return st
}

// exportImport exports the store under src, imports it under dst, and
// checks that dst exports the same lines and that check finds both
// right; it returns the export.
func exportImport(t *testing.T, addr, src, dst string) string {
	t.Helper()
	code, out1, errs := votectl(t, addr, "", "-prefix", src, "export")
	if code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	if code, _, errs := votectl(t, addr, out1, "-prefix", dst, "import"); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	code, out2, errs := votectl(t, addr, "", "-prefix", dst, "export")
	if code != 0 {
		t.Fatalf("export 2: %d %s", code, errs)
	}
	if out1 != out2 {
		t.Errorf("second export differs:\n%s\n----\n%s", out1, out2)
	}
	for _, p := range []string{src, dst} {
		if code, out, errs := votectl(t, addr, "", "-prefix", p, "check"); code != 0 {
			t.Errorf("check %s: %d\n%s%s", p, code, out, errs)
		}
	}
	return out1
}

func TestExportImportRoundTrip(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		fill(t, addr, "src")
		out1 := exportImport(t, addr, "src", "dst")
		if code, _, errs := votectl(t, addr, out1, "-prefix", "dst", "import"); code != 2 || !strings.Contains(errs, "not empty") {
			t.Errorf("import into a non-empty store: %d %s", code, errs)
		}
		// Votes after the import behave as before the export: the same
		// votes on both stores give the same results, and voting closes
		// when it did (the voter records expire together).
		ctx := context.Background()
		stores := map[string]*voting.Store{}
		for _, p := range []string{"src", "dst"} {
			st, err := voting.New(pool(addr, p), fullOptions(p)...)
			if err != nil {
				t.Fatal(err)
			}
			stores[p] = st
		}
		for _, b := range []voting.Ballot{{User: "erin", ID: "1", Vote: voting.Upvote}, {User: "bob", ID: "1", Vote: voting.Downvote},
			{User: "alice", ID: "2", Vote: voting.CancelVote}, {User: "erin", ID: "6", Vote: voting.Upvote}} {
			r1, err1 := stores["src"].Vote(ctx, b.User, b.ID, b.Vote)
			r2, err2 := stores["dst"].Vote(ctx, b.User, b.ID, b.Vote)
			if r1 != r2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Errorf("%+v: %+v, %v before the export, %+v, %v after the import", b, r1, err1, r2, err2)
			}
		}
		ttl := func(p string) int64 {
			n, err := redis.Int64(do("PTTL", "{"+p+"}:voted:1"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if a, b := ttl("src"), ttl("dst"); a <= 0 || b <= 0 || a-b > 2000 || b-a > 2000 {
			t.Errorf("voting on article 1 closes in %d ms on the store, in %d ms on its import", a, b)
		}
	})
}

// TestExportImportPagesEqual: after export | import into a fresh prefix,
// and export again, the lines are identical and every page of every
// order, of a group, and every thread in every order reads byte for byte
// as the source's: the import writes through the store's own scripts
// (restore.Put, restore.PutComments), whose values are the store's
// formulas, to the last bit.
func TestExportImportPagesEqual(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now().Add(-time.Hour)
		opts := func(p string) []voting.Option {
			return []voting.Option{voting.WithKeyPrefix(p), voting.WithClock(func() time.Time { return now }),
				voting.WithOrders(voting.Top, voting.Hot, voting.Best, voting.Controversial, voting.ScoreDesc)}
		}
		src, err := voting.New(pool(addr, "psrc"), opts("psrc")...)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(7))
		// voteSome casts fewer than most random votes, up or down, of
		// the users v0 to v29 on items of ids, by vote.
		voteSome := func(most int, ids []string, vote func(ctx context.Context, user, id string, v voting.VoteType) (voting.VoteResult, error)) {
			for j := rng.Intn(most); j > 0; j-- {
				v := voting.Upvote
				if rng.Intn(2) == 0 {
					v = voting.Downvote
				}
				if _, err := vote(ctx, fmt.Sprintf("v%d", rng.Intn(30)), ids[rng.Intn(len(ids))], v); err != nil {
					t.Fatal(err)
				}
			}
		}
		var ids []string
		for i := 0; i < 120; i++ {
			now = now.Add(time.Duration(rng.Intn(5000)) * time.Millisecond)
			a, err := src.Post(ctx, fmt.Sprintf("u%d", rng.Intn(20)), fmt.Sprintf("t%d", i), "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
			voteSome(8, ids, src.Vote)
			if i%3 == 0 {
				if err := src.AddToGroups(ctx, a.ID, "g"); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Comments on the first articles, replies among them, and votes.
		var cids []string
		for i := 0; i < 150; i++ {
			parent := ""
			if len(cids) > 0 && rng.Intn(2) == 0 {
				parent = cids[rng.Intn(len(cids))]
			}
			aid := ids[rng.Intn(5)]
			if parent != "" {
				cs, err := src.CommentsByID(ctx, []string{parent})
				if err != nil || len(cs) != 1 {
					t.Fatal(cs, err)
				}
				aid = cs[0].Article
			}
			c, err := src.Comment(ctx, aid, parent, fmt.Sprintf("u%d", rng.Intn(20)), fmt.Sprintf("body %d", i))
			if err != nil {
				t.Fatal(err)
			}
			cids = append(cids, c.ID)
			voteSome(6, cids, src.VoteComment)
		}
		_, export, errs := votectl(t, addr, "", "-prefix", "psrc", "export")
		if code, _, errs := votectl(t, addr, export, "-prefix", "pdst", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "pdst", "export"); again != export {
			t.Errorf("export | import | export differs%s", errs)
		}
		dst, err := voting.New(pool(addr, "pdst"), opts("pdst")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []voting.Order{voting.ScoreDesc, voting.ScoreAsc, voting.TimeDesc, voting.TimeAsc,
			voting.Top, voting.Hot, voting.Best, voting.Controversial} {
			for page := 1; page <= 6; page++ {
				a, err1 := src.Articles(ctx, o, page)
				b, err2 := dst.Articles(ctx, o, page)
				if fmt.Sprint(a, err1) != fmt.Sprint(b, err2) {
					t.Errorf("%v page %d differs after the import:\n%v %v\n%v %v", o, page, a, err1, b, err2)
				}
				a, err1 = src.GroupArticles(ctx, "g", o, page)
				b, err2 = dst.GroupArticles(ctx, "g", o, page)
				if fmt.Sprint(a, err1) != fmt.Sprint(b, err2) {
					t.Errorf("group %v page %d differs after the import", o, page)
				}
			}
		}
		for _, aid := range ids[:5] {
			for _, o := range []voting.Order{voting.Best, voting.Top, voting.Hot, voting.Controversial, voting.ScoreDesc,
				voting.TimeDesc, voting.TimeAsc} {
				a, err1 := src.Thread(ctx, aid, o, voting.MaxThread)
				b, err2 := dst.Thread(ctx, aid, o, voting.MaxThread)
				if fmt.Sprint(a, err1) != fmt.Sprint(b, err2) {
					t.Errorf("the thread of %s in %v differs after the import", aid, o)
				}
			}
			for _, k := range []string{"kids:a", "kids:hot:a", "kids:controversial:a", "kids:score:a"} {
				a, _ := redis.Strings(do("ZRANGE", "{psrc}:"+k+aid, 0, -1, "WITHSCORES"))
				b, _ := redis.Strings(do("ZRANGE", "{pdst}:"+k+aid, 0, -1, "WITHSCORES"))
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("%s%s differs from the source's, to the bit", k, aid)
				}
			}
		}
		for _, p := range []string{"psrc", "pdst"} {
			for _, o := range []string{"hot", "best", "controversial", "score"} {
				a, _ := redis.Strings(do("ZRANGE", "{psrc}:by:"+o, 0, -1, "WITHSCORES"))
				b, _ := redis.Strings(do("ZRANGE", "{"+p+"}:by:"+o, 0, -1, "WITHSCORES"))
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("%s's %s ordering differs from the source's, to the bit", p, o)
				}
			}
		}
	})
}
