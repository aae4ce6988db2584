package voting

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// TestCodecAgrees: the records the scripts write (an article's, its
// voter record's "" field and votes, a comment's, a placeholder's), read
// back after posts, votes, group changes, edits and deletes, parse with
// internal/layout's codecs, which write them again byte for byte, and
// the reads of the package see what the codecs read. The strings hold
// the records' separators; the weights and orders are the store's.
func TestCodecAgrees(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithRawText(), WithEditWindow(time.Hour), WithVoteWeight(0.125),
			WithOrders(Top, Hot, ScoreDesc, Controversial))
		get := func(key string) string {
			t.Helper()
			v, err := redis.String(b.do(t, "GET", key), nil)
			if err != nil {
				t.Fatalf("GET %s: %v", key, err)
			}
			return v
		}
		article := func(what, id string) layout.Record {
			t.Helper()
			rec := get(s.keys.articleKey(id))
			r, err := layout.ParseRecord(rec)
			if err != nil {
				t.Fatalf("%s: article %s: %v: %q", what, id, err, rec)
			}
			if got := r.String(); got != rec {
				t.Fatalf("%s: article %s: the scripts wrote\n%q, the codec writes\n%q", what, id, rec, got)
			}
			if err := r.Check(); err != nil {
				t.Fatalf("%s: article %s: %v", what, id, err)
			}
			a, err := s.Article(ctx, id)
			if err != nil || a.Poster != r.Poster || a.Title != r.Title || a.Link != r.Link || a.Upvotes != r.Up ||
				a.Downvotes != r.Down || a.Posted.Unix() != r.Posted || r.WeightValue() != 0.125 {
				t.Fatalf("%s: article %s reads %+v, %v; its record %+v", what, id, a, err, r)
			}
			meta, err := redis.String(b.do(t, "HGET", s.keys.votedKey(id), ""), nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := layout.ParseVoteMeta(meta)
			if err != nil || m.String() != meta || m.Up != r.Up || m.Down != r.Down || m.Posted != r.Posted ||
				m.Weight != r.Weight || m.Orders != r.Orders {
				t.Fatalf("%s: article %s: voter record field \"\" %q reads %+v, %v; writes %q", what, id, meta, m, err, m.String())
			}
			return r
		}
		comment := func(what, id string) layout.CommentRecord {
			t.Helper()
			rec := get(s.keys.commentKey(id))
			c, err := layout.ParseCommentRecord(rec)
			if err != nil {
				t.Fatalf("%s: comment %s: %v: %q", what, id, err, rec)
			}
			if got := c.String(); got != rec {
				t.Fatalf("%s: comment %s: the scripts wrote\n%q, the codec writes\n%q", what, id, rec, got)
			}
			if err := c.Check(); err != nil || c.HeadLen() != len(rec)-len(c.Body) {
				t.Fatalf("%s: comment %s: %v, head %d of %q", what, id, err, c.HeadLen(), rec)
			}
			return c
		}
		var ids []string
		for _, x := range []struct{ poster, title, link string }{
			{"alice", "t", ""},
			{"bob", "1 2 3: a title", "https://example.com/a b?c=1:2"},
			{"carol", "ünï ✓\n:", ":"},
			{"d 1:2", " 0 0 ", " "},
		} {
			a, err := s.Post(ctx, x.poster, x.title, x.link)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
			if r := article("post", a.ID); r.Poster != x.poster || r.Title != x.title || r.Link != x.link ||
				r.Up != 1 || r.Orders == "" || !r.Has("top") {
				t.Fatalf("post: record %+v", r)
			}
		}
		mustVote(t, s, "v1", ids[1], Downvote)
		mustVote(t, s, "v2", ids[1], Upvote)
		if err := s.AddToGroups(ctx, ids[1], "g1", "g2"); err != nil {
			t.Fatal(err)
		}
		if r := article("votes and groups", ids[1]); r.Up != 2 || r.Down != 1 {
			t.Fatalf("votes: record %+v", r)
		}
		for user, want := range map[string]int{"v1": -1, "v2": 1} {
			v, err := redis.String(b.do(t, "HGET", s.keys.votedKey(ids[1]), user), nil)
			if vote, shadow, ok := layout.ParseVoteValue(v); err != nil || !ok || shadow || vote != want ||
				layout.VoteValue(vote, shadow) != v {
				t.Fatalf("voter record field %s = %q, %v: reads %d, %v, %v", user, v, err, vote, shadow, ok)
			}
		}
		if _, err := s.Edit(ctx, ids[2], "carol", "new: title", "x y"); err != nil {
			t.Fatal(err)
		}
		article("edit", ids[2])

		// Comments: a thread of three levels, votes, a placeholder.
		c1, err := s.Comment(ctx, ids[0], "", "d 1:2", "a body: 1 2")
		if err != nil {
			t.Fatal(err)
		}
		c2, err := s.Comment(ctx, ids[0], c1.ID, "bob", "ünï\n")
		if err != nil {
			t.Fatal(err)
		}
		c3, err := s.Comment(ctx, ids[0], c2.ID, "carol", " 0 0: ")
		if err != nil {
			t.Fatal(err)
		}
		mustVoteComment(t, s, "v1", c2.ID, Downvote)
		if err := s.DeleteComment(ctx, c2.ID); err != nil {
			t.Fatal(err)
		}
		r1, r2, r3 := comment("c1", c1.ID), comment("c2", c2.ID), comment("c3", c3.ID)
		if r1.Parent != "" || r1.Article != ids[0] || r1.First != c2.ID || r1.Poster != "d 1:2" || r1.Body != "a body: 1 2" ||
			r2.Parent != c1.ID || !r2.Deleted || r2.Body != "" || r2.Down != 1 || r2.Depth != 1 ||
			r3.Parent != c2.ID || r3.Depth != 2 || r3.Body != " 0 0: " || r1.Replies != 1 || r1.Weight != "0.125" {
			t.Fatalf("comments' records %+v\n%+v\n%+v", r1, r2, r3)
		}
		cs, err := s.CommentsByID(ctx, []string{c1.ID, c2.ID, c3.ID})
		if err != nil || len(cs) != 3 || cs[0].Body != r1.Body || cs[1].Poster != "" || !cs[1].Deleted ||
			cs[2].Parent != c2.ID || cs[0].Replies != r1.Replies {
			t.Fatalf("CommentsByID = %+v, %v", cs, err)
		}
	})
}

// TestCodecLimits: a record the scripts could not have written (a
// count, a link or an id past its field, a time past 2^53, a weight
// below 0, a length past the end) does not parse, and Check names the
// field of a value past its limit.
func TestCodecLimits(t *testing.T) {
	r := layout.Record{Up: layout.MaxCount, Down: 0, Posted: -layout.MaxExact, Weight: "432.0", Orders: "top",
		Poster: "p", Title: "t", Link: "l"}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	if got, err := layout.ParseRecord(r.String()); err != nil || got != r {
		t.Fatalf("ParseRecord(%q) = %+v, %v", r.String(), got, err)
	}
	for field, bad := range map[string]layout.Record{
		"up":     {Up: layout.MaxCount + 1, Weight: "1.0"},
		"down":   {Down: -1, Weight: "1.0"},
		"posted": {Posted: layout.MaxExact + 1, Weight: "1.0"},
		"weight": {Weight: "-0.5"},
	} {
		if err := bad.Check(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Check of %s past its limit: %v", field, err)
		}
		if _, err := layout.ParseRecord(bad.String()); err == nil {
			t.Errorf("ParseRecord(%q) of %s past its limit: no error", bad.String(), field)
		}
	}
	big := strconv.FormatInt(layout.MaxCount+1, 10)
	c := layout.CommentRecord{Up: 1, First: "9999999999", Article: "9223372036854775807", Parent: "5", Posted: layout.MaxExact,
		Closes: -layout.MaxExact, Depth: 3, Orders: "hot,score", Weight: "0.5", Poster: "p", Body: "b"}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if got, err := layout.ParseCommentRecord(c.String()); err != nil || got != c {
		t.Fatalf("ParseCommentRecord(%q) = %+v, %v", c.String(), got, err)
	}
	for field, f := range map[string]func(c *layout.CommentRecord){
		"replies": func(c *layout.CommentRecord) { c.Replies = layout.MaxCount + 1 },
		"first":   func(c *layout.CommentRecord) { c.First = big },
		"parent":  func(c *layout.CommentRecord) { c.Parent = big },
		"article": func(c *layout.CommentRecord) { c.Article = "9223372036854775808" },
		"closes":  func(c *layout.CommentRecord) { c.Closes = layout.MaxExact + 1 },
		"weight":  func(c *layout.CommentRecord) { c.Weight = "-1.0" },
		"head":    func(c *layout.CommentRecord) { c.Poster = string(make([]byte, layout.CommentHead)) },
	} {
		bad := c
		f(&bad)
		if err := bad.Check(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Check of %s past its limit: %v", field, err)
		}
		if field == "head" {
			continue // a head past CommentHead parses: the scripts refuse to write it
		}
		if _, err := layout.ParseCommentRecord(bad.String()); err == nil {
			t.Errorf("ParseCommentRecord(%q) of %s past its limit: no error", bad.String(), field)
		}
	}
}

// TestDocsRecords: the records docs/LAYOUT.md shows in its Records
// section (an article's, its voter record's "" field, a comment's) are
// what the codecs read and write, byte for byte.
func TestDocsRecords(t *testing.T) {
	b, err := os.ReadFile("docs/LAYOUT.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Records\n")
	if start < 0 {
		t.Fatal("docs/LAYOUT.md has no Records section")
	}
	doc = doc[start+1:]
	if end := strings.Index(doc[1:], "\n## "); end >= 0 {
		doc = doc[:end+1]
	}
	kinds := map[string]int{}
	for _, m := range regexp.MustCompile("`\"(0[0-9]{9}[^`]*)\"`").FindAllStringSubmatch(doc, -1) {
		s := strings.ReplaceAll(m[1], "\n", " ") // lines wrap at a space
		if r, err := layout.ParseRecord(s); err == nil && r.String() == s {
			kinds["article"]++
		} else if c, err := layout.ParseCommentRecord(s); err == nil && c.String() == s {
			kinds["comment"]++
		} else if v, err := layout.ParseVoteMeta(s); err == nil && v.String() == s {
			kinds["meta"]++
		} else {
			t.Errorf("docs/LAYOUT.md's record %q is none the codecs write", s)
		}
	}
	if kinds["article"] == 0 || kinds["comment"] == 0 || kinds["meta"] == 0 {
		t.Errorf("docs/LAYOUT.md's Records show %v; want an article's, a comment's and a voter record's \"\" field", kinds)
	}
}

// BenchmarkParsePage decodes a page of 25 article rows as page.lua
// replies it (parsePage, the codec's ParseRecordWeight), without Redis:
// the read path's Go side, one allocation an article and one for the
// list.
func BenchmarkParsePage(b *testing.B) {
	var page []byte
	for i := 1; i <= 25; i++ {
		rec := record(i*7, i, 1700000000+int64(i), "top", benchPoster(i), benchTitle(i), benchLink(i))
		id := strconv.Itoa(i)
		page = append(page, fmt.Sprintf("%c%s%d+%d %s", 96+len(id), id, len(rec), i, rec)...)
	}
	rest := []interface{}{page}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if l, err := parsePage(rest); err != nil || len(l) != 25 {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseComments decodes 25 comment rows (parseComments, the
// codec's ParseCommentRecordInto), without Redis.
func BenchmarkParseComments(b *testing.B) {
	var rows []interface{}
	for i := 1; i <= 25; i++ {
		rec := fmt.Sprintf("%010d %010d %010d %010d %010d %010d %010d 0 7 %d 1700000000 1700600000 1 hot,score 432.0 5:alicebody of comment %d", i, 0, 0, 0, 0, i+1, 0, i, i)
		rows = append(rows, []byte(strconv.Itoa(i+100)), []byte("1"), []byte(rec))
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if l, err := parseComments(rows); err != nil || len(l) != 25 {
			b.Fatal(err)
		}
	}
}

// TestModerationCodecsAgree: the values moderation's scripts write, a
// vote log's entries, a suspension and a comment vote's field, read with
// internal/layout's codecs as votectl reads them, give back what was
// done, and the codecs write the same members, scores and values.
func TestModerationCodecsAgree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog())
		a := mustPost(t, s, "ann", "t")
		c := mustComment(t, s, a.ID, "", "ann", "c").ID
		mustVote(t, s, "bob", a.ID, Downvote)
		clock.Add(3 * time.Second)
		if _, err := s.VoteComment(ctx, "bob", c, Upvote); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Second)
		mustVote(t, s, "bob", a.ID, Upvote) // marks the downvote's line taken back
		journal, err := redis.Bytes(b.do(t, "GET", s.keys.userVotesKey("bob")), nil)
		if err != nil {
			t.Fatalf("bob's vote log: %v", err)
		}
		want := []layout.LogEntry{
			{ID: a.ID, Vote: 0, At: epoch.Unix()},
			{Comment: true, ID: c, Vote: 1, At: epoch.Unix() + 3},
			{ID: a.ID, Vote: 1, At: epoch.Unix() + 4},
		}
		var got []layout.LogEntry
		var offs []int64
		rest := layout.LogLines(journal, 0, func(e layout.LogEntry, off int64, ok bool) {
			if !ok {
				t.Errorf("line at %d of %q does not parse", off, journal)
			}
			got, offs = append(got, e), append(offs, off)
		})
		if len(rest) != 0 || !slices.Equal(got, want) {
			t.Fatalf("bob's vote log %q reads %+v, want %+v", journal, got, want)
		}
		var lines string
		for _, e := range want {
			lines += e.Line()
		}
		if lines != string(journal) {
			t.Errorf("bob's vote log %q; the codec writes %q", journal, lines)
		}
		for _, c := range []struct{ key, field, want string }{
			{s.keys.votedKey(a.ID), "bob", layout.LoggedVoteValue(1, offs[2])},
			{s.keys.cvoted + a.ID, layout.CVoteField(c, "bob"), layout.LoggedVoteValue(1, offs[1])},
		} {
			v, err := redis.String(b.do(t, "HGET", c.key, c.field), nil)
			if vote, _, ok := layout.ParseVoteValue(v); err != nil || v != c.want || !ok || vote != 1 {
				t.Errorf("bob's vote at %s %s: %q, %v; want %q", c.key, c.field, v, err, c.want)
			}
		}
		for _, m := range []Suspension{Refuse, Shadow} {
			until := epoch.Add(time.Hour)
			if err := s.Suspend(ctx, "eve", m, until); err != nil {
				t.Fatal(err)
			}
			v, err := redis.String(b.do(t, "HGET", s.keys.suspended, "eve"), nil)
			if err != nil {
				t.Fatal(err)
			}
			code := map[Suspension]string{Refuse: layout.SuspendRefuse, Shadow: layout.SuspendShadow}[m]
			mode, ms, ok := layout.ParseSuspension(v)
			if !ok || mode != code || ms != until.UnixMilli() || layout.SuspensionValue(mode, ms) != v {
				t.Errorf("%v: suspension %q reads %q %d %v", m, v, mode, ms, ok)
			}
		}
	})
}
