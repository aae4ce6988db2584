package voting

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

// Hooks see every call of a store (WithHook), as grpc-go's interceptors
// and go-redis's hooks see theirs: each public method of Store runs its
// whole body, every round trip included, inside the store's hooks, once
// per call. The nested module github.com/votekit/voting/votingotel turns
// them into OpenTelemetry spans and metrics; the store itself depends on
// nothing. A store without hooks takes none of these paths: each method
// tests one pointer.

// Hook observes, and may wrap, each call of a store's public methods
// ([WithHook]). Call runs the call by calling next, with ctx or a context
// derived from it (one that carries a span, say), which the call then
// uses for its round trips; it returns the call's error, or one of its
// own. A Hook that does not call next stops the call: the method returns
// the Hook's error with the zero values of its other results. One that
// calls next more than once runs the call again, and call.RoundTrips
// counts them all.
//
// call describes the call: it is filled before Call runs, but for
// RoundTrips, which next's return has final. A Hook must not change it,
// nor keep it past its return. Hooks run on the calling goroutine, as
// the call does, and must be safe for concurrent use.
type Hook interface {
	Call(ctx context.Context, call *Call, next func(ctx context.Context) error) error
}

// HookFunc adapts a function to a [Hook].
type HookFunc func(ctx context.Context, call *Call, next func(ctx context.Context) error) error

// Call calls f.
func (f HookFunc) Call(ctx context.Context, call *Call, next func(ctx context.Context) error) error {
	return f(ctx, call, next)
}

// Call describes one call of a store's public method to its hooks: what
// identifies the call, never user data (no user name, article id, title
// or link), and how many round trips it took.
type Call struct {
	// Op is the method's name: "Vote", "GroupArticles", "VoteBatch", ...
	Op string
	// Order is the order the call was asked for, where HasOrder is set:
	// Articles, GroupArticles, Thread and Replies.
	Order    Order
	HasOrder bool
	// Page is the page the call was asked for, as given (even a page
	// below 1, which the call refuses), where HasPage is set: Articles,
	// GroupArticles, TopSince, TopUsers, Submitted, Upvoted and
	// UserComments.
	Page    int
	HasPage bool
	// Group is the group of GroupArticles and GroupCount; "" otherwise.
	Group string
	// Count is the number of items the call was given: ids for
	// ArticlesByID, VotesOf, CommentsByID and CommentVotesOf, ballots
	// for VoteBatch, groups for AddToGroups and RemoveFromGroups; 0 for
	// the other calls.
	Count int
	// RoundTrips is how many round trips to Redis the call has made:
	// each command sent on its own, and each pipeline sent at once
	// (VoteBatch's, or a script with the store's waits). It is 0 before
	// next runs, and the call's whole count once next returns; a call
	// refused before it reached Redis (bad input, a done context) takes
	// none.
	RoundTrips int
}

// WithHook adds h to the store's hooks, which see every call of the
// store's public methods (see [Hook]). Hooks compose in the order given,
// over one or several WithHook options: the first given is the
// outermost, whose next runs the second, and so on, the last's next
// running the call. Default none: a store without hooks does no work
// and allocates nothing for them. A nil Hook is rejected.
func WithHook(h Hook) Option {
	return func(c *config) {
		if h == nil {
			c.nilHook = true
			return
		}
		c.hooks = append(c.hooks, h)
	}
}

// hooked reports whether the call that has ctx is to run through the
// store's hooks: the store has some, and the call is not already inside
// them, which a method's body is when observe runs it again (with the
// call's state in ctx).
func (s *Store) hooked(ctx context.Context) bool {
	if s.hooks == nil {
		return false
	}
	st, _ := ctx.Value(callKey{}).(*callState)
	return st == nil || st.store != s
}

// callKey is the context key of a call's state, which the context of a
// call running inside the hooks carries.
type callKey struct{}

// callState is the state of one call running inside the store's hooks.
type callState struct {
	store *Store
	call  Call
}

// observe runs a call of the method call.Op, whose body run is, through
// the store's hooks, and returns its results. A method with hooks calls
// it with a run that calls the method again, under the context observe
// gives run, which carries the call's state: the method then runs its
// body (hooked is false), counting its round trips (counted).
func observe[T any](ctx context.Context, s *Store, call Call, run func(ctx context.Context) (T, error)) (T, error) {
	st := &callState{store: s, call: call}
	var result T
	// next(i) runs hook i, whose next is next(i+1); past the last, the
	// call.
	var next func(i int) func(ctx context.Context) error
	next = func(i int) func(ctx context.Context) error {
		if i == len(s.hooks) {
			return func(ctx context.Context) error {
				var err error
				result, err = run(context.WithValue(ctx, callKey{}, st))
				return err
			}
		}
		return func(ctx context.Context) error { return s.hooks[i].Call(ctx, &st.call, next(i+1)) }
	}
	err := next(0)(ctx)
	return result, err
}

// observeErr is observe for a method whose only result is an error.
func observeErr(ctx context.Context, s *Store, call Call, run func(ctx context.Context) error) error {
	_, err := observe(ctx, s, call, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, run(ctx)
	})
	return err
}

// counted returns c, counting its round trips into the call ctx
// carries, where the call runs inside the store's hooks; c itself
// otherwise. The store calls it on each connection it takes from a
// pool.
func (s *Store) counted(ctx context.Context, c redis.Conn) redis.Conn {
	if s.hooks == nil {
		return c
	}
	st, _ := ctx.Value(callKey{}).(*callState)
	if st == nil {
		return c
	}
	cc := countConn{Conn: c, trips: &st.call.RoundTrips}
	if withCtx, ok := c.(redis.ConnWithContext); ok {
		return &countConnContext{countConn: cc, withCtx: withCtx}
	}
	return &cc
}

// countConn is a connection that counts its round trips: each Do, and
// each Flush of a pipeline, as the store sends them.
type countConn struct {
	redis.Conn
	trips *int
}

func (c *countConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if cmd != "" { // "" only flushes and reads what is pending
		*c.trips++
	}
	return c.Conn.Do(cmd, args...)
}

func (c *countConn) Flush() error {
	*c.trips++
	return c.Conn.Flush()
}

// countConnContext is a countConn whose connection supports contexts,
// which it keeps supporting, so the store takes the same path through it.
type countConnContext struct {
	countConn
	withCtx redis.ConnWithContext
}

func (c *countConnContext) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	if cmd != "" {
		*c.trips++
	}
	return c.withCtx.DoContext(ctx, cmd, args...)
}

func (c *countConnContext) ReceiveContext(ctx context.Context) (interface{}, error) {
	return c.withCtx.ReceiveContext(ctx)
}
