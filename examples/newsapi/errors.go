package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// The API's errors, as its clients read them. Every error reply is a
// JSON object {"code": "...", "error": "..."}: code is one of the stable
// codes below, which a client may switch on; error is a message for a
// person, in the API's terms (never a Go name or option); a 429 has
// "retry_after", the seconds to wait, as its Retry-After header says.
// A failed ballot of POST /votes has the same fields and its "status".

// The codes of the API's errors.
const (
	codeNotFound         = "not_found"          // 404: no such article, or no such route
	codeMethodNotAllowed = "method_not_allowed" // 405, with an Allow header
	codeFeatureOff       = "feature_off"        // 404: a route of a feature the service runs without; the message names its flag
	codeVotingClosed     = "voting_closed"      // 409: the article's vote window has passed
	codeDuplicate        = "duplicate"          // 409: the link is another article's, which the reply carries
	codeInvalidVote      = "invalid_vote"       // 400: a vote other than up, down or none
	codeInvalidArgument  = "invalid_argument"   // 400: a name, title, link, group or page out of the API's limits
	codeBadRequest       = "bad_request"        // 400: a body or query the API cannot read
	codeTooLarge         = "too_large"          // 413: a body over its limit, or too many ballots
	codeNotAllowed       = "not_allowed"        // 403: a rule of the service forbids the call; the message says which
	codeUnauthorized     = "unauthorized"       // 401: a write without a token the service takes (none, malformed, wrongly signed, expired), with a WWW-Authenticate header
	codeForbidden        = "forbidden"          // 403: the token's user may not do this: act as another user, or act on another's item without being a moderator
	codeRateLimited      = "rate_limited"       // 429, with retry_after
	codeTryAgain         = "try_again"          // 503: Redis refused the call for a passing reason; nothing changed
	codeOutOfMemory      = "out_of_memory"      // 503: Redis is full; nothing changed
	codeNotReplicated    = "not_replicated"     // 503: the write is done but not yet confirmed on the replicas
	codeIncompatible     = "incompatible"       // 503: this process's options or layout are not the store's
	codeUnknownOutcome   = "unknown_outcome"    // 503: a post or comment may or may not have been made
	codeTimeout          = "timeout"            // 503: Redis did not answer within the service's -timeout
	codeCanceled         = "canceled"           // 503: the client went away before the reply
	codeInternal         = "internal"           // 500: a failure of the service, logged
)

// kinds are the errors the API knows, by status, each with its code, in
// the order they are checked.
var kinds = []struct {
	status int
	errs   []kind
}{
	{http.StatusRequestEntityTooLarge, []kind{{errTooLarge, codeTooLarge}}},
	{http.StatusNotFound, []kind{{voting.ErrNotFound, codeNotFound}}},
	{http.StatusConflict, []kind{{voting.ErrVotingClosed, codeVotingClosed}, {voting.ErrDuplicate, codeDuplicate}}},
	{http.StatusBadRequest, []kind{{voting.ErrInvalidVote, codeInvalidVote}, {voting.ErrInvalidArgument, codeInvalidArgument},
		{errBadRequest, codeBadRequest}}},
	{http.StatusForbidden, []kind{{voting.ErrNotAllowed, codeNotAllowed}}},
	{http.StatusTooManyRequests, []kind{{voting.ErrRateLimited, codeRateLimited}}},
	{http.StatusServiceUnavailable, []kind{{voting.ErrTryAgain, codeTryAgain}, {voting.ErrOutOfMemory, codeOutOfMemory},
		{voting.ErrNotReplicated, codeNotReplicated},
		// Before a timeout: what a client must know before posting again.
		{voting.ErrUnknownOutcome, codeUnknownOutcome},
		// This process's options are not the store's (a rolling deploy).
		{voting.ErrIncompatible, codeIncompatible}}},
}

// kind is an error the API knows and its code.
type kind struct {
	err  error
	code string
}

// kindOf returns the first of kinds that err is (errors.Is), and its
// status; an err of none gets a kind whose err is nil.
func kindOf(err error) (status int, known kind) {
	for _, s := range kinds {
		for _, k := range s.errs {
			if errors.Is(err, k.err) {
				return s.status, k
			}
		}
	}
	return 0, kind{}
}

// apiError is an error the API words itself: a route of a feature that
// is off, a rule's refusal with its reason, a link or title out of the
// service's rules.
type apiError struct {
	status int
	code   string
	msg    string
	err    error // the store's error it explains, if any
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

// featureOff is the error of a route whose feature is off: 404, with
// the flag that turns it on.
func featureOff(feature, flags string) error {
	return &apiError{http.StatusNotFound, codeFeatureOff, fmt.Sprintf("%s: start the service with %s", feature, flags), nil}
}

// invalid is a 400 invalid_argument with the message msg.
func invalid(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, codeInvalidArgument, fmt.Sprintf(format, args...), voting.ErrInvalidArgument}
}

// forbidden is a 403 not_allowed that gives the reason of err, the
// store's refusal.
func forbidden(err error, format string, args ...any) error {
	return &apiError{http.StatusForbidden, codeNotAllowed, "not allowed: " + fmt.Sprintf(format, args...), err}
}

// classify returns err's status and code, for a request whose context
// is ctx: a known error's, 503 timeout when the request's deadline
// passed (Redis stalled), else 500 internal.
func classify(ctx context.Context, err error) (status int, code string) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.code
	}
	if status, k := kindOf(err); k.err != nil {
		return status, k.code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return http.StatusServiceUnavailable, codeTimeout
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return http.StatusServiceUnavailable, codeCanceled
	}
	return http.StatusInternalServerError, codeInternal
}

// goNames are the names of the library's options in its messages, as
// " (WithUserPages)", which an API client has no use for.
var goNames = regexp.MustCompile(` ?\(With[A-Za-z]*\)`)

// message is the text of err for a client: the API's own, or the
// store's from its sentinel on ("voting: vote: article not found: \"9\""
// reads `article not found: "9"`), without the library's names.
func message(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.msg
	}
	if d := voting.RetryAfter(err); d > 0 {
		return fmt.Sprintf("rate limited: try again in %d seconds", retrySeconds(d))
	}
	msg := err.Error()
	if _, k := kindOf(err); k.err != nil {
		// The text from the store's sentinel on, or from the innermost
		// error that words it for the call (a comment's "comment not
		// found" wraps ErrNotFound's "article not found").
		var chain []error
		for e := err; e != nil; e = errors.Unwrap(e) {
			chain = append(chain, e)
		}
		for i := len(chain) - 1; i > 0; i-- {
			if at := strings.Index(msg, strings.TrimPrefix(chain[i].Error(), "voting: ")); at >= 0 {
				msg = msg[at:]
				break
			}
		}
	}
	return goNames.ReplaceAllString(strings.TrimPrefix(msg, "voting: "), "")
}

// retrySeconds is d in whole seconds, rounded up.
func retrySeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
