package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// Issue 36: import's validation is the codec's. Each number field of an
// article line and of a comment line (and of the lines beside them that
// hold a comment id, a karma or a time in ms), at its limit, imports, and
// the store reads it back; one past it is refused with exit 2, one line
// naming the line and the field, and nothing written.
func TestImportFieldLimits(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		future := time.Now().Add(24 * time.Hour)
		const exact = 1 << 53
		// The lines of a small export: article 1, and comment 5 on it with
		// its comment voter record.
		base := []map[string]any{
			{"type": "options", "format": 1, "identity": strconv.Itoa(voting.LayoutVersion)},
			{"type": "seq", "seq": "1"},
			{"type": "article", "id": "1", "title": "t", "link": "https://example.com/", "poster": "alice",
				"posted": 1700000000, "up": 1, "down": 0, "weight": 432, "closes": future.Unix(), "expires_ms": future.UnixMilli()},
			{"type": "karma", "user": "alice", "karma": 1},
			{"type": "lastpost", "user": "alice", "ms": 1700000000000},
			{"type": "comment", "id": "5", "article": "1", "poster": "bob", "posted": 1700000100, "closes": future.Unix(),
				"up": 1, "down": 0, "orders": []string{"score"}, "weight": 432, "body": "hi"},
			{"type": "cvoted", "id": "1", "marker": "5", "expires_ms": future.UnixMilli()},
			{"type": "cseq", "seq": "5"},
		}
		const article, karma, lastpost, comment, cvoted, cseq = 2, 3, 4, 5, 6, 7
		n := func(v int64) json.Number { return json.Number(strconv.FormatInt(v, 10)) }
		// What a row reads back at its limit, of the article or the comment.
		type reader func(a voting.Article, c voting.Comment) any
		var (
			articleUp     reader = func(a voting.Article, _ voting.Comment) any { return a.Upvotes }
			articleDown   reader = func(a voting.Article, _ voting.Comment) any { return a.Downvotes }
			articlePosted reader = func(a voting.Article, _ voting.Comment) any { return a.Posted.Unix() }
			articleScore  reader = func(a voting.Article, _ voting.Comment) any { return a.Score }
			posterLen     reader = func(a voting.Article, _ voting.Comment) any { return len(a.Poster) }
			commentUp     reader = func(_ voting.Article, c voting.Comment) any { return c.Upvotes }
			commentDown   reader = func(_ voting.Article, c voting.Comment) any { return c.Downvotes }
			commentPosted reader = func(_ voting.Article, c voting.Comment) any { return c.Posted.Unix() }
			bodyLen       reader = func(_ voting.Article, c voting.Comment) any { return len(c.Body) }
		)
		for _, tc := range []struct {
			line       int
			field      string
			at, past   any
			read       reader // the value read back at the limit
			readAt     any
			extraPast  string // a part of the error besides the field
			commentID  bool   // the value is the comment's id, which cseq follows
			articleRef bool   // the value is the article's id, which the others follow
		}{
			{line: article, field: "up", at: n(9999999999), past: n(10000000000), read: articleUp, readAt: int64(9999999999)},
			{line: article, field: "up", at: n(9999999999), past: json.Number("1e10")},
			{line: article, field: "down", at: n(9999999999), past: n(10000000000), read: articleDown, readAt: int64(9999999999)},
			{line: article, field: "posted", at: n(exact), past: n(exact + 1), read: articlePosted, readAt: int64(exact)},
			{line: article, field: "posted", at: n(-exact), past: n(-exact - 1), read: articlePosted, readAt: int64(-exact)},
			{line: article, field: "closes", at: n(exact), past: n(exact + 1)},
			{line: article, field: "expires_ms", at: n(exact), past: n(exact + 1)},
			{line: article, field: "weight", at: json.Number("0"), past: json.Number("-5e-324"), read: articleScore, readAt: float64(1700000000)},
			{line: article, field: "id", at: "9223372036854775807", past: "9223372036854775808", articleRef: true},
			{line: article, field: "poster", at: strings.Repeat("p", voting.MaxNameLen), past: strings.Repeat("p", voting.MaxNameLen+1),
				read: posterLen, readAt: voting.MaxNameLen},
			{line: karma, field: "karma", at: n(exact), past: n(exact + 1)},
			{line: karma, field: "karma", at: n(-exact), past: n(-exact - 1)},
			{line: lastpost, field: "ms", at: n(exact), past: n(exact + 1)},
			{line: comment, field: "id", at: "9999999999", past: "10000000000", commentID: true},
			{line: comment, field: "up", at: n(9999999999), past: n(10000000000), read: commentUp, readAt: int64(9999999999)},
			{line: comment, field: "down", at: n(9999999999), past: n(123456789012), read: commentDown, readAt: int64(9999999999)},
			{line: comment, field: "posted", at: n(exact), past: n(exact + 1), read: commentPosted, readAt: int64(exact)},
			{line: comment, field: "posted", at: n(-exact), past: n(-exact - 1), read: commentPosted, readAt: int64(-exact)},
			{line: comment, field: "closes", at: n(exact), past: n(exact + 1)},
			{line: comment, field: "closes", at: n(-exact), past: n(-exact - 1)},
			{line: comment, field: "weight", at: json.Number("0"), past: json.Number("-5e-324")},
			{line: comment, field: "body", at: strings.Repeat("b", voting.MaxCommentLen), past: strings.Repeat("b", voting.MaxCommentLen+1),
				read: bodyLen, readAt: voting.MaxCommentLen},
			{line: cvoted, field: "marker", at: "9999999999", past: "10000000000"},
			{line: cvoted, field: "expires_ms", at: n(exact), past: n(exact + 1)},
			{line: cseq, field: "cseq", at: "9999999999", past: "10000000000"},
		} {
			name := fmt.Sprintf("%s %s", base[tc.line]["type"], tc.field)
			show := func(v any) string { return fmt.Sprintf("%.24v", v) }
			for _, past := range []bool{false, true} {
				lines := make([]map[string]any, len(base))
				for i, l := range base {
					lines[i] = map[string]any{}
					for k, v := range l {
						lines[i][k] = v
					}
				}
				v := tc.at
				if past {
					v = tc.past
				}
				key := tc.field
				if tc.line == cseq {
					key = "seq"
				}
				lines[tc.line][key] = v
				cid, aid := "5", "1"
				if tc.commentID {
					cid = v.(string)
					lines[cvoted]["marker"], lines[cseq]["seq"] = cid, cid
				}
				if tc.articleRef {
					aid = v.(string)
					lines[comment]["article"], lines[cvoted]["id"] = aid, aid
					if !past { // the seq line, before, would be refused first
						lines[1]["seq"] = aid
					}
				}
				var in strings.Builder
				for _, l := range lines {
					b, err := json.Marshal(l)
					if err != nil {
						t.Fatal(err)
					}
					in.Write(append(b, '\n'))
				}
				do("FLUSHALL")
				code, out, errs := votectl(t, addr, in.String(), "-prefix", "lim", "import")
				if past {
					want := fmt.Sprintf("line %d: ", tc.line+1)
					if code != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, tc.field) ||
						!strings.Contains(errs, "nothing was written") || strings.Count(errs, "\n") != 1 {
						t.Errorf("%s = %s: exit %d, stderr %.300q; want 2, %q and the field\n%s", name, show(v), code, errs, want, out)
					}
					if keys, _ := do("KEYS", "{lim}:*"); len(keys.([]interface{})) != 0 {
						t.Errorf("%s = %s: a refused import wrote %d keys", name, show(v), len(keys.([]interface{})))
					}
					continue
				}
				if code != 0 {
					t.Errorf("%s = %s, at its limit: exit %d\n%s%s", name, show(v), code, out, errs)
					continue
				}
				st, err := voting.New(pool(addr, "lim"), voting.WithKeyPrefix("lim"))
				if err != nil {
					t.Fatal(err)
				}
				arts, err := st.ArticlesByID(ctx, []string{aid})
				if err != nil || len(arts) != 1 {
					t.Errorf("%s = %s, at its limit: article %s reads %v, %v", name, show(v), aid, arts, err)
					continue
				}
				cs, err := st.CommentsByID(ctx, []string{cid})
				if err != nil || len(cs) != 1 {
					t.Errorf("%s = %s, at its limit: comment %s reads %.200v, %v", name, show(v), cid, cs, err)
					continue
				}
				if th, err := st.Thread(ctx, aid, voting.Best, voting.MaxThread); err != nil || len(th) != 1 {
					t.Errorf("%s = %s, at its limit: thread %.200v, %v", name, show(v), th, err)
				}
				if tc.read != nil {
					if got := tc.read(arts[0], cs[0]); got != tc.readAt {
						t.Errorf("%s = %s, at its limit: reads %v (%T), want %v", name, show(v), got, got, tc.readAt)
					}
				}
			}
		}
	})
}
