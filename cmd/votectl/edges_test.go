package main

// edges_test.go: votectl's export, import and check on stores of every
// option, and the edges a review found and the fixes hold: a repair's
// group caches, check against options Reconfigure changed, resumed
// imports, and names the store refuses.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
)

// onRedis runs fn on a redis-server of the test's own.
func onRedis(t *testing.T, fn func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error))) {
	srv := redistest.Start(t)
	fn(t, srv.Addr, srv.Do)
}

// sinkOptions is a store with every option on, the vote log and the
// events among them.
func sinkOptions(prefix string, now *time.Time) []voting.Option {
	return []voting.Option{voting.WithKeyPrefix(prefix), voting.WithClock(func() time.Time { return *now }),
		voting.WithOrders(voting.Top, voting.Hot, voting.Best, voting.Controversial, voting.ScoreDesc),
		voting.WithKarma(1, -1), voting.WithVoteCost(1, 2), voting.WithUserPages(), voting.WithUniqueLinks(),
		voting.WithVoteLimit(100000, time.Hour), voting.WithPostInterval(time.Millisecond), voting.WithRepostAfter(time.Hour),
		voting.WithCommentInterval(time.Millisecond), voting.WithEditWindow(time.Hour),
		voting.WithVoteLog(), voting.WithVoteEvents(1000)}
}

// fillSink fills the store under prefix with articles, groups, votes,
// comments (placeholders among them), shadow votes, a suspension on, a
// reversal and a deleted article.
func fillSink(t *testing.T, addr, prefix string, now *time.Time) *voting.Store {
	t.Helper()
	ctx := context.Background()
	st, err := voting.New(pool(addr, prefix), sinkOptions(prefix, now)...)
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"alice", "bob", "carol", "dave", "erin", "sam"}
	rng := rand.New(rand.NewSource(3))
	var aids, cids []string
	of := map[string]string{}
	for i := 0; i < 8; i++ {
		*now = now.Add(time.Second)
		a, err := st.Post(ctx, users[i%5], fmt.Sprintf("title %d", i), fmt.Sprintf("https://example.com/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		aids = append(aids, a.ID)
	}
	if err := st.AddToGroups(ctx, aids[0], "go", "redis"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddToGroups(ctx, aids[2], "redis"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GroupArticles(ctx, "redis", voting.Hot, 1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		*now = now.Add(time.Second)
		u := users[rng.Intn(len(users))]
		switch n := rng.Intn(12); {
		case n < 3:
			v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}[rng.Intn(3)]
			if _, err := st.Vote(ctx, u, aids[rng.Intn(len(aids))], v); err != nil && !errors.Is(err, voting.ErrNotAllowed) {
				t.Fatal(err)
			}
		case n < 7 || len(cids) == 0:
			aid, parent := aids[rng.Intn(len(aids))], ""
			if len(cids) > 0 && rng.Intn(2) == 0 {
				parent = cids[rng.Intn(len(cids))]
				aid = of[parent]
			}
			c, err := st.Comment(ctx, aid, parent, u, fmt.Sprintf("c %d", i))
			if errors.Is(err, voting.ErrNotFound) || errors.Is(err, voting.ErrNotAllowed) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			cids = append(cids, c.ID)
			of[c.ID] = aid
		case n < 10:
			v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}[rng.Intn(3)]
			if _, err := st.VoteComment(ctx, u, cids[rng.Intn(len(cids))], v); err != nil &&
				!errors.Is(err, voting.ErrNotFound) && !errors.Is(err, voting.ErrNotAllowed) {
				t.Fatal(err)
			}
		default:
			if err := st.DeleteComment(ctx, cids[rng.Intn(len(cids))]); err != nil && !errors.Is(err, voting.ErrNotFound) {
				t.Fatal(err)
			}
		}
		if i == 60 {
			if err := st.Suspend(ctx, "sam", voting.Shadow, now.Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if i == 120 {
			if _, err := st.ReverseVotes(ctx, "erin"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

// TestSinkRoundTrip: a store of every option goes through export |
// import | export the same, and check finds both right.
func TestSinkRoundTrip(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		now := time.Now()
		fillSink(t, addr, "ssrc", &now)
		exp := exportImport(t, addr, "ssrc", "sdst")
		for _, w := range []string{`"shadow":true`, `"deleted":true`, `"type":"uvote"`, `"type":"suspension"`, `"type":"group"`} {
			if !strings.Contains(exp, w) {
				t.Errorf("the export lacks %s", w)
			}
		}
	})
}

// TestRepairMendsGroupCaches: check -repair sets an article's counts
// to its voters' (restore.lua), its orderings and the group caches that
// hold it with them, so the check right after the repair is clean.
func TestRepairMendsGroupCaches(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		fill(t, addr, "p") // article 1 in group redis, whose score cache is built
		if n, _ := do("EXISTS", "{p}:cache:score:redis"); n.(int64) != 1 {
			t.Fatal("no cache of group redis to start with")
		}
		// A voter the record's counts lack (a downvote: no page entry).
		do("HSET", "{p}:voted:1", "eve", "-1")
		code, out, errs := votectl(t, addr, "", "-prefix", "p", "check", "-repair")
		if code != 0 || !strings.Contains(out, "but its voters are") {
			t.Fatalf("check -repair: %d\n%s%s", code, out, errs)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "p", "check"); code != 0 {
			t.Errorf("check after -repair: exit %d, want 0:\n%s%s", code, out, errs)
		}
	})
}

// TestCheckKarmaTurnedOnIsNoted: the store records no time of a change
// of its karma options, so check recomputes karma from every standing
// vote (docs/OPERATIONS.md): with WithKarma turned on by Reconfigure
// after a vote, it reports the karma the later votes alone made as
// wrong, and says beside it that such a store's karma is not to be
// repaired. Telling the two stores apart needs the store to record the
// change (a layout change).
func TestCheckKarmaTurnedOnIsNoted(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		st := changedStore(t, addr, "k", nil, "-karma=1,-1", []voting.Option{voting.WithKarma(1, -1)})
		// bob's switch, after the change, alone moved alice's karma: -2.
		if k, err := st.Karma(context.Background(), "alice"); err != nil || k != -2 {
			t.Fatalf("alice's karma %d, %v; want -2", k, err)
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "k", "check")
		if code != 1 || !strings.Contains(out, `karma of "alice" is -2, its standing votes make -1`) ||
			!strings.Contains(out, "do not -repair it") {
			t.Errorf("check of a store whose karma was turned on after a vote: exit %d, want 1 with the karma noted:\n%s%s", code, out, errs)
		}
	})
}

// changedStore posts an article of alice's that bob upvotes, under
// prefix p with the options before, changes an option with votectl
// options flag, and, with the options after, posts dave's article,
// which erin upvotes, and switches bob's vote to a downvote. It returns
// the store of the options after.
func changedStore(t *testing.T, addr, p string, before []voting.Option, flag string, after []voting.Option) *voting.Store {
	t.Helper()
	ctx := context.Background()
	st, err := voting.New(pool(addr, p), append([]voting.Option{voting.WithKeyPrefix(p)}, before...)...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.Post(ctx, "alice", "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Vote(ctx, "bob", a.ID, voting.Upvote); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := votectl(t, addr, "", "-prefix", p, "options", flag); code != 0 {
		t.Fatalf("options %s: %d %s%s", flag, code, out, errs)
	}
	st, err = voting.New(pool(addr, p), append([]voting.Option{voting.WithKeyPrefix(p)}, after...)...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Post(ctx, "dave", "t2", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Vote(ctx, "erin", b.ID, voting.Upvote); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Vote(ctx, "bob", a.ID, voting.Downvote); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestCheckUserPagesTurnedOff: "WithUserPages ... turned off, the
// pages stay until their articles go" (docs/OPERATIONS.md): check reads
// whether the store keeps pages from the recorded identity, and finds a
// store whose pages were turned off right, before and after -repair.
func TestCheckUserPagesTurnedOff(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		changedStore(t, addr, "off", []voting.Option{voting.WithUserPages()}, "-user-pages=false", nil)
		if code, out, errs := votectl(t, addr, "", "-prefix", "off", "check"); code != 0 {
			t.Errorf("check of a healthy store whose pages were turned off: exit %d, want 0:\n%s%s", code, out, errs)
		}
		votectl(t, addr, "", "-prefix", "off", "check", "-repair")
		if code, out, errs := votectl(t, addr, "", "-prefix", "off", "check"); code != 0 {
			t.Errorf("check after -repair: exit %d, want 0:\n%s%s", code, out, errs)
		}
	})
}

// TestCheckUserPagesTurnedOn: "WithUserPages: pages list the posts
// and upvotes from the change on" (docs/OPERATIONS.md): check counts,
// and does not report, the article posted before the change missing from
// its poster's pages.
func TestCheckUserPagesTurnedOn(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		changedStore(t, addr, "on", nil, "-user-pages", []voting.Option{voting.WithUserPages()})
		if code, out, errs := votectl(t, addr, "", "-prefix", "on", "check"); code != 0 {
			t.Errorf("check of a healthy store whose pages were turned on: exit %d, want 0:\n%s%s", code, out, errs)
		}
		votectl(t, addr, "", "-prefix", "on", "check", "-repair")
		if code, out, errs := votectl(t, addr, "", "-prefix", "on", "check"); code != 0 {
			t.Errorf("check after -repair: exit %d, want 0:\n%s%s", code, out, errs)
		}
	})
}

// stopConn fails, unsent, every script call whose first key is key, as an
// import interrupted before that call leaves the store.
type stopConn struct {
	redis.Conn
	key string
}

func (c stopConn) stops(cmd string, args []interface{}) bool {
	return (cmd == "FCALL" || cmd == "EVALSHA" || cmd == "EVAL") && len(args) > 2 && args[2] == c.key
}

func (c stopConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if c.stops(cmd, args) {
		return nil, errors.New("interrupted")
	}
	return c.Conn.Do(cmd, args...)
}

func (c stopConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	if c.stops(cmd, args) {
		return nil, errors.New("interrupted")
	}
	return c.Conn.(redis.ConnWithContext).DoContext(ctx, cmd, args...)
}

func (c stopConn) ReceiveContext(ctx context.Context) (interface{}, error) {
	return c.Conn.(redis.ConnWithContext).ReceiveContext(ctx)
}

// stoppedEnv is votectl's env for prefix whose connections fail the
// script calls whose first key is key (stopConn).
func stoppedEnv(addr, prefix, key, stdin string) *env {
	node := nodeOf(addr, prefix)
	e := &env{ctx: context.Background(), prefix: prefix, l: newLayout(prefix), stdin: strings.NewReader(stdin),
		stdout: io.Discard, stderr: io.Discard, quiet: true, now: time.Now}
	e.pool = &redis.Pool{Dial: func() (redis.Conn, error) {
		c, err := redis.Dial("tcp", node)
		if err != nil {
			return nil, err
		}
		return stopConn{c, key}, nil
	}}
	return e
}

// TestResumeAfterVotingClosed: an import interrupted between an open
// article's voters and its record, and resumed once its voting closed,
// leaves what a whole import at that time would: the voters' entries set
// their record's expiry (restore_entries.lua), so no voter record without
// its "" field stays.
func TestResumeAfterVotingClosed(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		closes := time.Now().Add(2 * time.Second)
		export := strings.Join([]string{
			`{"type":"options","format":1,"identity":"6"}`,
			`{"type":"seq","seq":"1"}`,
			fmt.Sprintf(`{"type":"article","id":"1","title":"t","link":"","poster":"alice","posted":%d,"up":2,"down":0,"weight":432,"closes":%d,"expires_ms":%d}`,
				closes.Unix()-7*86400, closes.Unix(), closes.UnixMilli()),
			`{"type":"vote","id":"1","user":"alice","vote":1}`,
			`{"type":"vote","id":"1","user":"bob","vote":1}`,
		}, "\n") + "\n"
		// The import stopped at the article's restore.Put, its voters written.
		e := stoppedEnv(addr, "dst", "{dst}:by:score", export)
		if err := cmdImport(e, nil); err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Fatalf("the interrupted import: %v", err)
		}
		time.Sleep(time.Until(closes) + 300*time.Millisecond)
		if code, _, errs := votectl(t, addr, export, "-prefix", "dst", "import", "-resume"); code != 0 {
			t.Fatalf("import -resume: %d %s", code, errs)
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "whole", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		for _, p := range []string{"whole", "dst"} {
			if code, out, errs := votectl(t, addr, "", "-prefix", p, "check"); code != 0 {
				t.Errorf("check of the %s import: exit %d, want 0:\n%s%s", p, code, out, errs)
			}
		}
		if ttl, _ := redis.Int64(do("PTTL", "{dst}:voted:1")); ttl != -2 {
			t.Errorf("{dst}:voted:1 after the resumed import: PTTL %d, want -2 (gone, as the whole import leaves it)", ttl)
		}
	})
}

// TestResumeAddsNoSuspendEvents: README ("votectl"): the target's
// events stream "starts anew (with the import's suspend events only)":
// a resumed import does not suspend again a user the store holds
// suspended the same, so its stream is a whole import's.
func TestResumeAddsNoSuspendEvents(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		opts := func(p string) []voting.Option {
			return []voting.Option{voting.WithKeyPrefix(p), voting.WithVoteLog(), voting.WithVoteEvents(1000)}
		}
		src, a, _ := commentedStore(t, addr, "esrc", opts("esrc")...)
		if err := src.Suspend(ctx, "sam", voting.Shadow, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Vote(ctx, "bob", a.ID, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		_, export, _ := votectl(t, addr, "", "-prefix", "esrc", "export")
		if code, _, errs := votectl(t, addr, export, "-prefix", "whole", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "half", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		do("SET", "{half}:votectl:import", "x") // its last step, the marker's DEL, lost
		if code, _, errs := votectl(t, addr, export, "-prefix", "half", "import", "-resume"); code != 0 {
			t.Fatalf("import -resume: %d %s", code, errs)
		}
		events := func(p string) []voting.VoteEvent {
			st, err := voting.New(pool(addr, p), opts(p)...)
			if err != nil {
				t.Fatal(err)
			}
			evs, _, err := st.VoteEvents(ctx, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}
		whole, resumed := events("whole"), events("half")
		if len(whole) != 1 || len(resumed) != len(whole) {
			t.Errorf("the events of a whole import: %d, of a resumed one: %d; want 1 suspend event each:\n%v\n%v",
				len(whole), len(resumed), whole, resumed)
		}
	})
}

// TestImportBookEmptyVoter: import-book checks the book's names with the
// store's rules before it writes: a voter named "" (which would land on
// the voter record's "" field) is refused, nothing written.
func TestImportBookEmptyVoter(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		now := time.Now().Unix() - 3600
		for _, c := range [][]interface{}{
			{"SET", "article:", "1"},
			{"HSET", "article:1", "title", "t", "link", "https://a", "poster", "user:1", "time", now, "votes", 2},
			{"ZADD", "time:", now, "article:1"},
			{"ZADD", "score:", now + 2*432, "article:1"},
			{"SADD", "voted:1", "user:1", ""},
		} {
			if _, err := do(c[0].(string), c[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		code, _, errs := votectl(t, addr, "", "-prefix", "news", "import-book")
		if code == 0 {
			if code, out, errs2 := votectl(t, addr, "", "-prefix", "news", "check"); code != 0 {
				t.Errorf("import-book took a voter named \"\" (exit 0, %q), and check finds the store wrong: exit %d\n%s%s", errs, code, out, errs2)
			}
		}
	})
}

// TestImportUnprintableSuspendedUser: import checks every name with the
// store's own rules (restore.CheckName) before its first write: a
// suspension line of a name the store refuses is "exit 2, its number,
// nothing written", as the README promises.
func TestImportUnprintableSuspendedUser(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		until := time.Now().Add(time.Hour).UnixMilli()
		export := strings.Join([]string{
			`{"type":"options","format":1,"identity":"6"}`,
			`{"type":"seq","seq":"1"}`,
			`{"type":"article","id":"1","title":"t","link":"","poster":"alice","posted":1700000000,"up":1,"down":0,"weight":432}`,
			fmt.Sprintf(`{"type":"suspension","user":"sam\u0007","mode":"shadow","until_ms":%d}`, until),
		}, "\n") + "\n"
		code, _, errs := votectl(t, addr, export, "-prefix", "dst", "import")
		keys, _ := redis.Strings(do("KEYS", "{dst}:*"))
		if code != 0 && (!strings.Contains(errs, "line 4") || len(keys) != 0) {
			t.Errorf("import of a suspension of an unprintable name: exit %d, stderr %q, %d keys written %v; want line 4 named and nothing written",
				code, errs, len(keys), keys)
		}
		if code == 0 {
			t.Logf("imported: %v", keys)
		}
	})
}

// TestExpireAtOfAGoneKey: export reads a key's expiry after its value,
// and a key gone in between (expired meanwhile) reads as expired long
// ago, so its line is one import leaves out or takes as closed, never
// one of a key that does not expire; a key without expiry reads 0.
func TestExpireAtOfAGoneKey(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		e, _ := recordingEnv(addr, "x", &bytes.Buffer{})
		if _, err := do("SET", "{x}:kept", "1"); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]int64{"{x}:gone": goneMs, "{x}:kept": 0} {
			if got, err := e.expireAt(key); err != nil || got != want {
				t.Errorf("expireAt(%s) = %d, %v; want %d", key, got, err, want)
			}
		}
	})
}

// TestExportSuspensionToTheSecond: export keeps a suspension that ends
// within the current second, which Store.Suspended and a vote, whose
// clock is whole seconds, still find on.
func TestExportSuspensionToTheSecond(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Unix(1900000000, 0)
		st, _, _ := commentedStore(t, addr, "sec", voting.WithKeyPrefix("sec"), voting.WithClock(func() time.Time { return now }))
		if err := st.Suspend(ctx, "sam", voting.Shadow, now.Add(500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(700 * time.Millisecond) // past its end, in the same second
		if mode, _, err := st.Suspended(ctx, "sam"); err != nil || mode != voting.Shadow {
			t.Fatalf("Suspended: %v, %v; want on", mode, err)
		}
		var out bytes.Buffer
		e, _ := recordingEnv(addr, "sec", &out)
		e.now = func() time.Time { return now }
		if err := cmdExport(e, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"type":"suspension","user":"sam"`) {
			t.Errorf("export lacks sam's suspension:\n%s", out.String())
		}
	})
}

// TestLogsMovingRefused: check and export refuse a store that still
// holds vote logs of layout 6 (a Reconfigure's move not finished), whose
// votes are half in the journals, and name the way out.
func TestLogsMovingRefused(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		commentedStore(t, addr, "lmv", voting.WithKeyPrefix("lmv"), voting.WithVoteLog())
		if _, err := do("ZADD", "{lmv}:uvotes:bob", 3800000001, "a1"); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"check", "export"} {
			code, _, errs := votectl(t, addr, "", "-prefix", "lmv", cmd)
			if code != 2 || !strings.Contains(errs, "vote logs of the store are still moving from layout 6") {
				t.Errorf("%s: %d %q; want 2 and the move named", cmd, code, errs)
			}
		}
	})
}
