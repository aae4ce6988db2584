package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/votekit/voting"
)

// The service's comment threads: a comment on an article or a reply to
// a comment, its votes, edits and deletes, and the threads read
// best-first (voting.Store.Thread, Replies).

// defaultThreadLimit is the comments a thread or replies request reads
// without limit: a screenful of Reddit's.
const defaultThreadLimit = 200

// comment is a Comment as the API shows it. A deleted comment kept for
// its replies has "deleted": true and no poster or body.
type comment struct {
	ID        string    `json:"id"`
	Article   string    `json:"article"`
	Parent    string    `json:"parent,omitempty"`
	Poster    string    `json:"poster,omitempty"`
	Body      string    `json:"body,omitempty"`
	Posted    time.Time `json:"posted"`
	Upvotes   int64     `json:"upvotes"`
	Downvotes int64     `json:"downvotes"`
	Replies   int64     `json:"replies"`
	Deleted   bool      `json:"deleted,omitempty"`
}

func toComment(c voting.Comment) comment {
	return comment{
		ID: c.ID, Article: c.Article, Parent: c.Parent, Poster: c.Poster, Body: c.Body,
		Posted: c.Posted.UTC(), Upvotes: c.Upvotes, Downvotes: c.Downvotes, Replies: c.Replies, Deleted: c.Deleted,
	}
}

func toComments(list []voting.Comment) []comment { return mapList(list, toComment) }

// threadComment is a comment of a thread: its depth (0 for a reply to
// the article, or to the comment whose replies are read) and the live
// replies under it the thread left out ("load more").
type threadComment struct {
	comment
	Depth int   `json:"depth"`
	More  int64 `json:"more"`
	// Vote is the reader's vote on the comment, where the request carried
	// a token; absent otherwise.
	Vote *voting.VoteType `json:"vote,omitempty"`
}

// thread is the reply of GET /articles/{id}/comments and GET
// /comments/{id}/replies: the comments in display order, each followed
// by its replies.
type thread struct {
	Article  string          `json:"article,omitempty"`
	Comment  string          `json:"comment,omitempty"`
	Order    string          `json:"order"`
	Limit    int             `json:"limit"`
	Comments []threadComment `json:"comments"`
}

// toThread is list in the API's form, with the reader's vote on each
// comment, votes[i] on list[i]; nil votes (an anonymous read) add none.
func toThread(list []voting.ThreadComment, votes []voting.VoteType) []threadComment {
	out := mapList(list, func(c voting.ThreadComment) threadComment {
		return threadComment{comment: toComment(c.Comment), Depth: c.Depth, More: c.More}
	})
	if votes != nil {
		for i := range out {
			out[i].Vote = &votes[i]
		}
	}
	return out
}

// POST /articles/{id}/comments {"body": "...", "parent": "3"}: the
// caller's comment on the article, or with parent a reply to one of its
// comments.
func (a *api) postComment(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Poster string `json:"poster"`
		Body   string `json:"body"`
		Parent string `json:"parent"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	poster, err := c.actAs(`"poster"`, req.Poster)
	if err != nil {
		return err
	}
	posted, err := a.store.Comment(r.Context(), r.PathValue("id"), req.Parent, poster, req.Body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/comments/"+posted.ID)
	a.reply(w, http.StatusCreated, toComment(posted))
	return nil
}

// GET /articles/{id}/comments?order=best&limit=200: the article's
// thread, filled best-first up to limit comments.
func (a *api) listComments(w http.ResponseWriter, r *http.Request) error {
	return a.readThread(w, r, a.store.Thread, a.store.ThreadFor, func(t *thread, id string) { t.Article = id })
}

// GET /comments/{id}/replies?order=best&limit=200: the replies under a
// comment, as a thread: its direct replies have depth 0.
func (a *api) listReplies(w http.ResponseWriter, r *http.Request) error {
	return a.readThread(w, r, a.store.Replies, a.store.RepliesFor, func(t *thread, id string) { t.Comment = id })
}

// readThread serves a thread request on the item {id} of the path: it
// reads the query (threadQuery), the thread with read, or with readFor
// and the reader's votes where the request has a token (viewer), and
// replies with it, its root named by root.
func (a *api) readThread(w http.ResponseWriter, r *http.Request,
	read func(ctx context.Context, id string, o voting.Order, limit int) ([]voting.ThreadComment, error),
	readFor func(ctx context.Context, user, id string, o voting.Order, limit int) ([]voting.ThreadComment, []voting.VoteType, error),
	root func(t *thread, id string)) error {
	order, name, limit, err := threadQuery(r)
	if err != nil {
		return err
	}
	reader, err := a.viewer(w, r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	var list []voting.ThreadComment
	var votes []voting.VoteType
	if reader != "" {
		list, votes, err = readFor(r.Context(), reader, id, order, limit)
	} else {
		list, err = read(r.Context(), id, order, limit)
	}
	switch {
	case errors.Is(err, voting.ErrInvalidArgument) && !alwaysCommentOrder[order]:
		// The store names the Order it was given; the client named it
		// in its own words.
		return invalid("invalid argument: order %q is not kept for comments here; best, top, new and old always are", name)
	case err != nil:
		return err
	}
	t := thread{Order: name, Limit: limit, Comments: toThread(list, votes)}
	root(&t, id)
	a.reply(w, http.StatusOK, t)
	return nil
}

// alwaysCommentOrder holds the orders every store keeps for comments; the
// others (hot, controversial, score) only where its options ask for them.
var alwaysCommentOrder = map[voting.Order]bool{voting.Best: true, voting.Top: true, voting.TimeDesc: true, voting.TimeAsc: true}

// threadQuery reads the order (default best) and limit (default
// defaultThreadLimit, at most voting.MaxThread) of a thread request. The
// store refuses the orders comments do not have (score-asc, and score
// where the service does not keep it).
func threadQuery(r *http.Request) (voting.Order, string, int, error) {
	q := r.URL.Query()
	name := q.Get("order")
	if name == "" {
		name = "best"
	}
	order, err := voting.ParseOrder(name)
	if err != nil {
		return 0, "", 0, fmt.Errorf("%w: order %q is not best, top, new, old, hot or controversial", errBadRequest, name)
	}
	limit := defaultThreadLimit
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil {
			return 0, "", 0, fmt.Errorf("%w: limit %q is not a number", errBadRequest, s)
		}
		if limit < 1 || limit > voting.MaxThread {
			return 0, "", 0, invalid("invalid argument: limit %d is not between 1 and %d", limit, voting.MaxThread)
		}
	}
	return order, name, limit, nil
}

// PUT /comments/{id}/vote {"vote": "up"}; "down", or "cancel" to take it back.
// The reply's score is the comment's points, upvotes minus downvotes.
func (a *api) voteComment(w http.ResponseWriter, r *http.Request, c caller) error {
	return a.castVote(w, r, c, a.store.VoteComment)
}

// PATCH /comments/{id} {"body": "..."}: the poster changes the body
// within the edit window.
func (a *api) editComment(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		User string `json:"user"`
		Body string `json:"body"`
	}
	if err := a.decodeEdit(w, r, &req); err != nil {
		return err
	}
	user, err := c.actAs(`"user"`, req.User)
	if err != nil {
		return err
	}
	edited, err := a.store.EditComment(r.Context(), r.PathValue("id"), user, req.Body)
	return a.edited(r.Context(), w, "a comment", toComment(edited), err)
}

// DELETE /comments/{id}: its poster's, or a moderator's. A comment
// without replies goes; one with replies stays in its place as deleted,
// without poster or body. Deleting a deleted comment again changes
// nothing: 204, whoever asks.
func (a *api) deleteComment(w http.ResponseWriter, r *http.Request, c caller) error {
	id := r.PathValue("id")
	cm, err := a.commentOf(r.Context(), id)
	if err != nil {
		return err
	}
	if !cm.Deleted {
		if err := mayActOn(c, cm.Poster, "delete a comment"); err != nil {
			return err
		}
		if err := a.store.DeleteComment(r.Context(), id); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
