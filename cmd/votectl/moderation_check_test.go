package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// TestModerationCheck: the posters' own shadow votes (an article's poster
// and a comment's, shadowed, downvoting their own) check clean and go
// through export | import | export; check finds a vote log entry against
// the voter record, an entry the store never logs, a suspension of no
// mode and one on past the record's latest end.
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

		// By hand: carol's upvote logged as a downvote, an entry of no
		// item, a suspension of no mode, one past the record's end.
		logKey := "{mchk}:uvotes:carol"
		for _, args := range [][]interface{}{{logKey, 2 * now.Unix(), "a" + a.ID}, {logKey, 4, "x1"}} {
			if _, err := do("ZADD", args...); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := do("HSET", "{mchk}:suspended", "zed", "q 5", "yan", fmt.Sprint("r ", now.Add(2*time.Hour).UnixMilli())); err != nil {
			t.Fatal(err)
		}
		code, out, _ := votectl(t, addr, "", "-prefix", "mchk", "check")
		for _, want := range []string{"article 1 logged as -1, its voter record holds 1", `entry "x1" at 4 is no logged vote`,
			`user "zed" holds "q 5", no suspension`, "a vote does not read it", "4 problems (0 repairable"} {
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
