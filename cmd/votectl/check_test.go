package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	"github.com/votekit/voting/internal/restore"
)

// Each kind of planted corruption is found, and -repair fixes those it
// can; check then passes, and the store's own reads agree.
func TestCheckFindsAndRepairs(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		for _, tc := range []struct {
			name  string
			plant [][]interface{}
			want  string
			fixed bool
		}{
			{"counts", [][]interface{}{{"SETRANGE", "{p}:article:1", 0, "0000000009"}}, "but its voters are 3 up 1 down", true},
			{"score missing", [][]interface{}{{"ZREM", "{p}:by:score", "a2"}}, "{p}:by:score: article 2 missing", true},
			{"score wrong", [][]interface{}{{"ZADD", "{p}:by:score", 5, "a2"}}, "{p}:by:score: article 2 at 5", true},
			{"foreign member", [][]interface{}{{"ZADD", "{p}:by:hot", 5, "b99"}}, `{p}:by:hot: member "b99" is no article`, true},
			{"bucket", [][]interface{}{{"ZADD", "{p}:top:600:1", 1, "a3"}}, `{p}:top:600:1: member "a3" is no article of this bucket`, true},
			{"group lacks", [][]interface{}{{"SREM", "{p}:group:redis", "a1"}}, `article 1 is in group "redis", which lacks it`, true},
			{"groups lack", [][]interface{}{{"SADD", "{p}:group:go", "a4"}}, `article 4's groups lack "go"`, true},
			{"cache", [][]interface{}{{"ZADD", "{p}:cache:score:redis", 1, "a2"}}, "{p}:cache:score:redis: article 2 not in the group", true},
			{"upvoted page", [][]interface{}{{"ZADD", "{p}:upvoted:dave", 1, "a1"}}, `{p}:upvoted:dave: article 1 listed, but "dave"'s vote on it is "-1"`, true},
			{"submitted page", [][]interface{}{{"ZREM", "{p}:submitted:alice", "a1"}}, "{p}:submitted:alice: lacks article 1", true},
			{"bad record", [][]interface{}{{"SET", "{p}:article:2", "junk"}}, "article 2: malformed record", false},
			{"bad vote", [][]interface{}{{"HSET", "{p}:voted:3", "eve", "7"}}, `voter "eve" holds "7"`, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				do("FLUSHALL")
				fill(t, addr, "p")
				if code, out, errs := votectl(t, addr, "", "-prefix", "p", "check"); code != 0 {
					t.Fatalf("check before: %d\n%s%s", code, out, errs)
				}
				for _, c := range tc.plant {
					if _, err := do(c[0].(string), c[1:]...); err != nil {
						t.Fatal(err)
					}
				}
				code, out, _ := votectl(t, addr, "", "-prefix", "p", "check")
				if code != 1 || !strings.Contains(out, tc.want) {
					t.Fatalf("check: exit %d, want 1 and %q:\n%s", code, tc.want, out)
				}
				code, out, errs := votectl(t, addr, "", "-prefix", "p", "check", "-repair")
				if tc.fixed != (code == 0) {
					t.Fatalf("check -repair: exit %d\n%s%s", code, out, errs)
				}
				if !tc.fixed {
					if !strings.Contains(out, "not repairable") {
						t.Errorf("check -repair does not say what it cannot repair:\n%s", out)
					}
					return
				}
				if code, out, errs := votectl(t, addr, "", "-prefix", "p", "check"); code != 0 {
					t.Fatalf("check after repair: %d\n%s%s", code, out, errs)
				}
				st, _ := voting.New(pool(addr, "p"), fullOptions("p")...)
				page, err := st.Articles(context.Background(), voting.ScoreDesc, 1)
				if err != nil || len(page) != 11 {
					t.Errorf("front page after repair: %d articles, %v", len(page), err)
				}
			})
		}
	})
}

// Karma is recomputed from the standing votes while every article is
// open, and repaired.
func TestCheckKarma(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		st, _ := voting.New(pool(addr, "k"), voting.WithKeyPrefix("k"), voting.WithKarma(1, -1), voting.WithVoteCost(1, 2))
		a, _ := st.Post(ctx, "alice", "t", "")
		b, _ := st.Post(ctx, "bob", "t", "")
		st.Vote(ctx, "bob", a.ID, voting.Upvote)
		st.Vote(ctx, "carol", a.ID, voting.Downvote)
		st.Vote(ctx, "alice", b.ID, voting.Upvote)
		args := []string{"-prefix", "k", "check", "-karma", "1,-1", "-vote-cost", "1,2"}
		if code, out, _ := votectl(t, addr, "", args...); code != 0 {
			t.Fatalf("check: %d\n%s", code, out)
		}
		do("ZINCRBY", "{k}:karma", 5, "alice")
		code, out, _ := votectl(t, addr, "", args...)
		if code != 1 || !strings.Contains(out, `karma of "alice" is -6, its standing votes make -1`) {
			t.Fatalf("check: %d\n%s", code, out)
		}
		if code, out, _ := votectl(t, addr, "", append(args, "-repair")...); code != 0 {
			t.Fatalf("repair: %d\n%s", code, out)
		}
		if k, _ := st.Karma(ctx, "alice"); k != -1 {
			t.Errorf("alice's karma after repair %d, want -1", k)
		}
		// Without -karma, check reads karma and cost from the record.
		do("ZINCRBY", "{k}:karma", 5, "alice")
		if code, out, _ := votectl(t, addr, "", "-prefix", "k", "check"); code != 1 || !strings.Contains(out, `karma of "alice" is -6`) {
			t.Errorf("check without -karma, on a store that records it: %d\n%s", code, out)
		}
	})
}

// recordingConn notes the name and arguments of every command sent on
// it, as votectl's commands and the store's script calls alike.
type recordingConn struct {
	redis.Conn
	note func(cmd string, args []interface{})
}

func (c recordingConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	c.note(cmd, args)
	return c.Conn.Do(cmd, args...)
}

func (c recordingConn) Send(cmd string, args ...interface{}) error {
	c.note(cmd, args)
	return c.Conn.Send(cmd, args...)
}

func (c recordingConn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	c.note(cmd, args)
	return c.Conn.(redis.ConnWithContext).DoContext(ctx, cmd, args...)
}

func (c recordingConn) ReceiveContext(ctx context.Context) (interface{}, error) {
	return c.Conn.(redis.ConnWithContext).ReceiveContext(ctx)
}

// recordingEnv is the env votectl's run makes for prefix, but that its
// connections note every command in cmds.
func recordingEnv(addr, prefix string, out *bytes.Buffer) (*env, *[][]string) {
	var mu sync.Mutex
	var cmds [][]string
	node := nodeOf(addr, prefix)
	e := &env{ctx: context.Background(), prefix: prefix, l: newLayout(prefix), stdin: strings.NewReader(""), stdout: out,
		stderr: io.Discard, quiet: true, now: time.Now}
	e.pool = &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		c, err := redis.DialContext(ctx, "tcp", node)
		if err != nil {
			return nil, err
		}
		return recordingConn{c, func(cmd string, args []interface{}) {
			line := []string{strings.ToUpper(cmd)}
			for _, a := range args {
				line = append(line, fmt.Sprint(a))
			}
			mu.Lock()
			cmds = append(cmds, line)
			mu.Unlock()
		}}, nil
	}}
	return e, &cmds
}

// check -repair removes what is stray through the store's script
// (restore.Remove, restore_removals.lua), more than one call's bound of
// it: votectl sends no command that removes anything itself, and check
// then finds the store right.
func TestCheckRepairRemovesThroughTheStore(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		st := fill(t, addr, "p")
		c, err := st.Comment(ctx, "1", "", "bob", "hi")
		if err != nil {
			t.Fatal(err)
		}
		many := []interface{}{"ZADD", "{p}:by:hot"}
		for i := 0; i < 450; i++ {
			many = append(many, 1, "stray"+strconv.Itoa(i))
		}
		for _, cmd := range [][]interface{}{
			many,
			{"ZADD", "{p}:by:hot", 5, "b99"},
			{"ZADD", "{p}:top:600:1", 1, "a3"},
			{"SADD", "{p}:group:go", "a4", "zz"},
			{"ZADD", "{p}:cache:score:redis", 1, "a2"},
			{"ZADD", "{p}:cache:bogus", 1, "a2"},
			{"ZADD", "{p}:upvoted:dave", 1, "a1"},
			{"ZADD", "{p}:submitted:bob", 1, "a1"},
			{"SET", "{p}:cbody:9999", "stray"},
			{"HSET", "{p}:thread:2", "f", c.ID, "l", c.ID},
			{"HSET", "{p}:comments", "99", "3", "2", "4"},
			{"ZADD", "{p}:kids:a1", 1, "z9"},
			{"ZADD", "{p}:kids:best:a1", 1, "b99"},
			{"ZADD", "{p}:kids:77", 1, "b99"},
		} {
			if _, err := do(cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(cmd[:2], err)
			}
		}
		var out bytes.Buffer
		e, cmds := recordingEnv(addr, "p", &out)
		err = dispatch(e, "check", []string{"-repair"})
		e.pool.Close()
		if err != nil {
			t.Fatalf("check -repair: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "0 not repairable") {
			t.Fatalf("check -repair:\n%s", out.String())
		}
		scripts := 0
		removed := map[string]bool{}
		for _, cmd := range *cmds {
			switch cmd[0] {
			case "ZREM", "SREM", "HDEL", "DEL", "UNLINK", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK":
				t.Errorf("votectl removes with a command of its own: %v", cmd[:min(len(cmd), 4)])
			case "FCALL", "EVALSHA", "EVAL":
				if slices.Contains(cmd, "ordering") {
					scripts++
				}
				for _, a := range cmd {
					removed[a] = true
				}
			}
		}
		if scripts < 3 {
			t.Errorf("the removals of 451 members went in %d calls of the store's script, want at least 3 of 200", scripts)
		}
		for _, m := range []string{"stray0", "stray449", "b99", "zz", "bogus", "9999", "99", "z9", "best:a1", "77"} {
			if !removed[m] {
				t.Errorf("%q went to no script of the store", m)
			}
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "p", "check"); code != 0 {
			t.Fatalf("check after -repair: %d\n%s%s", code, out, errs)
		}
	})
}

// The store's removal script refuses, having removed nothing, a key of a
// foreign type among its member removals, a removal of no kind, and a
// store recorded with another layout; what is gone already is no error,
// and a key removed whole goes whatever it holds.
func TestRemoveRefuses(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		st := fill(t, addr, "p")
		do("ZADD", "{p}:by:hot", 5, "b99")
		do("SET", "{p}:top:600:1", "foreign")
		stray := restore.Removal{Kind: restore.Ordering, Name: "hot", Member: "b99"}
		still := func(what string) {
			t.Helper()
			if n, err := redis.Int(do("ZCARD", "{p}:by:hot")); err != nil || n != 12 {
				t.Errorf("%s: by:hot holds %d, %v, want the 11 articles and the stray member", what, n, err)
			}
		}
		err := restore.Remove(ctx, st, []restore.Removal{stray, {Kind: restore.Bucket, Name: "600:1", Member: "a1"}})
		if err == nil || !strings.Contains(err.Error(), "holds a string") {
			t.Errorf("a foreign key among the removals: %v", err)
		}
		still("a foreign key")
		for _, r := range []restore.Removal{{Kind: "article", Name: "1", Whole: true}, {Kind: restore.Ordering, Name: "hot", Whole: true},
			{Kind: restore.Cache, Name: "score:redis", Member: "a1"}} {
			if err := restore.Remove(ctx, st, []restore.Removal{stray, r}); err == nil || !strings.Contains(err.Error(), "no removal of kind") {
				t.Errorf("removal %+v: %v", r, err)
			}
		}
		still("no removal of its kind")
		id, err := redis.String(do("GET", "{p}:store"))
		if err != nil {
			t.Fatal(err)
		}
		do("SET", "{p}:store", "5"+id[1:])
		if err := restore.Remove(ctx, st, []restore.Removal{stray}); !errors.Is(err, voting.ErrIncompatible) {
			t.Errorf("a store of layout 5: %v", err)
		}
		still("a store of layout 5")
		do("SET", "{p}:store", id)
		for i := 0; i < 2; i++ {
			if err := restore.Remove(ctx, st, []restore.Removal{stray}); err != nil {
				t.Fatalf("removal %d: %v", i, err)
			}
		}
		if n, err := redis.Int(do("ZCARD", "{p}:by:hot")); err != nil || n != 11 {
			t.Errorf("by:hot holds %d, %v, want the 11 articles", n, err)
		}
		// A key removed whole goes whatever it holds.
		do("SET", "{p}:cache:junk", "foreign")
		if err := restore.Remove(ctx, st, []restore.Removal{{Kind: restore.Cache, Name: "junk", Whole: true}}); err != nil {
			t.Errorf("a foreign value removed whole: %v", err)
		}
		if n, err := redis.Int(do("EXISTS", "{p}:cache:junk")); err != nil || n != 0 {
			t.Errorf("cache:junk: EXISTS %d, %v after its removal", n, err)
		}
	})
}
