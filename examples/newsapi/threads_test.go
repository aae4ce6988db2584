package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// comment posts a comment by poster on the article, under parent ("" for
// none), and returns its id.
func (ta *testAPI) comment(article, parent, poster, body string) string {
	ta.t.Helper()
	req := `{"body":"` + body + `"`
	if parent != "" {
		req += `,"parent":"` + parent + `"`
	}
	v := ta.as(poster).must(http.StatusCreated, "POST", "/articles/"+article+"/comments", req+"}")
	return v["id"].(string)
}

// threadOf returns a thread reply's comments as "id/depth/more", with a
// "x" after the id of a deleted one.
func threadOf(v map[string]any) string {
	var list []string
	for _, c := range v["comments"].([]any) {
		m := c.(map[string]any)
		id := m["id"].(string)
		if m["deleted"] == true {
			id += "x"
		}
		list = append(list, id+"/"+strconv.Itoa(int(m["depth"].(float64)))+"/"+strconv.Itoa(int(m["more"].(float64))))
	}
	return strings.Join(list, " ")
}

// POST /articles/{id}/comments posts a comment or a reply; GET
// /articles/{id}/comments and GET /comments/{id}/replies read threads;
// PUT /comments/{id}/vote votes; DELETE /comments/{id} deletes.
func TestComments(t *testing.T) {
	ta := newTestAPI(t, config{})
	a := ta.post("threads")
	other := ta.post("another")

	rec := ta.as("bob").serve("POST", "/articles/"+a+"/comments", `{"body":"first!"}`)
	if rec.Code != http.StatusCreated || rec.Header().Get("Location") != "/comments/1" {
		t.Fatalf("POST /articles/%s/comments: %d, Location %q: %s", a, rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	want := `{"id":"1","article":"` + a + `","poster":"bob","body":"first!","posted":"2024-01-01T12:02:00Z","upvotes":1,"downvotes":0,"replies":0}` + "\n"
	if rec.Body.String() != want {
		t.Errorf("POST a comment:\n got %s\nwant %s", rec.Body, want)
	}
	v := ta.as("carol").must(http.StatusCreated, "POST", "/articles/"+a+"/comments", `{"body":"a reply","parent":"1"}`)
	if v["id"] != "2" || v["parent"] != "1" || v["article"] != a {
		t.Errorf("POST a reply: %v", v)
	}
	third := ta.comment(a, "", "dave", "second")
	for _, u := range []string{"bob", "carol"} {
		ta.as(u).must(http.StatusOK, "PUT", "/comments/"+third+"/vote", `{"vote":"up"}`)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles/"+a, ""); v["comments"] != 3.0 {
		t.Errorf("GET /articles/%s: %v, want 3 comments", a, v)
	}

	for _, tc := range []struct {
		query, want string
	}{
		{"", "3/0/0 1/0/0 2/1/0"},
		{"?order=best", "3/0/0 1/0/0 2/1/0"},
		{"?order=top&limit=2", "3/0/0 1/0/1"},
		{"?order=new", "3/0/0 1/0/0 2/1/0"},
		{"?order=old", "1/0/0 2/1/0 3/0/0"},
		{"?limit=1", "3/0/0"},
		{"?order=hot", "3/0/0 1/0/0 2/1/0"},
		{"?order=controversial&limit=500", "3/0/0 1/0/0 2/1/0"},
	} {
		v := ta.must(http.StatusOK, "GET", "/articles/"+a+"/comments"+tc.query, "")
		if got := threadOf(v); got != tc.want || v["article"] != a {
			t.Errorf("GET /articles/%s/comments%s: %s, want %s (%v)", a, tc.query, got, tc.want, v)
		}
	}
	v = ta.must(http.StatusOK, "GET", "/articles/"+a+"/comments", "")
	if v["order"] != "best" || v["limit"] != 200.0 {
		t.Errorf("a thread's order and limit: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles/"+other+"/comments", ""); threadOf(v) != "" {
		t.Errorf("a thread without comments: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/comments/1/replies", ""); threadOf(v) != "2/0/0" || v["comment"] != "1" {
		t.Errorf("GET /comments/1/replies: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/comments/2/replies?order=new&limit=5", ""); threadOf(v) != "" {
		t.Errorf("GET /comments/2/replies: %v", v)
	}

	// Votes: a comment has points, no score.
	ta.voteSteps("/comments/1/vote", "eve", true, []voteStep{
		{"down", "none", 1, 1},
		{"down", "down", 1, 1},
		{"up", "down", 2, 0},
		{"cancel", "up", 1, 0},
	})

	// Bad requests.
	path := "/articles/" + a + "/comments"
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidArgument, "body", "POST", path, `{"body":"  "}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidArgument, "body", "POST", path, `{"body":"`+strings.Repeat("x", voting.MaxCommentLen+1)+`"}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidArgument, "body: contains a bidi control U+202E at byte 4", "POST", path, `{"body":"see \u202egpj.exe"}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidArgument, "body: contains a control character U+001B", "POST", path, `{"body":"\u001b[2J"}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeBadRequest, "unknown field", "POST", path, `{"body":"x","title":"y"}`)
	ta.as("bob").failsWith(http.StatusNotFound, codeNotFound, "not found", "POST", "/articles/99/comments", `{"body":"x"}`)
	ta.as("bob").failsWith(http.StatusNotFound, codeNotFound, "not found", "POST", path, `{"body":"x","parent":"99"}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidArgument, "", "POST", "/articles/"+other+"/comments", `{"body":"x","parent":"1"}`)
	ta.failsWith(http.StatusBadRequest, codeBadRequest, "order", "GET", path+"?order=sideways", "")
	ta.failsWith(http.StatusBadRequest, codeInvalidArgument, "", "GET", path+"?order=score-asc", "")
	ta.failsWith(http.StatusBadRequest, codeBadRequest, "limit", "GET", path+"?limit=x", "")
	ta.failsWith(http.StatusBadRequest, codeInvalidArgument, "limit", "GET", path+"?limit=0", "")
	ta.failsWith(http.StatusBadRequest, codeInvalidArgument, "limit", "GET", path+"?limit="+strconv.Itoa(voting.MaxThread+1), "")
	ta.failsWith(http.StatusNotFound, codeNotFound, "not found", "GET", "/comments/99/replies", "")
	ta.failsWith(http.StatusNotFound, codeNotFound, "not found", "GET", "/comments/x/replies", "")
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidVote, "invalid vote type", "PUT", "/comments/1/vote", `{"vote":"sideways"}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeBadRequest, "vote is missing", "PUT", "/comments/1/vote", `{}`)
	ta.as("bob").failsWith(http.StatusNotFound, codeNotFound, "not found", "PUT", "/comments/99/vote", `{"vote":"up"}`)

	// Deletes: a comment with replies stays as deleted, without poster or
	// body; its last reply's delete takes it along.
	ta.as("bob").must(http.StatusNoContent, "DELETE", "/comments/1", "")
	v = ta.must(http.StatusOK, "GET", path+"?order=old", "")
	if got := threadOf(v); got != "1x/0/0 2/1/0 3/0/0" {
		t.Errorf("thread after deleting 1: %s", got)
	}
	if c := v["comments"].([]any)[0].(map[string]any); c["poster"] != nil || c["body"] != nil {
		t.Errorf("a deleted comment: %v", c)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles/"+a, ""); v["comments"] != 2.0 {
		t.Errorf("GET /articles/%s after a delete: %v, want 2 comments", a, v)
	}
	ta.as("carol").must(http.StatusNoContent, "DELETE", "/comments/2", "")
	if got := threadOf(ta.must(http.StatusOK, "GET", path, "")); got != "3/0/0" {
		t.Errorf("thread after deleting 2: %s", got)
	}
	ta.failsWith(http.StatusNotFound, codeNotFound, "not found", "GET", "/comments/1/replies", "")
	ta.as("bob").failsWith(http.StatusNotFound, codeNotFound, "not found", "DELETE", "/comments/1", "")

	// Once the article's voting closes, so does commenting; votes on a
	// comment close a window after it was posted.
	ta.clock.Add(voting.DefaultVoteWindow)
	ta.as("bob").failsWith(http.StatusConflict, codeVotingClosed, "voting closed", "POST", path, `{"body":"late"}`)
	ta.as("eve").failsWith(http.StatusConflict, codeVotingClosed, "voting closed", "PUT", "/comments/"+third+"/vote", `{"vote":"up"}`)
}

// PATCH /comments/{id} edits within -edit-window, for the poster only.
func TestEditComment(t *testing.T) {
	ta := newTestAPI(t, config{rules: ruleFlags{editWindow: 15 * time.Minute}})
	a := ta.post("A") // a minute passes
	c := ta.comment(a, "", "bob", "frist")
	v := ta.as("bob").must(http.StatusOK, "PATCH", "/comments/"+c, `{"body":"first"}`)
	if v["body"] != "first" || v["poster"] != "bob" || v["id"] != c {
		t.Errorf("PATCH: %v", v)
	}
	ta.as("carol").failsWith(http.StatusForbidden, codeNotAllowed, "only its poster may edit a comment", "PATCH", "/comments/"+c, `{"body":"mine"}`)
	ta.as("bob").failsWith(http.StatusNotFound, codeNotFound, "not found", "PATCH", "/comments/99", `{"body":"x"}`)
	ta.as("bob").failsWith(http.StatusBadRequest, codeInvalidArgument, "body", "PATCH", "/comments/"+c, `{"body":""}`)
	ta.clock.Add(15 * time.Minute)
	ta.as("bob").failsWith(http.StatusForbidden, codeNotAllowed, "not allowed", "PATCH", "/comments/"+c, `{"body":"late"}`)

	plain := newTestAPI(t, config{})
	a = plain.post("A")
	c = plain.comment(a, "", "bob", "x")
	plain.as("bob").failsWith(http.StatusNotFound, codeFeatureOff, "-edit-window", "PATCH", "/comments/"+c, `{"body":"y"}`)
}

// With -user-pages, GET /users/{name} lists the user's latest comments,
// newest first; -comment-interval answers 429 with Retry-After.
func TestUserComments(t *testing.T) {
	ta := newTestAPI(t, config{userPages: true, rules: ruleFlags{commentInterval: 30 * time.Second}})
	a := ta.post("A")
	first := ta.comment(a, "", "bob", "one")
	rec := ta.as("bob").serve("POST", "/articles/"+a+"/comments", `{"body":"two"}`)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" {
		t.Errorf("a comment within -comment-interval: %d, Retry-After %q: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	ta.clock.Add(30 * time.Second)
	second := ta.comment(a, first, "bob", "two")
	ta.clock.Add(30 * time.Second)
	third := ta.comment(a, "", "bob", "three")
	// Pages of testPageSize: the newest two.
	v := ta.must(http.StatusOK, "GET", "/users/bob", "")
	if got := listOf(v, "comments"); got != third+" "+second {
		t.Errorf("GET /users/bob: comments %s, want %s %s (%v)", got, third, second, v)
	}
	if v := ta.must(http.StatusOK, "GET", "/users/nobody", ""); listOf(v, "comments") != "" {
		t.Errorf("GET /users/nobody: %v", v)
	}
}
