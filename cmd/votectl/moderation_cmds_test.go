package main

// moderation_cmds_test.go: votectl's moderation commands at their edges

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// TestSuspendRefusesUnrecordedStore: suspend on a store that records no
// identity yet (a new store before its first post, or a mistyped
// -prefix) exits 2 and writes nothing, as import refuses a suspension
// without an identity (parseImport): Store.Suspend would record
// votectl's default options, and the service, started afterwards with
// its own (a vote log, events), would get ErrIncompatible on every write.
func TestSuspendRefusesUnrecordedStore(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		for _, args := range [][]string{{"suspend", "spammer", "-mode", "shadow", "-for", "72h"}} {
			prefix := "fresh" + args[0]
			code, out, errs := votectl(t, addr, "", append([]string{"-prefix", prefix}, args...)...)
			keys, _ := redis.Strings(do("KEYS", "{"+prefix+"}:*"))
			rec, _ := redis.String(do("GET", "{"+prefix+"}:store"))
			// The service's store, with its options, on that prefix.
			st, err := voting.New(pool(addr, prefix), voting.WithKeyPrefix(prefix), voting.WithVoteLog(), voting.WithVoteEvents(1000))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.CheckIdentity(ctx); err != nil {
				t.Errorf("%s on an unrecorded store: exit %d %q %q; it wrote %q (record %q), and the service's store now gets: %v",
					args[0], code, out, errs, keys, rec, err)
			}
			if _, err := st.Post(ctx, "alice", "first", ""); errors.Is(err, voting.ErrIncompatible) {
				t.Errorf("%s on an unrecorded store: the service's first post gets %v", args[0], err)
			}
		}
	})
}

// TestEventsEveryNotPositive: events -follow -every 0 (or a negative
// duration) exits 2 naming the flag, as suspend refuses a -for that is
// not positive, where it polled Redis in a busy loop (time.After of 0
// fires at once).
func TestEventsEveryNotPositive(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		recordedStore(t, addr, "hev")
		if code, out, errs := votectl(t, addr, "", "-prefix", "hev", "options", "-vote-events", "1000"); code != 0 {
			t.Fatalf("options: %d %q %q", code, out, errs)
		}
		calls := func() int64 {
			info, _ := redis.String(do("INFO", "stats"))
			for _, l := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(l, "total_commands_processed:"); ok {
					var n int64
					for _, c := range v {
						n = n*10 + int64(c-'0')
					}
					return n
				}
			}
			return 0
		}
		for _, every := range []string{"0s", "-1s"} {
			before := calls()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel) // an interrupt
			var out, errb syncBuffer
			code := run(ctx, []string{"-redis", addr, "-quiet", "-prefix", "hev", "events", "-follow", "-every", every},
				strings.NewReader(""), &out, &errb, false)
			cancel()
			n := calls() - before
			if code != exitError || !strings.Contains(errb.String(), "-every") {
				t.Errorf("events -follow -every %s: exit %d %q, and %d Redis commands in 300ms; want exit 2 naming -every",
					every, code, errb.String(), n)
			}
		}
	})
}

// TestReverseUnresumableErrorOneLine: reverse on a store without the
// vote log, or of a user name the store refuses, fails at once, writes
// nothing, and says so in one line on stderr (votectl's contract:
// main.go, README), without advice to run it again, which mends
// neither.
func TestReverseUnresumableErrorOneLine(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		recordedStore(t, addr, "hrv")                       // no vote log
		recordedStore(t, addr, "hrl", voting.WithVoteLog()) // a vote log
		for _, c := range []struct{ prefix, user string }{{"hrv", "bob"}, {"hrl", " "}} {
			code, out, errs := votectl(t, addr, "", "-prefix", c.prefix, "reverse", c.user)
			if code != exitError || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "resume") {
				t.Errorf("-prefix %s reverse %q: exit %d %q, stderr %q; want exit 2 and one line naming the error", c.prefix, c.user, code, out, errs)
			}
		}
	})
}
