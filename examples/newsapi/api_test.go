package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/testclock"
)

// testAPI serves a fresh store on miniredis. Its requests carry a
// token of user, if set (as).
type testAPI struct {
	t       *testing.T
	handler http.Handler
	clock   *testclock.Clock
	logged  *bytes.Buffer
	mr      *miniredis.Miniredis
	store   *voting.Store    // the store it serves
	now     func() time.Time // the API's clock, which tokens expire on
	user    string           // the user of the requests' token; none if ""
	role    role             // and their role
}

// as returns ta sending requests with a token of user, of role user.
func (ta *testAPI) as(user string) *testAPI { return ta.asRole(user, roleUser) }

// asRole returns ta sending requests with a token of user, of role r.
func (ta *testAPI) asRole(user string, r role) *testAPI {
	c := *ta
	c.user, c.role = user, r
	return &c
}

// newRequest returns a request with ta's token, if it has a user: a
// token that expires an hour from the API's now.
func (ta *testAPI) newRequest(method, target, body string) *http.Request {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if ta.user != "" {
		req.Header.Set("Authorization", "Bearer "+mustToken(ta.t, ta.user, ta.role, ta.now().Add(time.Hour)))
	}
	return req
}

// serve sends a request with ta's token and returns the recorded reply.
func (ta *testAPI) serve(method, target, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	ta.handler.ServeHTTP(rec, ta.newRequest(method, target, body))
	return rec
}

// mustToken returns a token of user, role r, expiring at exp, signed
// with testKey.
func mustToken(t *testing.T, user string, r role, exp time.Time) string {
	t.Helper()
	e := exp.Unix()
	token, err := sign(testKey, claims{Sub: user, Role: r, Exp: &e})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// testPageSize is the page size of the tests' stores.
const testPageSize = 2

// testPrefix is the key prefix of the tests' stores.
const testPrefix = "test"

// newTestAPI serves a store with the service's options (cfg, pages of
// testPageSize) on a fresh miniredis, on a test clock.
func newTestAPI(t *testing.T, cfg config) *testAPI {
	mr := miniredis.RunT(t)
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	t.Cleanup(func() { pool.Close() })
	c := testclock.New(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	cfg.prefix = testPrefix
	if cfg.window == 0 {
		cfg.window = voting.DefaultVoteWindow
	}
	store, err := voting.New(pool, append(cfg.storeOptions(testPageSize), voting.WithClock(c.Now))...)
	if err != nil {
		t.Fatal(err)
	}
	ta := newTestAPIOn(t, store, c, cfg)
	ta.mr = mr
	return ta
}

// newTestAPIOn serves store; cfg, if given, sets the API's own settings
// (-user-pages, -karma).
func newTestAPIOn(t *testing.T, store *voting.Store, c *testclock.Clock, cfg ...config) *testAPI {
	var logged bytes.Buffer
	now := time.Now
	if c != nil {
		now = c.Now
	}
	a := &api{store: store, pageSize: testPageSize, log: log.New(&logged, "", 0), key: testKey, now: now}
	for _, c := range cfg {
		a.userPages, a.karma, a.rules, a.timeout, a.voteLog = c.userPages, c.rules.karma != nil, c.rules, c.timeout, c.voteLog
	}
	return &testAPI{t: t, handler: a.routes(), clock: c, logged: &logged, now: now, store: store}
}

// do sends a request and returns the status and the decoded JSON body
// (nil for an empty one). Every reply with a body must be JSON.
func (ta *testAPI) do(method, target, body string) (int, map[string]any) {
	ta.t.Helper()
	var v map[string]any
	return ta.doInto(method, target, body, &v), v
}

// doInto sends a request, decodes the JSON body of the reply (if any)
// into v and returns the status.
func (ta *testAPI) doInto(method, target, body string, v any) int {
	ta.t.Helper()
	rec := ta.serve(method, target, body)
	if rec.Body.Len() == 0 {
		return rec.Code
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		ta.t.Errorf("%s %s: Content-Type %q", method, target, ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		ta.t.Fatalf("%s %s: %d %q is not JSON of a %T: %v", method, target, rec.Code, rec.Body, v, err)
	}
	return rec.Code
}

// must sends a request that must succeed with status want.
func (ta *testAPI) must(want int, method, target, body string) map[string]any {
	ta.t.Helper()
	code, v := ta.do(method, target, body)
	if code != want {
		ta.t.Fatalf("%s %s: %d %v, want %d", method, target, code, v, want)
	}
	return v
}

// fails sends a request that must fail with status want and an error
// body: a code, and a message containing msg.
func (ta *testAPI) fails(want int, msg, method, target, body string) {
	ta.t.Helper()
	ta.failsWith(want, "", msg, method, target, body)
}

// failsWith is fails for an error of the given code ("" for any).
func (ta *testAPI) failsWith(want int, wantCode, msg, method, target, body string) map[string]any {
	ta.t.Helper()
	code, v := ta.do(method, target, body)
	e, _ := v["error"].(string)
	c, _ := v["code"].(string)
	_, retry := v["retry_after"]
	if code != want || !strings.Contains(e, msg) || c == "" || (wantCode != "" && c != wantCode) || len(v) != 2 && !(len(v) == 3 && retry) {
		ta.t.Errorf("%s %s %s: %d %v, want %d {\"code\": %q, \"error\": \"...%s...\"}", method, target, body, code, v, want, wantCode, msg)
	}
	checkMessage(ta.t, method+" "+target, e)
	return v
}

// checkMessage fails t if an error message for API clients names the
// library, its options or Go.
func checkMessage(t *testing.T, what, msg string) {
	t.Helper()
	for _, leak := range []string{"voting:", "voting.", "With", "Err", "json:", "Go ", "struct", "unmarshal", "invalid character"} {
		if strings.Contains(msg, leak) {
			t.Errorf("%s: the error %q names %q", what, msg, leak)
		}
	}
}

// post posts an article, a minute after the previous one, and returns
// its id.
func (ta *testAPI) post(title string) string {
	ta.t.Helper()
	v := ta.as("alice").must(http.StatusCreated, "POST", "/articles", `{"title":"`+title+`"}`)
	ta.clock.Add(time.Minute)
	return v["id"].(string)
}

// ids returns the ids of a page reply, in order.
func ids(v map[string]any) string {
	var list []string
	for _, a := range v["articles"].([]any) {
		list = append(list, a.(map[string]any)["id"].(string))
	}
	return strings.Join(list, ",")
}

func TestPostAndGet(t *testing.T) {
	ta := newTestAPI(t, config{})
	rec := ta.as("alice").serve("POST", "/articles", `{"title":"Redis in Action","link":"https://example.com/1"}`)
	if rec.Code != http.StatusCreated || rec.Header().Get("Location") != "/articles/1" {
		t.Fatalf("POST /articles: %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	want := `{"id":"1","title":"Redis in Action","link":"https://example.com/1","poster":"alice",` +
		`"posted":"2024-01-01T12:00:00Z","score":1704110832,"upvotes":1,"downvotes":0,"comments":0}` + "\n"
	if rec.Body.String() != want {
		t.Errorf("POST /articles:\n got %s\nwant %s", rec.Body, want)
	}
	v := ta.must(http.StatusOK, "GET", "/articles/1", "")
	if v["title"] != "Redis in Action" || v["upvotes"] != 1.0 || len(v["groups"].([]any)) != 0 {
		t.Errorf("GET /articles/1: %v", v)
	}
}

func TestList(t *testing.T) {
	ta := newTestAPI(t, config{})
	for _, title := range []string{"one", "two", "three"} {
		ta.post(title)
	}
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/1/vote", `{"vote":"up"}`)
	for _, tc := range []struct{ query, order, ids string }{
		// The order is echoed as the request names it; "score" by
		// default.
		{"", "score", "1,3"},
		{"?order=score&page=1", "score", "1,3"},
		{"?order=score&page=2", "score", "2"},
		{"?order=score&page=3", "score", ""},
		{"?order=score-desc", "score-desc", "1,3"},
		{"?order=score-asc", "score-asc", "2,3"},
		{"?order=time", "time", "3,2"},
		{"?order=new", "new", "3,2"},
		{"?order=time-desc&page=2", "time-desc", "1"},
		{"?order=time-asc", "time-asc", "1,2"},
		{"?order=old", "old", "1,2"},
	} {
		v := ta.must(http.StatusOK, "GET", "/articles"+tc.query, "")
		if v["order"] != tc.order || ids(v) != tc.ids || v["total"] != 3.0 || v["pages"] != 2.0 {
			t.Errorf("GET /articles%s: order %v, ids %q, total %v, pages %v; want %s, %q, 3, 2",
				tc.query, v["order"], ids(v), v["total"], v["pages"], tc.order, tc.ids)
		}
	}
	ta.fails(http.StatusBadRequest, `order "worst"`, "GET", "/articles?order=worst", "")
	ta.fails(http.StatusBadRequest, `order "TOP"`, "GET", "/articles?order=TOP", "")
	ta.fails(http.StatusBadRequest, `page "x"`, "GET", "/articles?page=x", "")
	ta.fails(http.StatusBadRequest, "page 0 is below 1", "GET", "/articles?page=0", "")
}

// The totals count the articles listed, and the pages they fill: none
// for none.
func TestListTotals(t *testing.T) {
	ta := newTestAPI(t, config{})
	for i, want := range []struct{ total, pages float64 }{{0, 0}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}} {
		if i > 0 {
			id := ta.post("article")
			if i%2 == 1 {
				ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+id+"/groups/odd", "")
			}
		}
		v := ta.must(http.StatusOK, "GET", "/articles?page=9", "")
		if v["total"] != want.total || v["pages"] != want.pages || v["page"] != 9.0 || len(v["articles"].([]any)) != 0 {
			t.Errorf("GET /articles?page=9 of %d articles: %v, want total %v, pages %v", i, v, want.total, want.pages)
		}
	}
	v := ta.must(http.StatusOK, "GET", "/groups/odd?order=hot", "")
	if v["group"] != "odd" || v["order"] != "hot" || v["total"] != 3.0 || v["pages"] != 2.0 || ids(v) != "5,3" {
		t.Errorf("GET /groups/odd?order=hot: %v", v)
	}
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/articles/5", "")
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/articles/1/groups/odd", "")
	if v := ta.must(http.StatusOK, "GET", "/groups/odd", ""); v["total"] != 1.0 || v["pages"] != 1.0 || ids(v) != "3" {
		t.Errorf("GET /groups/odd after a delete and a removal: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/groups/none", ""); v["total"] != 0.0 || v["pages"] != 0.0 || ids(v) != "" {
		t.Errorf("GET /groups/none: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles", ""); v["total"] != 4.0 || v["pages"] != 2.0 {
		t.Errorf("GET /articles after a delete: %v", v)
	}
}

// Reddit's orders, of all articles and of a group. Articles 1, 2, 3:
// 1 has 2 up; 2 has 3 up, 1 down; 3 has 1 up, 1 down.
func TestOrders(t *testing.T) {
	ta := newTestAPI(t, config{})
	for _, title := range []string{"one", "two", "three"} {
		id := ta.post(title)
		ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+id+"/groups/all", "")
	}
	for _, b := range []struct{ user, id, vote string }{
		{"bob", "1", "up"},
		{"bob", "2", "up"}, {"carol", "2", "up"}, {"dave", "2", "down"},
		{"bob", "3", "down"},
	} {
		ta.as(b.user).must(http.StatusOK, "PUT", "/articles/"+b.id+"/vote", `{"vote":"`+b.vote+`"}`)
	}
	for _, tc := range []struct{ order, page1, page2 string }{
		{"score", "2,1", "3"},
		{"top", "2,1", "3"},           // net 2, 2 (newest first), 0
		{"hot", "2,1", "3"},           // log10(2) + posted/45000, the same for 1, less for 3
		{"best", "1,2", "3"},          // Wilson: 2/2 0.55, 3/4 0.43, 1/2 0.16
		{"controversial", "3,2", "1"}, // 2^1, 4^(1/3), 0
	} {
		for _, list := range []string{"/articles", "/groups/all"} {
			for n, want := range []string{tc.page1, tc.page2} {
				target := fmt.Sprintf("%s?order=%s&page=%d", list, tc.order, n+1)
				v := ta.must(http.StatusOK, "GET", target, "")
				if v["order"] != tc.order || ids(v) != want || v["total"] != 3.0 || v["pages"] != 2.0 {
					t.Errorf("GET %s: %v, want ids %q", target, v, want)
				}
			}
		}
	}
	// A store without Reddit's orders (another service on the prefix,
	// say) refuses them.
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", ta.mr.Addr())
	}}
	defer pool.Close()
	plain, err := voting.New(pool, voting.WithKeyPrefix(testPrefix), voting.WithPageSize(testPageSize))
	if err != nil {
		t.Fatal(err)
	}
	tp := newTestAPIOn(t, plain, ta.clock)
	tp.fails(http.StatusBadRequest, "invalid argument", "GET", "/articles?order=hot", "")
	tp.fails(http.StatusBadRequest, "invalid argument", "GET", "/top", "")
	if v := tp.must(http.StatusOK, "GET", "/articles?order=time", ""); ids(v) != "3,2" || v["total"] != 3.0 {
		t.Errorf("GET /articles?order=time on the plain store: %v", v)
	}
}

// GET /top lists the articles of a period by net votes, exactly to the
// second at its start.
func TestTop(t *testing.T) {
	ta := newTestAPI(t, config{})
	start := ta.clock.Now()
	ta.post("old") // 1, at start
	ta.clock.Add(48 * time.Hour)
	ta.post("recent")                                                            // 2, at start+48h1m
	ta.post("popular")                                                           // 3, at start+48h2m
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/3/vote", `{"vote":"up"}`) // now start+48h3m
	if got := ta.clock.Now().Sub(start); got != 48*time.Hour+3*time.Minute {
		t.Fatalf("the clock is %v after the start", got)
	}
	for _, tc := range []struct{ query, since, ids string }{
		{"", "24h", "3,2"},
		{"?page=2", "24h", ""},
		{"?since=1m59s", "1m59s", "3"},
		{"?since=2m", "2m", "3,2"},
		{"?since=1h&page=1", "1h", "3,2"},
		{"?since=7d", "7d", "3,2"},
		{"?since=7d&page=2", "7d", "1"},
		{"?since=48h3m&page=2", "48h3m", "1"},      // 1 is posted at the period's first second
		{"?since=48h2m59s&page=2", "48h2m59s", ""}, // and a second before this one's
		{"?since=2d&page=2", "2d", ""},
		{"?since=3d&page=2", "3d", "1"},
		{"?since=36500d", "36500d", "3,2"},
		{"?since=1ms", "1ms", ""},
	} {
		v := ta.must(http.StatusOK, "GET", "/top"+tc.query, "")
		if v["since"] != tc.since || ids(v) != tc.ids || len(v) != 3 {
			t.Errorf("GET /top%s: %v, want since %q, ids %q", tc.query, v, tc.since, tc.ids)
		}
	}
	for _, since := range []string{"0", "0s", "-1h", "0d", "-7d", "x", "d", "7", "1.5d", "1d12h", "7days", "99999999999d", "9999999h"} {
		ta.fails(http.StatusBadRequest, fmt.Sprintf("since %q is not a positive duration", since), "GET", "/top?since="+url.QueryEscape(since), "")
	}
	ta.fails(http.StatusBadRequest, `page "x"`, "GET", "/top?page=x", "")
	ta.fails(http.StatusBadRequest, "page 0 is below 1", "GET", "/top?since=1h&page=0", "")
	ta.fails(http.StatusMethodNotAllowed, "method not allowed", "POST", "/top", "")
}

func TestVote(t *testing.T) {
	ta := newTestAPI(t, config{})
	id := ta.post("vote on me")
	ta.voteSteps("/articles/"+id+"/vote", "bob", false, []voteStep{
		{"up", "none", 2, 0},
		{"up", "up", 2, 0},
		{"down", "up", 1, 1},
		{"cancel", "down", 1, 0},
	})
	path := "/articles/" + id + "/vote"
	ta.as("bob").fails(http.StatusBadRequest, "invalid vote type", "PUT", path, `{"vote":"sideways"}`)
	ta.as("bob").fails(http.StatusBadRequest, "invalid vote type", "PUT", path, `{"vote":"none"}`) // a read's word, no ballot
	ta.as("bob").fails(http.StatusBadRequest, "vote is missing", "PUT", path, `{}`)
	ta.as("bob").fails(http.StatusNotFound, "article not found", "PUT", "/articles/99/vote", `{"vote":"up"}`)
	ta.clock.Add(voting.DefaultVoteWindow)
	ta.as("carol").fails(http.StatusConflict, "voting closed", "PUT", path, `{"vote":"up"}`)
}

// voteStep is a vote of voteSteps and what its reply must say: the
// previous vote and the item's counts.
type voteStep struct {
	vote, previous string
	up, down       float64
}

// voteSteps casts user's votes of steps in turn with PUT path, checking
// each reply; with points (a comment's vote), also its points, up − down,
// and no score.
func (ta *testAPI) voteSteps(path, user string, points bool, steps []voteStep) {
	ta.t.Helper()
	for _, tc := range steps {
		v := ta.as(user).must(http.StatusOK, "PUT", path, `{"vote":"`+tc.vote+`"}`)
		if v["previous"] != tc.previous || v["upvotes"] != tc.up || v["downvotes"] != tc.down || points && (v["points"] != tc.up-tc.down || v["score"] != nil) {
			ta.t.Errorf("PUT %s, vote %s: %v, want previous %s, up %v, down %v", path, tc.vote, v, tc.previous, tc.up, tc.down)
		}
	}
}

func TestGroups(t *testing.T) {
	ta := newTestAPI(t, config{})
	a, b, c := ta.post("a"), ta.post("b"), ta.post("c")
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+b+"/vote", `{"vote":"up"}`)
	for _, id := range []string{a, b, c} {
		ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+id+"/groups/redis", "")
	}
	ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+a+"/groups/go%20lang", "")
	if v := ta.must(http.StatusOK, "GET", "/articles/"+a, ""); len(v["groups"].([]any)) != 2 {
		t.Errorf("GET /articles/%s: groups %v, want [go lang redis]", a, v["groups"])
	}
	v := ta.must(http.StatusOK, "GET", "/groups/redis?order=score", "")
	if v["group"] != "redis" || v["order"] != "score" || v["page"] != 1.0 || ids(v) != b+","+c {
		t.Errorf("GET /groups/redis: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/groups/go%20lang", ""); v["group"] != "go lang" || ids(v) != a {
		t.Errorf("GET /groups/go%%20lang: %v", v)
	}
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/articles/"+b+"/groups/redis", "")
	if v := ta.must(http.StatusOK, "GET", "/groups/redis?order=time&page=1", ""); ids(v) != c+","+a {
		t.Errorf("GET /groups/redis after removing %s: %v", b, ids(v))
	}
	if v := ta.must(http.StatusOK, "GET", "/groups/empty", ""); ids(v) != "" {
		t.Errorf("GET /groups/empty: %v", v)
	}
	long := strings.Repeat("g", voting.MaxNameLen+1)
	ta.as("alice").fails(http.StatusNotFound, "article not found", "PUT", "/articles/99/groups/redis", "")
	ta.as("bob").fails(http.StatusForbidden, "only its poster or a moderator may put an article in a group", "PUT", "/articles/"+b+"/groups/bob", "")
	ta.as("bob").fails(http.StatusForbidden, "only its poster or a moderator may take an article out of a group", "DELETE", "/articles/"+a+"/groups/redis", "")
	ta.asRole("mod", roleModerator).must(http.StatusNoContent, "PUT", "/articles/"+b+"/groups/moderated", "")
	ta.as("alice").fails(http.StatusNotFound, "article not found", "DELETE", "/articles/99/groups/redis", "")
	ta.as("alice").fails(http.StatusBadRequest, "group name is longer", "PUT", "/articles/"+a+"/groups/"+long, "")
	ta.as("alice").fails(http.StatusBadRequest, "group name is longer", "DELETE", "/articles/"+a+"/groups/"+long, "")
	ta.fails(http.StatusBadRequest, "group name is longer", "GET", "/groups/"+long, "")
	ta.fails(http.StatusBadRequest, `order "cold"`, "GET", "/groups/redis?order=cold", "")
	ta.fails(http.StatusBadRequest, "page -1 is below 1", "GET", "/groups/redis?page=-1", "")
}

func TestDelete(t *testing.T) {
	ta := newTestAPI(t, config{})
	id := ta.post("short-lived")
	ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+id+"/groups/redis", "")
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/articles/"+id, "")
	ta.fails(http.StatusNotFound, "article not found", "GET", "/articles/"+id, "")
	ta.as("alice").fails(http.StatusNotFound, "article not found", "DELETE", "/articles/"+id, "")
	if v := ta.must(http.StatusOK, "GET", "/groups/redis", ""); ids(v) != "" {
		t.Errorf("a deleted article is still in its group: %v", v)
	}
}

// ballot is a ballot's result in POST /votes.
type ballot struct {
	Previous   string  `json:"previous"`
	Score      float64 `json:"score"`
	Upvotes    int64   `json:"upvotes"`
	Downvotes  int64   `json:"downvotes"`
	Code       string  `json:"code"`
	Error      string  `json:"error"`
	Status     int     `json:"status"`
	RetryAfter float64 `json:"retry_after"`
}

// votes sends POST /votes with body, which must get 200, and returns the
// results.
func (ta *testAPI) votes(body string) []ballot {
	ta.t.Helper()
	var res []ballot
	if code := ta.doInto("POST", "/votes", body, &res); code != http.StatusOK {
		ta.t.Fatalf("POST /votes %s: %d, want 200", body, code)
	}
	return res
}

// POST /votes applies the caller's ballots in order, each as PUT
// /articles/{id}/vote would, and fails each bad ballot alone with the
// status and message that route gives.
func TestVoteBatch(t *testing.T) {
	ta := newTestAPI(t, config{})
	a, b := ta.post("a"), ta.post("b")
	res := ta.as("bob").votes(`[
		{"id":"1","vote":"up"},
		{"id":"1","vote":"down"}
	]`)
	// A ballot may name its voter, the token's user.
	res = append(res, ta.as("carol").votes(`[
		{"user":"carol","id":"2","vote":"cancel"},
		{"id":"2","vote":"up"}
	]`)...)
	want := []ballot{
		{Previous: "none", Upvotes: 2, Downvotes: 0},
		{Previous: "up", Upvotes: 1, Downvotes: 1},
		{Previous: "none", Upvotes: 1, Downvotes: 0},
		{Previous: "none", Upvotes: 2, Downvotes: 0},
	}
	for i := range want {
		want[i].Score = res[i].Score
	}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("POST /votes:\n got %v\nwant %v", res, want)
	}
	for id, up := range map[string]float64{a: 1, b: 2} {
		v := ta.must(http.StatusOK, "GET", "/articles/"+id, "")
		if v["upvotes"] != up || v["score"] != res[map[string]int{a: 1, b: 3}[id]].Score {
			t.Errorf("GET /articles/%s after the batch: %v", id, v)
		}
	}

	// Each bad ballot fails alone, as the single vote fails: the good
	// ones around it count.
	bad := []struct{ id, vote string }{
		{"99", `"up"`},
		{"abc", `"up"`},
		{"", `"up"`},
		{a, `"sideways"`},
		{a, `""`},
		{a, ""}, // no vote
	}
	var body []string
	for _, x := range bad {
		vote := ""
		if x.vote != "" {
			vote = `,"vote":` + x.vote
		}
		body = append(body, `{"id":"`+x.id+`"`+vote+`}`, `{"id":"`+b+`","vote":"down"}`)
	}
	dave := ta.as("dave")
	res = dave.votes("[" + strings.Join(body, ",") + "]")
	if len(res) != 2*len(bad) {
		t.Fatalf("%d results of %d ballots", len(res), 2*len(bad))
	}
	for i, x := range bad {
		vote := ""
		if x.vote != "" {
			vote = `"vote":` + x.vote
		}
		status, single := dave.do("PUT", "/articles/"+url.PathEscape(x.id)+"/vote", `{`+vote+`}`)
		if x.id == "" {
			status, single = http.StatusNotFound, map[string]any{"code": "not_found", "error": `article not found: ""`}
		}
		if got := res[2*i]; got.Status != status || got.Error != single["error"] || got.Code != single["code"] || status < 400 || got.Previous != "" {
			t.Errorf("ballot %+v: %+v; PUT gets %d %v", x, got, status, single)
		}
		wantPrev := "down"
		if i == 0 {
			wantPrev = "none"
		}
		if got := res[2*i+1]; got.Error != "" || got.Previous != wantPrev || got.Upvotes != 2 || got.Downvotes != 1 {
			t.Errorf("the good ballot after %+v: %+v", x, got)
		}
	}

	// Once voting has closed: 409, as for one vote.
	ta.clock.Add(voting.DefaultVoteWindow)
	res = ta.as("frank").votes(`[{"id":"1","vote":"up"}]`)
	if len(res) != 1 || res[0].Status != http.StatusConflict || !strings.Contains(res[0].Error, "voting closed") {
		t.Errorf("POST /votes after the window: %+v", res)
	}
	if res := ta.as("frank").votes(`[]`); len(res) != 0 {
		t.Errorf("POST /votes []: %+v", res)
	}
	if ta.logged.Len() > 0 {
		t.Errorf("client errors were logged: %s", ta.logged)
	}
}

// A body that is not an array of ballots fails as a whole, with a
// message in the API's terms; more than voting.MaxBatch ballots get 413.
func TestVoteBatchErrors(t *testing.T) {
	api := newTestAPI(t, config{})
	api.post("a")
	ta := api.as("bob")
	const shape = `; it must be a JSON array of objects with fields "user", "id" and "vote"`
	for _, tc := range []struct{ body, msg string }{
		{``, "request body is empty" + shape},
		{`null`, "request body is not a JSON array of objects" + shape},
		{` null `, "request body is not a JSON array of objects" + shape},
		{`"x"`, "request body is not a JSON array of objects" + shape},
		{`3`, "request body is not a JSON array of objects" + shape},
		{`true`, "request body is not a JSON array of objects" + shape},
		{`{"user":"bob","id":"1","vote":"up"}`, "request body is not a JSON array of objects" + shape},
		{`["up"]`, "request body is not a JSON array of objects" + shape},
		{`[{"user":"bob","id":"1","vote":"up"}`, "request body is cut short: its JSON ends before the array does" + shape},
		{`[{"user":"bob","id":1,"vote":"up"}]`, `field "id" must be a string` + shape},
		{`[{"user":"bob","id":"1","vote":"up"},{"user":"bob","id":"1","vote":-1}]`, `field "vote" must be a string` + shape},
		{`[{"user":"bob","id":"1","vote":"up","weight":2}]`, `request body has an unknown field "weight"` + shape},
		{`[] []`, "request body has data after its JSON array" + shape},
	} {
		code, v := ta.do("POST", "/votes", tc.body)
		if e := v["error"]; code != http.StatusBadRequest || e != "bad request: "+tc.msg || v["code"] != codeBadRequest || len(v) != 2 {
			t.Errorf("POST /votes %s: %d %v, want 400 %q", tc.body, code, v, "bad request: "+tc.msg)
		}
	}
	ballots := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"user":"bob","id":"1","vote":"up"},`, n), ",") + "]"
	}
	if res := ta.votes(ballots(voting.MaxBatch)); len(res) != voting.MaxBatch || res[voting.MaxBatch-1].Previous != "up" {
		t.Errorf("POST /votes of MaxBatch ballots: %d results, the last %+v", len(res), res[len(res)-1])
	}
	ta.fails(http.StatusRequestEntityTooLarge, "request body too large: 1001 ballots, the limit is 1000", "POST", "/votes", ballots(voting.MaxBatch+1))
	huge := `[{"user":"` + strings.Repeat("u", maxBatchBody) + `","id":"1","vote":"up"}]`
	ta.fails(http.StatusRequestEntityTooLarge, "request body too large: the limit is 524288 bytes", "POST", "/votes", huge)
	// The longest names fit, MaxBatch times.
	long := `{"user":"` + strings.Repeat("u", voting.MaxNameLen) + `","id":"1234567890123456789","vote":"down"},`
	if res := api.as(strings.Repeat("u", voting.MaxNameLen)).votes("[" + strings.TrimSuffix(strings.Repeat(long, voting.MaxBatch), ",") + "]"); len(res) != voting.MaxBatch || res[0].Status != http.StatusNotFound {
		t.Errorf("POST /votes of MaxBatch ballots with the longest names: %d results, the first %+v", len(res), res[0])
	}
	ta.fails(http.StatusMethodNotAllowed, "method not allowed", "GET", "/votes", "")
}

// A server-side failure of a ballot is a 500 that tells nothing, and is
// logged: the whole request's when Redis fails the batch (a script error
// on a voter record written by hand), the ballot's own otherwise.
func TestVoteBatchInternalError(t *testing.T) {
	ta := newTestAPI(t, config{})
	ta.post("a")
	ta.mr.HSet("{"+testPrefix+"}:voted:1", "bob", "sideways") // not a vote
	// The ballot fails alone, as a 500 of its own, and is logged.
	rec := ta.as("bob").serve("POST", "/votes", `[{"id":"1","vote":"up"}]`)
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `[{"code":"internal","error":"internal error","status":500}]` {
		t.Errorf("POST /votes with a corrupt voter record: %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(ta.logged.String(), "POST /votes: ") {
		t.Errorf("the failure is not logged: %q", ta.logged)
	}
	ta.logged.Reset()
	a := &api{log: log.New(ta.logged, "", 0)}
	got := a.ballotError(httptest.NewRequest("POST", "/votes", nil), errors.New("voting: vote: ERR something broke"))
	if got != (ballotError{errorBody{Code: codeInternal, Error: "internal error"}, http.StatusInternalServerError}) ||
		!strings.Contains(ta.logged.String(), "POST /votes: voting: vote: ERR something broke") {
		t.Errorf("ballotError of a server-side failure: %+v, logged %q", got, ta.logged)
	}
}

// With -unique-links, a link a live article has gets 409 and that
// article; without, it posts again.
func TestUniqueLinks(t *testing.T) {
	ta := newTestAPI(t, config{uniqueLinks: true})
	const post = `{"title":"Redis in Action","link":"https://example.com/1"}`
	first := ta.as("alice").must(http.StatusCreated, "POST", "/articles", post)
	rec := ta.as("bob").serve("POST", "/articles", `{"title":"the same","link":"https://example.com/1"}`)
	var v struct {
		Code    string         `json:"code"`
		Error   string         `json:"error"`
		Article map[string]any `json:"article"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	checkMessage(t, "POST of a duplicate link", v.Error)
	if rec.Code != http.StatusConflict || v.Code != codeDuplicate || !strings.HasPrefix(v.Error, "duplicate link: ") ||
		fmt.Sprint(v.Article) != fmt.Sprint(first) || rec.Header().Get("Location") != "/articles/1" {
		t.Errorf("POST of a duplicate link: %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	ta.as("alice").must(http.StatusCreated, "POST", "/articles", `{"title":"no link"}`)
	ta.as("alice").must(http.StatusCreated, "POST", "/articles", `{"title":"no link"}`)
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/articles/1", "")
	if v := ta.as("alice").must(http.StatusCreated, "POST", "/articles", post); v["id"] != "4" {
		t.Errorf("POST of a deleted article's link: %v", v)
	}

	plain := newTestAPI(t, config{})
	plain.as("alice").must(http.StatusCreated, "POST", "/articles", post)
	plain.as("alice").must(http.StatusCreated, "POST", "/articles", post)
}

// TestErrors checks every mapping of an error to a status, each with a
// JSON body.
func TestErrors(t *testing.T) {
	ta := newTestAPI(t, config{})
	ta.post("exists")
	huge := `{"poster":"alice","title":"` + strings.Repeat("x", maxBody) + `"}`
	for _, tc := range []struct {
		status               int
		msg                  string
		method, target, body string
	}{
		// 404: no such article, or an id the store never issues.
		{404, "article not found", "GET", "/articles/42", ""},
		{404, "article not found", "GET", "/articles/abc", ""},
		{404, "article not found", "GET", "/articles/01", ""},
		{404, "article not found", "GET", "/articles/" + strings.Repeat("1", 30), ""},
		// 400: input out of the Store's limits, or an unreadable body
		// (TestDecodeErrors has them all).
		{400, "title is blank", "POST", "/articles", `{"poster":"alice","title":" "}`},
		// 403: a body naming another user than the token's.
		{403, `forbidden: "poster" is "bob", but the token is "alice"'s`, "POST", "/articles", `{"poster":"bob","title":"t"}`},
		{400, "title is longer", "POST", "/articles", `{"poster":"alice","title":"` + strings.Repeat("x", voting.MaxTitleLen+1) + `"}`},
		{400, "bad request: request body is cut short: its JSON ends before the object does", "POST", "/articles", `{"poster":`},
		// 413: a body over maxBody.
		{413, "request body too large: the limit is 65536 bytes", "POST", "/articles", huge},
		// The mux's own answers, as JSON.
		{404, "not found", "GET", "/nowhere", ""},
		{404, "not found", "GET", "/articles/1/likes", ""},
		{405, "method not allowed", "PUT", "/articles/1", ""},
		{405, "method not allowed", "POST", "/groups/redis", ""},
	} {
		ta.as("alice").fails(tc.status, tc.msg, tc.method, tc.target, tc.body)
	}
	rec := httptest.NewRecorder()
	ta.handler.ServeHTTP(rec, httptest.NewRequest("PUT", "/articles/1", nil))
	if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "DELETE") || !strings.Contains(allow, "GET") {
		t.Errorf("405 without an Allow header: %q", allow)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles?order=time", ""); ids(v) != "1" {
		t.Errorf("a failed request posted an article: %v", v)
	}
	if ta.logged.Len() > 0 {
		t.Errorf("client errors were logged: %s", ta.logged)
	}
}

// A body the API cannot read gets a message in the API's terms: what
// the body must be, never the decoder's message and its Go types.
func TestDecodeErrors(t *testing.T) {
	ta := newTestAPI(t, config{})
	id := ta.post("exists")
	ta = ta.as("alice")
	const (
		postShape = `; it must be a JSON object with fields "poster", "title" and "link"`
		voteShape = `; it must be a JSON object with fields "user" and "vote"`
	)
	vote := "/articles/" + id + "/vote"
	for _, tc := range []struct{ method, target, body, msg string }{
		{"POST", "/articles", ``, "request body is empty" + postShape},
		{"POST", "/articles", `["alice"]`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", `"alice"`, "request body is not a JSON object" + postShape},
		// Every body that is not an object gets the same error.
		{"POST", "/articles", `null`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", "\n null", "request body is not a JSON object" + postShape},
		{"POST", "/articles", `[]`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", `3`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", `false`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", " \t", "request body is empty" + postShape},
		{"PUT", vote, `null`, "request body is not a JSON object" + voteShape},
		{"PUT", vote, `"up"`, "request body is not a JSON object" + voteShape},
		{"POST", "/articles", `{"poster":`, "request body is cut short: its JSON ends before the object does" + postShape},
		{"POST", "/articles", `{"poster" "alice"}`, "request body is not valid JSON (at byte 11)" + postShape},
		{"POST", "/articles", `{"poster":1,"title":"t"}`, `field "poster" must be a string` + postShape},
		{"POST", "/articles", `{"poster":"alice","title":{}}`, `field "title" must be a string` + postShape},
		{"POST", "/articles", `{"poster":"alice","title":"t","score":1}`, `request body has an unknown field "score"` + postShape},
		{"POST", "/articles", `{"poster":"alice","title":"t"}{}`, "request body has data after its JSON object" + postShape},
		{"POST", "/articles", `{"poster":"alice","title":"t"} x`, "request body has data after its JSON object" + postShape},
		{"PUT", vote, `["up"]`, "request body is not a JSON object" + voteShape},
		{"PUT", vote, `{"user":"bob","vote":1}`, `field "vote" must be a string` + voteShape},
		{"PUT", vote, `{"user":["bob"],"vote":"up"}`, `field "user" must be a string` + voteShape},
	} {
		code, v := ta.do(tc.method, tc.target, tc.body)
		e, _ := v["error"].(string)
		if code != http.StatusBadRequest || e != "bad request: "+tc.msg {
			t.Errorf("%s %s %s: %d %q, want 400 %q", tc.method, tc.target, tc.body, code, e, "bad request: "+tc.msg)
		}
		for _, leak := range []string{"json:", "Go ", "struct", "unmarshal", "voting.VoteType", "invalid character"} {
			if strings.Contains(e, leak) {
				t.Errorf("%s %s %s: the error %q leaks %q", tc.method, tc.target, tc.body, e, leak)
			}
		}
	}
}

// A Redis failure is a 500 whose body tells nothing; the log has it.
func TestInternalError(t *testing.T) {
	// A pool that fails every connection, as an unreachable Redis does.
	broken := &redis.Pool{DialContext: func(context.Context) (redis.Conn, error) {
		return nil, errors.New("dial tcp 10.0.0.1:6379: connection refused")
	}}
	store, err := voting.New(broken, config{prefix: testPrefix, window: voting.DefaultVoteWindow}.storeOptions(testPageSize)...)
	if err != nil {
		t.Fatal(err)
	}
	ta := newTestAPIOn(t, store, nil).as("alice")
	for _, r := range []struct{ method, target, body string }{
		{"POST", "/articles", `{"title":"t"}`},
		{"GET", "/articles", ""},
		{"GET", "/articles/1", ""},
		{"DELETE", "/articles/1", ""},
		{"PUT", "/articles/1/vote", `{"vote":"up"}`},
		{"PUT", "/articles/1/groups/redis", ""},
		{"DELETE", "/articles/1/groups/redis", ""},
		{"GET", "/groups/redis", ""},
		{"GET", "/top", ""},
		{"POST", "/votes", `[{"id":"1","vote":"up"}]`},
	} {
		code, v := ta.do(r.method, r.target, r.body)
		if code != http.StatusInternalServerError || v["error"] != "internal error" {
			t.Errorf("%s %s: %d %v, want 500 internal error", r.method, r.target, code, v)
		}
	}
	if got := strings.Count(ta.logged.String(), "connection refused"); got != 10 {
		t.Errorf("%d failures logged, want 10:\n%s", got, ta.logged)
	}
}

// listOf returns the ids of a list of articles in a reply, in order.
func listOf(v map[string]any, field string) string {
	var list []string
	for _, a := range v[field].([]any) {
		list = append(list, a.(map[string]any)["id"].(string))
	}
	return strings.Join(list, " ")
}

// With -user-pages, GET /users/{name} shows the first page of the user's
// posts and of their upvotes, newest first; a cancelled upvote and a
// deleted article leave them.
func TestUserPages(t *testing.T) {
	ta := newTestAPI(t, config{userPages: true})
	first, second, third := ta.post("first"), ta.post("second"), ta.post("third")
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+first+"/vote", `{"vote":"up"}`)
	ta.clock.Add(time.Minute)
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+second+"/vote", `{"vote":"up"}`)
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+third+"/vote", `{"vote":"up"}`)
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+third+"/vote", `{"vote":"cancel"}`)
	v := ta.must(http.StatusOK, "GET", "/users/alice", "")
	// Pages of testPageSize: the newest two.
	if v["user"] != "alice" || listOf(v, "submitted") != third+" "+second || listOf(v, "upvoted") != third+" "+second {
		t.Errorf("GET /users/alice: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/users/bob", ""); listOf(v, "submitted") != "" || listOf(v, "upvoted") != second+" "+first {
		t.Errorf("GET /users/bob: %v", v)
	}
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/articles/"+second, "")
	if v := ta.must(http.StatusOK, "GET", "/users/bob", ""); listOf(v, "upvoted") != first {
		t.Errorf("GET /users/bob after a delete: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/users/nobody", ""); listOf(v, "submitted") != "" || listOf(v, "upvoted") != "" {
		t.Errorf("GET /users/nobody: %v", v)
	}
	ta.fails(http.StatusBadRequest, "user is longer", "GET", "/users/"+strings.Repeat("u", voting.MaxNameLen+1), "")
	ta.fails(http.StatusBadRequest, "user is blank", "GET", "/users/%20", "")

	// With -karma too: the user's karma.
	both := newTestAPI(t, config{userPages: true, rules: ruleFlags{karma: &[2]int64{1, -1}}})
	a := both.post("first")
	both.as("bob").must(http.StatusOK, "PUT", "/articles/"+a+"/vote", `{"vote":"up"}`)
	if v := both.must(http.StatusOK, "GET", "/users/alice", ""); v["karma"] != 1.0 || listOf(v, "submitted") != a {
		t.Errorf("GET /users/alice with -karma: %v", v)
	}
	if v := both.must(http.StatusOK, "GET", "/users/nobody", ""); v["karma"] != 0.0 {
		t.Errorf("GET /users/nobody with -karma: %v", v)
	}

	// With -karma alone: the user and their karma.
	karma := newTestAPI(t, config{rules: ruleFlags{karma: &[2]int64{1, -1}}})
	karma.post("first")
	if v := karma.must(http.StatusOK, "GET", "/users/alice", ""); len(v) != 2 || v["user"] != "alice" || v["karma"] != 0.0 {
		t.Errorf("GET /users/alice with -karma alone: %v", v)
	}

	// Without -user-pages or -karma there is no user to show: 404, and
	// the flags that turn it on.
	plain := newTestAPI(t, config{})
	plain.post("first")
	if v := plain.failsWith(http.StatusNotFound, codeFeatureOff, "start the service with -user-pages or -karma", "GET", "/users/alice", ""); v["error"] != "user pages and karma are off: start the service with -user-pages or -karma" {
		t.Errorf("GET /users/alice without -user-pages: %v", v)
	}
}

// GET /users lists users by karma; -karma and -vote-cost set the points.
func TestUsers(t *testing.T) {
	ta := newTestAPI(t, config{rules: ruleFlags{karma: &[2]int64{1, -1}, voteCost: &[2]int64{0, 1}}})
	a := ta.post("A")
	for user, v := range map[string]string{"bob": "up", "carol": "up", "dave": "down"} {
		ta.as(user).must(http.StatusOK, "PUT", "/articles/"+a+"/vote", `{"vote":"`+v+`"}`)
	}
	v := ta.must(http.StatusOK, "GET", "/users", "")
	if got := fmt.Sprint(v); got != "map[page:1 users:[map[karma:1 user:alice] map[karma:-1 user:dave]]]" {
		t.Errorf("GET /users: %s", got)
	}
	v = ta.must(http.StatusOK, "GET", "/users?page=2", "")
	if got := fmt.Sprint(v); got != "map[page:2 users:[]]" {
		t.Errorf("GET /users?page=2: %s", got)
	}
	ta.fails(http.StatusBadRequest, "page", "GET", "/users?page=0", "")
	ta.fails(http.StatusBadRequest, "page", "GET", "/users?page=x", "")
}

// PATCH /articles/{id} edits within -edit-window, for the poster only.
func TestEditArticle(t *testing.T) {
	ta := newTestAPI(t, config{uniqueLinks: true, rules: ruleFlags{editWindow: 15 * time.Minute}})
	a := ta.post("A") // a minute passes
	other := ta.as("bob").must(http.StatusCreated, "POST", "/articles", `{"title":"B","link":"https://b"}`)
	v := ta.as("alice").must(http.StatusOK, "PATCH", "/articles/"+a, `{"title":"A2","link":"https://a"}`)
	if v["title"] != "A2" || v["link"] != "https://a" {
		t.Errorf("PATCH: %v", v)
	}
	ta.as("bob").fails(http.StatusForbidden, "not allowed", "PATCH", "/articles/"+a, `{"title":"mine"}`)
	ta.as("alice").fails(http.StatusNotFound, "not found", "PATCH", "/articles/99", `{"title":"x"}`)
	ta.as("alice").fails(http.StatusBadRequest, "title", "PATCH", "/articles/"+a, `{"title":""}`)
	code, v := ta.as("alice").do("PATCH", "/articles/"+a, `{"title":"A3","link":"https://b"}`)
	if art, _ := v["article"].(map[string]any); code != http.StatusConflict || art["id"] != other["id"] {
		t.Errorf("PATCH to a taken link: %d %v", code, v)
	}
	ta.clock.Add(14 * time.Minute)
	ta.as("alice").fails(http.StatusForbidden, "not allowed", "PATCH", "/articles/"+a, `{"title":"late"}`)
}

// newLimitedAPI returns an API with -karma 1,-1, -min-karma 0,10,
// -vote-limit 1/1h and -post-interval 90s, and the id of an article that
// bob has upvoted, his one vote of the hour.
func newLimitedAPI(t *testing.T) (*testAPI, string) {
	ta := newTestAPI(t, config{rules: ruleFlags{
		karma: &[2]int64{1, -1}, minKarma: &[2]int64{0, 10},
		voteLimit: 1, votePer: time.Hour, postInterval: 90 * time.Second,
	}})
	a := ta.post("A")
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+a+"/vote", `{"vote":"up"}`)
	return ta, a
}

// -vote-limit and -post-interval answer 429 with Retry-After; -min-karma 403.
func TestRateLimits(t *testing.T) {
	ta, a := newLimitedAPI(t)
	retry := func(want int, wantRetry, user, method, target, body string) {
		t.Helper()
		rec := ta.as(user).serve(method, target, body)
		if rec.Code != want || rec.Header().Get("Retry-After") != wantRetry {
			t.Errorf("%s %s: %d, Retry-After %q: %s; want %d, %q", method, target, rec.Code, rec.Header().Get("Retry-After"), rec.Body, want, wantRetry)
		}
	}
	retry(http.StatusTooManyRequests, "3600", "bob", "PUT", "/articles/"+a+"/vote", `{"vote":"cancel"}`)
	retry(http.StatusForbidden, "", "carol", "PUT", "/articles/"+a+"/vote", `{"vote":"down"}`)
	// ta.post moved the clock a minute: 30 s to wait, and a ballot of
	// POST /votes gets 429 in its result.
	retry(http.StatusTooManyRequests, "30", "alice", "POST", "/articles", `{"title":"B"}`)
	if res := ta.as("bob").votes(`[{"id":"` + a + `","vote":"cancel"}]`); res[0].Status != http.StatusTooManyRequests {
		t.Errorf("POST /votes over the limit: %+v", res)
	}
}

// TestStatusOfRefusals: Redis's refusals of a call are 503s, which a
// client may retry; the call changed nothing.
func TestStatusOfRefusals(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("voting: vote: %w: TRYAGAIN", voting.ErrTryAgain),
		fmt.Errorf("voting: post: %w: OOM", voting.ErrOutOfMemory),
	} {
		if got := statusOf(err); got != http.StatusServiceUnavailable {
			t.Errorf("statusOf(%v) = %d, want 503", err, got)
		}
	}
}

// TestHealthz: a healthy store is 200 with its Health; a store whose
// options are not those recorded is 503, naming the difference.
func TestHealthz(t *testing.T) {
	ta := newTestAPI(t, config{})
	ta.post("first")
	v := ta.must(http.StatusOK, "GET", "/healthz", "")
	if v["reachable"] != true || v["compatible"] != true || v["recorded"] != v["identity"] || v["serious"] != false {
		t.Fatalf("GET /healthz = %v", v)
	}
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", ta.mr.Addr())
	}}
	t.Cleanup(func() { pool.Close() })
	other, err := voting.New(pool, voting.WithKeyPrefix(testPrefix), voting.WithKarma(1, -1))
	if err != nil {
		t.Fatal(err)
	}
	ot := newTestAPIOn(t, other, ta.clock)
	code, v := ot.do("GET", "/healthz", "")
	if code != http.StatusServiceUnavailable || v["serious"] != true ||
		!strings.Contains(fmt.Sprint(v["problems"]), "karma 1,-1 here, off in the store") {
		t.Fatalf("GET /healthz of other options = %d %v", code, v)
	}
	ot.as("bob").fails(http.StatusServiceUnavailable, "incompatible store", "POST", "/articles", `{"title":"t"}`)
}

// TestErrorsInTheCallersWords: a page out of range names its range, and a
// comment order the store does not keep is named as the client wrote it.
func TestErrorsInTheCallersWords(t *testing.T) {
	ta := newTestAPI(t, config{})
	id := ta.post("an article")
	ta.failsWith(http.StatusBadRequest, codeBadRequest, `page "99999999999999999999" is out of range: pages are numbered from 1 to`, "GET", "/articles?page=99999999999999999999", "")
	ta.failsWith(http.StatusBadRequest, codeBadRequest, `page "two" is not a whole number`, "GET", "/articles?page=two", "")
	ta.failsWith(http.StatusBadRequest, codeInvalidArgument, `order "score" is not kept for comments here`, "GET", "/articles/"+id+"/comments?order=score", "")
}
