package main

// moderation_edges_test.go: the moderators' routes at their edges.

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSuspensionUntilNotATime: PUT /users/{name}/suspension with an
// "until" that is no RFC 3339 time is a 400 whose message names the
// field (decodeError: time.Time's UnmarshalJSON error names none), not
// one that says the body "is not a JSON object".
func TestSuspensionUntilNotATime(t *testing.T) {
	ta := newTestAPI(t, config{voteLog: true})
	mod := ta.asRole("mod", roleModerator)
	for _, until := range []string{"tomorrow", "2024-01-02", "2024-01-02 10:00:00"} {
		_, v := mod.do("PUT", "/users/bob/suspension", `{"mode":"refuse","until":"`+until+`"}`)
		if msg, _ := v["error"].(string); strings.Contains(msg, "is not a JSON object") || !strings.Contains(msg, "until") {
			t.Errorf("until %q: %v; want a message naming the field until", until, v)
		}
	}
}

// TestCommentVotersNotFoundMessage: GET /comments/{id}/voters of an
// unknown or deleted comment answers `comment not found: "99"`, as an
// article's answers `article not found: "99"`, without the store's op
// name (message cuts at the innermost wording of the sentinel: the
// comment's "comment not found" wraps ErrNotFound).
func TestCommentVotersNotFoundMessage(t *testing.T) {
	ta := newTestAPI(t, config{voteLog: true})
	id := ta.post("A")
	c := ta.comment(id, "", "alice", "first")
	mod := ta.asRole("mod", roleModerator)
	mod.must(http.StatusNoContent, "DELETE", "/comments/"+c, "")
	for _, cid := range []string{"99", c} {
		v := mod.failsWith(http.StatusNotFound, codeNotFound, "", "GET", "/comments/"+cid+"/voters", "")
		if msg := v["error"]; msg != `comment not found: "`+cid+`"` {
			t.Errorf("comment %s: error %q; want %q, as an article's reads", cid, msg, `comment not found: "`+cid+`"`)
		}
	}
	v := mod.failsWith(http.StatusNotFound, codeNotFound, "", "GET", "/articles/99/voters", "")
	if msg := v["error"]; msg != `article not found: "99"` {
		t.Errorf("article: %q", msg)
	}
}

// TestSuspendReplyUntilIsTheStored: PUT /users/{name}/suspension
// answers with the end the store keeps (Store.Suspend keeps it to the
// millisecond), which GET right after answers too, not the end it was
// given to the nanosecond.
func TestSuspendReplyUntilIsTheStored(t *testing.T) {
	ta := newTestAPI(t, config{voteLog: true})
	mod := ta.asRole("mod", roleModerator)
	ta.clock.Add(1234567 * time.Microsecond) // a now between two milliseconds
	for _, body := range []string{`{"mode":"shadow","for":"1h"}`,
		`{"mode":"refuse","until":"2024-01-02T00:00:00.123456789Z"}`} {
		put := mod.must(http.StatusOK, "PUT", "/users/bob/suspension", body)
		get := mod.must(http.StatusOK, "GET", "/users/bob/suspension", "")
		if put["until"] != get["until"] || put["mode"] != get["mode"] {
			t.Errorf("PUT %s answered %v, GET then %v", body, put, get)
		}
	}
}
