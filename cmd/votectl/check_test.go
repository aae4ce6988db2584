package main

import (
	"context"
	"strings"
	"testing"

	"github.com/votekit/voting"
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
