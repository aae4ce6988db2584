package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// writeRoute is a route that writes, as the tests of authentication
// send it, on a store where alice has posted article 1, put it in group
// g, and commented on it (comment 1).
type writeRoute struct {
	method, target, body string // alice's own request
	status               int    // its status
	// others are requests that act as another user, or on another's
	// item, each refused with 403 and its code.
	others []otherRequest
}

// otherRequest is a request of user that acts as, or on, another user.
type otherRequest struct {
	user, body, code string
}

// writeRoutes are every route that writes, each with its refusals.
var writeRoutes = []writeRoute{
	{"POST", "/articles", `{"title":"t"}`, http.StatusCreated, []otherRequest{
		{"alice", `{"poster":"bob","title":"t"}`, codeForbidden}}},
	{"PUT", "/articles/1/vote", `{"vote":"down"}`, http.StatusOK, []otherRequest{
		{"alice", `{"user":"bob","vote":"down"}`, codeForbidden}}},
	// A batch with one ballot of another user casts none of them.
	{"POST", "/votes", `[{"id":"1","vote":"down"}]`, http.StatusOK, []otherRequest{
		{"alice", `[{"id":"1","vote":"down"},{"user":"bob","id":"1","vote":"up"}]`, codeForbidden}}},
	{"PUT", "/articles/1/groups/h", "", http.StatusNoContent, []otherRequest{
		{"bob", "", codeForbidden}}},
	{"DELETE", "/articles/1/groups/g", "", http.StatusNoContent, []otherRequest{
		{"bob", "", codeForbidden}}},
	{"DELETE", "/articles/1", "", http.StatusNoContent, []otherRequest{
		{"bob", "", codeForbidden}}},
	// Editing is the poster's alone, by the store's rule.
	{"PATCH", "/articles/1", `{"title":"t2"}`, http.StatusOK, []otherRequest{
		{"bob", `{"title":"t2"}`, codeNotAllowed},
		{"alice", `{"user":"bob","title":"t2"}`, codeForbidden}}},
	{"POST", "/articles/1/comments", `{"body":"b"}`, http.StatusCreated, []otherRequest{
		{"alice", `{"poster":"bob","body":"b"}`, codeForbidden}}},
	{"PUT", "/comments/1/vote", `{"vote":"down"}`, http.StatusOK, []otherRequest{
		{"alice", `{"user":"bob","vote":"down"}`, codeForbidden}}},
	{"PATCH", "/comments/1", `{"body":"b2"}`, http.StatusOK, []otherRequest{
		{"bob", `{"body":"b2"}`, codeNotAllowed},
		{"alice", `{"user":"bob","body":"b2"}`, codeForbidden}}},
	{"DELETE", "/comments/1", "", http.StatusNoContent, []otherRequest{
		{"bob", "", codeForbidden}}},
}

// newAuthAPI returns an API with -edit-window where alice has posted
// article 1, put it in group g and commented on it.
func newAuthAPI(t *testing.T) *testAPI {
	ta := newTestAPI(t, config{rules: ruleFlags{editWindow: 15 * time.Minute}})
	ta.post("A")
	ta.as("alice").must(http.StatusNoContent, "PUT", "/articles/1/groups/g", "")
	ta.comment("1", "", "alice", "first")
	return ta
}

// snapshot is what a write could change, as the reads show it.
func (ta *testAPI) snapshot() string {
	ta.t.Helper()
	var b strings.Builder
	for _, target := range []string{"/articles/1", "/articles/1/comments", "/articles?order=time", "/groups/h"} {
		code, v := ta.do("GET", target, "")
		j, _ := json.Marshal(v)
		b.WriteString(target + " " + http.StatusText(code) + " " + string(j) + "\n")
	}
	return b.String()
}

// Every route that writes acts as its token's user: the caller's own
// request passes; one that acts as another user, or on another's item,
// gets 403; one without a token, or with a token malformed, expired or
// wrongly signed, gets 401 and a WWW-Authenticate challenge. A refused
// request changes nothing.
func TestWriteRoutesAuth(t *testing.T) {
	otherKey := secret("another service's secret, 32 bytes or more")
	for _, rt := range writeRoutes {
		t.Run(rt.method+" "+rt.target, func(t *testing.T) {
			ta := newAuthAPI(t)
			before := ta.snapshot()
			expiredAt := ta.clock.Now().Add(-time.Second).Unix()
			expired, _ := sign(testKey, claims{Sub: "alice", Role: roleUser, Exp: &expiredAt})
			later := ta.clock.Now().Add(time.Hour).Unix()
			wrong, _ := sign(otherKey, claims{Sub: "alice", Role: roleUser, Exp: &later})
			for _, tc := range []struct {
				name, auth, error, challenge string
			}{
				{"no credential", "", "unauthorized: this request needs a token", `Bearer realm="newsapi"`},
				{"another scheme", "Basic YWxpY2U6c2VjcmV0", "unauthorized: this request needs a token", `Bearer realm="newsapi"`},
				{"expired", "Bearer " + expired, "unauthorized: the token has expired",
					`Bearer realm="newsapi", error="invalid_token", error_description="the token has expired"`},
				{"wrong signature", "Bearer " + wrong, "unauthorized: the token's signature is wrong",
					`Bearer realm="newsapi", error="invalid_token", error_description="the token's signature is wrong"`},
				{"malformed", "Bearer alice", "unauthorized: the token is malformed",
					`Bearer realm="newsapi", error="invalid_token", error_description="the token is malformed"`},
			} {
				req := httptest.NewRequest(rt.method, rt.target, strings.NewReader(rt.body))
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				rec := httptest.NewRecorder()
				ta.handler.ServeHTTP(rec, req)
				var v errorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || rec.Code != http.StatusUnauthorized ||
					v.Code != codeUnauthorized || !strings.HasPrefix(v.Error, tc.error) {
					t.Errorf("%s: %d %s, want 401 %q", tc.name, rec.Code, rec.Body, tc.error)
				}
				if got := rec.Header().Get("WWW-Authenticate"); got != tc.challenge {
					t.Errorf("%s: WWW-Authenticate %q, want %q", tc.name, got, tc.challenge)
				}
			}
			for _, o := range rt.others {
				ta.as(o.user).failsWith(http.StatusForbidden, o.code, "", rt.method, rt.target, o.body)
			}
			if after := ta.snapshot(); after != before {
				t.Errorf("refused requests changed the store:\nbefore %s\nafter  %s", before, after)
			}
			var v any
			if code := ta.as("alice").doInto(rt.method, rt.target, rt.body, &v); code != rt.status {
				t.Errorf("alice's own request: %d %v, want %d", code, v, rt.status)
			}
		})
	}
}

// A body may name the acting user, if it names the token's; the reply
// of acting as another says who.
func TestActAsNamed(t *testing.T) {
	ta := newAuthAPI(t)
	if v := ta.as("alice").must(http.StatusCreated, "POST", "/articles", `{"poster":"alice","title":"named"}`); v["poster"] != "alice" {
		t.Errorf("a post naming its poster: %v", v)
	}
	v := ta.as("bob").failsWith(http.StatusForbidden, codeForbidden, "", "PUT", "/comments/1/vote", `{"user":"carol","vote":"up"}`)
	if want := `forbidden: "user" is "carol", but the token is "bob"'s: a request acts as its token's user only`; v["error"] != want {
		t.Errorf("acting as another: %v, want %q", v["error"], want)
	}
	v = ta.as("bob").failsWith(http.StatusForbidden, codeForbidden, "", "POST", "/votes", `[{"id":"1","vote":"up"},{"user":"carol","id":"1","vote":"up"}]`)
	if want := `forbidden: ballot 2's "user" is "carol", but the token is "bob"'s`; !strings.HasPrefix(v["error"].(string), want) {
		t.Errorf("a batch with another's ballot: %v, want %q...", v["error"], want)
	}
	// Reads need no token.
	for _, target := range []string{"/articles", "/articles/1", "/articles/1/comments", "/comments/1/replies", "/groups/g", "/top", "/healthz"} {
		ta.must(http.StatusOK, "GET", target, "")
	}
}

// A moderator may delete others' articles and comments and change their
// groups, but acts as themselves only: no vote or edit in another's name.
func TestModerator(t *testing.T) {
	ta := newAuthAPI(t)
	mod := ta.asRole("mod", roleModerator)
	mod.must(http.StatusNoContent, "PUT", "/articles/1/groups/picked", "")
	mod.must(http.StatusNoContent, "DELETE", "/articles/1/groups/g", "")
	if v := ta.must(http.StatusOK, "GET", "/articles/1", ""); len(v["groups"].([]any)) != 1 {
		t.Errorf("groups after the moderator's changes: %v", v["groups"])
	}
	mod.failsWith(http.StatusForbidden, codeForbidden, "", "PUT", "/articles/1/vote", `{"user":"alice","vote":"down"}`)
	mod.failsWith(http.StatusForbidden, codeNotAllowed, "only its poster may edit", "PATCH", "/articles/1", `{"title":"moderated"}`)
	mod.must(http.StatusNoContent, "DELETE", "/comments/1", "")
	mod.must(http.StatusNoContent, "DELETE", "/articles/1", "")
	mod.failsWith(http.StatusNotFound, codeNotFound, "article not found", "DELETE", "/articles/1", "")

	// A deleted comment kept for its replies is nobody's: deleting it
	// again changes nothing, whoever asks.
	ta = newAuthAPI(t)
	ta.comment("1", "1", "bob", "a reply")
	ta.as("alice").must(http.StatusNoContent, "DELETE", "/comments/1", "")
	ta.as("carol").must(http.StatusNoContent, "DELETE", "/comments/1", "")
	ta.as("carol").failsWith(http.StatusForbidden, codeForbidden, "only its poster or a moderator may delete a comment", "DELETE", "/comments/2", "")
	ta.as("carol").failsWith(http.StatusNotFound, codeNotFound, `comment not found: "9"`, "DELETE", "/comments/9", "")
}

// requireRole lets a role do what it and every lower role may.
func TestRequireRole(t *testing.T) {
	for _, tc := range []struct {
		has, needs role
		ok         bool
	}{
		{roleUser, roleUser, true},
		{roleModerator, roleUser, true},
		{roleModerator, roleModerator, true},
		{roleUser, roleModerator, false},
		{"", roleUser, false},
	} {
		err := requireRole(caller{name: "x", role: tc.has}, tc.needs, "why")
		if (err == nil) != tc.ok {
			t.Errorf("requireRole(%q, %q) = %v, want ok %v", tc.has, tc.needs, err, tc.ok)
		}
		if err != nil {
			if status, code := classify(t.Context(), err); status != http.StatusForbidden || code != codeForbidden || message(err) != "forbidden: why" {
				t.Errorf("requireRole's error: %d %s %q", status, code, message(err))
			}
		}
	}
}

// The Authorization header: one, of the Bearer scheme (in any case),
// with one token.
func TestAuthenticate(t *testing.T) {
	a := &api{key: testKey, now: func() time.Time { return time.Unix(1000, 0) }}
	exp := int64(2000)
	token, err := sign(testKey, claims{Sub: "alice", Role: roleModerator, Exp: &exp})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		headers []string
		want    error // nil for alice, moderator
	}{
		{[]string{"Bearer " + token}, nil},
		{[]string{"bearer " + token}, nil},
		{[]string{"BEARER  " + token + " "}, nil},
		{nil, errNoCredential},
		{[]string{""}, errNoCredential},
		{[]string{"Basic " + token}, errNoCredential},
		{[]string{"Bearer"}, errTokenMalformed},
		{[]string{"Bearer " + token, "Bearer " + token}, errTokenMalformed},
		{[]string{"Bearer " + token + "x"}, errTokenSignature},
		{[]string{"Bearer " + token + " " + token}, errTokenMalformed},
	} {
		req := httptest.NewRequest("POST", "/articles", nil)
		for _, h := range tc.headers {
			req.Header.Add("Authorization", h)
		}
		c, err := a.authenticate(req)
		if tc.want == nil && (err != nil || c != caller{name: "alice", role: roleModerator}) || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Authorization %q: %+v, %v; want %v", tc.headers, c, err, tc.want)
		}
	}
}
