package voting

import "context"

// Hooks see every call of a store (WithHook), as grpc-go's interceptors
// and go-redis's hooks see theirs: each public method of Store runs its
// whole body, every round trip included, inside the store's hooks, once
// per call. The nested module github.com/votekit/voting/votingotel turns
// them into OpenTelemetry spans and metrics; the store itself depends on
// nothing. A store without hooks takes none of these paths: each method
// tests one pointer. Here are the hooks' types; WithHook is with the other
// options (options.go), and running a call through the hooks (observe) and
// counting its round trips (counted) is on the path of every call
// (call.go).

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
	// Articles, ArticlesFor, GroupArticles, GroupArticlesFor, Thread,
	// ThreadFor, Replies and RepliesFor.
	Order    Order
	HasOrder bool
	// Page is the page the call was asked for, as given (even a page
	// below 1, which the call refuses), where HasPage is set: Articles,
	// ArticlesFor, GroupArticles, GroupArticlesFor, TopSince, TopSinceFor,
	// TopUsers, Submitted, SubmittedFor, Upvoted, UpvotedFor and
	// UserComments.
	Page    int
	HasPage bool
	// Group is the group of GroupArticles, GroupArticlesFor and
	// GroupCount; "" otherwise.
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
