package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// Who a write request acts as: the user of its bearer token (token.go),
// verified, never a name the body gives. Reads need no token; a listing
// read with one shows its user's vote on each item (viewer).

// caller is the user a write request acts as, from its verified token.
type caller struct {
	name string
	role role
}

// roleRank orders the roles: a role may do what every lower one may.
var roleRank = map[role]int{roleUser: 1, roleModerator: 2}

// errNoCredential is a write request without a bearer token.
var errNoCredential = errors.New("this request needs a token: send the header Authorization: Bearer TOKEN")

// realm is the realm of the service's WWW-Authenticate challenges.
const realm = "newsapi"

// handleWrite is handle for a route that writes: h runs with the
// request's caller, once its token is verified. A request without a
// token the service takes gets 401 unauthorized and a WWW-Authenticate
// challenge, before its body is read.
func (a *api) handleWrite(h func(http.ResponseWriter, *http.Request, caller) error) http.HandlerFunc {
	return a.handle(func(w http.ResponseWriter, r *http.Request) error {
		c, err := a.authenticate(r)
		if err != nil {
			return unauthorized(w, err)
		}
		return h(w, r, c)
	})
}

// unauthorized is the 401 of a request whose token the service does not
// take (err, authenticate's), with its WWW-Authenticate challenge.
func unauthorized(w http.ResponseWriter, err error) error {
	w.Header().Set("WWW-Authenticate", challenge(err))
	return &apiError{http.StatusUnauthorized, codeUnauthorized, "unauthorized: " + err.Error(), nil}
}

// viewer returns the user a listing is read for: the user of r's bearer
// token, verified, whose vote on each item the listing then shows, or ""
// for a request without one (anonymous: no votes). A token sent but
// refused (expired, malformed, badly signed) is a 401, as for a write:
// a client whose token lapsed learns it, rather than seeing its arrows
// vanish.
func (a *api) viewer(w http.ResponseWriter, r *http.Request) (string, error) {
	c, err := a.authenticate(r)
	if errors.Is(err, errNoCredential) {
		return "", nil
	}
	if err != nil {
		return "", unauthorized(w, err)
	}
	return c.name, nil
}

// authenticate returns the caller of r's bearer token. Its errors are
// errNoCredential, or wrap errTokenMalformed (an Authorization header
// that is not one bearer token included) or another of verify's.
func (a *api) authenticate(r *http.Request) (caller, error) {
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return caller{}, errNoCredential
	case len(values) > 1:
		return caller{}, fmt.Errorf("%w: send one Authorization header", errTokenMalformed)
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		// Another scheme (Basic, say) is no bearer token at all.
		return caller{}, errNoCredential
	}
	now := a.now
	if now == nil {
		now = time.Now
	}
	c, err := verify(a.key, strings.TrimSpace(token), now())
	if err != nil {
		return caller{}, err
	}
	return caller{name: c.Sub, role: c.Role}, nil
}

// challenge is the WWW-Authenticate header of a 401 for err (RFC 6750):
// the scheme and realm alone for a request without a token; for a token
// refused, invalid_token and why, from a fixed list of reasons.
func challenge(err error) string {
	if errors.Is(err, errNoCredential) {
		return fmt.Sprintf("Bearer realm=%q", realm)
	}
	why := errTokenMalformed
	for _, e := range []error{errTokenAlg, errTokenSignature, errTokenExpired} {
		if errors.Is(err, e) {
			why = e
		}
	}
	return fmt.Sprintf("Bearer realm=%q, error=\"invalid_token\", error_description=%q", realm, why.Error())
}

// denied is a 403 forbidden: the caller may not do what the message
// says.
func denied(format string, args ...any) error {
	return &apiError{http.StatusForbidden, codeForbidden, "forbidden: " + fmt.Sprintf(format, args...), nil}
}

// actAs returns the user a request of c acts as: c themselves. named is
// the body's field that names the acting user (its name is field), kept
// for clients that send it: empty, it is c's name; naming anyone else it
// is a 403, for a moderator too.
func (c caller) actAs(field, named string) (string, error) {
	if named != "" && named != c.name {
		return "", denied("%s is %q, but the token is %q's: a request acts as its token's user only", field, named, c.name)
	}
	return c.name, nil
}

// requireRole returns nil if c has role r or a higher one, else a 403
// forbidden with the message why. Every check of a role goes through it.
func requireRole(c caller, r role, why string) error {
	if roleRank[c.role] >= roleRank[r] {
		return nil
	}
	return denied("%s", why)
}

// mayActOn returns nil if c may act on an item whose poster is poster:
// their own, or anyone's for a moderator. what names the act ("delete
// an article"). A deleted comment's empty poster is nobody's.
func mayActOn(c caller, poster, what string) error {
	if poster != "" && poster == c.name {
		return nil
	}
	return requireRole(c, roleModerator, "only its poster or a moderator may "+what)
}

// articlePoster returns the poster of the article id, for mayActOn. A
// poster never changes, and ids are never reused: the answer holds when
// the store acts on it afterwards.
func (a *api) articlePoster(ctx context.Context, id string) (string, error) {
	art, err := a.store.Article(ctx, id)
	return art.Poster, err
}

// commentOf returns the comment id, for mayActOn; an unknown one is a
// 404, as the store words it. A live comment's poster never changes and
// a deleted comment stays deleted: the answer holds when the store acts
// on it afterwards.
func (a *api) commentOf(ctx context.Context, id string) (voting.Comment, error) {
	list, err := a.store.CommentsByID(ctx, []string{id})
	if err != nil {
		return voting.Comment{}, err
	}
	if len(list) == 0 {
		return voting.Comment{}, &apiError{http.StatusNotFound, codeNotFound, fmt.Sprintf("comment not found: %q", id), voting.ErrNotFound}
	}
	return list[0], nil
}
