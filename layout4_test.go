package voting

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// TestReconfigureLayout4: a store of layout 4 with comments, made by
// rewriting a store of this layout as layout 4 kept it (downgrade),
// refuses this library's calls; Reconfigure moves its comments, in
// steps, back to exactly the store it was. Between its steps the calls
// about comments refuse with ErrIncompatible, a vote on a comment moved
// already counts, and the articles' calls work.
func TestReconfigureLayout4(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Hot), WithUserPages(), WithEditWindow(time.Hour))
		rng := rand.New(rand.NewSource(4))
		a := mustPost(t, s, "alice", "t")
		other := mustPost(t, s, "alice", "u")
		// More comments than one step moves (moveStep), with gaps of
		// removed ones, placeholders, edits and votes.
		var ids []string
		for i := 0; i < moveStep+moveStep/2; i++ {
			parent := ""
			if len(ids) > 0 && rng.Intn(3) > 0 {
				parent = ids[rng.Intn(len(ids))]
			}
			ids = append(ids, mustComment(t, s, a.ID, parent, "user"+strconv.Itoa(i%7), "body "+strconv.Itoa(i)).ID)
		}
		for i := 0; i < 300; i++ {
			v := []VoteType{Upvote, Downvote, NoVote}[rng.Intn(3)]
			mustVoteComment(t, s, "voter"+strconv.Itoa(rng.Intn(20)), ids[rng.Intn(len(ids))], v)
		}
		mustComment(t, s, other.ID, "", "bob", "on the other")
		if _, err := s.EditComment(ctx, ids[3], "user3", "edited"); err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{5, 17, 40, len(ids) - 1} {
			if err := s.DeleteComment(ctx, ids[i]); err != nil {
				t.Fatal(err)
			}
		}
		clock.Add(time.Minute)
		want := dumpStore(t, b, s)
		thread, err := s.Thread(ctx, a.ID, Best, MaxThread)
		if err != nil {
			t.Fatal(err)
		}

		downgrade(t, b, s)
		if _, err := s.VoteComment(ctx, "zed", ids[0], Upvote); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "Reconfigure") {
			t.Fatalf("a comment vote on layout 4: %v", err)
		}
		if _, err := s.Thread(ctx, a.ID, Best, 10); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("a thread on layout 4: %v", err)
		}

		// Interrupted after its first step.
		if _, err := s.eval(ctx, reconfigureScript, s.reconfigureArgs("record")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.eval(ctx, reconfigureScript, s.reconfigureArgs("comments")); err != nil {
			t.Fatal(err)
		}
		refused := map[string]func() error{
			"Thread":         func() error { _, err := s.Thread(ctx, a.ID, Best, 10); return err },
			"Replies":        func() error { _, err := s.Replies(ctx, ids[0], Top, 10); return err },
			"Comment":        func() error { _, err := s.Comment(ctx, a.ID, "", "zed", "x"); return err },
			"CommentsByID":   func() error { _, err := s.CommentsByID(ctx, ids[:2]); return err },
			"CommentVotesOf": func() error { _, err := s.CommentVotesOf(ctx, "zed", ids[:2]); return err },
			"EditComment":    func() error { _, err := s.EditComment(ctx, ids[3], "user3", "x"); return err },
			"DeleteComment":  func() error { return s.DeleteComment(ctx, ids[1]) },
			"UserComments":   func() error { _, err := s.UserComments(ctx, "user1", 1); return err },
			"Delete":         func() error { return s.Delete(ctx, a.ID) },
			// The last comment is not moved yet.
			"VoteComment": func() error { _, err := s.VoteComment(ctx, "zed", ids[len(ids)-2], Upvote); return err },
		}
		for name, call := range refused {
			if err := call(); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "moves them") {
				t.Errorf("%s while comments move: %v, want ErrIncompatible", name, err)
			}
		}
		if h, err := s.Check(ctx); err != nil || !h.Serious || !strings.Contains(strings.Join(h.Problems, "\n"), "comments of layout 4") {
			t.Errorf("Check while comments move = %+v, %v", h.Problems, err)
		}
		// A suspension meanwhile applies, and keeps the move's mark.
		if err := s.Suspend(ctx, "sue", Refuse, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Vote(ctx, "sue", other.ID, Upvote); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("a suspended user's vote while comments move: %v, want ErrNotAllowed", err)
		}
		if err := s.Unsuspend(ctx, "sue"); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"Thread", "Comment"} {
			if err := refused[name](); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "moves them") {
				t.Errorf("%s after a suspension while comments move: %v, want ErrIncompatible", name, err)
			}
		}
		// A vote on a comment moved counts; cancelled, the store is as it was.
		if r := mustVoteComment(t, s, "zed", ids[0], Downvote); r.Previous != NoVote {
			t.Fatalf("a vote on a moved comment: %+v", r)
		}
		mustVoteComment(t, s, "zed", ids[0], NoVote)
		mustVote(t, s, "zed", other.ID, Upvote)
		mustVote(t, s, "zed", other.ID, NoVote)
		// The votes taken back keep their fields, "0" (lib/ballot.lua
		// VOTES), which this test takes out, for the store to be as it was.
		for _, f := range [][2]string{{s.keys.cvoted + a.ID, ids[0] + ":zed"}, {s.keys.votedKey(other.ID), "zed"}} {
			if v, err := redis.String(b.do(t, "HGET", f[0], f[1]), nil); err != nil || v != "0" {
				t.Fatalf("%s %s after a cancel: %q, %v; want \"0\"", f[0], f[1], v, err)
			}
			b.do(t, "HDEL", f[0], f[1])
		}
		if list, err := s.Articles(ctx, ScoreDesc, 1); err != nil || len(list) != 2 || list[0].Comments+list[1].Comments == 0 {
			t.Fatalf("Articles while comments move: %v, %v", list, err)
		}

		// Resumed to its end.
		was, err := s.Reconfigure(ctx)
		if err != nil || was.Layout != LayoutVersion {
			t.Fatalf("Reconfigure resumed = %v, %v", was, err)
		}
		if got := dumpStore(t, b, s); got != want {
			t.Fatalf("moved:\n%s\nwant\n%s", got, want)
		}
		if h, err := s.Check(ctx); err != nil || strings.Contains(strings.Join(h.Problems, "\n"), "comments of layout 4") {
			t.Errorf("Check after the move = %+v, %v", h.Problems, err)
		}
		after, err := s.Thread(ctx, a.ID, Best, MaxThread)
		if err != nil || len(after) != len(thread) {
			t.Fatalf("Thread after = %d comments, %v; want %d", len(after), err, len(thread))
		}

		// Whole in one call, from layout 4 again.
		downgrade(t, b, s)
		if was, err := s.Reconfigure(ctx); err != nil || was.Layout != 4 {
			t.Fatalf("Reconfigure = %v, %v", was, err)
		}
		if got := dumpStore(t, b, s); got != want {
			t.Fatalf("moved in one call:\n%s\nwant\n%s", got, want)
		}
	})
}

// downgrade rewrites the comments of s as layout 4 kept them, and
// records layout 4: each record a hash of u, d, m (its meta), n, r, x
// where deleted, and f, l, nx, pv where linked; its body a string at
// keys.body; a parent's Best and Top orderings two sorted sets, at
// kids "best:" and "top:" and the parent, of members as member writes
// them, with their values as Order.Value gives them. It pipelines its
// commands, a thousand keys at a time.
func downgrade(t testing.TB, b *backend, s *Store) {
	t.Helper()
	c := b.storePool(s).Get()
	defer c.Close()
	// read reads each key of list with cmd and args, and passes the
	// reply to rewrite.
	read := func(list []string, cmd string, args []interface{}, rewrite func(key string, v interface{})) {
		for len(list) > 0 {
			n := min(len(list), 1000)
			for _, key := range list[:n] {
				if err := c.Send(cmd, append([]interface{}{key}, args...)...); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			for _, key := range list[:n] {
				v, err := c.Receive()
				if err != nil {
					t.Fatal(err)
				}
				rewrite(key, v)
			}
			list = list[n:]
		}
	}
	var records, orderings []string
	for _, key := range b.storeKeys(t, s) {
		if _, ok := strings.CutPrefix(key, s.keys.comment); ok {
			records = append(records, key)
		} else if parent, ok := strings.CutPrefix(key, s.keys.kids); ok && !strings.Contains(parent, ":") {
			orderings = append(orderings, key)
		}
	}
	var cmds [][]interface{}
	do := func(args ...interface{}) { cmds = append(cmds, args) }
	read(records, "GET", nil, func(key string, v interface{}) {
		rec, err := redis.String(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := layout.ParseCommentRecord(rec)
		if err != nil {
			t.Fatalf("%s holds %q: %v", key, rec, err)
		}
		parent := c.Parent
		if parent == "" {
			parent = "0"
		}
		itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
		meta := strings.Join([]string{c.Article, parent, itoa(c.Posted), itoa(c.Closes), strconv.Itoa(c.Depth), c.Orders, c.Weight}, " ")
		fields := []interface{}{key, "u", itoa(c.Up), "d", itoa(c.Down), "m", meta, "n", c.Poster, "r", itoa(c.Replies)}
		if c.Deleted {
			fields = append(fields, "x", "1")
		} else {
			do("SET", s.keys.body+strings.TrimPrefix(key, s.keys.comment), c.Body)
		}
		for i, v := range []string{c.First, c.Last, c.Next, c.Prev} {
			if v != "" {
				fields = append(fields, []string{"f", "l", "nx", "pv"}[i], v)
			}
		}
		do("DEL", key)
		do(append([]interface{}{"HSET"}, fields...)...)
	})
	read(orderings, "ZRANGE", []interface{}{0, -1, "WITHSCORES"}, func(key string, v interface{}) {
		list, err := redis.Strings(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		parent := strings.TrimPrefix(key, s.keys.kids)
		for i := 0; i < len(list); i += 2 {
			m, v := list[i], list[i+1]
			if m[0] >= 'a' {
				do("ZADD", s.keys.kids+"best:"+parent, v, m)
				continue
			}
			top, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			do("ZADD", s.keys.kids+"top:"+parent, int64(top)+1<<50, string(m[0]+32)+m[1:])
		}
		do("DEL", key)
	})
	id := s.Identity()
	id.Layout = 4
	do("SET", s.keys.record, id.String())
	for len(cmds) > 0 {
		n := min(len(cmds), 1000)
		for _, cmd := range cmds[:n] {
			if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Do(""); err != nil {
			t.Fatal(err)
		}
		cmds = cmds[n:]
	}
}

// TestCommentRecordMalformed: a string at a comment's key that is no
// record of this layout, written by hand, fails every call about it with
// an error, and changes nothing; so does one whose head is longer than a
// head read takes (HEAD, which no Comment writes), but for the reads of
// whole records (Thread, CommentsByID), which read it right.
func TestCommentRecordMalformed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithEditWindow(time.Hour))
		a := mustPost(t, s, "alice", "t")
		c := mustComment(t, s, a.ID, "", "bob", "first")
		mustComment(t, s, a.ID, c.ID, "carol", "reply")
		key := s.keys.commentKey(c.ID)
		rec, err := redis.String(b.do(t, "GET", key), nil)
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(rec, ":")
		cut := head[:strings.LastIndexByte(head, ' ')+1] + "700:bob" + strings.Repeat("x", 700)
		for _, bad := range []string{"foreign", cut, strings.Replace(rec, " ", "  ", 1)} {
			b.do(t, "SET", key, bad)
			before := dumpStore(t, b, s)
			calls := map[string]func() error{
				"VoteComment":    func() error { _, err := s.VoteComment(ctx, "dave", c.ID, Upvote); return err },
				"Thread":         func() error { _, err := s.Thread(ctx, a.ID, TimeDesc, 10); return err },
				"Replies":        func() error { _, err := s.Replies(ctx, c.ID, Best, 10); return err },
				"CommentsByID":   func() error { _, err := s.CommentsByID(ctx, []string{c.ID}); return err },
				"CommentVotesOf": func() error { _, err := s.CommentVotesOf(ctx, "bob", []string{c.ID}); return err },
				"EditComment":    func() error { _, err := s.EditComment(ctx, c.ID, "bob", "edited"); return err },
				"DeleteComment":  func() error { return s.DeleteComment(ctx, c.ID) },
				"Comment":        func() error { _, err := s.Comment(ctx, a.ID, c.ID, "dave", "x"); return err },
			}
			for name, call := range calls {
				err := call()
				if bad == cut && (name == "Thread" || name == "CommentsByID") {
					continue
				}
				if err == nil || errors.Is(err, ErrNotFound) {
					t.Errorf("%.20q: %s = %v, want an error", bad, name, err)
				}
			}
			wantUnchanged(t, b, s, "calls on a malformed record", before)
		}
	})
}

// TestReconfigureLayout4Recorded: a store that the library of layout 4
// wrote (testdata/layout4/store.json: 180 comments on three articles,
// voted, some deleted, one edited; dumped by a driver of release
// 5cad6e7), moved by Reconfigure, reads as that library read it
// (testdata/layout4/reads.json: each Thread, Replies, CommentsByID,
// CommentVotesOf, Articles and UserComments, a line each).
func TestReconfigureLayout4Recorded(t *testing.T) {
	var dump []struct {
		Key    string   `json:"key"`
		Type   string   `json:"type"`
		Values []string `json:"values"`
		PTTL   int64    `json:"pttl"`
	}
	var want map[string][]string
	for name, v := range map[string]interface{}{"store.json": &dump, "reads.json": &want} {
		b, err := os.ReadFile(filepath.Join("testdata", "layout4", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Hot, ScoreDesc), WithUserPages(), WithEditWindow(time.Hour))
		tag := "{" + s.keys.prefix + "}:"
		for _, e := range dump {
			key := tag + strings.TrimPrefix(e.Key, "{x}:")
			args := []interface{}{key}
			switch e.Type {
			case "string":
				b.do(t, "SET", key, e.Values[0])
				continue
			case "zset":
				for i := 0; i < len(e.Values); i += 2 {
					args = append(args, e.Values[i+1], e.Values[i])
				}
				b.do(t, "ZADD", args...)
			case "hash":
				for _, v := range e.Values {
					args = append(args, v)
				}
				b.do(t, "HSET", args...)
			default:
				t.Fatalf("%s: type %s", e.Key, e.Type)
			}
			if e.PTTL > 0 {
				b.do(t, "PEXPIRE", key, e.PTTL)
			}
		}
		if _, err := s.Thread(ctx, "1", Best, 10); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("Thread of layout 4 = %v", err)
		}
		if was, err := s.Reconfigure(ctx); err != nil || was.Layout != 4 {
			t.Fatalf("Reconfigure = %v, %v", was, err)
		}
		got, err := layout4Reads(s)
		if err != nil {
			t.Fatal(err)
		}
		for name, lines := range want {
			if !slices.Equal(got[name], lines) {
				t.Errorf("%s:\n%s\nwant\n%s", name, strings.Join(got[name], "\n"), strings.Join(lines, "\n"))
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d reads, want %d", len(got), len(want))
		}
		for _, k := range b.storeKeys(t, s) {
			if strings.HasPrefix(k, s.keys.body) || strings.HasPrefix(k, s.keys.kids+"best:") || strings.HasPrefix(k, s.keys.kids+"top:") || k == s.keys.moving {
				t.Errorf("left by the move: %s", k)
			}
		}
	})
}

// layout4Reads reads s every way the driver that wrote
// testdata/layout4/reads.json read its store, a line each.
func layout4Reads(s *Store) (map[string][]string, error) {
	out := map[string][]string{}
	tree := func(name string, list []ThreadComment) {
		for _, c := range list {
			out[name] = append(out[name], fmt.Sprintf("%s %d %d", c.ID, c.Depth, c.More))
		}
	}
	for _, aid := range []string{"1", "2", "3"} {
		for _, o := range []Order{Best, Top, TimeDesc, TimeAsc, Hot, ScoreDesc} {
			list, err := s.Thread(ctx, aid, o, MaxThread)
			if err != nil {
				return nil, err
			}
			tree("thread/"+aid+"/"+o.String(), list)
		}
	}
	for _, o := range []Order{Best, TimeAsc} {
		list, err := s.Replies(ctx, "1", o, MaxThread)
		if err != nil {
			return nil, err
		}
		tree("replies/1/"+o.String(), list)
	}
	var all []string
	for i := 1; i <= 300; i++ {
		all = append(all, strconv.Itoa(i))
	}
	cs, err := s.CommentsByID(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		out["byid"] = append(out["byid"], fmt.Sprintf("%s %s %q %q %q %d %d %d %d %v",
			c.ID, c.Article, c.Parent, c.Poster, c.Body, c.Posted.Unix(), c.Upvotes, c.Downvotes, c.Replies, c.Deleted))
	}
	votes, err := s.CommentVotesOf(ctx, "v3", all)
	if err != nil {
		return nil, err
	}
	for i, v := range votes {
		if v != NoVote {
			out["votes"] = append(out["votes"], all[i]+" "+v.String())
		}
	}
	arts, err := s.Articles(ctx, ScoreDesc, 1)
	if err != nil {
		return nil, err
	}
	for _, a := range arts {
		out["articles"] = append(out["articles"], fmt.Sprintf("%s %d %d %d", a.ID, a.Comments, a.Upvotes, a.Downvotes))
	}
	uc, err := s.UserComments(ctx, "u3", 1)
	if err != nil {
		return nil, err
	}
	for _, c := range uc {
		out["user"] = append(out["user"], c.ID)
	}
	return out, nil
}
