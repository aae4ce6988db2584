package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// commentOptions is fullOptions with every comment ordering (ScoreDesc
// among the orders) and a comment interval.
func commentOptions(prefix string) []voting.Option {
	return append(fullOptions(prefix), voting.WithOrders(voting.ScoreDesc), voting.WithCommentInterval(time.Millisecond),
		voting.WithEditWindow(time.Hour))
}

var commentUsers = []string{"alice", "bob", "carol", "dave", "erin"}

// fillComments posts three articles and random comment threads on them:
// comments, votes (the posters' own cancelled and downvoted among them),
// edits and deletes, some of them leaving placeholders. The store's
// clock is *now, which it moves a second a step.
func fillComments(t *testing.T, addr, prefix string, now *time.Time) *voting.Store {
	t.Helper()
	ctx := context.Background()
	st, err := voting.New(pool(addr), append(commentOptions(prefix), voting.WithClock(func() time.Time { return *now }))...)
	if err != nil {
		t.Fatal(err)
	}
	var aids, cids []string
	for i := 0; i < 3; i++ {
		*now = now.Add(time.Second)
		a, err := st.Post(ctx, commentUsers[i], "title "+strconv.Itoa(i), "https://example.com/c"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		aids = append(aids, a.ID)
	}
	of := map[string]string{} // cid -> article
	rng := rand.New(rand.NewSource(29))
	for i := 0; i < 300; i++ {
		*now = now.Add(time.Second)
		user := commentUsers[rng.Intn(len(commentUsers))]
		switch n := rng.Intn(10); {
		case n < 4 || len(cids) == 0:
			aid, parent := aids[rng.Intn(len(aids))], ""
			if len(cids) > 0 && rng.Intn(3) > 0 {
				parent = cids[rng.Intn(len(cids))]
				aid = of[parent]
			}
			c, err := st.Comment(ctx, aid, parent, user, fmt.Sprintf("comment %d\nby %s", i, user))
			if errors.Is(err, voting.ErrNotFound) {
				continue // a parent deleted whole
			}
			if err != nil {
				t.Fatal(err)
			}
			cids = append(cids, c.ID)
			of[c.ID] = aid
		case n < 8:
			v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.NoVote}[rng.Intn(3)]
			if _, err := st.VoteComment(ctx, user, cids[rng.Intn(len(cids))], v); err != nil && !errors.Is(err, voting.ErrNotFound) {
				t.Fatal(err)
			}
		case n < 9:
			cid := cids[rng.Intn(len(cids))]
			cs, err := st.CommentsByID(ctx, []string{cid})
			if err != nil || len(cs) == 0 || cs[0].Deleted {
				continue
			}
			if _, err := st.EditComment(ctx, cid, cs[0].Poster, "edited "+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		default:
			if err := st.DeleteComment(ctx, cids[rng.Intn(len(cids))]); err != nil && !errors.Is(err, voting.ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
	return st
}

// commentOrders are every order of comments.
var threadOrders = []voting.Order{voting.Best, voting.Top, voting.TimeDesc, voting.TimeAsc, voting.Hot, voting.Controversial,
	voting.ScoreDesc}

// sameComments compares what the two stores read of their comments.
func sameComments(t *testing.T, src, dst *voting.Store, aids []string, maxCID int) {
	t.Helper()
	ctx := context.Background()
	read := func(st *voting.Store) string {
		var b strings.Builder
		arts, err := st.ArticlesByID(ctx, aids)
		fmt.Fprintln(&b, arts, err)
		for _, aid := range aids {
			for _, o := range threadOrders {
				th, err := st.Thread(ctx, aid, o, voting.MaxThread)
				fmt.Fprintln(&b, aid, o, th, err)
			}
		}
		for id := 1; id <= maxCID; id++ {
			cid := strconv.Itoa(id)
			cs, err := st.CommentsByID(ctx, []string{cid})
			fmt.Fprintln(&b, cid, cs, err)
			if err != nil {
				continue
			}
			for _, o := range threadOrders {
				r, err := st.Replies(ctx, cid, o, voting.MaxThread)
				fmt.Fprintln(&b, cid, o, r, err)
			}
		}
		var ids []string
		for id := 1; id <= maxCID+1; id++ {
			ids = append(ids, strconv.Itoa(id))
		}
		for _, u := range commentUsers {
			vs, err := st.CommentVotesOf(ctx, u, ids)
			fmt.Fprintln(&b, u, vs, err)
			page, err := st.UserComments(ctx, u, 1)
			fmt.Fprintln(&b, u, page, err)
		}
		return b.String()
	}
	if a, b := read(src), read(dst); a != b {
		t.Errorf("the import reads otherwise:\n%s\n----\n%s", a, b)
	}
}

// Comments go through export and import whole: the threads in every
// order, the comments, the votes, the counts and the pages read the
// same, and votes and comments after the import behave as before.
func TestExportImportComments(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		src := fillComments(t, addr, "csrc", &now)
		out1 := exportImport(t, addr, "csrc", "cdst")
		for _, want := range []string{`"type":"comment"`, `"deleted":true`, `"type":"cvote"`, `"vote":0`, `"vote":-1`,
			`"type":"cvoted"`, `"type":"cseq"`, `"type":"commented"`, `"type":"lastcomment"`, `"orders":["hot","controversial","score"]`} {
			if !strings.Contains(out1, want) {
				t.Errorf("the export lacks %s", want)
			}
		}
		dst, err := voting.New(pool(addr), append(commentOptions("cdst"), voting.WithClock(func() time.Time { return now }))...)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := redis.Int(do("GET", "{csrc}:cseq"))
		if err != nil {
			t.Fatal(err)
		}
		aids := []string{"1", "2", "3"}
		sameComments(t, src, dst, aids, seq)

		// The same calls on both give the same results.
		rng := rand.New(rand.NewSource(7))
		for i := 0; i < 100; i++ {
			now = now.Add(time.Second)
			user := commentUsers[rng.Intn(len(commentUsers))]
			cid := strconv.Itoa(1 + rng.Intn(seq))
			var r1, r2 interface{}
			var err1, err2 error
			switch rng.Intn(3) {
			case 0:
				aid := aids[rng.Intn(3)]
				if rng.Intn(2) == 0 {
					aid = ""
				}
				post := func(st *voting.Store) (interface{}, error) {
					a := aid
					if a == "" {
						cs, err := st.CommentsByID(ctx, []string{cid})
						if err != nil || len(cs) == 0 {
							return nil, err
						}
						a = cs[0].Article
						return st.Comment(ctx, a, cid, user, "after "+strconv.Itoa(i))
					}
					return st.Comment(ctx, a, "", user, "after "+strconv.Itoa(i))
				}
				r1, err1 = post(src)
				r2, err2 = post(dst)
			default:
				v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.NoVote}[rng.Intn(3)]
				r1, err1 = src.VoteComment(ctx, user, cid, v)
				r2, err2 = dst.VoteComment(ctx, user, cid, v)
			}
			if !reflect.DeepEqual(r1, r2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Errorf("call %d: %+v, %v before the export, %+v, %v after the import", i, r1, err1, r2, err2)
			}
		}
		seq, _ = redis.Int(do("GET", "{csrc}:cseq"))
		sameComments(t, src, dst, aids, seq)
		// The comment voter records expire together.
		for _, aid := range aids {
			ttl := func(p string) int64 {
				n, err := redis.Int64(do("PTTL", "{"+p+"}:cvoted:"+aid))
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if a, b := ttl("csrc"), ttl("cdst"); a <= 0 || b <= 0 || a-b > 2000 || b-a > 2000 {
				t.Errorf("voting on the comments of article %s closes in %d ms on the store, in %d ms on its import", aid, a, b)
			}
		}
		// And close at the same time on the store's clock.
		cid := strconv.Itoa(seq)
		if _, err := src.VoteComment(ctx, "zoe", cid, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		now = now.Add(8 * 24 * time.Hour)
		_, err1 := src.VoteComment(ctx, "zoe", cid, voting.Downvote)
		_, err2 := dst.VoteComment(ctx, "zoe", cid, voting.Downvote)
		if !errors.Is(err1, voting.ErrVotingClosed) || !errors.Is(err2, voting.ErrVotingClosed) {
			t.Errorf("a vote past the window: %v before, %v after", err1, err2)
		}
	})
}

// A bad comment line: exit 2 with its number, nothing written.
func TestImportBadComments(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		now := time.Now()
		fillComments(t, addr, "csrc", &now)
		_, export, _ := votectl(t, addr, "", "-prefix", "csrc", "export")
		lines := strings.Split(export, "\n")
		// find returns the first line of type typ with has and without not.
		find := func(typ, has, not string) int {
			for i, l := range lines {
				if strings.HasPrefix(l, `{"type":"`+typ+`"`) && strings.Contains(l, has) && (not == "" || !strings.Contains(l, not)) {
					return i
				}
			}
			t.Fatalf("no line %s with %s", typ, has)
			return 0
		}
		reply := find("comment", `"parent":`, "")
		top := find("comment", `"body":`, `"parent":`)
		cvote := find("cvote", `"vote":`, `"vote":0`)
		for _, tc := range []struct {
			at   int
			repl []string // old, new, ...
			want string
		}{
			{top, []string{`"article":"`, `"article":"9`}, "before (or without) its article line"},
			{reply, []string{`"parent":"`, `"parent":"99`}, "parent"},
			{top, []string{`"body":"`, `"body":"` + strings.Repeat("x", voting.MaxCommentLen)}, "longer than"},
			{top, []string{`"body":`, `"deleted":true,"body":`}, "a body goes with"},
			{top, []string{`"orders":["hot"`, `"orders":["new"`}, "unknown order"},
			{cvote, []string{`"user":"`, `"user":"zz`, `"vote":1`, `"vote":0`, `"vote":-1`, `"vote":0`}, "0 for its poster's own vote"},
			{cvote, []string{`"vote":`, `"vote":2,"x":`}, "unknown field"},
			{top, []string{`"type":"comment","id":"`, `"type":"comment","id":"0`}, "not an id"},
		} {
			bad := append([]string(nil), lines...)
			for i := 0; i < len(tc.repl); i += 2 {
				bad[tc.at] = strings.Replace(bad[tc.at], tc.repl[i], tc.repl[i+1], 1)
			}
			code, out, errs := votectl(t, addr, strings.Join(bad, "\n"), "-prefix", "cdst", "import")
			want := fmt.Sprintf("line %d: ", tc.at+1)
			if code != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%q: exit %d, stderr %q, want 2, %q and %q\n%s", tc.repl, code, errs, want, tc.want, out)
			}
			if n, _ := do("KEYS", "{cdst}:*"); len(n.([]interface{})) != 0 {
				t.Fatalf("a refused import wrote %d keys", len(n.([]interface{})))
			}
		}
	})
}

// An interrupted import of comments is resumed, to the same store.
func TestImportCommentsResume(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		now := time.Now()
		fillComments(t, addr, "csrc", &now)
		_, export, _ := votectl(t, addr, "", "-prefix", "csrc", "export")
		do("SET", "{cdst}:votectl:import", "x")
		var first line
		at := strings.Index(export, `{"type":"comment"`)
		if err := json.Unmarshal([]byte(strings.SplitN(export[at:], "\n", 2)[0]), &first); err != nil {
			t.Fatal(err)
		}
		do("HSET", "{cdst}:comment:"+first.ID, "u", "1")
		if code, _, errs := votectl(t, addr, export, "-prefix", "cdst", "import", "-resume"); code != 0 {
			t.Fatalf("import -resume: %d %q", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "cdst", "export"); again != export {
			t.Errorf("export after a resumed import differs")
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "cdst", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
	})
}

// check finds what breaks the comments' invariants, and -repair sets
// right what it can: the threads read as before.
func TestCheckComments(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st := fillComments(t, addr, "p", &now)
		read := func() string {
			var b strings.Builder
			for _, aid := range []string{"1", "2", "3"} {
				for _, o := range threadOrders {
					th, err := st.Thread(ctx, aid, o, voting.MaxThread)
					fmt.Fprintln(&b, th, err)
				}
			}
			arts, err := st.ArticlesByID(ctx, []string{"1", "2", "3"})
			fmt.Fprintln(&b, arts, err)
			return b.String()
		}
		before := read()
		cs, err := redis.Strings(do("KEYS", "{p}:comment:*"))
		if err != nil || len(cs) < 3 {
			t.Fatal(cs, err)
		}
		c1 := strings.TrimPrefix(cs[0], "{p}:comment:")
		m, _ := redis.String(do("HGET", cs[0], "m"))
		aid := strings.Fields(m)[0]
		for _, c := range [][]interface{}{
			{"HSET", cs[0], "r", "77"},
			{"HSET", cs[1], "pv", "999"},
			{"HSET", cs[2], "u", "50"},
			{"HDEL", "{p}:thread:" + aid, "l"},
			{"HINCRBY", "{p}:comments", aid, "3"},
			{"ZADD", "{p}:kids:top:a" + aid, "1000", member(c1)},
			{"ZADD", "{p}:kids:hot:a" + aid, "1", "z9"},
			{"SET", "{p}:cbody:9999", "stray"},
			{"SET", "{p}:cseq", "1"},
		} {
			if _, err := do(c[0].(string), c[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		code, out, _ := votectl(t, addr, "", "-prefix", "p", "check")
		if code != 1 || !strings.Contains(out, "live replies") || !strings.Contains(out, "field pv") ||
			!strings.Contains(out, "live comments") || !strings.Contains(out, "is no reply") || !strings.Contains(out, "body of no comment") ||
			!strings.Contains(out, "its voters are") || !strings.Contains(out, "cseq") {
			t.Errorf("check: %d\n%s", code, out)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "p", "check", "-repair"); code != 0 {
			t.Fatalf("check -repair: %d\n%s%s", code, out, errs)
		}
		if code, out, _ := votectl(t, addr, "", "-prefix", "p", "check"); code != 0 {
			t.Errorf("check after -repair: %d\n%s", code, out)
		}
		if after := read(); after != before {
			t.Errorf("the threads after -repair:\n%s\nbefore:\n%s", after, before)
		}
	})
}

// Karma counts the votes on comments where they all stand.
func TestCheckCommentKarma(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		st, err := voting.New(pool(addr), commentOptions("k")...)
		if err != nil {
			t.Fatal(err)
		}
		a, err := st.Post(ctx, "alice", "a title", "https://example.com/k")
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.Comment(ctx, a.ID, "", "bob", "a comment")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []voting.Ballot{{User: "carol", ID: c.ID, Vote: voting.Downvote}, {User: "dave", ID: c.ID, Vote: voting.Upvote},
			{User: "bob", ID: c.ID, Vote: voting.NoVote}} {
			if _, err := st.VoteComment(ctx, b.User, b.ID, b.Vote); err != nil {
				t.Fatal(err)
			}
		}
		if code, out, _ := votectl(t, addr, "", "-prefix", "k", "check"); code != 0 || strings.Contains(out, "not checked") {
			t.Errorf("check: %d\n%s", code, out)
		}
		do("ZINCRBY", "{k}:karma", "5", "bob")
		if code, out, _ := votectl(t, addr, "", "-prefix", "k", "check"); code != 1 || !strings.Contains(out, `karma of "bob" is -5, its standing votes make 0`) {
			t.Errorf("check: %d\n%s", code, out)
		}
	})
}
