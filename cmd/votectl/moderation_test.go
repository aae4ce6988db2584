package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// TestModerationCommands: options turns the vote log and events on;
// votes-by, voters, reverse (twice: the second takes back nothing),
// suspend, unsuspend and events work through the package's methods.
func TestModerationCommands(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		recordedStore(t, addr, "mod")
		if code, out, errs := votectl(t, addr, "", "-prefix", "mod", "options", "-vote-log", "-vote-events", "1000"); code != 0 {
			t.Fatalf("options: %d %q %q", code, out, errs)
		}
		st, err := voting.New(pool(addr, "mod"), voting.WithKeyPrefix("mod"), voting.WithVoteLog(), voting.WithVoteEvents(1000))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, u := range []string{"bob", "carol"} {
			if _, err := st.Vote(ctx, u, "1", voting.Upvote); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "mod", "votes-by", "bob")
		var v voting.UserVote
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.ID != "1" || v.Vote != voting.Upvote {
			t.Fatalf("votes-by: %d %q %q", code, out, errs)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mod", "voters", "1")
		if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"user":"carol"`) {
			t.Fatalf("voters: %d %q %q", code, out, errs)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mod", "reverse", "bob")
		if code != 0 || !strings.HasPrefix(out, "reverse bob: 1 votes taken back") {
			t.Fatalf("reverse: %d %q %q", code, out, errs)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mod", "reverse", "bob")
		if code != 0 || !strings.HasPrefix(out, "reverse bob: 0 votes taken back") {
			t.Fatalf("reverse again: %d %q %q", code, out, errs)
		}
		if a, err := st.Article(ctx, "1"); err != nil || a.Upvotes != 2 {
			t.Fatalf("article after reverse: %+v, %v", a, err)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mod", "suspend", "carol", "-mode", "refuse", "-for", "1h")
		if code != 0 || !strings.HasPrefix(out, "suspended carol (refuse) until ") {
			t.Fatalf("suspend: %d %q %q", code, out, errs)
		}
		if mode, _, err := st.Suspended(ctx, "carol"); err != nil || mode != voting.Refuse {
			t.Fatalf("Suspended: %v, %v", mode, err)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mod", "suspend", "carol", "-mode", "ban"); code != 2 {
			t.Fatalf("suspend -mode ban: %d %q %q", code, out, errs)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mod", "unsuspend", "carol"); code != 0 || out != "unsuspended carol\n" {
			t.Fatalf("unsuspend: %d %q %q", code, out, errs)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mod", "events")
		var kinds []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e voting.VoteEvent
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("events line %q: %v", line, err)
			}
			kinds = append(kinds, e.Kind)
		}
		if code != 0 || strings.Join(kinds, " ") != "vote vote reversed suspend unsuspend" {
			t.Fatalf("events: %d %q %q", code, out, errs)
		}
		// -follow waits for more, and prints an event cast meanwhile,
		// until interrupted.
		follow, stop := context.WithCancel(ctx)
		var fout, ferr syncBuffer
		done := make(chan int)
		go func() {
			done <- run(follow, []string{"-redis", nodeOf(addr, "mod"), "-quiet", "-prefix", "mod", "events", "-follow",
				"-every", "20ms", "-after", lastID(t, out)}, strings.NewReader(""), &fout, &ferr, false)
		}()
		time.Sleep(100 * time.Millisecond)
		if _, err := st.Vote(ctx, "dave", "1", voting.Downvote); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(fout.String(), `"user":"dave"`) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if code := <-done; code != 0 || strings.Count(fout.String(), "\n") != 1 || !strings.Contains(fout.String(), `"user":"dave"`) {
			t.Fatalf("events -follow: %d %q %q", code, fout.String(), ferr.String())
		}
	})
}

// lastID returns the id of the last event of events's JSON lines.
func lastID(t *testing.T, out string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var e voting.VoteEvent
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// syncBuffer is a buffer that a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
