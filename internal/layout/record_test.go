package layout

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// luaPattern turns a Lua pattern of lua/lib (only %d, %S, anchors,
// captures and position captures) into a Go regexp, and counts its
// captures of values.
func luaPattern(t *testing.T, src, name string) (*regexp.Regexp, int) {
	t.Helper()
	p := luaLocals(t, src, name)[0]
	p = strings.Trim(p, "'")
	p = strings.ReplaceAll(p, "()", "")
	n := strings.Count(p, "(")
	p = strings.NewReplacer("%d", "[0-9]", "%S", `\S`).Replace(p)
	return regexp.MustCompile(`(?s)` + p), n
}

// TestLuaRecords: the records the codecs write match the patterns the
// scripts read them by (lib/record.lua RECORD, VOTE_META; lib/tree.lua
// CREC), with one capture a field of the head; the fixed places are
// lib/tree.lua's; and what the codecs write they read back.
func TestLuaRecords(t *testing.T) {
	src := lib(t)
	r := Record{Up: 12, Down: MaxCount, Posted: -5, Weight: "432.0", Orders: "top,hot", Poster: "a b:", Title: ": 1 2", Link: ":x"}
	re, n := luaPattern(t, src, "RECORD")
	if s := r.String(); !re.MatchString(s) || n != recordFields {
		t.Errorf("RECORD %v, %d captures, does not read %q (%d fields)", re, n, s, recordFields)
	}
	if got, err := ParseRecord(r.String()); err != nil || got != r {
		t.Errorf("ParseRecord(%q) = %+v, %v", r.String(), got, err)
	}
	m := VoteMeta{Up: 1, Down: 2, Groups: 3, Posted: 4, Closes: 5, Weight: "0.5", Orders: ""}
	re, n = luaPattern(t, src, "VOTE_META")
	if s := m.String(); !re.MatchString(s) || n != 7 {
		t.Errorf("VOTE_META %v, %d captures, does not read %q", re, n, s)
	}
	if got, err := ParseVoteMeta(m.String()); err != nil || got != m {
		t.Errorf("ParseVoteMeta(%q) = %+v, %v", m.String(), got, err)
	}
	c := CommentRecord{Up: 1, Down: 2, Replies: 3, First: "4", Last: "9999999999", Next: "", Prev: "7", Deleted: true,
		Article: "8", Parent: "9", Posted: -1, Closes: 11, Depth: 2, Orders: "", Weight: "", Poster: "p: 1", Body: " 2:3"}
	re, n = luaPattern(t, src, "CREC")
	if s := c.String(); !re.MatchString(s) || n != commentFields {
		t.Errorf("CREC %v, %d captures, does not read %q (%d fields)", re, n, s, commentFields)
	}
	if got, err := ParseCommentRecord(c.String()); err != nil || got != c {
		t.Errorf("ParseCommentRecord(%q) = %+v, %v", c.String(), got, err)
	}
	s := c.String()
	for _, f := range []struct {
		at   int
		want string
	}{{CUp, Counts(c.Up, c.Down)}, {CDown, Count(c.Down)}, {CReplies, Count(c.Replies)}, {CFirst, PadLink(c.First)},
		{CLast, PadLink(c.Last)}, {CNext, PadLink(c.Next)}, {CPrev, PadLink(c.Prev)}, {CDeleted, "1"}, {CMeta, c.Article + " "}} {
		if !strings.HasPrefix(s[f.at:], f.want) {
			t.Errorf("at %d, %q holds no %q", f.at, s, f.want)
		}
	}
	v := luaLocals(t, src, "C_UP", "C_DOWN", "C_REPLIES", "C_FIRST", "C_LAST", "C_NEXT", "C_PREV", "C_DELETED", "C_META")
	for i, n := range []int{CUp, CDown, CReplies, CFirst, CLast, CNext, CPrev, CDeleted, CMeta} {
		if v[i] != strconv.Itoa(n) {
			t.Errorf("lib/tree.lua offset %d is %s, internal/layout %d", i, v[i], n)
		}
	}
	if h := luaLocals(t, src, "HEAD")[0]; h != strconv.Itoa(CommentHead) {
		t.Errorf("HEAD: lua/lib says %s, internal/layout %d", h, CommentHead)
	}
	if nl := luaLocals(t, src, "NO_LINK")[0]; nl != "'"+PadLink("")+"'" {
		t.Errorf("NO_LINK: lua/lib says %s, internal/layout %q", nl, PadLink(""))
	}
	for _, x := range []struct {
		v            string
		vote         int
		shadow, okay bool
	}{{"1", 1, false, true}, {"-1", -1, false, true}, {"1s", 1, true, true}, {"-1s", -1, true, true}, {"0", 0, false, true}, {"", 0, false, false}, {"0s", 0, false, false}} {
		vote, shadow, ok := ParseVoteValue(x.v)
		if vote != x.vote || shadow != x.shadow || ok != x.okay || ok && VoteValue(vote, shadow) != x.v {
			t.Errorf("ParseVoteValue(%q) = %d, %v, %v", x.v, vote, shadow, ok)
		}
	}
	for _, w := range []float64{0, 432, 0.00001, 1e21, 1.5} {
		if s := FormatWeight(w); !strings.Contains(s, ".") || strings.ContainsAny(s, "e+") {
			t.Errorf("FormatWeight(%v) = %q", w, s)
		}
	}
}

// TestParseMalformed: values the scripts never write are errors that
// wrap ErrMalformed, never a panic.
func TestParseMalformed(t *testing.T) {
	for _, s := range []string{"", "x", "0000000001 0000000000 5 432.0  1 1", "0000000001 0000000000 5 432.0  1 5:pt",
		"1 0 5 432.0  1 1:pt", "0000000001 0000000000 5 432.0  -1 1:pt", "0000000001 0000000000 5.5 432.0  1 1:pt",
		"0000000001 0000000000 5 x  1 1:pt", "0000000001 0000000000 5 -1.0  1 1:pt", "0000000001 0000000000 9007199254740993 1.0  1 1:pt",
		"0000000001 0000000000 5 432.0  99999999999999999999 1:pt", "0000000001 0000000000 5 432.0 1 1:pt",
		"0000000001 0000000000 5 432.0  9000000000000000000 9000000000000000000:pt"} {
		if r, err := ParseRecord(s); err == nil {
			t.Errorf("ParseRecord(%q) = %+v, nil", s, r)
		}
	}
	c := CommentRecord{Up: 1, Article: "8", Posted: 1, Closes: 2, Poster: "p", Body: "b"}.String()
	for _, s := range []string{"", c[:20], strings.Replace(c, " 0 8 ", " 2 8 ", 1), strings.Replace(c, " 8 0 ", " 08 0 ", 1),
		strings.Replace(c, " 8 0 ", " 8 10000000000 ", 1), strings.Replace(c, "1:p", "9:p", 1), "1" + c[1:10] + c,
		strings.Replace(c, "  1:p", " x 1:p", 1), strings.Replace(c, " 0  ", " -1  ", 1)} {
		if r, err := ParseCommentRecord(s); err == nil {
			t.Errorf("ParseCommentRecord(%q) = %+v, nil", s, r)
		}
	}
	for _, s := range []string{"", "0000000001 0000000000 0 5 6 432.0", "1 0 0 5 6 432.0 ", "0000000001 0000000000 0 5 6 x ",
		"0000000001 0000000000 -1 5 6 432.0 ", "0000000001 0000000000 0 5 6 432.0  "} {
		if m, err := ParseVoteMeta(s); err == nil {
			t.Errorf("ParseVoteMeta(%q) = %+v, nil", s, m)
		}
	}
}

func TestBucketOf(t *testing.T) {
	for _, c := range []struct{ size, t, n int64 }{
		{600, 0, 0}, {600, 599, 0}, {600, 600, 1}, {600, -1, -1}, {600, -600, -1}, {600, -601, -2},
		{86400, 1900000000, 21990},
	} {
		if n := BucketOf(c.size, c.t); n != c.n {
			t.Errorf("BucketOf(%d, %d) = %d, want %d", c.size, c.t, n, c.n)
		}
	}
	if got := Bucket(600, -601); got != "top:600:-2" {
		t.Errorf("Bucket(600, -601) = %q", got)
	}
}

func TestLogEntry(t *testing.T) {
	for _, e := range []LogEntry{{ID: "12", Vote: 1, At: 1900000000}, {Comment: true, ID: "7", Vote: -1, At: -5}} {
		got, ok := ParseLogEntry(e.Member(), float64(e.Score()))
		if !ok || got != e {
			t.Errorf("%+v: reads back %+v, %v", e, got, ok)
		}
	}
	for _, c := range []struct {
		m     string
		score float64
	}{{"a", 2}, {"x12", 2}, {"a012", 2}, {"a12", 2.5}, {"a12", 1 << 54}} {
		if e, ok := ParseLogEntry(c.m, c.score); ok {
			t.Errorf("ParseLogEntry(%q, %v) = %+v, want no entry", c.m, c.score, e)
		}
	}
}

func TestSuspensionValue(t *testing.T) {
	if mode, ms, ok := ParseSuspension(SuspensionValue(SuspendShadow, 42)); !ok || mode != SuspendShadow || ms != 42 {
		t.Errorf("shadow 42 reads %q %d %v", mode, ms, ok)
	}
	for _, v := range []string{"", "r", "r x", "x 5", "r -5", "r 05", "s 1 "} {
		if mode, ms, ok := ParseSuspension(v); ok {
			t.Errorf("ParseSuspension(%q) = %q %d, want none", v, mode, ms)
		}
	}
}
