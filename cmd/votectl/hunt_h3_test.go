package main

// hunt_h3_test.go: failing tests of defects in votectl's moderation
// commands.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// TestHuntSuspendOnUnrecordedStoreRecordsDefaultIdentity: suspend on a store that records no identity yet (a new store before
// its first post, or a mistyped -prefix) opens the store with the default
// options (env.moderated) and Store.Suspend records them: the service,
// started afterwards with its own options (a vote log, events), is then
// refused by CheckIdentity and gets ErrIncompatible on every write.
// import refuses a suspension without an identity for this reason
// (parseImport); the command should too (exit 2, nothing written).
func TestHuntSuspendOnUnrecordedStoreRecordsDefaultIdentity(t *testing.T) {
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

// TestHuntEventsFollowEveryNotPositive: events -follow -every 0 (or a
// negative duration) is taken, and the command polls Redis in a busy
// loop (time.After of 0 fires at once), thousands of calls a second;
// suspend refuses a -for that is not positive, and events should refuse
// such an -every the same way (exit 2, the flag named).
func TestHuntEventsFollowEveryNotPositive(t *testing.T) {
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

// TestHuntReverseNonResumableErrorOneLine: reverse on a store without the
// vote log, or of a user name the store refuses, fails at once and
// writes nothing, but cmdReverse prints "N taken back before the error;
// run it again to resume" before the error: two lines on stderr where
// votectl's contract (main.go, README) is one line saying which, and
// advice to resume what no rerun can do.
func TestHuntReverseNonResumableErrorOneLine(t *testing.T) {
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
