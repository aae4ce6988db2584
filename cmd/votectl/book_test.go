package main

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// book runs the book's own Python, post_article and article_vote
// (Redis in Action, listings 1.6 and 1.7; shared/seeds), command for
// command as redis-py sends them, and group, as listing 1.10's
// add_remove_groups adds: time.time() is a float, which redis-py writes
// as repr(float) (repr: pyRepr), in the article's hash and in both zsets,
// and which ZINCRBY then adds 432 to a vote. The book's ports write the
// same commands with whole seconds (repr: portRepr).
type book struct {
	do   func(string, ...interface{}) (interface{}, error)
	now  func() float64       // time.time()
	repr func(float64) string // how the client writes a float
}

const (
	oneWeekInSeconds = 7 * 86400
	voteScore        = 432
)

// pyRepr is Python 3's repr of a float, as redis-py encodes one, for
// 1e-4 <= |f| < 1e16 (a Unix time's range), where repr writes the
// shortest digits that read back, without an exponent, and ".0" for a
// whole number: "1794637728.0", "1794637728.4259844".
func pyRepr(f float64) string {
	s := portRepr(f)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// portRepr is how the book's ports write a time of whole seconds, and a
// score of one: an integer, "1794637728".
func portRepr(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// postArticle is the book's post_article:
//
//	article_id = str(conn.incr('article:'))
//	voted = 'voted:' + article_id
//	conn.sadd(voted, user)
//	conn.expire(voted, ONE_WEEK_IN_SECONDS)
//	now = time.time()
//	article = 'article:' + article_id
//	conn.hmset(article, {'title': title, 'link': link, 'poster': user, 'time': now, 'votes': 1})
//	conn.zadd('score:', article, now + VOTE_SCORE)
//	conn.zadd('time:', article, now)
//	return article_id
func (b *book) postArticle(user, title, link string) string {
	n, _ := b.do("INCR", "article:")
	articleID := strconv.FormatInt(n.(int64), 10)
	voted := "voted:" + articleID
	b.do("SADD", voted, user)
	b.do("EXPIRE", voted, oneWeekInSeconds)
	now := b.now()
	article := "article:" + articleID
	b.do("HMSET", article, "title", title, "link", link, "poster", user, "time", b.repr(now), "votes", 1)
	b.do("ZADD", "score:", b.repr(now+voteScore), article)
	b.do("ZADD", "time:", b.repr(now), article)
	return articleID
}

// group adds the article id to groups, as the book's add_remove_groups.
func (b *book) group(id string, groups ...string) {
	for _, g := range groups {
		b.do("SADD", "group:"+g, "article:"+id)
	}
}

// articleVote is the book's article_vote:
//
//	cutoff = time.time() - ONE_WEEK_IN_SECONDS
//	if conn.zscore('time:', article) < cutoff:
//	    return
//	article_id = article.partition(':')[-1]
//	if conn.sadd('voted:' + article_id, user):
//	    conn.zincrby('score:', article, VOTE_SCORE)
//	    conn.hincrby(article, 'votes', 1)
func (b *book) articleVote(user, article string) {
	cutoff := b.now() - oneWeekInSeconds
	s, _ := b.do("ZSCORE", "time:", article)
	if t, _ := strconv.ParseFloat(string(s.([]byte)), 64); t < cutoff {
		return
	}
	articleID := article[strings.LastIndex(article, ":")+1:]
	if n, _ := b.do("SADD", "voted:"+articleID, user); n.(int64) == 1 {
		b.do("ZINCRBY", "score:", voteScore, article)
		b.do("HINCRBY", article, "votes", 1)
	}
}

func TestImportBook(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		skipBookOnCluster(t, addr)
		now := time.Now().Unix()
		clock := float64(now - 10*86400)
		b := &book{do: do, now: func() float64 { return clock }, repr: portRepr}
		old := b.postArticle("user:1", "old", "https://a")
		b.articleVote("user:2", "article:"+old)
		var ids []string
		for i := 0; i < 30; i++ {
			clock = float64(now - 3600 + int64(i/2)) // ties in time, and in score
			ids = append(ids, b.postArticle("user:"+strconv.Itoa(i%3), "t"+strconv.Itoa(i), "https://x/"+strconv.Itoa(i)))
		}
		for i, id := range ids {
			for u := 0; u < i%4; u++ {
				b.articleVote("user:"+strconv.Itoa(10+u), "article:"+id)
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

// Issue 36: import-book imports what the book's own code writes, float
// times included: each article at the whole second its time falls in,
// its votes and its voters; the book's score, time plus 432 a vote in
// floats, is no warning. A time that is no number is refused, and
// nothing is written.
func TestImportBookFloatTimes(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		skipBookOnCluster(t, addr)
		ctx := context.Background()
		start := float64(time.Now().Unix()) + 0.4259844
		clock := start - 10*86400
		b := &book{do: do, now: func() float64 { return clock }, repr: pyRepr}
		old := b.postArticle("user:1", "old", "https://a")
		b.articleVote("user:2", "article:"+old)
		var ids []string
		for i := 0; i < 40; i++ {
			// A third of a second apart: several a second, one at a whole second.
			clock = start - 3600 + float64(i)/3
			if i == 7 {
				clock = math.Floor(clock)
			}
			ids = append(ids, b.postArticle("user:"+strconv.Itoa(i%3), "t"+strconv.Itoa(i), "https://x/"+strconv.Itoa(i)))
		}
		clock = start
		for i, id := range ids {
			for u := 0; u < i%5; u++ {
				b.articleVote("user:"+strconv.Itoa(10+u), "article:"+id)
			}
		}
		if v, _ := do("HGET", "article:"+ids[7], "time"); !strings.HasSuffix(string(v.([]byte)), ".0") {
			t.Fatalf("the book's whole-second time reads %q, want repr's %q", v, pyRepr(math.Floor(start-3600+7.0/3)))
		}
		code, _, errs := votectl(t, addr, "", "-prefix", "py", "import-book")
		if code != 0 || strings.Contains(errs, "import-book:") {
			t.Fatalf("import-book of the book's own data: %d %s", code, errs)
		}
		st, err := voting.New(pool(addr, "py"), voting.WithKeyPrefix("py"), voting.WithPageSize(100))
		if err != nil {
			t.Fatal(err)
		}
		all := append([]string{old}, ids...)
		got, err := st.ArticlesByID(ctx, all)
		if err != nil || len(got) != len(all) {
			t.Fatalf("ArticlesByID: %d, %v; want %d", len(got), err, len(all))
		}
		for i, id := range all {
			f, _ := redis.Strings(do("HMGET", "article:"+id, "time", "votes", "poster"))
			bt, _ := strconv.ParseFloat(f[0], 64)
			votes, _ := strconv.ParseInt(f[1], 10, 64)
			a := got[i]
			if a.Posted.Unix() != int64(math.Floor(bt)) || a.Upvotes != votes || a.Downvotes != 0 || a.Poster != f[2] ||
				a.Score != math.Floor(bt)+voteScore*float64(votes) {
				t.Errorf("article %s: %+v, the book's time %s and votes %d", id, a, f[0], votes)
			}
		}
		// Time order: by the whole second, ties by id, newest first.
		want := slices.Clone(all)
		slices.SortFunc(want, func(x, y string) int {
			tx, _ := strconv.ParseFloat(mustString(t, do, "article:"+x), 64)
			ty, _ := strconv.ParseFloat(mustString(t, do, "article:"+y), 64)
			if c := cmpFloat(math.Floor(ty), math.Floor(tx)); c != 0 {
				return c
			}
			nx, _ := strconv.Atoi(x)
			ny, _ := strconv.Atoi(y)
			return ny - nx
		})
		page, err := st.Articles(ctx, voting.TimeDesc, 1)
		if err != nil || len(page) != len(want) {
			t.Fatalf("Articles(TimeDesc): %d, %v", len(page), err)
		}
		for i, a := range page {
			if a.ID != want[i] {
				t.Errorf("time rank %d: article %s, want %s", i, a.ID, want[i])
			}
		}
		if _, err := st.Vote(ctx, "user:99", old, voting.Upvote); err == nil {
			t.Error("a vote on the book's week-old article was counted")
		}
		if r, err := st.Vote(ctx, "user:10", ids[3], voting.Upvote); err != nil || r.Previous != voting.Upvote {
			t.Errorf("the book's voter's vote: %+v %v, want a standing upvote", r, err)
		}
		if code, out, _ := votectl(t, addr, "", "-prefix", "py", "check"); code != 0 {
			t.Errorf("check after import-book: %d\n%s", code, out)
		}
		// Garbage in the time field, the zset's score beside it: refused.
		for _, bad := range []string{"abc", "nan", "inf", "-Inf", "1e400", "0x1p30", "1_794_637_728", "+1794637728.5",
			" 1794637728.5", "1794637728.", "9007199254740993.0", ""} {
			do("HSET", "article:"+ids[5], "time", bad)
			code, _, errs := votectl(t, addr, "", "-prefix", "pybad", "import-book")
			if code != 2 || !strings.Contains(errs, "article:"+ids[5]+": time") || !strings.Contains(errs, "nothing was written") {
				t.Errorf("import-book of time %q: %d %q", bad, code, errs)
			}
			if n, _ := do("KEYS", "{pybad}:*"); len(n.([]interface{})) != 0 {
				t.Fatalf("import-book of time %q wrote %d keys", bad, len(n.([]interface{})))
			}
		}
		for _, bad := range []string{"1.5", "-1", "10000000000", "x"} {
			do("HSET", "article:"+ids[5], "time", pyRepr(start), "votes", bad)
			code, _, errs := votectl(t, addr, "", "-prefix", "pybad", "import-book")
			if code != 2 || !strings.Contains(errs, "votes") {
				t.Errorf("import-book of votes %q: %d %q", bad, code, errs)
			}
		}
	})
}

// mustString returns the book's time field of article.
func mustString(t *testing.T, do func(string, ...interface{}) (interface{}, error), article string) string {
	s, err := redis.String(do("HGET", article, "time"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
