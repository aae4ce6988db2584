package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// votesOf returns the "vote" of each item of list (articles or
// comments), "-" where it has none.
func votesOf(list []any) string {
	var out []string
	for _, x := range list {
		v, ok := x.(map[string]any)["vote"].(string)
		if !ok {
			v = "-"
		}
		out = append(out, v)
	}
	return strings.Join(out, " ")
}

// TestListingsWithVotes: each listing read with a token shows its user's
// vote on each item ("up", "down", "none"); without a token, none; with
// a token refused, 401.
func TestListingsWithVotes(t *testing.T) {
	ta := newTestAPI(t, config{userPages: true})
	a1, a2 := ta.post("one"), ta.post("two")
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+a2+"/vote", `{"vote":"up"}`)
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+a1+"/vote", `{"vote":"down"}`)
	ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+a1+"/groups/go", "")
	ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/"+a2+"/groups/go", "")
	c1 := ta.as("carol").must(http.StatusCreated, "POST", "/articles/"+a1+"/comments", `{"body":"first"}`)["id"].(string)
	ta.as("dave").must(http.StatusCreated, "POST", "/articles/"+a1+"/comments", `{"body":"reply","parent":"`+c1+`"}`)
	ta.as("bob").must(http.StatusOK, "PUT", "/comments/"+c1+"/vote", `{"vote":"down"}`)

	for _, tc := range []struct {
		path, list, bob, anonymous string
	}{
		{"/articles?order=time", "articles", "up down", "- -"},
		{"/groups/go?order=time", "articles", "up down", "- -"},
		{"/top?since=1h", "articles", "up down", "- -"},
		{"/articles/" + a1 + "/comments?order=time-asc", "comments", "down none", "- -"},
		{"/comments/" + c1 + "/replies", "comments", "none", "-"},
	} {
		v := ta.as("bob").must(http.StatusOK, "GET", tc.path, "")
		if got := votesOf(v[tc.list].([]any)); got != tc.bob {
			t.Errorf("GET %s as bob: votes %q, want %q", tc.path, got, tc.bob)
		}
		v = ta.must(http.StatusOK, "GET", tc.path, "")
		if got := votesOf(v[tc.list].([]any)); got != tc.anonymous {
			t.Errorf("GET %s without a token: votes %q, want %q", tc.path, got, tc.anonymous)
		}
		req := ta.newRequest("GET", tc.path, "")
		req.Header.Set("Authorization", "Bearer not-a-token")
		rec := httptest.NewRecorder()
		ta.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s with a bad token: %d %q", tc.path, rec.Code, rec.Body)
		}
	}
	// alice's pages, as bob sees them: her posts, and her upvotes (her
	// own posts).
	v := ta.as("bob").must(http.StatusOK, "GET", "/users/alice", "")
	for _, list := range []string{"submitted", "upvoted"} {
		if got := votesOf(v[list].([]any)); got != "up down" {
			t.Errorf("GET /users/alice as bob: %s votes %q", list, got)
		}
	}
	v = ta.must(http.StatusOK, "GET", "/users/alice", "")
	if got := fmt.Sprint(votesOf(v["submitted"].([]any)), ", ", votesOf(v["upvoted"].([]any))); got != "- -, - -" {
		t.Errorf("GET /users/alice without a token: votes %s", got)
	}
}
