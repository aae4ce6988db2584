package voting

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
)

// recorder is a Hook that records each call it sees, as it stands once
// next returns, with next's error.
type recorder struct {
	mu    sync.Mutex
	calls []Call
	errs  []error
}

func (r *recorder) Call(ctx context.Context, call *Call, next func(ctx context.Context) error) error {
	if call.RoundTrips != 0 {
		panic(fmt.Sprintf("%s: %d round trips before next", call.Op, call.RoundTrips))
	}
	err := next(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, *call)
	r.errs = append(r.errs, err)
	return err
}

// take returns the calls recorded since the last take, and forgets them.
func (r *recorder) take() ([]Call, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, errs := r.calls, r.errs
	r.calls, r.errs = nil, nil
	return calls, errs
}

// methodCall is one call of a public method of Store, for the tests of
// hooks: the Call its hook should see, and the error it should get.
type methodCall struct {
	want    Call
	wantErr error
	run     func(s *Store) error
}

// methodCalls returns a call of each public method of Store, some of
// them twice (an error), on a store with every option they need, whose
// article "1" exists, is in group "g", and has votes.
func methodCalls() []methodCall {
	e := func(_ interface{}, err error) error { return err }
	return []methodCall{
		{Call{Op: "Post"}, nil, func(s *Store) error { return e(s.Post(ctx, "alice", "a title", "https://example.com/2")) }},
		{Call{Op: "Article"}, nil, func(s *Store) error { return e(s.Article(ctx, "1")) }},
		{Call{Op: "Article"}, ErrNotFound, func(s *Store) error { return e(s.Article(ctx, "999")) }},
		{Call{Op: "ArticlesByID", Count: 3}, nil, func(s *Store) error { return e(s.ArticlesByID(ctx, []string{"1", "2", "x"})) }},
		{Call{Op: "Articles", Order: Hot, HasOrder: true, Page: 1, HasPage: true}, nil, func(s *Store) error { return e(s.Articles(ctx, Hot, 1)) }},
		{Call{Op: "Articles", Order: TimeAsc, HasOrder: true, Page: 0, HasPage: true}, ErrInvalidArgument, func(s *Store) error { return e(s.Articles(ctx, TimeAsc, 0)) }},
		{Call{Op: "ArticlesFor", Order: Hot, HasOrder: true, Page: 1, HasPage: true}, nil, func(s *Store) error {
			_, _, err := s.ArticlesFor(ctx, "bob", Hot, 1)
			return err
		}},
		{Call{Op: "ArticlesFor", Order: TimeAsc, HasOrder: true, Page: 0, HasPage: true}, ErrInvalidArgument, func(s *Store) error {
			_, _, err := s.ArticlesFor(ctx, "bob", TimeAsc, 0)
			return err
		}},
		{Call{Op: "TopSince", Page: 2, HasPage: true}, nil, func(s *Store) error { return e(s.TopSince(ctx, time.Hour, 2)) }},
		{Call{Op: "TopSinceFor", Page: 2, HasPage: true}, nil, func(s *Store) error {
			_, _, err := s.TopSinceFor(ctx, "bob", time.Hour, 2)
			return err
		}},
		{Call{Op: "TopSinceFor", Page: 1, HasPage: true}, ErrInvalidArgument, func(s *Store) error {
			_, _, err := s.TopSinceFor(ctx, "", time.Hour, 1)
			return err
		}},
		{Call{Op: "Count"}, nil, func(s *Store) error { return e(s.Count(ctx)) }},
		{Call{Op: "Vote"}, nil, func(s *Store) error { return e(s.Vote(ctx, "bob", "1", Downvote)) }},
		{Call{Op: "Vote"}, ErrInvalidVote, func(s *Store) error { return e(s.Vote(ctx, "bob", "1", 7)) }},
		{Call{Op: "Vote"}, ErrNotFound, func(s *Store) error { return e(s.Vote(ctx, "bob", "999", Upvote)) }},
		{Call{Op: "VoteOf"}, nil, func(s *Store) error { return e(s.VoteOf(ctx, "bob", "1")) }},
		{Call{Op: "VotesOf", Count: 2}, nil, func(s *Store) error { return e(s.VotesOf(ctx, "bob", []string{"1", "2"})) }},
		{Call{Op: "VoteBatch", Count: 30}, nil, func(s *Store) error {
			ballots := make([]Ballot, 30)
			for i := range ballots {
				ballots[i] = Ballot{User: "u" + strconv.Itoa(i), ID: "1", Vote: Upvote}
			}
			return e(s.VoteBatch(ctx, ballots))
		}},
		{Call{Op: "AddToGroups", Count: 2}, nil, func(s *Store) error { return s.AddToGroups(ctx, "2", "g", "h") }},
		{Call{Op: "RemoveFromGroups", Count: 1}, nil, func(s *Store) error { return s.RemoveFromGroups(ctx, "2", "h") }},
		{Call{Op: "Groups"}, nil, func(s *Store) error { return e(s.Groups(ctx, "1")) }},
		{Call{Op: "GroupArticles", Group: "g", Order: ScoreDesc, HasOrder: true, Page: 1, HasPage: true}, nil, func(s *Store) error { return e(s.GroupArticles(ctx, "g", ScoreDesc, 1)) }},
		{Call{Op: "GroupArticlesFor", Group: "g", Order: ScoreDesc, HasOrder: true, Page: 1, HasPage: true}, nil, func(s *Store) error {
			_, _, err := s.GroupArticlesFor(ctx, "bob", "g", ScoreDesc, 1)
			return err
		}},
		{Call{Op: "GroupCount", Group: "g"}, nil, func(s *Store) error { return e(s.GroupCount(ctx, "g")) }},
		{Call{Op: "Karma"}, nil, func(s *Store) error { return e(s.Karma(ctx, "alice")) }},
		{Call{Op: "TopUsers", Page: 1, HasPage: true}, nil, func(s *Store) error { return e(s.TopUsers(ctx, 1)) }},
		{Call{Op: "Rules"}, nil, func(s *Store) error { return e(s.Rules(ctx)) }},
		{Call{Op: "SetRules"}, nil, func(s *Store) error { return e(s.SetRules(ctx, WithKarma(1, -1))) }},
		{Call{Op: "Edit"}, nil, func(s *Store) error { return e(s.Edit(ctx, "2", "alice", "a new title", "https://example.com/2")) }},
		{Call{Op: "Edit"}, ErrNotAllowed, func(s *Store) error { return e(s.Edit(ctx, "2", "bob", "a new title", "")) }},
		{Call{Op: "Submitted", Page: 1, HasPage: true}, nil, func(s *Store) error { return e(s.Submitted(ctx, "alice", 1)) }},
		{Call{Op: "SubmittedFor", Page: 1, HasPage: true}, nil, func(s *Store) error {
			_, _, err := s.SubmittedFor(ctx, "bob", "alice", 1)
			return err
		}},
		{Call{Op: "Comment"}, nil, func(s *Store) error { return e(s.Comment(ctx, "1", "", "bob", "a comment")) }},
		{Call{Op: "Comment"}, ErrNotFound, func(s *Store) error { return e(s.Comment(ctx, "999", "", "bob", "a comment")) }},
		{Call{Op: "VoteComment"}, nil, func(s *Store) error { return e(s.VoteComment(ctx, "carol", "1", Downvote)) }},
		{Call{Op: "VoteComment"}, ErrInvalidVote, func(s *Store) error { return e(s.VoteComment(ctx, "carol", "1", 7)) }},
		{Call{Op: "Thread", Order: Best, HasOrder: true}, nil, func(s *Store) error { return e(s.Thread(ctx, "1", Best, 10)) }},
		{Call{Op: "Thread", Order: Best, HasOrder: true}, ErrInvalidArgument, func(s *Store) error { return e(s.Thread(ctx, "1", Best, 0)) }},
		{Call{Op: "Replies", Order: TimeAsc, HasOrder: true}, nil, func(s *Store) error { return e(s.Replies(ctx, "1", TimeAsc, 10)) }},
		{Call{Op: "ThreadFor", Order: Best, HasOrder: true}, nil, func(s *Store) error {
			_, _, err := s.ThreadFor(ctx, "carol", "1", Best, 10)
			return err
		}},
		{Call{Op: "ThreadFor", Order: Best, HasOrder: true}, ErrNotFound, func(s *Store) error {
			_, _, err := s.ThreadFor(ctx, "carol", "999", Best, 10)
			return err
		}},
		{Call{Op: "RepliesFor", Order: TimeAsc, HasOrder: true}, nil, func(s *Store) error {
			_, _, err := s.RepliesFor(ctx, "carol", "1", TimeAsc, 10)
			return err
		}},
		{Call{Op: "CommentsByID", Count: 2}, nil, func(s *Store) error { return e(s.CommentsByID(ctx, []string{"1", "x"})) }},
		{Call{Op: "CommentVotesOf", Count: 2}, nil, func(s *Store) error { return e(s.CommentVotesOf(ctx, "carol", []string{"1", "2"})) }},
		{Call{Op: "EditComment"}, nil, func(s *Store) error { return e(s.EditComment(ctx, "1", "bob", "edited")) }},
		{Call{Op: "UserComments", Page: 1, HasPage: true}, nil, func(s *Store) error { return e(s.UserComments(ctx, "bob", 1)) }},
		{Call{Op: "CommentVoters"}, nil, func(s *Store) error { _, _, err := s.CommentVoters(ctx, "1", "", 10); return err }},
		{Call{Op: "CommentVoters"}, ErrInvalidArgument, func(s *Store) error { _, _, err := s.CommentVoters(ctx, "1", "", 0); return err }},
		{Call{Op: "VotesBy"}, nil, func(s *Store) error { _, _, err := s.VotesBy(ctx, "carol", "", 10); return err }},
		{Call{Op: "Voters"}, nil, func(s *Store) error { _, _, err := s.Voters(ctx, "1", "", 10); return err }},
		{Call{Op: "Voters"}, ErrNotFound, func(s *Store) error { _, _, err := s.Voters(ctx, "999", "", 10); return err }},
		{Call{Op: "ReverseVotes"}, nil, func(s *Store) error { return e(s.ReverseVotes(ctx, "carol")) }},
		{Call{Op: "Suspend"}, nil, func(s *Store) error { return s.Suspend(ctx, "eve", Shadow, s.now().Add(time.Hour)) }},
		{Call{Op: "Suspend"}, ErrInvalidArgument, func(s *Store) error { return s.Suspend(ctx, "eve", 0, s.now().Add(time.Hour)) }},
		{Call{Op: "Suspended"}, nil, func(s *Store) error { _, _, err := s.Suspended(ctx, "eve"); return err }},
		{Call{Op: "Unsuspend"}, nil, func(s *Store) error { return s.Unsuspend(ctx, "eve") }},
		{Call{Op: "VoteEvents"}, nil, func(s *Store) error { _, _, err := s.VoteEvents(ctx, "", 10); return err }},
		{Call{Op: "VoteEvents"}, ErrInvalidArgument, func(s *Store) error { _, _, err := s.VoteEvents(ctx, "x", 10); return err }},
		{Call{Op: "DeleteComment"}, nil, func(s *Store) error { return s.DeleteComment(ctx, "1") }},
		{Call{Op: "DeleteComment"}, ErrNotFound, func(s *Store) error { return s.DeleteComment(ctx, "1") }},
		{Call{Op: "Upvoted", Page: 1, HasPage: true}, nil, func(s *Store) error { return e(s.Upvoted(ctx, "alice", 1)) }},
		{Call{Op: "UpvotedFor", Page: 1, HasPage: true}, nil, func(s *Store) error {
			_, _, err := s.UpvotedFor(ctx, "bob", "alice", 1)
			return err
		}},
		{Call{Op: "Delete"}, nil, func(s *Store) error { return s.Delete(ctx, "2") }},
		{Call{Op: "Delete"}, ErrNotFound, func(s *Store) error { return s.Delete(ctx, "2") }},
		{Call{Op: "Prune"}, nil, func(s *Store) error { return e(s.Prune(ctx, epoch.Add(-time.Hour))) }},
		{Call{Op: "Recorded"}, nil, func(s *Store) error { _, _, err := s.Recorded(ctx); return err }},
		{Call{Op: "CheckIdentity"}, nil, func(s *Store) error { return s.CheckIdentity(ctx) }},
		{Call{Op: "Reconfigure"}, nil, func(s *Store) error { return e(s.Reconfigure(ctx)) }},
		{Call{Op: "Check"}, nil, func(s *Store) error { return e(s.Check(ctx)) }},
		{Call{Op: "Drop"}, nil, func(s *Store) error { return s.Drop(ctx) }},
	}
}

// unhooked are the methods of Store that talk to no Redis, so no hook
// sees them.
var unhooked = map[string]bool{"Identity": true}

// TestHookEveryMethod calls each public method of Store on a store with
// a hook: the hook sees each call once, with the method's name, what
// identifies the call, its error, and as many round trips as the
// connections counted.
func TestHookEveryMethod(t *testing.T) {
	calls := methodCalls()
	covered := map[string]bool{}
	for _, c := range calls {
		covered[c.want.Op] = true
	}
	st := reflect.TypeOf(&Store{})
	for i := 0; i < st.NumMethod(); i++ {
		if name := st.Method(i).Name; !covered[name] && !unhooked[name] {
			t.Errorf("Store.%s: no call in methodCalls", name)
		}
	}
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		rec := &recorder{}
		s, _ := newStore(t, b, WithHook(rec), WithOrders(extraOrders...), WithUserPages(), WithKarma(1, -1), WithEditWindow(time.Hour), WithVoteLog(), WithVoteEvents(100))
		if _, err := s.Post(ctx, "alice", "first", ""); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToGroups(ctx, "1", "g"); err != nil {
			t.Fatal(err)
		}
		h := &hooks{}
		hook(s, h)
		rec.take()
		for _, c := range calls {
			trips := h.trips.Load()
			err := c.run(s)
			trips = h.trips.Load() - trips
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Errorf("%s: error %v, want %v", c.want.Op, err, c.wantErr)
			}
			got, errs := rec.take()
			if len(got) != 1 {
				t.Errorf("%s: the hook saw %d calls, want 1: %+v", c.want.Op, len(got), got)
				continue
			}
			want := c.want
			want.RoundTrips = int(trips)
			if got[0] != want {
				t.Errorf("%s: the hook saw %+v, want %+v", c.want.Op, got[0], want)
			}
			if errs[0] != err {
				t.Errorf("%s: the hook's next returned %v, the call %v", c.want.Op, errs[0], err)
			}
			if c.wantErr == nil && trips == 0 {
				t.Errorf("%s: no round trip", c.want.Op)
			}
		}
	})
}

// Hooks compose in the order given, the first outermost; a context a
// hook derives reaches the hooks inside it and the call; a hook's error
// is the call's; and a hook that does not call next stops the call.
func TestHookOrder(t *testing.T) {
	b := newBackend(t, "miniredis", miniredisAddr(t), nil)
	var mu sync.Mutex
	var trace []string
	type key struct{}
	named := func(name string) Hook {
		return HookFunc(func(ctx context.Context, call *Call, next func(ctx context.Context) error) error {
			mu.Lock()
			trace = append(trace, fmt.Sprintf("%s in %v", name, ctx.Value(key{})))
			mu.Unlock()
			err := next(context.WithValue(ctx, key{}, name))
			mu.Lock()
			trace = append(trace, fmt.Sprintf("%s out %d %v", name, call.RoundTrips, err))
			mu.Unlock()
			return err
		})
	}
	s, _ := newStore(t, b, WithHook(named("a")), WithHook(named("b")), WithHook(named("c")))
	for range 2 { // the first loads the script
		trace = nil
		if _, err := s.Count(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := "[a in <nil> b in a c in b c out 1 <nil> b out 1 <nil> a out 1 <nil>]"
	if got := fmt.Sprint(trace); got != want {
		t.Errorf("trace %s, want %s", got, want)
	}

	// The call runs under the innermost hook's context: here, canceled.
	cancel := HookFunc(func(ctx context.Context, _ *Call, next func(ctx context.Context) error) error {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return next(ctx)
	})
	rec := &recorder{}
	s, _ = newStore(t, b, WithHook(rec), WithHook(cancel))
	if _, err := s.Vote(ctx, "bob", "1", Upvote); !errors.Is(err, context.Canceled) {
		t.Errorf("Vote under a canceled context: %v", err)
	}
	if calls, _ := rec.take(); len(calls) != 1 || calls[0].RoundTrips != 0 {
		t.Errorf("the outer hook saw %+v, want one call of no round trip", calls)
	}

	// A hook that stops the call: its error, zero results.
	stop := errors.New("stopped")
	s, _ = newStore(t, b, WithHook(HookFunc(func(context.Context, *Call, func(context.Context) error) error { return stop })))
	if a, err := s.Post(ctx, "alice", "t", ""); err != stop || a != (Article{}) {
		t.Errorf("Post stopped by a hook = %+v, %v", a, err)
	}
	if n, err := s.Count(ctx); err != stop || n != 0 {
		t.Errorf("Count stopped by a hook = %d, %v; want 0, stopped", n, err)
	}

	// A hook that calls next twice runs the call twice, and counts both.
	twice := HookFunc(func(ctx context.Context, _ *Call, next func(ctx context.Context) error) error {
		if err := next(ctx); err != nil {
			return err
		}
		return next(ctx)
	})
	rec = &recorder{}
	s, _ = newStore(t, b, WithHook(rec), WithHook(twice))
	for range 2 { // the first loads the scripts
		rec.take()
		if _, err := s.Post(ctx, "alice", "t", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Count(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Count(ctx); err != nil || n != 4 {
		t.Errorf("Count after two Posts run twice = %d, %v; want 4", n, err)
	}
	if calls, _ := rec.take(); len(calls) != 3 || calls[0].RoundTrips != 4 || calls[1].RoundTrips != 2 {
		t.Errorf("the outer hook saw %+v, want Post of 4 round trips (a PING each) and Count of 2", calls)
	}

	// A hook may call the store: that is a call of its own.
	var inner *Store
	rec = &recorder{}
	nested := HookFunc(func(ctx context.Context, call *Call, next func(ctx context.Context) error) error {
		if call.Op == "Vote" {
			if _, err := inner.Count(ctx); err != nil {
				return err
			}
		}
		return next(ctx)
	})
	inner, _ = newStore(t, b, WithHook(rec), WithHook(nested))
	if _, err := inner.Vote(ctx, "bob", "1", Upvote); !errors.Is(err, ErrNotFound) {
		t.Errorf("Vote on no article: %v", err)
	}
	if calls, _ := rec.take(); len(calls) != 2 || calls[0].Op != "Count" || calls[1].Op != "Vote" {
		t.Errorf("the outer hook saw %+v, want Count, then Vote", calls)
	}

	if _, err := New(b.pool, WithHook(nil)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New with a nil hook: %v", err)
	}
}

// miniredisAddr starts a miniredis for t and returns its address.
func miniredisAddr(t *testing.T) string {
	return miniredis.RunT(t).Addr()
}

// TestHookRoundTrips counts the round trips of the calls that take
// several, or send a pipeline: a hook sees what the connections counted.
func TestHookRoundTrips(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		rec := &recorder{}
		s, _ := newStore(t, b, WithHook(rec), WithGroupCacheTTL(0))
		h := &hooks{}
		hook(s, h)
		check := func(what string, least, most int64, call func() error) {
			t.Helper()
			rec.take()
			trips := h.trips.Load()
			if err := call(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			trips = h.trips.Load() - trips
			calls, _ := rec.take()
			if len(calls) != 1 || calls[0].RoundTrips != int(trips) || trips < least || trips > most {
				t.Errorf("%s: the hook saw %+v; %d round trips, want %d to %d", what, calls, trips, least, most)
			}
		}
		const n = 3*pruneStep + 10
		ids := make([]string, n)
		for i := range ids {
			a, err := s.Post(ctx, "p", "t", "")
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = a.ID
		}
		// The first call of each script may load it: one round trip more.
		if err := s.AddToGroups(ctx, "1", "w"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prune(ctx, epoch.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		check("AddToGroups", 1, 1, func() error { return s.AddToGroups(ctx, "1", "g") })
		ballots := make([]Ballot, 4*batchStep)
		for i := range ballots {
			ballots[i] = Ballot{User: "u" + strconv.Itoa(i%7), ID: ids[i%n], Vote: Upvote}
		}
		// Four scripts in one pipeline: one round trip.
		check("VoteBatch", 1, 1, func() error {
			_, err := s.VoteBatch(ctx, ballots)
			return err
		})
		for _, id := range ids {
			if err := s.AddToGroups(ctx, id, "cold"); err != nil {
				t.Fatal(err)
			}
		}
		s.walk, s.step = 0, 7 // a build of 7 members a step
		check("cold GroupArticles", 3, n, func() error {
			_, err := s.GroupArticles(ctx, "cold", TimeDesc, 1)
			return err
		})
		check("Prune", n/pruneStep+1, n/pruneStep+1, func() error {
			_, err := s.Prune(ctx, epoch.Add(time.Hour))
			return err
		})
	})
}

// Without hooks, the store's hook paths allocate nothing: BenchmarkVote
// measures the whole call.
func TestHookNoAllocs(t *testing.T) {
	s, err := New(&hookPool{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var c redis.Conn = errorConn{errors.New("none")}
	allocs := testing.AllocsPerRun(100, func() {
		if s.hooked(cctx) || s.counted(cctx, c) != c {
			t.Fatal("a store without hooks hooks")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}
