package main

import (
	"net/http"
	"testing"
	"time"
)

// TestModerationRoutes: the moderators' routes take a moderator's token
// only (401 without one, 403 for anyone else, the user themselves
// included), and do what their store methods do.
func TestModerationRoutes(t *testing.T) {
	ta := newTestAPI(t, config{voteLog: true})
	id := ta.post("A")
	ta.comment(id, "", "alice", "first")
	ta.as("bob").must(http.StatusOK, "PUT", "/articles/"+id+"/vote", `{"vote":"up"}`)
	ta.as("bob").must(http.StatusOK, "PUT", "/comments/1/vote", `{"vote":"down"}`)
	routes := []struct{ method, target, body string }{
		{"GET", "/users/bob/votes", ""},
		{"GET", "/articles/" + id + "/voters", ""},
		{"GET", "/comments/1/voters", ""},
		{"POST", "/users/bob/reverse-votes", ""},
		{"PUT", "/users/bob/suspension", `{"mode":"refuse","for":"1h"}`},
		{"DELETE", "/users/bob/suspension", ""},
		{"GET", "/users/bob/suspension", ""},
	}
	for _, r := range routes {
		ta.failsWith(http.StatusUnauthorized, codeUnauthorized, "", r.method, r.target, r.body)
		ta.as("bob").failsWith(http.StatusForbidden, codeForbidden, "only a moderator", r.method, r.target, r.body)
		ta.as("alice").failsWith(http.StatusForbidden, codeForbidden, "only a moderator", r.method, r.target, r.body)
	}
	mod := ta.asRole("mod", roleModerator)
	v := mod.must(http.StatusOK, "GET", "/users/bob/votes?limit=1", "")
	if items := v["items"].([]any); len(items) != 1 || v["next"] == "" {
		t.Fatalf("votes page of 1: %v", v)
	}
	v = mod.must(http.StatusOK, "GET", "/users/bob/votes?cursor="+v["next"].(string), "")
	if items := v["items"].([]any); len(items) != 1 || v["next"] != "" {
		t.Fatalf("votes page 2: %v", v)
	}
	v = mod.must(http.StatusOK, "GET", "/articles/"+id+"/voters", "")
	if items := v["items"].([]any); len(items) != 2 {
		t.Fatalf("article voters: %v", v)
	}
	v = mod.must(http.StatusOK, "GET", "/comments/1/voters", "")
	if items := v["items"].([]any); len(items) != 2 {
		t.Fatalf("comment voters: %v", v)
	}
	mod.failsWith(http.StatusBadRequest, codeInvalidArgument, "limit", "GET", "/users/bob/votes?limit=0", "")

	// Suspended with refuse, bob's vote is refused with a Retry-After.
	mod.must(http.StatusOK, "PUT", "/users/bob/suspension", `{"mode":"refuse","for":"1h"}`)
	if v := mod.must(http.StatusOK, "GET", "/users/bob/suspension", ""); v["mode"] != "refuse" {
		t.Fatalf("suspension: %v", v)
	}
	ta.as("bob").failsWith(http.StatusForbidden, codeNotAllowed, "", "PUT", "/articles/"+id+"/vote", `{"vote":"down"}`)
	mod.failsWith(http.StatusBadRequest, codeInvalidArgument, "mode", "PUT", "/users/bob/suspension", `{"mode":"ban","for":"1h"}`)
	mod.must(http.StatusNoContent, "DELETE", "/users/bob/suspension", "")
	if v := mod.must(http.StatusOK, "GET", "/users/bob/suspension", ""); v["mode"] != "none" {
		t.Fatalf("after DELETE: %v", v)
	}
	until := ta.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	mod.must(http.StatusOK, "PUT", "/users/bob/suspension", `{"mode":"shadow","until":"`+until+`"}`)
	mod.must(http.StatusNoContent, "DELETE", "/users/bob/suspension", "")

	// Reversed, bob's votes go.
	if v := mod.must(http.StatusOK, "POST", "/users/bob/reverse-votes", ""); v["reversed"] != float64(2) {
		t.Fatalf("reverse-votes: %v", v)
	}
	if v := ta.must(http.StatusOK, "GET", "/articles/"+id, ""); v["upvotes"] != float64(1) {
		t.Fatalf("article after reverse: %v", v)
	}

	// Without -vote-log, the log's routes are off.
	off := newTestAPI(t, config{}).asRole("mod", roleModerator)
	off.failsWith(http.StatusNotFound, codeFeatureOff, "-vote-log", "GET", "/users/bob/votes", "")
	off.failsWith(http.StatusNotFound, codeFeatureOff, "-vote-log", "POST", "/users/bob/reverse-votes", "")
}
