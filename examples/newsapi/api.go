package main

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// maxBody is the largest request body the API reads; the longest title
// and link fit in it many times over.
const maxBody = 64 << 10

// errBadRequest marks a request the API cannot read: malformed JSON, an
// unknown field, a missing vote, a bad order or page in the query.
var errBadRequest = errors.New("bad request")

// errTooLarge marks a request body over maxBody.
var errTooLarge = errors.New("request body too large")

// api serves a voting Store as JSON over HTTP.
type api struct {
	store *voting.Store
	log   *log.Logger // where server-side failures are logged
}

// routes returns the API's handler: one route per Store operation. A
// request that matches no route gets the mux's 404, or 405 with an Allow
// header, as a JSON error like every other.
func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /articles", a.postArticle)
	mux.HandleFunc("GET /articles", a.listArticles)
	mux.HandleFunc("GET /articles/{id}", a.getArticle)
	mux.HandleFunc("DELETE /articles/{id}", a.deleteArticle)
	mux.HandleFunc("PUT /articles/{id}/vote", a.vote)
	mux.HandleFunc("PUT /articles/{id}/groups/{group}", a.addToGroup)
	mux.HandleFunc("DELETE /articles/{id}/groups/{group}", a.removeFromGroup)
	mux.HandleFunc("GET /groups/{group}", a.listGroup)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, pattern := mux.Handler(r); pattern == "" {
			status := statusRecorder{ResponseWriter: w, code: http.StatusNotFound}
			h.ServeHTTP(&status, r)
			a.reply(w, status.code, errorBody{strings.ToLower(http.StatusText(status.code))})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// statusRecorder keeps the status of a reply, passes its headers on and
// drops its body.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int)        { s.code = code }
func (s *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }

// errorBody is the body of every error reply.
type errorBody struct {
	Error string `json:"error"`
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
}

func toArticle(a voting.Article) article {
	return article{
		ID: a.ID, Title: a.Title, Link: a.Link, Poster: a.Poster,
		Posted: a.Posted.UTC(), Score: a.Score, Upvotes: a.Upvotes, Downvotes: a.Downvotes,
	}
}

// page is one page of articles, of all or of one group.
type page struct {
	Group    string    `json:"group,omitempty"`
	Order    string    `json:"order"`
	Page     int       `json:"page"`
	Articles []article `json:"articles"`
}

func toPage(group string, order voting.Order, n int, list []voting.Article) page {
	p := page{Group: group, Order: order.String(), Page: n, Articles: make([]article, len(list))}
	for i, a := range list {
		p.Articles[i] = toArticle(a)
	}
	return p
}

// POST /articles {"poster": "alice", "title": "...", "link": "..."}
func (a *api) postArticle(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Poster string `json:"poster"`
		Title  string `json:"title"`
		Link   string `json:"link"`
	}
	if err := decode(w, r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	art, err := a.store.Post(r.Context(), req.Poster, req.Title, req.Link)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/articles/"+art.ID)
	a.reply(w, http.StatusCreated, toArticle(art))
}

// GET /articles?order=score&page=1
func (a *api) listArticles(w http.ResponseWriter, r *http.Request) {
	order, n, err := pageQuery(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	list, err := a.store.Articles(r.Context(), order, n)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.reply(w, http.StatusOK, toPage("", order, n, list))
}

// GET /articles/{id}: the article and its groups.
func (a *api) getArticle(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	art, err := a.store.Article(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	groups, err := a.store.Groups(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if groups == nil {
		groups = []string{} // [] in JSON, not null
	}
	a.reply(w, http.StatusOK, struct {
		article
		Groups []string `json:"groups"`
	}{toArticle(art), groups})
}

// DELETE /articles/{id}
func (a *api) deleteArticle(w http.ResponseWriter, r *http.Request) {
	if err := a.store.Delete(r.Context(), r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// PUT /articles/{id}/vote {"user": "bob", "vote": "up"}; "down", or
// "none" to cancel.
func (a *api) vote(w http.ResponseWriter, r *http.Request) {
	var req struct {
		User string           `json:"user"`
		Vote *voting.VoteType `json:"vote"`
	}
	if err := decode(w, r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	if req.Vote == nil {
		a.fail(w, r, fmt.Errorf("%w: vote is missing: up, down or none", errBadRequest))
		return
	}
	res, err := a.store.Vote(r.Context(), req.User, r.PathValue("id"), *req.Vote)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.reply(w, http.StatusOK, struct {
		Previous  voting.VoteType `json:"previous"`
		Score     float64         `json:"score"`
		Upvotes   int64           `json:"upvotes"`
		Downvotes int64           `json:"downvotes"`
	}{res.Previous, res.Score, res.Upvotes, res.Downvotes})
}

// PUT /articles/{id}/groups/{group}
func (a *api) addToGroup(w http.ResponseWriter, r *http.Request) {
	if err := a.store.AddToGroups(r.Context(), r.PathValue("id"), r.PathValue("group")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// DELETE /articles/{id}/groups/{group}
func (a *api) removeFromGroup(w http.ResponseWriter, r *http.Request) {
	if err := a.store.RemoveFromGroups(r.Context(), r.PathValue("id"), r.PathValue("group")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// GET /groups/{group}?order=score&page=1
func (a *api) listGroup(w http.ResponseWriter, r *http.Request) {
	order, n, err := pageQuery(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	group := r.PathValue("group")
	list, err := a.store.GroupArticles(r.Context(), group, order, n)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.reply(w, http.StatusOK, toPage(group, order, n, list))
}

// pageQuery reads the order (default score) and page (default 1) of a
// page request. The Store itself rejects pages below 1.
func pageQuery(r *http.Request) (voting.Order, int, error) {
	q := r.URL.Query()
	order, err := parseOrder(q.Get("order"))
	if err != nil {
		return 0, 0, err
	}
	n := 1
	if s := q.Get("page"); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			return 0, 0, fmt.Errorf("%w: page %q is not a number", errBadRequest, s)
		}
	}
	return order, n, nil
}

// parseOrder reads an order: "score" or "time" (highest or newest first),
// or any Order's String form, such as "score-asc".
func parseOrder(s string) (voting.Order, error) {
	switch s {
	case "", "score":
		return voting.ScoreDesc, nil
	case "time":
		return voting.TimeDesc, nil
	}
	for _, o := range []voting.Order{voting.ScoreDesc, voting.ScoreAsc, voting.TimeDesc, voting.TimeAsc} {
		if s == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("%w: order %q is not score, time, score-asc or time-asc", errBadRequest, s)
}

// decode reads a request body of one JSON object into v, a pointer to a
// struct, refusing unknown fields, trailing data and bodies over maxBody.
// Its errors are for the client: they name the JSON fields v expects and
// never pass on the decoder's own messages, which speak of Go types.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, v)
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return decodeError(err, v)
		}
		return fmt.Errorf("%w: request body has data after its JSON object; %s", errBadRequest, bodyShape(v))
	}
	return nil
}

// decodeError turns an error of decoding a request body into v into one
// for the client. A field's own error (an invalid vote) is passed on.
func decodeError(err error, v any) error {
	var (
		tooLarge  *http.MaxBytesError
		wrongType *json.UnmarshalTypeError
		msg       string
	)
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%w: the limit is %d bytes", errTooLarge, maxBody)
	case errors.Is(err, voting.ErrInvalidVote):
		return err
	case errors.Is(err, io.EOF):
		msg = "request body is empty"
	case errors.As(err, &wrongType) && wrongType.Field != "":
		msg = fmt.Sprintf("field %q must be %s", wrongType.Field, jsonType(wrongType.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// DisallowUnknownFields gives a plain error: the field's name,
		// quoted, follows the prefix.
		msg = "request body has an unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	default:
		// Malformed JSON, or a value that is not an object.
		msg = "request body is not a JSON object"
	}
	return fmt.Errorf("%w: %s; %s", errBadRequest, msg, bodyShape(v))
}

// bodyShape describes the body decode expects for v, a pointer to a
// struct: `it must be a JSON object with fields "user" and "vote"`.
func bodyShape(v any) string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, strconv.Quote(name))
		}
	}
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return "it must be a JSON object with fields " + list
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

// statusOf maps an error to its HTTP status: the Store's sentinel errors
// to 404, 409 and 400, an unreadable request to 400 (413 when too
// large), anything else to 500.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, voting.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, voting.ErrVotingClosed):
		return http.StatusConflict
	case errors.Is(err, voting.ErrInvalidArgument),
		errors.Is(err, voting.ErrInvalidVote),
		errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// fail replies with err's status and {"error": message}. A server-side
// failure is logged, and the client told no more than "internal error".
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		a.log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		msg = "internal error"
	}
	a.reply(w, status, errorBody{msg})
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
