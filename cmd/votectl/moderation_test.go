package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
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
		// The user between the flags, as between any others.
		code, out, errs = votectl(t, addr, "", "-prefix", "mod", "suspend", "-mode", "shadow", "carol", "-for", "2h")
		if code != 0 || !strings.HasPrefix(out, "suspended carol (shadow) until ") {
			t.Fatalf("suspend -mode shadow carol -for 2h: %d %q %q", code, out, errs)
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
		if code != 0 || strings.Join(kinds, " ") != "vote vote reversed suspend suspend unsuspend" {
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

// TestModerationExportImport: a store with the vote log, events and a
// shadowed user checks clean, and export | import | export gives the
// same lines, and the imported store the same users' votes, voters and
// suspensions.
func TestModerationExportImport(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		opts := func(p string) []voting.Option {
			return []voting.Option{voting.WithKeyPrefix(p), voting.WithClock(func() time.Time { return now }),
				voting.WithVoteLog(), voting.WithVoteEvents(1000), voting.WithKarma(1, -1)}
		}
		src, a, c := commentedStore(t, addr, "msrc", opts("msrc")...)
		if err := src.Suspend(ctx, "sam", voting.Shadow, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"bob", "carol", "sam"} {
			if _, err := src.Vote(ctx, u, a.ID, voting.Upvote); err != nil {
				t.Fatal(err)
			}
			if _, err := src.VoteComment(ctx, u, c.ID, voting.Downvote); err != nil {
				t.Fatal(err)
			}
		}
		// dan's votes, taken back, keep their fields as "0", which is no
		// vote: no problem for check, no voter for article, no line of
		// export.
		for _, v := range []voting.VoteType{voting.Upvote, voting.CancelVote} {
			if _, err := src.Vote(ctx, "dan", a.ID, v); err != nil {
				t.Fatal(err)
			}
			if _, err := src.VoteComment(ctx, "dan", c.ID, v); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range [][2]string{{"{msrc}:voted:" + a.ID, "dan"}, {"{msrc}:cvoted:" + a.ID, c.ID + ":dan"}} {
			if v, err := redis.String(do("HGET", f[0], f[1])); err != nil || v != "0" {
				t.Fatalf("%s %s after a cancel: %q, %v; want \"0\"", f[0], f[1], v, err)
			}
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "msrc", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
		// The poster, bob and carol count; sam's vote is a shadow's.
		if _, out, _ := votectl(t, addr, "", "-prefix", "msrc", "article", a.ID); !strings.Contains(out, `"voters": 3`) ||
			!strings.Contains(out, `"shadow_voters": 1`) {
			t.Errorf("article %s:\n%s", a.ID, out)
		}
		_, export, _ := votectl(t, addr, "", "-prefix", "msrc", "export")
		if strings.Contains(export, `"dan"`) {
			t.Errorf("export names dan, whose votes were taken back:\n%s", export)
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "mdst", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "mdst", "export"); again != export {
			t.Errorf("export | import | export differs:\n%s\n%s", export, again)
		}
		dst, err := voting.New(pool(addr, "mdst"), opts("mdst")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"bob", "carol", "sam"} {
			v1, c1, err1 := src.VotesBy(ctx, u, "", 100)
			v2, c2, err2 := dst.VotesBy(ctx, u, "", 100)
			if fmt.Sprint(v1, c1, err1) != fmt.Sprint(v2, c2, err2) {
				t.Errorf("VotesBy(%s): %v %q %v before, %v %q %v after", u, v1, c1, err1, v2, c2, err2)
			}
			r1, err1 := src.VoteOf(ctx, u, a.ID)
			r2, err2 := dst.VoteOf(ctx, u, a.ID)
			if r1 != r2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Errorf("VoteOf(%s) = %v, %v before, %v, %v after", u, r1, err1, r2, err2)
			}
		}
		for _, st := range []*voting.Store{src, dst} {
			m, until, err := st.Suspended(ctx, "sam")
			if err != nil || m != voting.Shadow || !until.Equal(now.Add(time.Hour).Truncate(time.Millisecond)) {
				t.Errorf("Suspended(sam) = %v, %v, %v", m, until, err)
			}
		}
		v1, _, err1 := src.Voters(ctx, a.ID, "", 100)
		v2, _, err2 := dst.Voters(ctx, a.ID, "", 100)
		if fmt.Sprint(v1, err1) != fmt.Sprint(v2, err2) {
			t.Errorf("Voters: %v, %v before, %v, %v after", v1, err1, v2, err2)
		}
	})
}

// TestModerationCheck: the posters' own shadow votes (an article's poster
// and a comment's, shadowed, downvoting their own) check clean and go
// through export | import | export; check finds a vote log's line
// against the voter record, a line the store never logs, a suspension of
// no mode and one on past the record's latest end.
func TestModerationCheck(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st, a, c := commentedStore(t, addr, "mchk", voting.WithKeyPrefix("mchk"), voting.WithClock(func() time.Time { return now }),
			voting.WithVoteLog(), voting.WithKarma(1, -1))
		if _, err := st.Vote(ctx, "carol", a.ID, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"alice", "bob"} {
			if err := st.Suspend(ctx, u, voting.Shadow, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Vote(ctx, "alice", a.ID, voting.Downvote); err != nil {
			t.Fatal(err)
		}
		if _, err := st.VoteComment(ctx, "bob", c.ID, voting.Downvote); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mchk", "check"); code != 0 {
			t.Fatalf("check: %d\n%s%s", code, out, errs)
		}
		_, export, _ := votectl(t, addr, "", "-prefix", "mchk", "export")
		for _, want := range []string{`"user":"alice","vote":-1,"shadow":true`, `"user":"bob","vote":-1,"shadow":true`,
			`{"type":"uvote","id":"1","user":"carol","vote":1,"at":` + fmt.Sprint(now.Unix()) + `,"item":"article"}`,
			`{"type":"suspension","user":"bob","mode":"shadow","until_ms":`} {
			if !strings.Contains(export, want) {
				t.Errorf("export lacks %s:\n%s", want, export)
			}
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "mchk2", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "mchk2", "export"); again != export {
			t.Errorf("export | import | export differs:\n%s\n%s", export, again)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mchk2", "check"); code != 0 {
			t.Fatalf("check of the import: %d\n%s%s", code, out, errs)
		}

		// By hand: carol's upvote logged again as a downvote, after its
		// line, a line of no item, a suspension of no mode, one past the
		// record's end.
		logKey := "{mchk}:ulog:carol"
		again := lineOf(false, a.ID, -1, now.Unix())
		first := len(lineOf(false, a.ID, 1, now.Unix())) // the offset of again
		for _, line := range []string{again, "?x1 4\n"} {
			if _, err := do("APPEND", logKey, line); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := do("HSET", "{mchk}:suspended", "zed", "q 5", "yan", fmt.Sprint("r ", now.Add(2*time.Hour).UnixMilli())); err != nil {
			t.Fatal(err)
		}
		code, out, _ := votectl(t, addr, "", "-prefix", "mchk", "check")
		for _, want := range []string{fmt.Sprintf(`the line at offset %d logs a downvote on the article 1, but its voter record holds "1@0", its line at offset 0 (taken back)`, first),
			fmt.Sprintf(`the line at offset %d, "?x1 4", is no logged vote`, first+len(again)), `user "zed" holds "q 5", no suspension`, "a vote does not read it",
			"4 problems (1 repairable"} {
			if !strings.Contains(out, want) {
				t.Errorf("check lacks %q: %d\n%s", want, code, out)
			}
		}
		if code != 1 {
			t.Errorf("check: exit %d", code)
		}
	})
}

// TestModerationImportInvalid: a bad moderation line fails the import
// with its line number and field, and nothing is written: the same
// prefix then takes the good export.
func TestModerationImportInvalid(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		commentedStore(t, addr, "minv", voting.WithKeyPrefix("minv"), voting.WithVoteLog())
		_, export, _ := votectl(t, addr, "", "-prefix", "minv", "export")
		n := strings.Count(export, "\n") + 1
		for _, c := range []struct{ line, want string }{
			{`{"type":"uvote","user":"bob","item":"story","id":"1","vote":1,"at":5}`, `item "story" is neither article nor comment`},
			{`{"type":"uvote","user":"bob","item":"article","id":"1","vote":2,"at":5}`, "vote is neither 1 nor -1"},
			{`{"type":"uvote","user":"bob","item":"comment","id":"01","vote":1,"at":5}`, `id "01" is not an id`},
			{`{"type":"uvote","user":"bob","item":"comment","id":"1","vote":1,"at":1.5}`, "at is missing, or no whole number"},
			{`{"type":"suspension","user":"sam","mode":"ban","until_ms":5}`, `mode "ban" is neither refuse nor shadow`},
			{`{"type":"suspension","user":"sam","mode":"shadow"}`, "until_ms 0 is no time"},
			{`{"type":"suspension","user":"","mode":"shadow","until_ms":5}`, `user "" is empty`},
			{`{"type":"cvote","id":"1","user":"bob","vote":0,"shadow":true}`, "shadow vote on comment 1: 1 or -1"},
		} {
			code, _, errs := votectl(t, addr, export+c.line+"\n", "-prefix", "minv2", "import")
			if code != 2 || !strings.Contains(errs, fmt.Sprintf("line %d: ", n)) || !strings.Contains(errs, c.want) ||
				!strings.Contains(errs, "nothing was written") {
				t.Errorf("import of %s: %d %q", c.line, code, errs)
			}
		}
		noIdentity := `{"type":"options","format":1}` + "\n" + `{"type":"suspension","user":"sam","mode":"shadow","until_ms":5}` + "\n"
		if code, _, errs := votectl(t, addr, noIdentity, "-prefix", "minv2", "import"); code != 2 || !strings.Contains(errs, "line 2: suspension of \"sam\" without an identity") {
			t.Errorf("import of a suspension without an identity: %d %q", code, errs)
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "minv2", "import"); code != 0 {
			t.Errorf("import after the refused ones: %d %q", code, errs)
		}
	})
}
