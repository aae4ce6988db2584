package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/votekit/voting"
)

// The moderators' routes: a user's votes, who voted, taking a user's
// votes back, and suspensions. Each takes a moderator's token only:
// anyone else, the user themselves included, gets 403 forbidden.
//
//	GET    /users/{name}/votes?cursor=&limit=50     the user's standing votes, newest first (-vote-log)
//	GET    /articles/{id}/voters?cursor=&limit=50   the article's standing voters
//	GET    /comments/{id}/voters?cursor=&limit=50   the comment's standing voters
//	POST   /users/{name}/reverse-votes              takes back every vote of the user (-vote-log) -> {"reversed": n}
//	PUT    /users/{name}/suspension                 {"mode":"refuse"|"shadow","for":"72h"} or {"mode":...,"until":RFC 3339}
//	DELETE /users/{name}/suspension                 -> 204
//	GET    /users/{name}/suspension                 {"mode":"refuse","until":...}, or {"mode":"none"}

// moderationRoutes adds the moderators' routes to mux.
func (a *api) moderationRoutes(mux *http.ServeMux) {
	mux.Handle("GET /users/{name}/votes", a.handleWrite(a.moderator(a.userVotes)))
	mux.Handle("GET /articles/{id}/voters", a.handleWrite(a.moderator(a.articleVoters)))
	mux.Handle("GET /comments/{id}/voters", a.handleWrite(a.moderator(a.commentVoters)))
	mux.Handle("POST /users/{name}/reverse-votes", a.handleWrite(a.moderator(a.reverseVotes)))
	mux.Handle("PUT /users/{name}/suspension", a.handleWrite(a.moderator(a.suspend)))
	mux.Handle("DELETE /users/{name}/suspension", a.handleWrite(a.moderator(a.unsuspend)))
	mux.Handle("GET /users/{name}/suspension", a.handleWrite(a.moderator(a.suspension)))
}

// moderator is h for moderators only: 403 forbidden for anyone else.
func (a *api) moderator(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request, caller) error {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		if err := requireRole(c, roleModerator, "only a moderator may see votes and voters, take votes back or suspend"); err != nil {
			return err
		}
		return h(w, r)
	}
}

// defaultModLimit is a moderator's page without limit.
const defaultModLimit = 50

// cursorQuery reads a paged read's cursor and limit (1 to
// voting.MaxModerationPage, defaultModLimit when absent).
func cursorQuery(r *http.Request) (cursor string, limit int, err error) {
	q := r.URL.Query()
	limit = defaultModLimit
	if s := q.Get("limit"); s != "" {
		limit, err = strconv.Atoi(s)
		if err != nil || limit < 1 || limit > voting.MaxModerationPage {
			return "", 0, invalid("limit %q is not a whole number from 1 to %d", s, voting.MaxModerationPage)
		}
	}
	return q.Get("cursor"), limit, nil
}

// modPage is a moderator's page: its items and the cursor of the next
// ("" at the end).
type modPage[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next"`
}

func (a *api) userVotes(w http.ResponseWriter, r *http.Request) error {
	if !a.voteLog {
		return featureOff("the vote log is off", "-vote-log")
	}
	cursor, limit, err := cursorQuery(r)
	if err != nil {
		return err
	}
	list, next, err := a.store.VotesBy(r.Context(), r.PathValue("name"), cursor, limit)
	if err != nil {
		return err
	}
	a.reply(w, http.StatusOK, modPage[voting.UserVote]{append([]voting.UserVote{}, list...), next})
	return nil
}

func (a *api) articleVoters(w http.ResponseWriter, r *http.Request) error {
	return a.voters(w, r, a.store.Voters)
}

func (a *api) commentVoters(w http.ResponseWriter, r *http.Request) error {
	return a.voters(w, r, a.store.CommentVoters)
}

// voterJSON is a voter as the API words a vote: "up" or "down".
type voterJSON struct {
	User string `json:"user"`
	Vote string `json:"vote"`
}

func (a *api) voters(w http.ResponseWriter, r *http.Request, read func(ctx context.Context, id, cursor string, limit int) ([]voting.Voter, string, error)) error {
	cursor, limit, err := cursorQuery(r)
	if err != nil {
		return err
	}
	list, next, err := read(r.Context(), r.PathValue("id"), cursor, limit)
	if err != nil {
		return err
	}
	out := make([]voterJSON, len(list))
	for i, v := range list {
		out[i] = voterJSON{v.User, "up"}
		if v.Vote == voting.Downvote {
			out[i].Vote = "down"
		}
	}
	a.reply(w, http.StatusOK, modPage[voterJSON]{out, next})
	return nil
}

func (a *api) reverseVotes(w http.ResponseWriter, r *http.Request) error {
	if !a.voteLog {
		return featureOff("the vote log is off", "-vote-log")
	}
	n, err := a.store.ReverseVotes(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	a.reply(w, http.StatusOK, struct {
		Reversed int `json:"reversed"`
	}{n})
	return nil
}

// suspensionJSON is a suspension as the API words it.
type suspensionJSON struct {
	Mode  string     `json:"mode"`
	For   string     `json:"for,omitempty"`
	Until *time.Time `json:"until,omitempty"`
}

func (a *api) suspend(w http.ResponseWriter, r *http.Request) error {
	var body suspensionJSON
	if err := decode(w, r, &body); err != nil {
		return err
	}
	mode := map[string]voting.Suspension{"refuse": voting.Refuse, "shadow": voting.Shadow}[body.Mode]
	if mode == 0 {
		return invalid("mode %q: refuse or shadow", body.Mode)
	}
	var until time.Time
	switch {
	case body.For != "" && body.Until != nil:
		return invalid("give for or until, not both")
	case body.For != "":
		d, err := time.ParseDuration(body.For)
		if err != nil || d <= 0 {
			return invalid("for %q is not a positive duration (72h, 90m)", body.For)
		}
		until = a.clock().Add(d)
	case body.Until != nil:
		until = *body.Until
	default:
		return invalid("for or until is missing")
	}
	if err := a.store.Suspend(r.Context(), r.PathValue("name"), mode, until); err != nil {
		return err
	}
	u := time.UnixMilli(until.UnixMilli()).UTC() // as the store keeps it (Store.Suspend)
	a.reply(w, http.StatusOK, suspensionJSON{Mode: body.Mode, Until: &u})
	return nil
}

func (a *api) unsuspend(w http.ResponseWriter, r *http.Request) error {
	if err := a.store.Unsuspend(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *api) suspension(w http.ResponseWriter, r *http.Request) error {
	mode, until, err := a.store.Suspended(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	out := suspensionJSON{Mode: mode.String()}
	if mode != 0 {
		u := until.UTC()
		out.Until = &u
	}
	a.reply(w, http.StatusOK, out)
	return nil
}

// clock is the service's now: the tokens' clock.
func (a *api) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}
