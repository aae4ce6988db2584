package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// recordedStore posts an article into a store under prefix of opts, so
// that it records its identity, and returns the store.
func recordedStore(t *testing.T, addr, prefix string, opts ...voting.Option) *voting.Store {
	t.Helper()
	st, err := voting.New(pool(addr, prefix), append([]voting.Option{voting.WithKeyPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Post(context.Background(), "alice", "a title", "https://example.com/x"); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOptionsKeepsTheRest: options changes the options its flags name,
// keeps the others as recorded, and prints the record before and after;
// -dry-run prints the record it would make and changes nothing.
func TestOptionsKeepsTheRest(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		recordedStore(t, addr, "news", voting.WithOrders(voting.Hot, voting.Best), voting.WithVoteLimit(5, time.Minute))
		was := thisLayout + " orders=hot,best votelimit"
		want := thisLayout + " orders=hot,best karma votelimit"
		record := func() string {
			s, err := redis.String(do("GET", "{news}:store"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "news", "options", "-dry-run", "-karma", "1,-1")
		if code != 0 || out != "before: "+was+"\nrules before: votelimit=5,60000\nwould record: "+want+" (dry run: nothing changed)\n"+
			"would set rules: karma=1,-1 (dry run: nothing changed)\n" || errs != "" {
			t.Errorf("options -dry-run: %d %q %q", code, out, errs)
		}
		if got := record(); got != was {
			t.Errorf("after -dry-run the record is %q, want %q", got, was)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "news", "options", "-karma", "1,-1")
		if code != 0 || out != "before: "+was+"\nrules before: votelimit=5,60000\nafter:  "+want+
			"\nrules after:  karma=1,-1 votelimit=5,60000\n" || errs != "" {
			t.Errorf("options -karma 1,-1: %d %q %q", code, out, errs)
		}
		if got := record(); got != want {
			t.Errorf("the record is %q, want %q", got, want)
		}
		// A process of the new options writes.
		st, err := voting.New(pool(addr, "news"), voting.WithKeyPrefix("news"), voting.WithOrders(voting.Best, voting.Hot),
			voting.WithVoteLimit(5, time.Minute), voting.WithKarma(1, -1))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CheckIdentity(context.Background()); err != nil {
			t.Errorf("CheckIdentity of the new options: %v", err)
		}
		if _, err := st.Vote(context.Background(), "bob", "1", voting.Upvote); err != nil {
			t.Errorf("a vote of the new options: %v", err)
		}
		// A rule's number: set for the running process, which keeps
		// writing, with no restart.
		code, out, errs = votectl(t, addr, "", "-prefix", "news", "options", "-vote-limit", "1/1h")
		if code != 0 || !strings.Contains(out, "rules after:  karma=1,-1 votelimit=1,3600000\n") || errs != "" {
			t.Errorf("options -vote-limit 1/1h: %d %q %q", code, out, errs)
		}
		if got := record(); got != want {
			t.Errorf("a rule's number changed the record to %q", got)
		}
		if _, err := st.Vote(context.Background(), "bob", "1", voting.Downvote); !errors.Is(err, voting.ErrRateLimited) {
			t.Errorf("a second vote under the new limit of 1 an hour: %v", err)
		}
	})
}

// TestOptionsOff: each flag's off value, and a switch's =false, turn its
// option off; the others stay.
func TestOptionsOff(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		recordedStore(t, addr, "off", voting.WithOrders(voting.Top), voting.WithKarma(1, -1), voting.WithVoteCost(1, 2),
			voting.WithVoteLimit(10, time.Hour), voting.WithEditWindow(time.Hour), voting.WithUserPages(), voting.WithUniqueLinks())
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"-vote-cost", "off", "-user-pages=false"}, thisLayout + " orders=top karma votelimit editwindow uniquelinks"},
			{[]string{"-orders", "none", "-edit-window", "", "-unique-links=false"}, thisLayout + " karma votelimit"},
			{[]string{"-orders", "off", "-karma", "off", "-vote-limit", "off", "-comment-interval", "30s"}, thisLayout + " commentinterval"},
			{[]string{"-orders", "", "-comment-interval", "off", "-unique-links", "-repost-after", "48h"}, thisLayout + " repostafter uniquelinks"},
		} {
			code, out, errs := votectl(t, addr, "", append([]string{"-prefix", "off", "options"}, tc.args...)...)
			if code != 0 || !strings.Contains(out, "\nafter:  "+tc.want+"\n") {
				t.Errorf("options %q: %d %q %s", tc.args, code, out, errs)
			}
		}
		// Bad values change nothing: exit 2, one line.
		before, _ := redis.String(do("GET", "{off}:store"))
		for _, args := range [][]string{{"-karma", "1"}, {"-vote-limit", "5"}, {"-post-interval", "1.5ms"},
			{"-orders", "sideways"}, {"-user-pages=maybe"}, {"-vote-cost", "1,1"}} {
			code, out, errs := votectl(t, addr, "", append([]string{"-prefix", "off", "options"}, args...)...)
			if code != 2 || !strings.HasPrefix(errs, "votectl: options") {
				t.Errorf("options %q: %d %q %q, want exit 2", args, code, out, errs)
			}
		}
		if after, _ := redis.String(do("GET", "{off}:store")); after != before {
			t.Errorf("refused options changed the record from %q to %q", before, after)
		}
	})
}

// TestCheckIdentityCommand: the command CheckIdentity names, run, makes
// the record the store's, whatever the difference.
func TestCheckIdentityCommand(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		recordedStore(t, addr, "cmd", voting.WithOrders(voting.Hot, voting.Best), voting.WithVoteLimit(5, time.Minute),
			voting.WithUserPages(), voting.WithPostInterval(time.Minute))
		ctx := context.Background()
		for _, opts := range [][]voting.Option{
			{voting.WithOrders(voting.Hot, voting.Best), voting.WithVoteLimit(5, time.Minute), voting.WithUserPages(),
				voting.WithPostInterval(time.Minute), voting.WithKarma(1, -1)},
			{voting.WithOrders(voting.Top), voting.WithKarma(2, -1), voting.WithMinKarma(0, 30), voting.WithCommentInterval(90 * time.Second)},
			{voting.WithVoteLimit(100, 24*time.Hour), voting.WithUniqueLinks(), voting.WithRepostAfter(48 * time.Hour), voting.WithEditWindow(15 * time.Minute)},
			{},
		} {
			st, err := voting.New(pool(addr, "cmd"), append([]voting.Option{voting.WithKeyPrefix("cmd")}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			err = st.CheckIdentity(ctx)
			if !errors.Is(err, voting.ErrIncompatible) {
				t.Fatalf("%s: CheckIdentity = %v", st.Identity(), err)
			}
			_, cmd, ok := strings.Cut(err.Error(), `"votectl `)
			cmd, _, ok2 := strings.Cut(cmd, `"`)
			if !ok || !ok2 {
				t.Fatalf("%s: no command in %q", st.Identity(), err)
			}
			if code, out, errs := votectl(t, addr, "", strings.Fields(cmd)...); code != 0 {
				t.Fatalf("votectl %s: %d %s %s", cmd, code, out, errs)
			}
			if err := st.CheckIdentity(ctx); err != nil {
				t.Errorf("after votectl %s: %v", cmd, err)
			}
		}
	})
}

// TestHelp: -h, --help and help print the usage on stdout and exit 0,
// for votectl and each command; a flag it does not know exits 2 with
// the usage on stderr.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		code, out, errs := votectl(t, "127.0.0.1:1", "", args...)
		if code != 0 || errs != "" || !strings.Contains(out, "usage: votectl") || !strings.Contains(out, "-prefix") ||
			!strings.Contains(out, "options [-dry-run]") {
			t.Errorf("votectl %q: %d %q %q", args, code, out, errs)
		}
	}
	for name := range commands {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			code, out, errs := votectl(t, "127.0.0.1:1", "", args...)
			if code != 0 || errs != "" || !strings.Contains(out, "usage: votectl [-redis ADDR] [-prefix PREFIX] [-quiet] "+name) {
				t.Errorf("votectl %q: %d %q %q", args, code, out, errs)
			}
		}
	}
	code, out, _ := votectl(t, "127.0.0.1:1", "", "options", "-h")
	for _, f := range []string{"-orders", "-karma", "-vote-cost", "-min-karma", "-vote-limit", "-post-interval", "-comment-interval",
		"-repost-after", "-edit-window", "-user-pages", "-unique-links", "-dry-run", "off turns it off"} {
		if code != 0 || !strings.Contains(out, f) {
			t.Errorf("options -h lacks %s:\n%s", f, out)
		}
	}
	for _, args := range [][]string{{"-nosuch", "info"}, {"options", "-nosuch"}, {"check", "-nosuch"}} {
		code, out, errs := votectl(t, "127.0.0.1:1", "", args...)
		if code != 2 || out != "" || !strings.Contains(errs, "not defined: -nosuch") || !strings.Contains(errs, "usage: votectl") {
			t.Errorf("votectl %q: %d %q %q", args, code, out, errs)
		}
	}
}
