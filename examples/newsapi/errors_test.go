package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// Every error reply has a stable code and a message in the API's terms.
func TestErrorCodes(t *testing.T) {
	ta := newTestAPI(t, config{})
	id := ta.post("exists")
	closed := ta.post("closed later")
	huge := `{"title":"` + strings.Repeat("x", maxBody) + `"}`
	for _, tc := range []struct {
		status               int
		code, msg            string
		method, target, body string
	}{
		{404, "not_found", `article not found: "42"`, "GET", "/articles/42", ""},
		{404, "not_found", `article not found: "42"`, "PUT", "/articles/42/vote", `{"vote":"up"}`},
		{400, "invalid_vote", "invalid vote", "PUT", "/articles/" + id + "/vote", `{"vote":"sideways"}`},
		{400, "bad_request", "vote is missing", "PUT", "/articles/" + id + "/vote", `{}`},
		{400, "invalid_argument", "invalid argument: title is blank", "POST", "/articles", `{"title":" "}`},
		{400, "invalid_argument", "invalid argument: page 0 is below 1", "GET", "/articles?page=0", ""},
		{400, "bad_request", `order "worst"`, "GET", "/articles?order=worst", ""},
		{400, "bad_request", "request body is cut short", "POST", "/articles", `{"title":`},
		{413, "too_large", "the limit is 65536 bytes", "POST", "/articles", huge},
		{404, "not_found", "not found", "GET", "/nowhere", ""},
		{405, "method_not_allowed", "method not allowed", "PUT", "/articles/1", ""},
		{403, "forbidden", `forbidden: "user" is "alice", but the token is "bob"'s`, "PUT", "/articles/" + id + "/vote", `{"user":"alice","vote":"up"}`},
		{403, "forbidden", "forbidden: only its poster or a moderator may delete an article", "DELETE", "/articles/" + id, ""},
	} {
		v := ta.as("bob").failsWith(tc.status, tc.code, tc.msg, tc.method, tc.target, tc.body)
		if e, _ := v["error"].(string); !strings.HasPrefix(e, tc.msg) && tc.status != 413 && tc.code != "bad_request" {
			t.Errorf("%s %s: message %q does not start with %q", tc.method, tc.target, e, tc.msg)
		}
	}
	ta.failsWith(401, "unauthorized", "unauthorized: this request needs a token", "PUT", "/articles/"+id+"/vote", `{"vote":"up"}`)
	ta.clock.Add(voting.DefaultVoteWindow)
	ta.as("bob").failsWith(409, "voting_closed", `voting closed: "`+closed+`"`, "PUT", "/articles/"+closed+"/vote", `{"vote":"up"}`)
	if ta.logged.Len() > 0 {
		t.Errorf("client errors were logged: %s", ta.logged)
	}
}

// Redis's refusals are 503s with a code of their own; a request whose
// deadline passed is a 503 timeout, whatever the store's error says.
func TestClassify(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	gone, cancelGone := context.WithCancel(context.Background())
	cancelGone()
	bg := context.Background()
	for _, tc := range []struct {
		ctx    context.Context
		err    error
		status int
		code   string
	}{
		{bg, fmt.Errorf("voting: vote: %w: TRYAGAIN", voting.ErrTryAgain), 503, codeTryAgain},
		{bg, fmt.Errorf("voting: post: %w: OOM", voting.ErrOutOfMemory), 503, codeOutOfMemory},
		{bg, fmt.Errorf("voting: post: %w: 0 of 1 replicas", voting.ErrNotReplicated), 503, codeNotReplicated},
		{bg, fmt.Errorf("voting: vote: %w", voting.ErrRateLimited), 429, codeRateLimited},
		{bg, fmt.Errorf("voting: vote: %w", voting.ErrNotAllowed), 403, codeNotAllowed},
		{bg, fmt.Errorf("voting: post: %w", voting.ErrDuplicate), 409, codeDuplicate},
		{bg, fmt.Errorf("voting: article: %w", context.DeadlineExceeded), 503, codeTimeout},
		{expired, fmt.Errorf("voting: post: %w: %w", voting.ErrUnknownOutcome, context.DeadlineExceeded), 503, codeUnknownOutcome},
		{expired, fmt.Errorf("voting: article: read tcp: i/o timeout"), 503, codeTimeout},
		{gone, fmt.Errorf("voting: article: %w", context.Canceled), 503, codeCanceled},
		{bg, fmt.Errorf("voting: article: ERR something broke"), 500, codeInternal},
		{bg, featureOff("karma is off", "-karma"), 404, codeFeatureOff},
	} {
		if status, code := classify(tc.ctx, tc.err); status != tc.status || code != tc.code {
			t.Errorf("classify(%v) = %d %s, want %d %s", tc.err, status, code, tc.status, tc.code)
		}
	}
	// The store's messages, from the sentinel on, without its options.
	for err, want := range map[error]string{
		fmt.Errorf("voting: vote batch: %w: %q", voting.ErrNotFound, "9"):                                  `article not found: "9"`,
		fmt.Errorf("voting: submitted: %w: user pages are off (WithUserPages)", voting.ErrInvalidArgument): "invalid argument: user pages are off",
		fmt.Errorf("voting: post: %w: OOM command not allowed", voting.ErrOutOfMemory):                     "out of memory: OOM command not allowed",
	} {
		if got := message(err); got != want {
			t.Errorf("message(%v) = %q, want %q", err, got, want)
		}
	}
}

// A 429 has retry_after, in the body as in the Retry-After header, and
// so has a ballot over the limit; a 403 says why.
func TestRefusalBodies(t *testing.T) {
	ta, a := newLimitedAPI(t)
	v := ta.as("bob").failsWith(http.StatusTooManyRequests, codeRateLimited, "rate limited: try again in 3600 seconds", "PUT", "/articles/"+a+"/vote", `{"vote":"cancel"}`)
	if v["retry_after"] != 3600.0 {
		t.Errorf("429 without retry_after 3600: %v", v)
	}
	v = ta.as("alice").failsWith(http.StatusTooManyRequests, codeRateLimited, "try again in 30 seconds", "POST", "/articles", `{"title":"B"}`)
	if v["retry_after"] != 30.0 {
		t.Errorf("429 of a post without retry_after 30: %v", v)
	}
	res := append(ta.as("bob").votes(`[{"id":"`+a+`","vote":"cancel"}]`), ta.as("carol").votes(`[{"id":"`+a+`","vote":"down"}]`)...)
	if r := res[0]; r.Status != http.StatusTooManyRequests || r.Code != codeRateLimited || r.RetryAfter != 3600 || r.Error != "rate limited: try again in 3600 seconds" {
		t.Errorf("a ballot over the limit: %+v", r)
	}
	const why = "not allowed: a downvote needs at least 10 karma, and the voter has less"
	if r := res[1]; r.Status != http.StatusForbidden || r.Code != codeNotAllowed || r.Error != why || r.RetryAfter != 0 {
		t.Errorf("a ballot under -min-karma: %+v", r)
	}
	if v := ta.as("carol").failsWith(http.StatusForbidden, codeNotAllowed, why, "PUT", "/articles/"+a+"/vote", `{"vote":"down"}`); v["error"] != why {
		t.Errorf("403 of -min-karma: %v", v)
	}
}

// PATCH /articles/{id} without -edit-window is a feature that is off;
// with it, a refusal says who may edit, and until when.
func TestEditRefusals(t *testing.T) {
	off := newTestAPI(t, config{})
	a := off.post("A")
	v := off.as("alice").failsWith(http.StatusNotFound, codeFeatureOff, "", "PATCH", "/articles/"+a, `{"title":"A2"}`)
	if v["error"] != "editing is off: start the service with -edit-window" {
		t.Errorf("PATCH without -edit-window: %v", v)
	}
	on := newTestAPI(t, config{rules: ruleFlags{editWindow: 15 * time.Minute}})
	a = on.post("A")
	v = on.as("bob").failsWith(http.StatusForbidden, codeNotAllowed, "", "PATCH", "/articles/"+a, `{"title":"mine"}`)
	if v["error"] != "not allowed: only its poster may edit an article, within 15m0s of posting it" {
		t.Errorf("PATCH by another user: %v", v)
	}
}

// The routes of a feature that is off answer 404 feature_off, with the
// flag that turns it on.
func TestFeatureOff(t *testing.T) {
	ta := newTestAPI(t, config{})
	rec := httptest.NewRecorder()
	ta.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/users?page=1", nil))
	if want := `{"code":"feature_off","error":"karma is off: start the service with -karma"}`; rec.Code != http.StatusNotFound || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("GET /users?page=1 without -karma: %d %s, want 404 %s", rec.Code, rec.Body, want)
	}
	ta.failsWith(http.StatusNotFound, codeFeatureOff, "start the service with -user-pages or -karma", "GET", "/users/nobody", "")
	withKarma := newTestAPI(t, config{rules: ruleFlags{karma: &[2]int64{1, -1}}})
	withKarma.must(http.StatusOK, "GET", "/users?page=1", "")
	withKarma.must(http.StatusOK, "GET", "/users/nobody", "")
}

// Links are http or https URLs of at most 2,048 bytes, or none; titles
// are free of control characters, bidi controls and line separators (the
// store's rules, the length aside). Others get 400 invalid_argument, on
// POST and PATCH alike, and nothing is stored.
func TestLinksAndTitles(t *testing.T) {
	ta := newTestAPI(t, config{rules: ruleFlags{editWindow: time.Hour}})
	id := ta.post("A")
	long := "https://example.com/" + strings.Repeat("x", maxLink-len("https://example.com/"))
	for _, link := range []string{"", "https://example.com/1", "http://example.com", "HTTPS://EXAMPLE.COM/a?b=c#d", "https://[::1]:8080/x", long} {
		body := fmt.Sprintf(`{"title":"good","link":%q}`, link)
		ta.clock.Add(time.Minute)
		if v := ta.as("alice").must(http.StatusCreated, "POST", "/articles", body); v["link"] != link {
			t.Errorf("POST with link %q: %v", link, v)
		}
	}
	for _, tc := range []struct{ title, link, msg string }{
		{"t", "javascript:alert(1)", `link: scheme "javascript" is not http or https`},
		{"t", "not a url", "link: contains white space U+0020 at byte 3"},
		{"t", "example.com/page", "link: is not an absolute URL"},
		{"t", "//example.com/page", "link: is not an absolute URL"},
		{"t", "ftp://example.com/f", `link: scheme "ftp" is not http or https`},
		{"t", "data:text/html,hi", `link: scheme "data"`},
		{"t", "https://", "link: has no host"},
		{"t", "https:///path", "link: has no host"},
		{"t", "https://bob:secret@example.com", "link: has user info"},
		{"t", " https://example.com", "link: contains white space U+0020 at byte 0"},
		{"t", "https://example.com/\u0000", "link: contains a control character U+0000"},
		{"t", long + "x", "link is longer than 2048 bytes"},
		{"a\u0000b", "", "title: contains a control character U+0000 at byte 1"},
		{"line\nbreak", "", "title: contains a control character U+000A"},
		{"tab\there", "", "title: contains a control character U+0009"},
		{"c1\u0085", "", "title: contains a control character U+0085"},
		{"esc\u001b[2J", "", "title: contains a control character U+001B at byte 3"},
		{"txt.\u202eexe", "", "title: contains a bidi control U+202E at byte 4"},
		{"a\u2066b", "", "title: contains a bidi control U+2066"},
		{"a\u2028b", "", "title: contains a line or paragraph separator U+2028"},
	} {
		body := fmt.Sprintf(`{"title":%s,"link":%s}`, jsonString(tc.title), jsonString(tc.link))
		ta.as("alice").failsWith(http.StatusBadRequest, codeInvalidArgument, "invalid argument: "+tc.msg, "POST", "/articles", body)
		ta.as("alice").failsWith(http.StatusBadRequest, codeInvalidArgument, "invalid argument: "+tc.msg, "PATCH", "/articles/"+id, body)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles", ""); v["total"] != 7.0 {
		t.Errorf("refused posts were stored: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles/"+id, ""); v["title"] != "A" {
		t.Errorf("refused edits were stored: %v", v)
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// A path that is not clean gets a JSON 404, not the mux's redirect with
// an HTML body.
func TestUncleanPaths(t *testing.T) {
	ta := newTestAPI(t, config{})
	ta.post("A")
	for _, target := range []string{"//articles", "/articles//1", "/articles/1/../1", "/./top", "/articles/", "/articles/1/"} {
		rec := httptest.NewRecorder()
		ta.handler.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != http.StatusNotFound || rec.Header().Get("Location") != "" || !strings.HasPrefix(rec.Body.String(), `{"code":"not_found","error":"not found`) {
			t.Errorf("GET %s: %d, Location %q: %s", target, rec.Code, rec.Header().Get("Location"), rec.Body)
		}
	}
}

// stalledPool is a Redis that never answers: a connection waits for the
// request's context to end.
type stalledPool struct{}

func (stalledPool) Get() redis.Conn {
	p := &redis.Pool{}
	p.Close()
	return p.Get() // a connection that fails: the store uses GetContext
}

func (stalledPool) GetContext(ctx context.Context) (redis.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// syncBuffer is a log the server and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With a stalled Redis, each request gets a JSON 503 timeout once its
// deadline (-timeout) passes, and the log says so.
func TestTimeout(t *testing.T) {
	store, err := voting.New(stalledPool{}, config{prefix: testPrefix, window: voting.DefaultVoteWindow}.storeOptions(testPageSize)...)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 50 * time.Millisecond
	ta := newTestAPIOn(t, store, nil, config{timeout: timeout}).as("alice")
	for _, r := range []struct{ method, target, body string }{
		{"GET", "/articles/1", ""},
		{"GET", "/articles", ""},
		{"POST", "/articles", `{"title":"t"}`},
		{"PUT", "/articles/1/vote", `{"vote":"up"}`},
		{"POST", "/votes", `[{"id":"1","vote":"up"}]`},
	} {
		ta.logged.Reset()
		start := time.Now()
		v := ta.failsWith(http.StatusServiceUnavailable, codeTimeout, "did not answer in time", r.method, r.target, r.body)
		if took := time.Since(start); took < timeout || took > timeout+time.Second {
			t.Errorf("%s %s: %v in %v, want a 503 after %v", r.method, r.target, v, took, timeout)
		}
		if want := r.method + " " + r.target + ": timeout: Redis did not answer within 50ms"; !strings.Contains(ta.logged.String(), want) {
			t.Errorf("%s %s: logged %q, want %q", r.method, r.target, ta.logged, want)
		}
	}
}

// The rules' numbers are the store's: after SetRules (or votectl
// options) a refusal names the new ones, not the flags'.
func TestRefusalsNameTheStoresNumbers(t *testing.T) {
	ta, a := newLimitedAPI(t)
	if _, err := ta.store.SetRules(context.Background(), voting.WithMinKarma(0, 20)); err != nil {
		t.Fatal(err)
	}
	const why = "not allowed: a downvote needs at least 20 karma, and the voter has less"
	ta.as("carol").failsWith(http.StatusForbidden, codeNotAllowed, why, "PUT", "/articles/"+a+"/vote", `{"vote":"down"}`)
}
