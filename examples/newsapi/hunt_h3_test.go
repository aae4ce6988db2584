package main

// hunt_h3_test.go: failing tests of defects in the moderators' routes.

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHuntSuspensionUntilNotATime: PUT /users/{name}/suspension with an
// "until" that is no RFC 3339 time is a 400 whose message says the body
// "is not a JSON object", though it is one: time.Time's UnmarshalJSON
// error is neither a json.UnmarshalTypeError nor a SyntaxError, so
// decodeError falls to its default. The message should name the field.
func TestHuntSuspensionUntilNotATime(t *testing.T) {
	ta := newTestAPI(t, config{voteLog: true})
	mod := ta.asRole("mod", roleModerator)
	for _, until := range []string{"tomorrow", "2024-01-02", "2024-01-02 10:00:00"} {
		_, v := mod.do("PUT", "/users/bob/suspension", `{"mode":"refuse","until":"`+until+`"}`)
		if msg, _ := v["error"].(string); strings.Contains(msg, "is not a JSON object") || !strings.Contains(msg, "until") {
			t.Errorf("until %q: %v; want a message naming the field until", until, v)
		}
	}
}

// TestHuntCommentVotersNotFoundMessage: GET /comments/{id}/voters of an
// unknown comment answers `comment voters: comment not found: "99"`: the
// store's op name leaks into the message, where an article's answers
// `article not found: "99"` (message strips up to the sentinel's text,
// and looks for ErrNotFound's "article not found" only, not the
// comment's renamed "comment not found").
func TestHuntCommentVotersNotFoundMessage(t *testing.T) {
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

// TestHuntSuspendReplyUntilIsTheStored: PUT /users/{name}/suspension
// answers with the end it was given (the service's now plus "for", to
// the nanosecond), not the one the store keeps (Store.Suspend keeps it to
// the millisecond): GET right after answers another "until".
func TestHuntSuspendReplyUntilIsTheStored(t *testing.T) {
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
