package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
)

// lineOf is a vote log's line (ilayout.LogEntry) of a vote on the
// article (comment false) or comment id at at.
func lineOf(comment bool, id string, vote int, at int64) string {
	return ilayout.LogEntry{Comment: comment, ID: id, Vote: vote, At: at}.Line()
}

// TestCheckPosterReupvoteOnComment: a comment's poster who cancels
// their own upvote and upvotes again has the vote logged
// (comment_vote.lua, docs/OPERATIONS.md "Moderation"), while the comment
// voter record holds no field for it (the upvote is implied again):
// check takes the implied upvote as standing (comments.go
// checker.commentVotes) and finds the store it wrote clean.
func TestCheckPosterReupvoteOnComment(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st, _, c := commentedStore(t, addr, "mchk3", voting.WithKeyPrefix("mchk3"), voting.WithClock(func() time.Time { return now }),
			voting.WithVoteLog())
		if _, err := st.VoteComment(ctx, c.Poster, c.ID, voting.CancelVote); err != nil {
			t.Fatal(err)
		}
		if _, err := st.VoteComment(ctx, c.Poster, c.ID, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mchk3", "check"); code != 0 {
			t.Fatalf("check: %d\n%s%s", code, out, errs)
		}
	})
}

// TestCheckRepairsVoteLogs: check finds the vote logs' lines and the
// voter records' links that disagree, and -repair mends each through
// the store's restore script: a stray line taken back, a plain vote
// linked to its line, a value pointing to no line linked to the vote's
// line, or unlinked where the log lost it, and a comment poster's
// implied upvote logged linked again (its field set); the check after
// is clean, and the votes stand as they did.
func TestCheckRepairsVoteLogs(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st, a, c := commentedStore(t, addr, "mrep", voting.WithKeyPrefix("mrep"), voting.WithClock(func() time.Time { return now }),
			voting.WithVoteLog())
		votes := []struct {
			user string
			v    voting.VoteType
		}{{"bob", voting.Upvote}, {"carol", voting.Upvote}, {"dave", voting.Downvote}, {"erin", voting.Upvote}}
		for _, x := range votes {
			if _, err := st.Vote(ctx, x.user, a.ID, x.v); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range []voting.VoteType{voting.CancelVote, voting.Upvote} { // bob's own upvote cast again, logged
			if _, err := st.VoteComment(ctx, c.Poster, c.ID, v); err != nil {
				t.Fatal(err)
			}
		}
		voted, cvoted, field := "{mrep}:voted:"+a.ID, "{mrep}:cvoted:"+a.ID, c.ID+":"+c.Poster
		hget := func(key, f string) string {
			v, _ := redis.String(do("HGET", key, f))
			return v
		}
		own := len(lineOf(false, a.ID, 1, now.Unix()))        // the offset of bob's own upvote's line
		stray := own + len(lineOf(true, c.ID, 1, now.Unix())) // of the stray line below
		if v, want := hget(cvoted, field), fmt.Sprint("1@", own); v != want {
			t.Fatalf("bob's own upvote cast again: %q, want %s (after his upvote's line)", v, want)
		}
		line := lineOf(false, a.ID, -1, now.Unix())
		for _, cmd := range [][]interface{}{
			{"APPEND", "{mrep}:ulog:bob", line}, // a stray line of bob's, at stray
			{"HSET", voted, "carol", "1"},       // carol's vote unlinked
			{"HSET", voted, "dave", "-1@7"},     // dave's pointing to no line
			{"DEL", "{mrep}:ulog:erin"},         // erin's log lost
			{"HDEL", cvoted, field},             // bob's own upvote implied, its line live
		} {
			if _, err := do(cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "mrep", "check")
		for _, want := range []string{
			`{mrep}:ulog:bob: the line at offset ` + fmt.Sprint(stray) + ` logs a downvote on the article 1, but its voter record holds "1@0", its line at offset 0 (taken back)`,
			`{mrep}:ulog:carol: "carol"'s vote on the article 1 is logged at offset 0, but its value "1" does not link it (linked to it)`,
			`{mrep}:ulog:dave: "dave"'s vote on the article 1 is "-1@7", which links no live line of it; the line at offset 0 is its (linked to it)`,
			`{mrep}:ulog:erin: "erin"'s vote on the article 1 is "1@0", which links no live line of it, and none is (unlinked)`,
			`{mrep}:ulog:bob: "bob"'s vote on the comment ` + c.ID + ` is logged at offset ` + fmt.Sprint(own) + `, but its value "1" does not link it (linked to it)`,
			"5 problems (5 repairable with -repair)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("check lacks %s:\n%s%s", want, out, errs)
			}
		}
		if code != 1 {
			t.Errorf("check: exit %d, want 1", code)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mrep", "check", "-repair"); code != 0 {
			t.Fatalf("check -repair: %d\n%s%s", code, out, errs)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mrep", "check")
		if code != 0 || !strings.Contains(out, "vote logs: 1 standing votes are in no log") {
			t.Errorf("check after -repair: %d, want 0 and erin's vote in no log:\n%s%s", code, out, errs)
		}
		for _, x := range []struct{ key, field, want string }{
			{voted, "bob", "1@0"}, {voted, "carol", "1@0"}, {voted, "dave", "-1@0"}, {voted, "erin", "1"}, {cvoted, field, fmt.Sprint("1@", own)},
		} {
			if v := hget(x.key, x.field); v != x.want {
				t.Errorf("%s %s: %q, want %q", x.key, x.field, v, x.want)
			}
		}
		if v, _ := redis.String(do("GETRANGE", "{mrep}:ulog:bob", stray, stray)); v != "x" {
			t.Errorf("bob's stray line: %q, want taken back", v)
		}
		got, _, err := st.VotesBy(ctx, "bob", "", 10)
		if err != nil || len(got) != 2 {
			t.Errorf("VotesBy(bob) = %v, %v: want his two upvotes", got, err)
		}
	})
}

// TestExportReadsLongLogs: export reads a vote log in chunks (journal),
// its lines across a chunk's end whole, oldest first, the lines taken
// back left out; a line the store never writes fails the export with
// its offset, and is a problem of check, which reads on past one longer
// than any line.
func TestExportReadsLongLogs(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		commentedStore(t, addr, "mlong", voting.WithKeyPrefix("mlong"), voting.WithVoteLog())
		var log strings.Builder
		var want []string
		for i := 1; log.Len() < 3*logChunk; i++ {
			id := strconv.Itoa(100 + i) // articles gone: not checked against a voter record
			switch {
			case i%7 == 0:
				log.WriteString(lineOf(false, id, 0, 1900000000))
			case i%3 == 0:
				log.WriteString(lineOf(true, id, -1, 1900000001))
				want = append(want, `{"type":"uvote","id":"`+id+`","user":"zed","vote":-1,"at":1900000001,"item":"comment"}`)
			default:
				log.WriteString(lineOf(false, id, 1, 1900000000))
				want = append(want, `{"type":"uvote","id":"`+id+`","user":"zed","vote":1,"at":1900000000,"item":"article"}`)
			}
		}
		if _, err := do("SET", "{mlong}:ulog:zed", log.String()); err != nil {
			t.Fatal(err)
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "mlong", "export")
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, `"type":"uvote"`) {
				got = append(got, l)
			}
		}
		if code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("export: %d, %d uvote lines, want %d (%s)", code, len(got), len(want), errs)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mlong", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
		// A value of no log, longer than a line, then a stray line: one
		// problem each, the second read past the first.
		junk := strings.Repeat("z", logChunk+10)
		if _, err := do("SET", "{mlong}:ulog:yan", junk+"\n"+lineOf(false, "1", 1, 1900000000)); err != nil {
			t.Fatal(err)
		}
		code, out, errs = votectl(t, addr, "", "-prefix", "mlong", "check")
		for _, want := range []string{`{mlong}:ulog:yan: the line at offset 0, "zzzz`,
			fmt.Sprintf("{mlong}:ulog:yan: the line at offset %d logs an upvote on the article 1, but its voter record holds no counted vote (taken back)", len(junk)+1),
			"2 problems (1 repairable"} {
			if !strings.Contains(out, want) {
				t.Errorf("check lacks %s: %d\n%s%s", want, code, out, errs)
			}
		}
		if _, err := do("DEL", "{mlong}:ulog:yan"); err != nil {
			t.Fatal(err)
		}
		cut := strings.TrimSuffix(lineOf(false, "1", 1, 1900000000), "\n")
		if _, err := do("APPEND", "{mlong}:ulog:zed", cut); err != nil { // no newline
			t.Fatal(err)
		}
		code, _, errs = votectl(t, addr, "", "-prefix", "mlong", "export")
		if wantErr := fmt.Sprintf(`the line at offset %d, %q, is no logged vote (run check)`, log.Len(), cut); code == 0 ||
			!strings.Contains(errs, wantErr) {
			t.Errorf("export of a line cut short: %d %q, want %s", code, errs, wantErr)
		}
	})
}

// TestResumeWritesVoteLogsOnce: an import resumed after it wrote part of
// a vote log finds the lines written at their offsets and appends the
// rest, and links the votes again: the store it leaves exports the same
// lines as its source, each log once, and checks clean.
func TestResumeWritesVoteLogsOnce(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st, a, c := commentedStore(t, addr, "lsrc", voting.WithKeyPrefix("lsrc"), voting.WithClock(func() time.Time { return now }),
			voting.WithVoteLog())
		for _, v := range []voting.VoteType{voting.Upvote, voting.Downvote} { // a line taken back, then one live
			if _, err := st.Vote(ctx, "carol", a.ID, v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.VoteComment(ctx, "carol", c.ID, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		_, export, _ := votectl(t, addr, "", "-prefix", "lsrc", "export")
		if code, _, errs := votectl(t, addr, export, "-prefix", "ldst", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		// Interrupted after carol's first line: her second gone, her
		// votes not linked yet.
		first := lineOf(false, a.ID, -1, now.Unix())
		for _, cmd := range [][]interface{}{
			{"SET", "{ldst}:votectl:import", "x"},
			{"SET", "{ldst}:ulog:carol", first},
			{"HSET", "{ldst}:voted:" + a.ID, "carol", "-1"},
			{"HSET", "{ldst}:cvoted:" + a.ID, c.ID + ":carol", "1"},
		} {
			if _, err := do(cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "ldst", "import", "-resume"); code != 0 {
			t.Fatalf("import -resume: %d %s", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "ldst", "export"); again != export {
			t.Errorf("export | import, resumed | export differs:\n%s\n%s", export, again)
		}
		if log, _ := redis.String(do("GET", "{ldst}:ulog:carol")); log != first+lineOf(true, c.ID, 1, now.Unix()) {
			t.Errorf("carol's log after the resumed import: %q", log)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "ldst", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
	})
}

// TestImportOfLayout6VoteLogs: an export of layout 6 listed a user's vote
// log newest first, and kept a comment poster's upvote cast again
// implied (no cvote line): import writes the log oldest first, links
// the votes, the poster's upvote with a field as layout 7 keeps it, and
// the store exports as one of layout 7 would.
func TestImportOfLayout6VoteLogs(t *testing.T) {
	onRedis(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st, a, c := commentedStore(t, addr, "l7", voting.WithKeyPrefix("l7"), voting.WithClock(func() time.Time { return now }),
			voting.WithVoteLog())
		if _, err := st.Vote(ctx, "carol", a.ID, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		for _, x := range []struct {
			user string
			v    voting.VoteType
		}{{"carol", voting.Downvote}, {"bob", voting.CancelVote}, {"bob", voting.Upvote}} {
			if _, err := st.VoteComment(ctx, x.user, c.ID, x.v); err != nil {
				t.Fatal(err)
			}
		}
		_, export, _ := votectl(t, addr, "", "-prefix", "l7", "export")
		// As layout 6 wrote it: carol's lines newest first, bob's own
		// upvote implied.
		own := `{"type":"cvote","id":"` + c.ID + `","user":"bob","vote":1}`
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(export, "\n"), "\n") {
			if l != own {
				lines = append(lines, strings.Replace(l, `"identity":"7 `, `"identity":"6 `, 1))
			}
		}
		carol := []int{6, 7}
		if !strings.Contains(export, own) || !strings.Contains(lines[0], `"identity":"6 `) ||
			!strings.Contains(lines[carol[0]], `"user":"carol"`) || !strings.Contains(lines[carol[1]], `"user":"carol"`) {
			t.Fatalf("the export of layout 7, its own upvote line %v:\n%s", strings.Contains(export, own), export)
		}
		lines[carol[0]], lines[carol[1]] = lines[carol[1]], lines[carol[0]]
		if code, _, errs := votectl(t, addr, strings.Join(lines, "\n")+"\n", "-prefix", "l6", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "l6", "export"); again != export {
			t.Errorf("export of layout 6 | import | export differs from layout 7's:\n%s\n%s", export, again)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "l6", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
	})
}
