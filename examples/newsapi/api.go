package main

import (
	"bufio"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// maxBody is the largest request body the API reads; the longest title
// and link fit in it many times over.
const maxBody = 64 << 10

// maxBatchBody is the largest body of POST /votes: MaxBatch ballots of
// the longest user names fit in it.
const maxBatchBody = 512 << 10

// defaultSince is the period of GET /top without since: a day, as
// Reddit's top.
const defaultSince = "24h"

// errBadRequest marks a request the API cannot read: malformed JSON, an
// unknown field, a missing vote, a bad order or page in the query.
var errBadRequest = errors.New("bad request")

// errTooLarge marks a request body over its limit, or a batch of more
// than voting.MaxBatch ballots.
var errTooLarge = errors.New("request body too large")

// errNoVote is a vote request without its vote.
var errNoVote = fmt.Errorf("%w: vote is missing: up, down or cancel", errBadRequest)

// api serves a voting Store as JSON over HTTP.
type api struct {
	store    *voting.Store
	pageSize int         // the store's page size (voting.WithPageSize), for the number of pages
	log      *log.Logger // where server-side failures are logged
	// userPages is set when the store keeps users' pages
	// (-user-pages, voting.WithUserPages), karma when it keeps karma
	// (-karma, voting.WithKarma).
	userPages, karma bool
	// voteLog is set when the store keeps the users' vote logs
	// (-vote-log, voting.WithVoteLog), for the moderators' routes.
	voteLog bool
	// rules are the store's rules (-min-karma, -edit-window, ...), for
	// the reasons of refusals and the routes they turn on.
	rules ruleFlags
	// timeout is the most a request waits for the store (-timeout): past
	// it the request gets 503 timeout. None if 0.
	timeout time.Duration
	// key checks the tokens of write requests (auth.go, token.go).
	key secret
	// now is the time tokens expire against; time.Now if nil.
	now func() time.Time
}

// routes returns the API's handler: one route per Store operation. The
// routes that write take their user from a bearer token (handleWrite);
// reads need none. A
// request that matches no route gets the mux's 404, or 405 with an Allow
// header, as a JSON error like every other; so does a path that is not
// clean ("//articles", "/articles/../top"), which the mux would redirect
// with an HTML body.
func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /articles", a.handleWrite(a.postArticle))
	mux.Handle("GET /articles", a.handle(a.listArticles))
	mux.Handle("GET /articles/{id}", a.handle(a.getArticle))
	mux.Handle("DELETE /articles/{id}", a.handleWrite(a.deleteArticle))
	mux.Handle("PUT /articles/{id}/vote", a.handleWrite(a.vote))
	mux.Handle("PUT /articles/{id}/groups/{group}", a.handleWrite(a.addToGroup))
	mux.Handle("DELETE /articles/{id}/groups/{group}", a.handleWrite(a.removeFromGroup))
	mux.Handle("GET /groups/{group}", a.handle(a.listGroup))
	mux.Handle("GET /top", a.handle(a.top))
	mux.Handle("POST /votes", a.handleWrite(a.voteBatch))
	mux.Handle("GET /users/{name}", a.handle(a.getUser))
	mux.Handle("GET /users", a.handle(a.listUsers))
	mux.Handle("PATCH /articles/{id}", a.handleWrite(a.editArticle))
	mux.Handle("POST /articles/{id}/comments", a.handleWrite(a.postComment))
	mux.Handle("GET /articles/{id}/comments", a.handle(a.listComments))
	mux.Handle("GET /comments/{id}/replies", a.handle(a.listReplies))
	mux.Handle("PUT /comments/{id}/vote", a.handleWrite(a.voteComment))
	mux.Handle("PATCH /comments/{id}", a.handleWrite(a.editComment))
	mux.Handle("DELETE /comments/{id}", a.handleWrite(a.deleteComment))
	mux.Handle("GET /healthz", a.handle(a.healthz))
	a.moderationRoutes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p != cleanPath(p) {
			a.reply(w, http.StatusNotFound, errorBody{Code: codeNotFound, Error: fmt.Sprintf("not found: %q is not a path of the API", p)})
			return
		}
		if h, pattern := mux.Handler(r); pattern == "" {
			status := statusRecorder{ResponseWriter: w, code: http.StatusNotFound}
			h.ServeHTTP(&status, r)
			code := codeNotFound
			switch {
			case status.code == http.StatusMethodNotAllowed:
				code = codeMethodNotAllowed
			case status.code != http.StatusNotFound:
				// A redirect, which the path check above should
				// have caught: no route either.
				w.Header().Del("Location")
				status.code = http.StatusNotFound
			}
			a.reply(w, status.code, errorBody{Code: code, Error: strings.ToLower(http.StatusText(status.code))})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is p as ServeMux cleans it: rooted, without "." and ".."
// elements or repeated slashes, with its trailing slash kept.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// handle adapts a route's handler to an http.HandlerFunc. The handler
// writes its reply itself when it succeeds, and returns the error it
// fails with for handle to reply with (fail). The handler's context
// ends after the API's timeout, if it has one.
func (a *api) handle(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.timeout > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), a.timeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	}
}

// statusRecorder keeps the status of a reply, passes its headers on and
// drops its body.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int)        { s.code = code }
func (s *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }

// errorBody is the body of every error reply (errors.go): its code, its
// message and, for a 429, the seconds to wait.
type errorBody struct {
	Code       string `json:"code"`
	Error      string `json:"error"`
	RetryAfter int64  `json:"retry_after,omitempty"`
}

// article is an Article as the API shows it.
type article struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Link      string    `json:"link"`
	Poster    string    `json:"poster"`
	Posted    time.Time `json:"posted"`
	Score     float64   `json:"score"`
	Upvotes   int64     `json:"upvotes"`
	Downvotes int64     `json:"downvotes"`
	Comments  int64     `json:"comments"` // its live comments, all levels
	// Vote is the vote of the reader of a listing on the article ("up",
	// "down", "none"), where the request carried a token; absent
	// otherwise.
	Vote *voting.VoteType `json:"vote,omitempty"`
}

func toArticle(a voting.Article) article {
	return article{
		ID: a.ID, Title: a.Title, Link: a.Link, Poster: a.Poster,
		Posted: a.Posted.UTC(), Score: a.Score, Upvotes: a.Upvotes, Downvotes: a.Downvotes,
		Comments: a.Comments,
	}
}

func toArticles(list []voting.Article) []article { return mapList(list, toArticle) }

// toArticlesFor is toArticles with the reader's vote on each, votes[i]
// on list[i]; nil votes (an anonymous read) add none.
func toArticlesFor(list []voting.Article, votes []voting.VoteType) []article {
	out := toArticles(list)
	if votes != nil {
		for i := range out {
			out[i].Vote = &votes[i]
		}
	}
	return out
}

// mapList returns f of each element of list, in order: [] in JSON, never
// null.
func mapList[T, U any](list []T, f func(T) U) []U {
	out := make([]U, len(list))
	for i, x := range list {
		out[i] = f(x)
	}
	return out
}

// page is one page of articles, of all or of one group, with the number
// of articles listed and of pages they fill.
type page struct {
	Group    string    `json:"group,omitempty"`
	Order    string    `json:"order"`
	Page     int       `json:"page"`
	Pages    int64     `json:"pages"`
	Total    int64     `json:"total"`
	Articles []article `json:"articles"`
}

// toPage is page n of list, in the order named order as the request gave
// it ("score" when it gave none), with the reader's votes on it (nil for
// none).
func (a *api) toPage(group, order string, n int, total int64, list []voting.Article, votes []voting.VoteType) page {
	size := int64(a.pageSize)
	if size < 1 {
		size = voting.DefaultPageSize
	}
	return page{
		Group: group, Order: order, Page: n,
		Pages: (total + size - 1) / size, Total: total,
		Articles: toArticlesFor(list, votes),
	}
}

// voteReply is the outcome of a vote, as PUT /articles/{id}/vote, PUT
// /comments/{id}/vote and each ballot of POST /votes show it: an
// article's score (none for a comment), and the points, up − down.
type voteReply struct {
	Previous  voting.VoteType `json:"previous"`
	Score     float64         `json:"score,omitempty"`
	Points    int64           `json:"points"`
	Upvotes   int64           `json:"upvotes"`
	Downvotes int64           `json:"downvotes"`
}

func toVoteReply(r voting.VoteResult) voteReply {
	return voteReply{r.Previous, r.Score, r.Points, r.Upvotes, r.Downvotes}
}

// POST /articles {"title": "...", "link": "..."}: the caller posts it.
func (a *api) postArticle(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Poster string `json:"poster"`
		Title  string `json:"title"`
		Link   string `json:"link"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	poster, err := c.actAs(`"poster"`, req.Poster)
	if err != nil {
		return err
	}
	if err := checkArticle(req.Link); err != nil {
		return err
	}
	art, err := a.store.Post(r.Context(), poster, req.Title, req.Link)
	if errors.Is(err, voting.ErrDuplicate) { // -unique-links, -repost-after
		a.duplicate(w, art, err)
		return nil
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/articles/"+art.ID)
	a.reply(w, http.StatusCreated, toArticle(art))
	return nil
}

// duplicate replies to a Post or an Edit refused for a link that art has
// already (ErrDuplicate): the error, the article, and its Location.
func (a *api) duplicate(w http.ResponseWriter, art voting.Article, err error) {
	w.Header().Set("Location", "/articles/"+art.ID)
	a.reply(w, statusOf(err), struct {
		errorBody
		Article article `json:"article"`
	}{errorBody{Code: codeDuplicate, Error: message(err)}, toArticle(art)})
}

// GET /articles?order=score&page=1; with a token, the page and its
// user's vote on each article in one round trip.
func (a *api) listArticles(w http.ResponseWriter, r *http.Request) error {
	order, n, err := pageQuery(r)
	if err != nil {
		return err
	}
	list, votes, err := a.readArticles(w, r,
		func(ctx context.Context) ([]voting.Article, error) { return a.store.Articles(ctx, order, n) },
		func(ctx context.Context, reader string) ([]voting.Article, []voting.VoteType, error) {
			return a.store.ArticlesFor(ctx, reader, order, n)
		})
	if err != nil {
		return err
	}
	total, err := a.store.Count(r.Context())
	if err != nil {
		return err
	}
	a.reply(w, http.StatusOK, a.toPage("", orderName(r), n, total, list, votes))
	return nil
}

// readArticles reads a list of articles for a request: with a token
// (viewer), by readFor, with the reader's vote on each; without one, by
// read, with no votes.
func (a *api) readArticles(w http.ResponseWriter, r *http.Request,
	read func(ctx context.Context) ([]voting.Article, error),
	readFor func(ctx context.Context, reader string) ([]voting.Article, []voting.VoteType, error)) ([]voting.Article, []voting.VoteType, error) {
	reader, err := a.viewer(w, r)
	if err != nil {
		return nil, nil, err
	}
	if reader != "" {
		return readFor(r.Context(), reader)
	}
	list, err := read(r.Context())
	return list, nil, err
}

// GET /articles/{id}: the article and its groups.
func (a *api) getArticle(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	art, err := a.store.Article(r.Context(), id)
	if err != nil {
		return err
	}
	groups, err := a.store.Groups(r.Context(), id)
	if err != nil {
		return err
	}
	if groups == nil {
		groups = []string{} // [] in JSON, not null
	}
	a.reply(w, http.StatusOK, struct {
		article
		Groups []string `json:"groups"`
	}{toArticle(art), groups})
	return nil
}

// DELETE /articles/{id}: its poster's, or a moderator's.
func (a *api) deleteArticle(w http.ResponseWriter, r *http.Request, c caller) error {
	id := r.PathValue("id")
	poster, err := a.articlePoster(r.Context(), id)
	if err != nil {
		return err
	}
	if err := mayActOn(c, poster, "delete an article"); err != nil {
		return err
	}
	if err := a.store.Delete(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// PUT /articles/{id}/vote {"vote": "up"}; "down", or "cancel" to take it back.
func (a *api) vote(w http.ResponseWriter, r *http.Request, c caller) error {
	return a.castVote(w, r, c, a.store.Vote)
}

// castVote serves the caller's vote on the item {id} of the path, an
// article or a comment: it decodes {"vote": ...}, casts the vote with
// cast, and replies with its outcome.
func (a *api) castVote(w http.ResponseWriter, r *http.Request, c caller,
	cast func(ctx context.Context, user, id string, v voting.VoteType) (voting.VoteResult, error)) error {
	var req struct {
		User string           `json:"user"`
		Vote *voting.VoteType `json:"vote"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	user, err := c.actAs(`"user"`, req.User)
	if err != nil {
		return err
	}
	if req.Vote == nil {
		return errNoVote
	}
	res, err := cast(r.Context(), user, r.PathValue("id"), *req.Vote)
	if err != nil {
		return a.voteError(r.Context(), err, *req.Vote)
	}
	a.reply(w, http.StatusOK, toVoteReply(res))
	return nil
}

// POST /votes [{"id": "1", "vote": "up"}, ...]: up to voting.MaxBatch
// ballots of the caller, applied in order in one round trip. A ballot
// that names another "user" fails the whole request with 403, before
// any is cast. The reply
// is 200 with one result per ballot, in order: the vote's outcome as PUT
// /articles/{id}/vote gives it, or {"error": "...", "status": 404} with
// the status and message that route would fail with. A body that is not
// an array of ballots fails as a whole with 400, more ballots than
// voting.MaxBatch with 413.
func (a *api) voteBatch(w http.ResponseWriter, r *http.Request, c caller) error {
	var req []struct {
		User string `json:"user"`
		ID   string `json:"id"`
		// A string rather than a VoteType, so that one ballot's bad
		// vote fails that ballot only.
		Vote *string `json:"vote"`
	}
	if err := decodeUpTo(w, r, &req, maxBatchBody); err != nil {
		return err
	}
	if len(req) > voting.MaxBatch {
		return fmt.Errorf("%w: %d ballots, the limit is %d", errTooLarge, len(req), voting.MaxBatch)
	}
	for i, b := range req {
		if _, err := c.actAs(fmt.Sprintf(`ballot %d's "user"`, i+1), b.User); err != nil {
			return err
		}
	}
	results := make([]any, len(req))
	ballots := make([]voting.Ballot, 0, len(req))
	var at []int // the index in req of each of ballots
	for i, b := range req {
		if b.Vote == nil {
			results[i] = a.ballotError(r, errNoVote)
			continue
		}
		v, err := voting.ParseVoteType(*b.Vote)
		if err != nil {
			results[i] = a.ballotError(r, err)
			continue
		}
		ballots = append(ballots, voting.Ballot{User: c.name, ID: b.ID, Vote: v})
		at = append(at, i)
	}
	if len(ballots) > 0 {
		res, err := a.store.VoteBatch(r.Context(), ballots)
		if err != nil {
			return err
		}
		for j, br := range res {
			if br.Err != nil {
				results[at[j]] = a.ballotError(r, a.voteError(r.Context(), br.Err, ballots[j].Vote))
			} else {
				results[at[j]] = toVoteReply(br.VoteResult)
			}
		}
	}
	a.reply(w, http.StatusOK, results)
	return nil
}

// user is a user as GET /users/{name} shows them.
type user struct {
	Name string `json:"user"`
	// The user's karma: with -karma only.
	Karma *int64 `json:"karma,omitempty"`
	// The first page of the user's posts, newest first, of the
	// articles they upvoted, latest first, and of their comments,
	// newest first: with -user-pages only.
	Submitted *[]article `json:"submitted,omitempty"`
	Upvoted   *[]article `json:"upvoted,omitempty"`
	Comments  *[]comment `json:"comments,omitempty"`
}

// GET /users/{name}: the user, their karma with -karma, and, with
// -user-pages, the first page of their submitted and upvoted articles
// and of their latest comments.
func (a *api) getUser(w http.ResponseWriter, r *http.Request) error {
	if !a.karma && !a.userPages {
		return featureOff("user pages and karma are off", "-user-pages or -karma")
	}
	u := user{Name: r.PathValue("name")}
	if a.karma {
		karma, err := a.store.Karma(r.Context(), u.Name)
		if err != nil {
			return err
		}
		u.Karma = &karma
	}
	if a.userPages {
		reader, err := a.viewer(w, r)
		if err != nil {
			return err
		}
		var submitted, upvoted []voting.Article
		var subVotes, upVotes []voting.VoteType
		if reader != "" {
			submitted, subVotes, err = a.store.SubmittedFor(r.Context(), reader, u.Name, 1)
			if err == nil {
				upvoted, upVotes, err = a.store.UpvotedFor(r.Context(), reader, u.Name, 1)
			}
		} else {
			submitted, err = a.store.Submitted(r.Context(), u.Name, 1)
			if err == nil {
				upvoted, err = a.store.Upvoted(r.Context(), u.Name, 1)
			}
		}
		if err != nil {
			return err
		}
		comments, err := a.store.UserComments(r.Context(), u.Name, 1)
		if err != nil {
			return err
		}
		sub, up, com := toArticlesFor(submitted, subVotes), toArticlesFor(upvoted, upVotes), toComments(comments)
		u.Submitted, u.Upvoted, u.Comments = &sub, &up, &com
	}
	a.reply(w, http.StatusOK, u)
	return nil
}

// ballotError is a failed ballot's result in POST /votes: the error
// body the single vote would get, and its status.
type ballotError struct {
	errorBody
	Status int `json:"status"`
}

func (a *api) ballotError(r *http.Request, err error) ballotError {
	status, body := a.clientError(r, err)
	return ballotError{body, status}
}

// PUT /articles/{id}/groups/{group}: the article's poster, or a
// moderator, puts it in the group.
func (a *api) addToGroup(w http.ResponseWriter, r *http.Request, c caller) error {
	return a.regroup(w, r, c, "put an article in a group", a.store.AddToGroups)
}

// DELETE /articles/{id}/groups/{group}: the article's poster, or a
// moderator, takes it out of the group.
func (a *api) removeFromGroup(w http.ResponseWriter, r *http.Request, c caller) error {
	return a.regroup(w, r, c, "take an article out of a group", a.store.RemoveFromGroups)
}

// regroup serves a change of the groups of the article {id} of the
// path, by the caller, who must be its poster or a moderator (to do
// what): change adds it to the group {group} or removes it. The reply is
// 204 with no body.
func (a *api) regroup(w http.ResponseWriter, r *http.Request, c caller, what string,
	change func(ctx context.Context, id string, groups ...string) error) error {
	id := r.PathValue("id")
	poster, err := a.articlePoster(r.Context(), id)
	if err != nil {
		return err
	}
	if err := mayActOn(c, poster, what); err != nil {
		return err
	}
	if err := change(r.Context(), id, r.PathValue("group")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// GET /groups/{group}?order=score&page=1
func (a *api) listGroup(w http.ResponseWriter, r *http.Request) error {
	order, n, err := pageQuery(r)
	if err != nil {
		return err
	}
	group := r.PathValue("group")
	list, votes, err := a.readArticles(w, r,
		func(ctx context.Context) ([]voting.Article, error) {
			return a.store.GroupArticles(ctx, group, order, n)
		},
		func(ctx context.Context, reader string) ([]voting.Article, []voting.VoteType, error) {
			return a.store.GroupArticlesFor(ctx, reader, group, order, n)
		})
	if err != nil {
		return err
	}
	total, err := a.store.GroupCount(r.Context(), group)
	if err != nil {
		return err
	}
	a.reply(w, http.StatusOK, a.toPage(group, orderName(r), n, total, list, votes))
	return nil
}

// topPage is a page of GET /top. It has no total: the store counts all
// articles and groups, not periods; TopSince lists at most
// voting.MaxTopSince.
type topPage struct {
	Since    string    `json:"since"`
	Page     int       `json:"page"`
	Articles []article `json:"articles"`
}

// GET /top?since=24h&page=1: the articles posted within the last since
// (a day by default), by net votes.
func (a *api) top(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	since := q.Get("since")
	if since == "" {
		since = defaultSince
	}
	d, err := parseSince(since)
	if err != nil {
		return err
	}
	n, err := pageNumber(q.Get("page"))
	if err != nil {
		return err
	}
	list, votes, err := a.readArticles(w, r,
		func(ctx context.Context) ([]voting.Article, error) { return a.store.TopSince(ctx, d, n) },
		func(ctx context.Context, reader string) ([]voting.Article, []voting.VoteType, error) {
			return a.store.TopSinceFor(ctx, reader, d, n)
		})
	if err != nil {
		return err
	}
	a.reply(w, http.StatusOK, topPage{Since: since, Page: n, Articles: toArticlesFor(list, votes)})
	return nil
}

// maxDays is the most days a duration holds.
const maxDays = math.MaxInt64 / int64(24*time.Hour)

// parseSince reads the period of GET /top: a positive Go duration ("90m",
// "24h") or a whole number of days ("7d").
func parseSince(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		if n, nerr := strconv.ParseInt(days, 10, 64); nerr == nil && n <= maxDays {
			d, err = time.Duration(n)*24*time.Hour, nil
		}
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: since %q is not a positive duration such as 90m, 24h or 7d", errBadRequest, s)
	}
	return d, nil
}

// orderName is the order of a page request as the request names it,
// "score" if it names none: the page echoes it.
func orderName(r *http.Request) string {
	if o := r.URL.Query().Get("order"); o != "" {
		return o
	}
	return "score"
}

// pageQuery reads the order (default score) and page (default 1) of a
// page request. The Store itself rejects pages below 1.
func pageQuery(r *http.Request) (voting.Order, int, error) {
	q := r.URL.Query()
	order, err := parseOrder(q.Get("order"))
	if err != nil {
		return 0, 0, err
	}
	n, err := pageNumber(q.Get("page"))
	if err != nil {
		return 0, 0, err
	}
	return order, n, nil
}

// pageNumber reads a page number, 1 if s is empty.
func pageNumber(s string) (int, error) {
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: page %q is out of range: pages are numbered from 1 to %d", errBadRequest, s, math.MaxInt)
	case err != nil:
		return 0, fmt.Errorf("%w: page %q is not a whole number: pages are numbered from 1", errBadRequest, s)
	}
	return n, nil
}

// parseOrder reads an order as voting.ParseOrder does: the short names
// "score" (the default), "time" or "new" (newest first) and "old", or any
// Order's name: "score-desc", "score-asc", "time-desc", "time-asc",
// "top", "hot", "best", "controversial".
func parseOrder(s string) (voting.Order, error) {
	if s == "" {
		return voting.ScoreDesc, nil
	}
	o, err := voting.ParseOrder(s)
	if err != nil {
		return 0, fmt.Errorf("%w: order %q is not score, time, new, old, score-asc, time-asc, top, hot, best or controversial", errBadRequest, s)
	}
	return o, nil
}

// decode reads a request body of one JSON object into v, a pointer to a
// struct, refusing unknown fields, trailing data and bodies over maxBody.
// Its errors are for the client: they name the JSON fields v expects and
// never pass on the decoder's own messages, which speak of Go types.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	return decodeUpTo(w, r, v, maxBody)
}

// decodeUpTo is decode for bodies of up to limit bytes, into a pointer to
// a struct (a JSON object) or to a slice of structs (an array of objects;
// null is refused).
func decodeUpTo(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	body := bufio.NewReader(http.MaxBytesReader(w, r.Body, limit))
	// The first byte tells an object from an array, and both from null,
	// a string or a number, which all get the same error.
	if first, err := firstByte(body); err != nil {
		return decodeError(err, v, limit)
	} else if want := map[string]byte{"object": '{', "array": '['}[jsonKind(v)]; first != want {
		return fmt.Errorf("%w: request body is not %s; %s", errBadRequest, bodyKind(v), bodyShape(v))
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, v, limit)
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return decodeError(err, v, limit)
		}
		return fmt.Errorf("%w: request body has data after its JSON %s; %s", errBadRequest, jsonKind(v), bodyShape(v))
	}
	return nil
}

// firstByte returns the first byte of body that is not JSON white space,
// and leaves it unread; io.EOF for a body of white space.
func firstByte(body *bufio.Reader) (byte, error) {
	for {
		c, err := body.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c, body.UnreadByte()
	}
}

// decodeError turns an error of decoding a request body into v into one
// for the client. A field's own error (an invalid vote) is passed on.
func decodeError(err error, v any, limit int64) error {
	var (
		tooLarge  *http.MaxBytesError
		wrongType *json.UnmarshalTypeError
		syntax    *json.SyntaxError
		badTime   *time.ParseError
		msg       string
	)
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%w: the limit is %d bytes", errTooLarge, limit)
	case errors.Is(err, voting.ErrInvalidVote):
		return err
	case errors.Is(err, io.EOF):
		msg = "request body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "request body is cut short: its JSON ends before the " + jsonKind(v) + " does"
	case errors.As(err, &wrongType) && wrongType.Field != "":
		msg = fmt.Sprintf("field %q must be %s", wrongType.Field, jsonType(wrongType.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// DisallowUnknownFields gives a plain error: the field's name,
		// quoted, follows the prefix.
		msg = "request body has an unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case errors.As(err, &syntax):
		msg = fmt.Sprintf("request body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &badTime):
		// time.Time's UnmarshalJSON names no field: the body's time
		// fields are named instead.
		msg = fmt.Sprintf("%s must be an RFC 3339 time, e.g. 2024-01-02T15:04:05Z", timeFields(v))
	default:
		// A value of another kind.
		msg = "request body is not " + bodyKind(v)
	}
	return fmt.Errorf("%w: %s; %s", errBadRequest, msg, bodyShape(v))
}

// jsonKind is "object" for v a pointer to a struct, "array" for a
// pointer to a slice.
func jsonKind(v any) string {
	if reflect.TypeOf(v).Elem().Kind() == reflect.Slice {
		return "array"
	}
	return "object"
}

// timeFields names the fields of the body v (as bodyShape reads it)
// that hold a time: `field "until"`, or `fields "from" or "to"`.
func timeFields(v any) string {
	timeType := reflect.TypeOf(time.Time{})
	names := bodyFields(v, func(t reflect.Type) bool {
		return t == timeType || (t.Kind() == reflect.Pointer && t.Elem() == timeType)
	})
	if len(names) == 1 {
		return "field " + names[0]
	}
	return "fields " + strings.Join(names, " or ")
}

// bodyFields returns the JSON names, quoted, of the fields of the body v,
// a pointer to a struct or to a slice of them, whose type keep takes
// (every field for keep nil).
func bodyFields(v any, keep func(reflect.Type) bool) []string {
	t := reflect.TypeOf(v).Elem()
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" && (keep == nil || keep(f.Type)) {
			names = append(names, strconv.Quote(name))
		}
	}
	return names
}

// bodyKind is "a JSON object" for v a pointer to a struct, "a JSON array
// of objects" for a pointer to a slice of them.
func bodyKind(v any) string {
	if jsonKind(v) == "array" {
		return "a JSON array of objects"
	}
	return "a JSON object"
}

// bodyShape describes the body decode expects for v, a pointer to a
// struct: `it must be a JSON object with fields "user" and "vote"`, or to
// a slice of them: `it must be a JSON array of objects with fields ...`.
func bodyShape(v any) string {
	names := bodyFields(v, nil)
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return "it must be " + bodyKind(v) + " with fields " + list
}

// jsonType names the JSON type that decodes into a value of type t, with
// its article.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// statusOf maps an error to its HTTP status (errors.go, kinds): the
// Store's sentinel errors to 404, 409 (voting closed, duplicate link),
// 400, 403 (not allowed), 429 (rate limited) and 503 (a refusal of
// Redis: try again, out of memory, not replicated), an unreadable
// request to 400 (413 when too large), anything else to 500.
func statusOf(err error) int {
	status, _ := classify(context.Background(), err)
	return status
}

// healthz serves the store's Check as JSON: 200, or 503 when a problem
// would lose data or fail calls (Health.Serious: Redis unreachable, an
// allkeys-* maxmemory-policy, a store of other options or layout).
func (a *api) healthz(w http.ResponseWriter, r *http.Request) error {
	h, err := a.store.Check(r.Context())
	if err != nil {
		return err
	}
	status := http.StatusOK
	if h.Serious {
		status = http.StatusServiceUnavailable
	}
	a.reply(w, status, h)
	return nil
}

// fail replies with err's status and error body (clientError).
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := a.clientError(r, err)
	setRetryAfter(w, err)
	a.reply(w, status, body)
}

// clientError returns err's status and the body the client gets. A
// server-side failure is logged, and the client told no more than
// "internal error"; so is a request that ran out of time waiting for
// Redis, which gets 503.
func (a *api) clientError(r *http.Request, err error) (status int, body errorBody) {
	status, code := classify(r.Context(), err)
	switch code {
	case codeInternal:
		a.log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		return status, errorBody{Code: code, Error: "internal error"}
	case codeTimeout:
		a.log.Printf("%s %s: timeout: Redis did not answer within %v: %v", r.Method, r.URL.Path, a.timeout, err)
		return status, errorBody{Code: code, Error: "the service's database did not answer in time; try again later"}
	case codeCanceled:
		a.log.Printf("%s %s: canceled by the client: %v", r.Method, r.URL.Path, err)
		return status, errorBody{Code: code, Error: "the request was canceled"}
	case codeUnknownOutcome:
		a.log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		return status, errorBody{Code: code, Error: "the connection to the service's database failed: this may or may not have been posted; look before posting again"}
	}
	body = errorBody{Code: code, Error: message(err)}
	if d := voting.RetryAfter(err); d > 0 {
		body.RetryAfter = retrySeconds(d)
	}
	return status, body
}

// reply writes v as JSON with the given status.
func (a *api) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		// The status is sent: all that is left is to note it.
		a.log.Printf("writing a reply: %v", err)
	}
}
