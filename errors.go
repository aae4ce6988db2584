package voting

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors returned by the store. Check them with errors.Is: they come
// wrapped with the operation and the article ("voting: vote: article not
// found: \"9\"").
var (
	// ErrNotFound means the article (or, from the comment calls, the
	// comment) does not exist: it was never posted, was deleted or
	// pruned, or the id is not one the store issues ("abc", "01", "").
	// Its text names the article ("article not found: \"9\"") or the
	// comment ("comment not found: \"9\"").
	ErrNotFound = errors.New("voting: article not found")
	// ErrVotingClosed means the article's voting window has ended.
	ErrVotingClosed = errors.New("voting: voting closed")
	// ErrInvalidVote means a ballot other than [Upvote], [Downvote] and
	// [CancelVote]: [NoVote], the zero value, included.
	ErrInvalidVote = errors.New("voting: invalid vote type")
	// ErrInvalidArgument means an input out of the documented limits: an
	// empty or over-long name or title, text a write refuses (a control
	// character, a link that is not an http or https URL: doc.go,
	// "Errors"), a bad page or Order, or an option value New rejects.
	ErrInvalidArgument = errors.New("voting: invalid argument")
	// ErrDuplicate means Post found an article with the same link that
	// the store's rules keep it from repeating: a live one with
	// [WithUniqueLinks], one posted within the span of [WithRepostAfter];
	// or that Edit found one for the new link. The call returns that
	// article with it.
	ErrDuplicate = errors.New("voting: duplicate link")
	// ErrNotReplicated means a call's writes are applied on the primary
	// but not known to be on the replicas (or in the append-only files)
	// that [WithWaitReplicas] or [WithWaitAOF] asks for: fewer
	// acknowledged within the timeout, which the error's text counts, or
	// the wait failed. It comes with the call's result, as without the
	// option (Vote's VoteResult, Post's Article, ...); a failover may
	// lose the write.
	ErrNotReplicated = errors.New("voting: not replicated")
	// ErrNotAllowed means a rule of the store forbids the call: a vote
	// from a user with less karma than [WithMinKarma] asks, or an Edit or
	// EditComment by anyone but the poster or after the edit window
	// ([WithEditWindow]).
	ErrNotAllowed = errors.New("voting: not allowed")
	// ErrRateLimited means the user has reached a rate limit of the store
	// ([WithVoteLimit], [WithPostInterval], [WithCommentInterval]);
	// [RetryAfter] tells how long
	// until the call would pass.
	ErrRateLimited = errors.New("voting: rate limited")
	// ErrTryAgain means Redis refused the call before running any of it,
	// for a reason that passes: the store's hash slot is moving between
	// Redis Cluster nodes (TRYAGAIN, ASK, MOVED), the cluster is down
	// (CLUSTERDOWN), or the server is loading its data after a restart
	// (LOADING, MASTERDOWN). The call changed nothing; the same call,
	// retried after a short wait, succeeds once the move or the load is
	// over (docs/OPERATIONS.md, "Redis Cluster").
	ErrTryAgain = errors.New("voting: try again")
	// ErrOutOfMemory means Redis is at its maxmemory under the noeviction
	// policy (or a volatile-* one with nothing left to evict) and refused
	// the call: "OOM command not allowed". The call changed nothing. The
	// calls that free memory (Delete, Prune, Drop, RemoveFromGroups,
	// DeleteComment) and the reads still run.
	ErrOutOfMemory = errors.New("voting: out of memory")
	// ErrUnknownOutcome means a Post or a Comment may or may not have
	// posted: its connection failed (closed, reset, timed out, or the
	// context ended) after the request was sent and before the reply
	// came. Repeating the call may post twice, unless the store has
	// [WithUniqueLinks] and the article a link; read the poster's
	// articles or comments ([WithUserPages]) to tell. The error also
	// wraps the connection's (or the context's). The other calls are
	// sent again on another connection where theirs was closed, as
	// repeating them changes nothing (docs/OPERATIONS.md,
	// "Failures").
	ErrUnknownOutcome = errors.New("voting: outcome unknown")
	// ErrIncompatible means the store's prefix holds a store this one
	// must not write: its recorded key layout is another version, or the
	// options every process writing to it must share ([Identity]) are
	// not this store's. The error names the difference ("layout 2, this
	// library reads 3", "karma off here, 1,-1 in the store"). The call
	// changed nothing. Reads get it only for another layout, or a store
	// with data and no recorded layout. [Store.Reconfigure] changes the
	// recorded options (docs/LAYOUT.md, "The store's identity").
	ErrIncompatible = errors.New("voting: incompatible store")
)

// redisErrors are the errors of Redis's refusals that the store turns
// into sentinels, by the code each reply starts with: each refuses a
// command whole, before it runs.
var redisErrors = map[string]error{
	"TRYAGAIN":    ErrTryAgain,
	"ASK":         ErrTryAgain,
	"MOVED":       ErrTryAgain,
	"CLUSTERDOWN": ErrTryAgain,
	"LOADING":     ErrTryAgain,
	"MASTERDOWN":  ErrTryAgain,
	"OOM":         ErrOutOfMemory,
}

// retriesSpent returns err wrapped in ErrTryAgain where it is the error
// of redisc's RetryConn (github.com/mna/redisc) once it has spent its
// attempts on TRYAGAIN, ASK and MOVED replies, each a refusal; other
// errors as they are.
func retriesSpent(err error) error {
	if spentOnRefusals(err) {
		return fmt.Errorf("%w: %w", ErrTryAgain, err)
	}
	return err
}

// spentOnRefusals reports whether err is the error of redisc's RetryConn
// once it has spent its attempts on refusals (retriesSpent).
func spentOnRefusals(err error) bool {
	return err != nil && err.Error() == "redisc: too many attempts"
}

// refusal returns err, a Redis error reply, wrapped in the sentinel of
// its code (redisErrors), and as it is for other codes.
func refusal(err error, msg string) error {
	code, _, _ := strings.Cut(msg, " ")
	if sentinel := redisErrors[code]; sentinel != nil {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

// opError is an error of one operation of the store: "voting: <op>: <err>",
// where err is a sentinel (its own "voting: " dropped) with an optional
// detail, or the error of the pool or connection.
type opError struct {
	op     string
	err    error
	detail string
}

func (e *opError) Error() string {
	var b strings.Builder
	b.WriteString("voting: ")
	b.WriteString(e.op)
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.err.Error(), "voting: "))
	if e.detail != "" {
		b.WriteString(": ")
		b.WriteString(e.detail)
	}
	return b.String()
}

func (e *opError) Unwrap() error { return e.err }

// opErr wraps err, which is not nil, as an error of op.
func opErr(op string, err error) error { return &opError{op: op, err: err} }

// errCommentNotFound is ErrNotFound as the comment calls word it.
var errCommentNotFound = &renamed{text: "voting: comment not found", err: ErrNotFound}

// renamed is err under another text: a sentinel worded for a caller
// that asked about something else.
type renamed struct {
	text string
	err  error
}

func (e *renamed) Error() string { return e.text }
func (e *renamed) Unwrap() error { return e.err }

// notFound is the error of op for an article that does not exist.
func notFound(op, id string) error {
	return &opError{op: op, err: ErrNotFound, detail: fmt.Sprintf("%q", id)}
}

// retryError is the error of a rate-limited call: it wraps ErrRateLimited
// and tells how long until the call would pass.
// A suspended user's call ([Store.Suspend]) gets one that wraps
// ErrNotAllowed (sentinel) instead.
type retryError struct {
	after    time.Duration
	sentinel error // nil for ErrRateLimited
}

func (e *retryError) Error() string {
	if e.sentinel != nil {
		return fmt.Sprintf("%v: suspended, for %v more", e.sentinel, e.after)
	}
	return fmt.Sprintf("%v: retry after %v", ErrRateLimited, e.after)
}

func (e *retryError) Unwrap() error {
	if e.sentinel != nil {
		return e.sentinel
	}
	return ErrRateLimited
}

// RetryAfter returns, for an error wrapping [ErrRateLimited] that the
// store returned, how long until the call would pass on the store's
// clock, to the millisecond; for an error wrapping [ErrNotAllowed] of a
// user suspended with [Refuse], how long until the suspension ends, to
// the second; 0 for any other error. Another call in the meantime may of
// course take the place again.
func RetryAfter(err error) time.Duration {
	var e *retryError
	if errors.As(err, &e) {
		return e.after
	}
	return 0
}
