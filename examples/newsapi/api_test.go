package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	"github.com/votekit/voting/internal/testclock"
)

// testAPI serves a fresh store on miniredis.
type testAPI struct {
	t       *testing.T
	handler http.Handler
	clock   *testclock.Clock
	logged  *bytes.Buffer
}

func newTestAPI(t *testing.T) *testAPI {
	mr := miniredis.RunT(t)
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	t.Cleanup(func() { pool.Close() })
	c := testclock.New(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	store, err := voting.New(pool, voting.WithClock(c.Now), voting.WithPageSize(2))
	if err != nil {
		t.Fatal(err)
	}
	return newTestAPIOn(t, store, c)
}

func newTestAPIOn(t *testing.T, store *voting.Store, c *testclock.Clock) *testAPI {
	var logged bytes.Buffer
	a := &api{store: store, log: log.New(&logged, "", 0)}
	return &testAPI{t: t, handler: a.routes(), clock: c, logged: &logged}
}

// do sends a request and returns the status and the decoded JSON body
// (nil for an empty one). Every reply with a body must be JSON.
func (ta *testAPI) do(method, target, body string) (int, map[string]any) {
	ta.t.Helper()
	rec := httptest.NewRecorder()
	ta.handler.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
	if rec.Body.Len() == 0 {
		return rec.Code, nil
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		ta.t.Errorf("%s %s: Content-Type %q", method, target, ct)
	}
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		ta.t.Fatalf("%s %s: %d %q is not a JSON object: %v", method, target, rec.Code, rec.Body, err)
	}
	return rec.Code, v
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
// message containing msg.
func (ta *testAPI) fails(want int, msg, method, target, body string) {
	ta.t.Helper()
	code, v := ta.do(method, target, body)
	e, _ := v["error"].(string)
	if code != want || !strings.Contains(e, msg) || len(v) != 1 {
		ta.t.Errorf("%s %s %s: %d %v, want %d {\"error\": \"...%s...\"}", method, target, body, code, v, want, msg)
	}
}

// post posts an article, a minute after the previous one, and returns
// its id.
func (ta *testAPI) post(title string) string {
	ta.t.Helper()
	v := ta.must(http.StatusCreated, "POST", "/articles", `{"poster":"alice","title":"`+title+`"}`)
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
	ta := newTestAPI(t)
	rec := httptest.NewRecorder()
	ta.handler.ServeHTTP(rec, httptest.NewRequest("POST", "/articles",
		strings.NewReader(`{"poster":"alice","title":"Redis in Action","link":"https://example.com/1"}`)))
	if rec.Code != http.StatusCreated || rec.Header().Get("Location") != "/articles/1" {
		t.Fatalf("POST /articles: %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	want := `{"id":"1","title":"Redis in Action","link":"https://example.com/1","poster":"alice",` +
		`"posted":"2024-01-01T12:00:00Z","score":1704110832,"upvotes":1,"downvotes":0}` + "\n"
	if rec.Body.String() != want {
		t.Errorf("POST /articles:\n got %s\nwant %s", rec.Body, want)
	}
	v := ta.must(http.StatusOK, "GET", "/articles/1", "")
	if v["title"] != "Redis in Action" || v["upvotes"] != 1.0 || len(v["groups"].([]any)) != 0 {
		t.Errorf("GET /articles/1: %v", v)
	}
}

func TestList(t *testing.T) {
	ta := newTestAPI(t)
	for _, title := range []string{"one", "two", "three"} {
		ta.post(title)
	}
	ta.must(http.StatusOK, "PUT", "/articles/1/vote", `{"user":"bob","vote":"up"}`)
	for _, tc := range []struct{ query, order, ids string }{
		{"", "score-desc", "1,3"},
		{"?order=score&page=1", "score-desc", "1,3"},
		{"?order=score&page=2", "score-desc", "2"},
		{"?order=score&page=3", "score-desc", ""},
		{"?order=score-asc", "score-asc", "2,3"},
		{"?order=time", "time-desc", "3,2"},
		{"?order=time-desc&page=2", "time-desc", "1"},
		{"?order=time-asc", "time-asc", "1,2"},
	} {
		v := ta.must(http.StatusOK, "GET", "/articles"+tc.query, "")
		if v["order"] != tc.order || ids(v) != tc.ids {
			t.Errorf("GET /articles%s: order %v, ids %q; want %s, %q", tc.query, v["order"], ids(v), tc.order, tc.ids)
		}
	}
	ta.fails(http.StatusBadRequest, `order "best"`, "GET", "/articles?order=best", "")
	ta.fails(http.StatusBadRequest, `page "x"`, "GET", "/articles?page=x", "")
	ta.fails(http.StatusBadRequest, "page 0 is below 1", "GET", "/articles?page=0", "")
}

func TestVote(t *testing.T) {
	ta := newTestAPI(t)
	id := ta.post("vote on me")
	for _, tc := range []struct {
		vote, previous string
		up, down       float64
	}{
		{"up", "none", 2, 0},
		{"up", "up", 2, 0},
		{"down", "up", 1, 1},
		{"none", "down", 1, 0},
	} {
		v := ta.must(http.StatusOK, "PUT", "/articles/"+id+"/vote", `{"user":"bob","vote":"`+tc.vote+`"}`)
		if v["previous"] != tc.previous || v["upvotes"] != tc.up || v["downvotes"] != tc.down {
			t.Errorf("vote %s: %v, want previous %s, up %v, down %v", tc.vote, v, tc.previous, tc.up, tc.down)
		}
	}
	path := "/articles/" + id + "/vote"
	ta.fails(http.StatusBadRequest, "invalid vote type", "PUT", path, `{"user":"bob","vote":"sideways"}`)
	ta.fails(http.StatusBadRequest, "vote is missing", "PUT", path, `{"user":"bob"}`)
	ta.fails(http.StatusBadRequest, "user is empty", "PUT", path, `{"vote":"up"}`)
	ta.fails(http.StatusNotFound, "article not found", "PUT", "/articles/99/vote", `{"user":"bob","vote":"up"}`)
	ta.clock.Add(voting.DefaultVoteWindow)
	ta.fails(http.StatusConflict, "voting closed", "PUT", path, `{"user":"carol","vote":"up"}`)
}

func TestGroups(t *testing.T) {
	ta := newTestAPI(t)
	a, b, c := ta.post("a"), ta.post("b"), ta.post("c")
	ta.must(http.StatusOK, "PUT", "/articles/"+b+"/vote", `{"user":"bob","vote":"up"}`)
	for _, id := range []string{a, b, c} {
		ta.must(http.StatusNoContent, "PUT", "/articles/"+id+"/groups/redis", "")
	}
	ta.must(http.StatusNoContent, "PUT", "/articles/"+a+"/groups/go%20lang", "")
	if v := ta.must(http.StatusOK, "GET", "/articles/"+a, ""); len(v["groups"].([]any)) != 2 {
		t.Errorf("GET /articles/%s: groups %v, want [go lang redis]", a, v["groups"])
	}
	v := ta.must(http.StatusOK, "GET", "/groups/redis?order=score", "")
	if v["group"] != "redis" || v["order"] != "score-desc" || v["page"] != 1.0 || ids(v) != b+","+c {
		t.Errorf("GET /groups/redis: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/groups/go%20lang", ""); v["group"] != "go lang" || ids(v) != a {
		t.Errorf("GET /groups/go%%20lang: %v", v)
	}
	ta.must(http.StatusNoContent, "DELETE", "/articles/"+b+"/groups/redis", "")
	if v := ta.must(http.StatusOK, "GET", "/groups/redis?order=time&page=1", ""); ids(v) != c+","+a {
		t.Errorf("GET /groups/redis after removing %s: %v", b, ids(v))
	}
	if v := ta.must(http.StatusOK, "GET", "/groups/empty", ""); ids(v) != "" {
		t.Errorf("GET /groups/empty: %v", v)
	}
	long := strings.Repeat("g", voting.MaxNameLen+1)
	ta.fails(http.StatusNotFound, "article not found", "PUT", "/articles/99/groups/redis", "")
	ta.fails(http.StatusNotFound, "article not found", "DELETE", "/articles/99/groups/redis", "")
	ta.fails(http.StatusBadRequest, "group name is longer", "PUT", "/articles/"+a+"/groups/"+long, "")
	ta.fails(http.StatusBadRequest, "group name is longer", "DELETE", "/articles/"+a+"/groups/"+long, "")
	ta.fails(http.StatusBadRequest, "group name is longer", "GET", "/groups/"+long, "")
	ta.fails(http.StatusBadRequest, `order "hot"`, "GET", "/groups/redis?order=hot", "")
	ta.fails(http.StatusBadRequest, "page -1 is below 1", "GET", "/groups/redis?page=-1", "")
}

func TestDelete(t *testing.T) {
	ta := newTestAPI(t)
	id := ta.post("short-lived")
	ta.must(http.StatusNoContent, "PUT", "/articles/"+id+"/groups/redis", "")
	ta.must(http.StatusNoContent, "DELETE", "/articles/"+id, "")
	ta.fails(http.StatusNotFound, "article not found", "GET", "/articles/"+id, "")
	ta.fails(http.StatusNotFound, "article not found", "DELETE", "/articles/"+id, "")
	if v := ta.must(http.StatusOK, "GET", "/groups/redis", ""); ids(v) != "" {
		t.Errorf("a deleted article is still in its group: %v", v)
	}
}

// TestErrors checks every mapping of an error to a status, each with a
// JSON body.
func TestErrors(t *testing.T) {
	ta := newTestAPI(t)
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
		{400, "poster is empty", "POST", "/articles", `{"title":"t"}`},
		{400, "title is longer", "POST", "/articles", `{"poster":"alice","title":"` + strings.Repeat("x", voting.MaxTitleLen+1) + `"}`},
		{400, "bad request: request body is not a JSON object", "POST", "/articles", `{"poster":`},
		// 413: a body over maxBody.
		{413, "request body too large: the limit is 65536 bytes", "POST", "/articles", huge},
		// The mux's own answers, as JSON.
		{404, "not found", "GET", "/nowhere", ""},
		{404, "not found", "GET", "/articles/1/comments", ""},
		{405, "method not allowed", "PATCH", "/articles/1", ""},
		{405, "method not allowed", "POST", "/groups/redis", ""},
	} {
		ta.fails(tc.status, tc.msg, tc.method, tc.target, tc.body)
	}
	rec := httptest.NewRecorder()
	ta.handler.ServeHTTP(rec, httptest.NewRequest("PATCH", "/articles/1", nil))
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
	ta := newTestAPI(t)
	id := ta.post("exists")
	const (
		postShape = `; it must be a JSON object with fields "poster", "title" and "link"`
		voteShape = `; it must be a JSON object with fields "user" and "vote"`
	)
	vote := "/articles/" + id + "/vote"
	for _, tc := range []struct{ method, target, body, msg string }{
		{"POST", "/articles", ``, "request body is empty" + postShape},
		{"POST", "/articles", `["alice"]`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", `"alice"`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", `{"poster":`, "request body is not a JSON object" + postShape},
		{"POST", "/articles", `{"poster" "alice"}`, "request body is not a JSON object" + postShape},
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
	store, err := voting.New(broken)
	if err != nil {
		t.Fatal(err)
	}
	ta := newTestAPIOn(t, store, nil)
	for _, r := range []struct{ method, target, body string }{
		{"POST", "/articles", `{"poster":"alice","title":"t"}`},
		{"GET", "/articles", ""},
		{"GET", "/articles/1", ""},
		{"DELETE", "/articles/1", ""},
		{"PUT", "/articles/1/vote", `{"user":"bob","vote":"up"}`},
		{"PUT", "/articles/1/groups/redis", ""},
		{"DELETE", "/articles/1/groups/redis", ""},
		{"GET", "/groups/redis", ""},
	} {
		code, v := ta.do(r.method, r.target, r.body)
		if code != http.StatusInternalServerError || v["error"] != "internal error" {
			t.Errorf("%s %s: %d %v, want 500 internal error", r.method, r.target, code, v)
		}
	}
	if got := strings.Count(ta.logged.String(), "connection refused"); got != 8 {
		t.Errorf("%d failures logged, want 8:\n%s", got, ta.logged)
	}
}
