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
	ilayout "github.com/votekit/voting/internal/layout"
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
	st, err := voting.New(pool(addr, prefix), append(commentOptions(prefix), voting.WithClock(func() time.Time { return *now }))...)
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
			v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}[rng.Intn(3)]
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

// commentsExport fills the store under prefix with comments
// (fillComments) and returns its export.
func commentsExport(t *testing.T, addr, prefix string) string {
	t.Helper()
	now := time.Now()
	fillComments(t, addr, prefix, &now)
	_, export, _ := votectl(t, addr, "", "-prefix", prefix, "export")
	return export
}

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
		dst, err := voting.New(pool(addr, "cdst"), append(commentOptions("cdst"), voting.WithClock(func() time.Time { return now }))...)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := redis.Int(do("GET", "{csrc}:cseq"))
		if err != nil {
			t.Fatal(err)
		}
		aids := []string{"1", "2", "3"}
		sameComments(t, src, dst, aids, seq)
		// The records the import writes are the library's, byte for byte.
		for id := 1; id <= seq; id++ {
			a, err1 := redis.String(do("GET", "{csrc}:comment:"+strconv.Itoa(id)))
			b, err2 := redis.String(do("GET", "{cdst}:comment:"+strconv.Itoa(id)))
			if a != b || err1 != err2 {
				t.Errorf("comment %d: the library wrote %q (%v), the import %q (%v)", id, a, err1, b, err2)
			}
		}

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
				v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}[rng.Intn(3)]
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
		export := commentsExport(t, addr, "csrc")
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
			{find("comment", `"weight":`, `"deleted"`), []string{`"body":`,
				`"weight":5e-324,"poster":"` + strings.Repeat("x", voting.MaxNameLen) + `","body":`}, "more than the store reads"},
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
		export := commentsExport(t, addr, "csrc")
		do("SET", "{cdst}:votectl:import", "x")
		var first line
		at := strings.Index(export, `{"type":"comment"`)
		if err := json.Unmarshal([]byte(strings.SplitN(export[at:], "\n", 2)[0]), &first); err != nil {
			t.Fatal(err)
		}
		do("SET", "{cdst}:comment:"+first.ID, "0000000001 partial")
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
// right what it can: the threads read as before. A store the library
// wrote passes with no problem.
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
		if code, out, errs := votectl(t, addr, "", "-prefix", "p", "check"); code != 0 || !strings.HasSuffix(out, ": ok\n") {
			t.Fatalf("check of the library's store: %d\n%s%s", code, out, errs)
		}
		// Three live comments: their records, and the kids key of the first.
		// And a placeholder.
		var cids []string
		var recs []crecord
		placeholder := ""
		for id := 1; len(cids) < 3 || placeholder == ""; id++ {
			s, err := redis.String(do("GET", "{p}:comment:"+strconv.Itoa(id)))
			if err == redis.ErrNil {
				continue
			}
			c, perr := ilayout.ParseCommentRecord(s)
			if err != nil || perr != nil {
				t.Fatal(err, perr)
			}
			if c.Deleted {
				placeholder = strconv.Itoa(id)
			} else if len(cids) < 3 {
				cids, recs = append(cids, strconv.Itoa(id)), append(recs, c)
			}
		}
		key := func(id string) string { return "{p}:comment:" + id }
		aid, kids := recs[0].Article, "{p}:kids:"+parentName(recs[0])
		for _, c := range [][]interface{}{
			{"SETRANGE", key(cids[0]), ilayout.CReplies, "0000000077"},
			{"SETRANGE", key(cids[1]), ilayout.CPrev, "0000000999"},
			{"SETRANGE", key(cids[2]), ilayout.CUp, "0000000050"},
			{"HDEL", "{p}:thread:" + aid, "l"},
			{"HINCRBY", "{p}:comments", aid, "3"},
			{"ZREM", kids, topMember(cids[0])},
			{"ZADD", "{p}:kids:" + parentName(recs[1]), "0.5", member(cids[1])},
			{"ZADD", "{p}:kids:hot:a" + aid, "1", "z9"},
			{"SET", "{p}:cbody:9999", "stray"},
			{"ZADD", "{p}:kids:best:a" + aid, "1", member(cids[0])},
			{"SET", "{p}:cseq", "1"},
			{"APPEND", key(placeholder), "a body"},
		} {
			if _, err := do(c[0].(string), c[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		code, out, _ := votectl(t, addr, "", "-prefix", "p", "check")
		for _, want := range []string{"comment " + cids[0] + ": 77 live replies", "comment " + cids[1] + ": link prev is \"999\"",
			"comment " + cids[2] + ": counts 50 up", "{p}:thread:" + aid + ": newest", "live comments",
			kids + ": comment " + cids[0] + " missing from top", "{p}:kids:" + parentName(recs[1]) + ": comment " + cids[1] + " at 0.5 in best",
			"is no reply", "{p}:cbody:9999: a body of layout 4", "{p}:kids:best:a" + aid + ": no key of layout " + thisLayout, "{p}:cseq",
			"comment " + placeholder + ": deleted, with a body"} {
			if !strings.Contains(out, want) {
				t.Errorf("check lacks %q", want)
			}
		}
		if code != 1 || strings.Contains(out, "not repairable") {
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
		// A record that is no record of this layout: a hash of layout 4.
		do("DEL", key(cids[2]))
		do("HSET", key(cids[2]), "u", "1")
		if code, out, _ := votectl(t, addr, "", "-prefix", "p", "check"); code != 1 ||
			!strings.Contains(out, "comment "+cids[2]+": not a record of layout "+thisLayout) {
			t.Errorf("check of a hash: %d\n%s", code, out)
		}
	})
}

// Every record the library writes, a placeholder's among them, reads
// and writes back byte for byte (ilayout.CommentRecord.String is commentRecord).
func TestCommentRecordBytes(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		now := time.Now()
		fillComments(t, addr, "b", &now)
		keys, err := redis.Strings(do("KEYS", "{b}:comment:*"))
		if err != nil || len(keys) < 50 {
			t.Fatal(len(keys), err)
		}
		var deleted, weighted int
		for _, k := range keys {
			s, err := redis.String(do("GET", k))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ilayout.ParseCommentRecord(s)
			if err != nil {
				t.Fatalf("%s: %v: %q", k, err, s)
			}
			if got := c.String(); got != s {
				t.Errorf("%s: the library wrote\n%q, votectl writes\n%q", k, s, got)
			}
			if c.Deleted {
				deleted++
				if c.Body != "" || c.Poster == "" {
					t.Errorf("%s: a placeholder with body %q and poster %q", k, c.Body, c.Poster)
				}
			}
			if c.Weight != "" {
				weighted++
			}
		}
		if deleted == 0 || weighted == 0 {
			t.Errorf("%d placeholders, %d with a weight: the test covers too little", deleted, weighted)
		}
	})
}

// A store of layout 4, or one whose comments Reconfigure is moving, is
// refused by the commands that read comments, with what to do; once
// Reconfigure has run, they read it.
func TestCommentsOfLayout4Refused(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		now := time.Now()
		st := fillComments(t, addr, "m", &now)
		id, err := redis.String(do("GET", "{m}:store"))
		if err != nil {
			t.Fatal(err)
		}
		refused := func(when, want string) {
			t.Helper()
			for _, cmd := range []string{"check", "export"} {
				code, out, errs := votectl(t, addr, "", "-prefix", "m", cmd)
				if code != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, "votectl options") || out != "" {
					t.Errorf("%s %s: exit %d, stderr %q, want 2 and %q\n%s", when, cmd, code, errs, want, out)
				}
			}
			if code, out, errs := votectl(t, addr, "", "-prefix", "m", "info"); code == 2 || !strings.Contains(out, "WARNING: ") || !strings.Contains(out, want) {
				t.Errorf("%s info: exit %d\n%s%s", when, code, out, errs)
			}
		}
		do("SET", "{m}:store", "4"+id[1:])
		refused("recorded as layout 4", "the store records layout 4")
		do("SET", "{m}:store", id)
		do("SET", "{m}:cmoving", "0")
		refused("moving", "still moving from layout 4 to "+thisLayout)
		// Reconfigure moves what is left, here nothing.
		if _, err := st.Reconfigure(context.Background()); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "m", "check"); code != 0 {
			t.Errorf("check after Reconfigure: %d\n%s%s", code, out, errs)
		}
	})
}

// Karma counts the votes on comments where they all stand.
func TestCheckCommentKarma(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		st, _, c := commentedStore(t, addr, "k", commentOptions("k")...)
		for _, b := range []voting.Ballot{{User: "carol", ID: c.ID, Vote: voting.Downvote}, {User: "dave", ID: c.ID, Vote: voting.Upvote},
			{User: "bob", ID: c.ID, Vote: voting.CancelVote}} {
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

// An export of a store of layout 4 (its comment lines are the same; its
// identity carried the rules' numbers, and it had no rules line) imports
// into a store of this layout, which records its own layout.
func TestImportExportOfLayout4(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		export := commentsExport(t, addr, "e4")
		first, rest, _ := strings.Cut(export, "\n")
		var options map[string]interface{}
		if err := json.Unmarshal([]byte(first), &options); err != nil {
			t.Fatal(err)
		}
		id, _ := options["identity"].(string)
		rules, _ := options["rules"].(string)
		if !strings.HasPrefix(id, thisLayout+" ") || rules == "" {
			t.Fatalf("the export records identity %q and rules %q, want those of layout %s", id, rules, thisLayout)
		}
		options["identity"] = "4 " + strings.Join(withRules(identityOf(id), rules).Options, " ")
		delete(options, "rules")
		line, _ := json.Marshal(options)
		old := string(line) + "\n" + rest
		if code, _, errs := votectl(t, addr, old, "-prefix", "e5", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if id, err := redis.String(do("GET", "{e5}:store")); err != nil || !strings.HasPrefix(id, thisLayout+" ") {
			t.Errorf("the import records %q, %v", id, err)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "e5", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "e5", "export"); again != export {
			t.Errorf("the import exports otherwise")
		}
	})
}

// cutConn fails, unsent, each step of a DeleteComment that goes on with
// a removal left (comment_delete's first key the set of removals), as a
// DeleteComment interrupted between its steps leaves it.
type cutConn struct{ redis.Conn }

func (c cutConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if (cmd == "FCALL" || cmd == "EVALSHA") && len(args) > 2 && args[2] == "{p}:cremoving" {
		return nil, errors.New("cut")
	}
	return c.Conn.Do(cmd, args...)
}

// A DeleteComment cut between its steps leaves the top of a chain of
// deleted comments without replies: check notes it, and finds no
// problem; the next DeleteComment finishes the removal.
func TestCheckCutCommentRemoval(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		opts := append(commentOptions("p"), voting.WithClock(func() time.Time { return now }))
		st, err := voting.New(pool(addr, "p"), opts...)
		if err != nil {
			t.Fatal(err)
		}
		node := nodeOf(addr, "p")
		cut, err := voting.New(&redis.Pool{Dial: func() (redis.Conn, error) {
			c, err := redis.Dial("tcp", node)
			if err != nil {
				return nil, err
			}
			return cutConn{c}, nil
		}}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		a, err := st.Post(ctx, "alice", "deep", "https://example.com/deep")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		parent := ""
		for i := 0; i < 150; i++ {
			now = now.Add(time.Second)
			c, err := st.Comment(ctx, a.ID, parent, commentUsers[i%len(commentUsers)], "deeper")
			if err != nil {
				t.Fatal(err)
			}
			parent = c.ID
			ids = append(ids, c.ID)
		}
		for _, id := range ids[:len(ids)-1] {
			if err := st.DeleteComment(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := cut.DeleteComment(ctx, ids[len(ids)-1]); err == nil || !strings.Contains(err.Error(), "cut") {
			t.Fatalf("a DeleteComment cut between its steps: %v", err)
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "p", "check")
		if code != 0 || !strings.Contains(out, "comments: 1 removals of deleted comments left") {
			t.Fatalf("check of a cut DeleteComment: %d\n%s%s", code, out, errs)
		}
		// The upper part of the chain is left, its deepest a deleted
		// comment without replies.
		list, err := st.CommentsByID(ctx, ids)
		if err != nil || len(list) == 0 || len(list) >= len(ids) || !list[len(list)-1].Deleted || list[len(list)-1].Replies != 0 {
			t.Fatalf("the comments left: %d, %v", len(list), err)
		}
		// An export imports the removal left: the next DeleteComment
		// there finishes it too.
		_, export, _ := votectl(t, addr, "", "-prefix", "p", "export")
		if code, _, errs := votectl(t, addr, export, "-prefix", "q", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "q", "check"); code != 0 || !strings.Contains(out, "comments: 1 removals") {
			t.Fatalf("check of the import: %d\n%s%s", code, out, errs)
		}
		imported, err := voting.New(pool(addr, "q"), append(commentOptions("q"), voting.WithClock(func() time.Time { return now }))...)
		if err != nil {
			t.Fatal(err)
		}
		if err := imported.DeleteComment(ctx, ids[0]); err != nil {
			t.Fatal(err)
		}
		if list, err := imported.CommentsByID(ctx, ids); err != nil || len(list) != 0 {
			t.Fatalf("the imported comments left after the next DeleteComment: %d, %v", len(list), err)
		}
		if err := st.DeleteComment(ctx, ids[0]); err != nil { // a placeholder: changes nothing, but goes on
			t.Fatal(err)
		}
		if list, err := st.CommentsByID(ctx, ids); err != nil || len(list) != 0 {
			t.Fatalf("the comments left after the next DeleteComment: %d, %v", len(list), err)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "p", "check")
		if code != 0 || strings.Contains(out, "removals") {
			t.Fatalf("check after the next DeleteComment: %d\n%s%s", code, out, errs)
		}
	})
}
