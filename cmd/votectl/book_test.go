package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// book performs the book's operations (Redis in Action, listings 1.6 to
// 1.10) with plain commands, as its ports do.
type book struct {
	do  func(string, ...interface{}) (interface{}, error)
	now int64
}

func (b *book) post(user, title, link string) string {
	n, _ := b.do("INCR", "article:")
	id := strconv.FormatInt(n.(int64), 10)
	voted := "voted:" + id
	b.do("SADD", voted, user)
	b.do("EXPIRE", voted, bookWeek)
	article := "article:" + id
	b.do("HSET", article, "title", title, "link", link, "poster", user, "time", b.now, "votes", 1)
	b.do("ZADD", "score:", b.now+bookWeight, article)
	b.do("ZADD", "time:", b.now, article)
	return id
}

func (b *book) vote(user, article string) {
	t, _ := b.do("ZSCORE", "time:", article)
	posted, _ := strconv.ParseFloat(string(t.([]byte)), 64)
	if int64(posted) < b.now-bookWeek {
		return
	}
	id := strings.TrimPrefix(article, "article:")
	if n, _ := b.do("SADD", "voted:"+id, user); n.(int64) == 1 {
		b.do("ZINCRBY", "score:", bookWeight, article)
		b.do("HINCRBY", article, "votes", 1)
	}
}

func (b *book) group(id string, groups ...string) {
	for _, g := range groups {
		b.do("SADD", "group:"+g, "article:"+id)
	}
}

func TestImportBook(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		skipBookOnCluster(t, addr)
		now := time.Now().Unix()
		b := &book{do: do, now: now - 10*86400}
		old := b.post("user:1", "old", "https://a")
		b.vote("user:2", "article:"+old)
		var ids []string
		for i := 0; i < 30; i++ {
			b.now = now - 3600 + int64(i/2) // ties in time, and in score
			ids = append(ids, b.post("user:"+strconv.Itoa(i%3), "t"+strconv.Itoa(i), "https://x/"+strconv.Itoa(i)))
		}
		for i, id := range ids {
			for u := 0; u < i%4; u++ {
				b.vote("user:"+strconv.Itoa(10+u), "article:"+id)
			}
		}
		b.group(ids[0], "redis", "go")
		b.group(old, "redis")
		code, _, errs := votectl(t, addr, "", "-prefix", "news", "import-book")
		if code != 0 {
			t.Fatalf("import-book: %d %s", code, errs)
		}
		// An import-book stopped halfway (its marker, an article half
		// written) is finished by the same import-book with -resume.
		do("SET", "{half}:votectl:import", "x")
		do("SET", "{half}:article:3", "partial")
		if code, _, errs := votectl(t, addr, "", "-prefix", "half", "import-book"); code != 2 || !strings.Contains(errs, "-resume") {
			t.Fatalf("import-book over an unfinished one: %d %q", code, errs)
		}
		if code, _, errs := votectl(t, addr, "", "-prefix", "half", "import-book", "-resume"); code != 0 {
			t.Fatalf("import-book -resume: %d %q", code, errs)
		}
		_, whole, _ := votectl(t, addr, "", "-prefix", "news", "export")
		_, resumed, _ := votectl(t, addr, "", "-prefix", "half", "export")
		if resumed == "" || resumed != whole {
			t.Errorf("a resumed import-book exports otherwise than a whole one:\n%s\n----\n%s", resumed, whole)
		}
		ctx := context.Background()
		st, _ := voting.New(pool(addr, "news"), voting.WithKeyPrefix("news"), voting.WithPageSize(100))
		for _, o := range []struct {
			order voting.Order
			key   string
		}{{voting.ScoreDesc, "score:"}, {voting.TimeDesc, "time:"}} {
			page, err := st.Articles(ctx, o.order, 1)
			if err != nil {
				t.Fatal(err)
			}
			// The book's page, ties by id as numbers, newest first.
			want, _ := do("ZREVRANGE", o.key, 0, -1, "WITHSCORES")
			vals := want.([]interface{})
			if len(page) != len(vals)/2 {
				t.Fatalf("%v: %d articles, the book has %d", o.order, len(page), len(vals)/2)
			}
			for i, a := range page {
				s, _ := strconv.ParseFloat(string(vals[2*i+1].([]byte)), 64)
				v := a.Score
				if o.order == voting.TimeDesc {
					v = float64(a.Posted.Unix())
				}
				if v != s {
					t.Errorf("%v rank %d: article %s at %v, the book's rank has %v", o.order, i, a.ID, v, s)
				}
				if i > 0 && v == prevValue(page[i-1], o.order) && !lessID(a.ID, page[i-1].ID) {
					t.Errorf("%v: tie not by id: %s after %s", o.order, a.ID, page[i-1].ID)
				}
			}
		}
		if _, err := st.Vote(ctx, "user:99", old, voting.Upvote); err == nil {
			t.Error("a vote on the book's week-old article was counted")
		}
		if r, err := st.Vote(ctx, "user:10", ids[3], voting.Upvote); err != nil || r.Previous != voting.Upvote {
			t.Errorf("the book's voter's vote: %+v %v, want a standing upvote", r, err)
		}
		if g, _ := st.GroupCount(ctx, "redis"); g != 2 {
			t.Errorf("group redis has %d articles, want 2", g)
		}
		if code, out, _ := votectl(t, addr, "", "-prefix", "news", "check"); code != 0 {
			t.Errorf("check after import-book: %d\n%s", code, out)
		}
		if code, _, errs := votectl(t, addr, "", "-prefix", "news2", "import-book", "-book-prefix", "nothing:"); code != 2 || errs == "" {
			t.Errorf("import-book of no layout: %d %q", code, errs)
		}
		do("HDEL", "article:"+ids[4], "poster")
		code, _, errs = votectl(t, addr, "", "-prefix", "news3", "import-book")
		if code != 2 || !strings.Contains(errs, `no field "poster"`) {
			t.Errorf("import-book with a missing field: %d %q", code, errs)
		}
		if n, _ := do("KEYS", "{news3}:*"); len(n.([]interface{})) != 0 {
			t.Errorf("import-book with a missing field wrote %d keys", len(n.([]interface{})))
		}
	})
}

func prevValue(a voting.Article, o voting.Order) float64 {
	if o == voting.TimeDesc {
		return float64(a.Posted.Unix())
	}
	return a.Score
}

// skipBookOnCluster skips a test of import-book on the cluster: the
// book's keys have no hash tag, and its store spans the nodes, which
// import-book does not read.
func skipBookOnCluster(t *testing.T, addr string) {
	if addr == clusterAddr {
		t.Skip("the book's keys span the cluster's nodes")
	}
}
