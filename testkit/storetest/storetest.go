// Package storetest is a behavioural suite of the store that runs over
// any [voting.Pool], through the public API only: the root module runs it
// over its redigo pools, and the goredis module over its adapter, so
// that an adapter is held to what the store promises on redigo. Each
// function runs its checks as subtests of t on one Backend. It is part
// of the module's test kit (testkit/): a pool of a service's own, or a
// new adapter, can be held to the store's promises the same way.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/votekit/voting"
	"github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/testkit/testclock"
)

// Backend is a Redis to run the suite on, and the pools under test.
type Backend struct {
	Name string
	// Pool returns the pool under test for a store whose keys are all in
	// key's hash slot: on a cluster, a cluster-aware pool, or a pool to
	// key's node.
	Pool func(t testing.TB, key string) voting.Pool
	// Do runs one command on a side connection, not through the pool
	// under test: on a cluster, on the node that owns key's slot.
	Do func(t testing.TB, key, cmd string, args ...interface{}) (interface{}, error)
	// Trips, if set, returns the round trips the pools under test have
	// made so far, counted at the client: a command, or a pipeline.
	Trips func() int64
	// Real is set for redis-server, alone or in a cluster, where CLIENT
	// PAUSE blocks the server; miniredis has none.
	Real bool
	// Conns, if set, returns how many connections the pool under test for
	// key's slot holds, and how many of those are idle.
	Conns func(key string) (open, idle int)
}

// epoch is the stores' clock at the start, far from the servers' own time.
var epoch = time.Date(2031, 3, 14, 9, 0, 0, 0, time.UTC)

var seq atomic.Int64

// store is a store of the suite's, and what the suite needs of it.
type store struct {
	*voting.Store
	clock *testclock.Clock
	key   string // a key in the store's slot
	b     Backend
	// comment is the id of the comment the method Comment made last
	// ("1" before), which the other comment methods call on.
	comment string
}

// newStore returns a store on b under a prefix of its own, on a test
// clock at epoch.
func newStore(t testing.TB, b Backend, opts ...voting.Option) *store {
	t.Helper()
	prefix := fmt.Sprintf("storetest%d", seq.Add(1))
	key := layout.Tag(prefix) + layout.Seq // the id counter
	clock := testclock.New(epoch)
	opts = append([]voting.Option{voting.WithKeyPrefix(prefix), voting.WithClock(clock.Now)}, opts...)
	s, err := voting.New(b.Pool(t, key), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &store{Store: s, clock: clock, key: key, b: b}
}

func (s *store) post(t testing.TB, poster, title string) voting.Article {
	t.Helper()
	a, err := s.Post(context.Background(), poster, title, "https://example.com/"+url.PathEscape(title))
	if err != nil {
		t.Fatalf("post %q: %v", title, err)
	}
	return a
}

func (s *store) vote(t testing.TB, user, id string, v voting.VoteType) voting.VoteResult {
	t.Helper()
	r, err := s.Vote(context.Background(), user, id, v)
	if err != nil {
		t.Fatalf("vote %s %v on %s: %v", user, v, id, err)
	}
	return r
}

func ids(list []voting.Article) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}

func check[T any](t testing.TB, what string, got T, err error, want T) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

// Behaviour runs the store's operations through b's pools and checks
// their results: posts, votes and their transitions and errors, pages in
// each order, batches, groups and their pages, TopSince, unique links,
// Delete, Prune and Drop.
func Behaviour(t *testing.T, b Backend) {
	ctx := context.Background()
	t.Run("PostAndVote", func(t *testing.T) {
		s := newStore(t, b)
		a := s.post(t, "alice", "first")
		got, err := s.Article(ctx, a.ID)
		check(t, "Article", got, err, voting.Article{ID: a.ID, Title: "first", Link: "https://example.com/first",
			Poster: "alice", Posted: epoch, Score: float64(epoch.Unix()) + voting.DefaultVoteWeight, Upvotes: 1})
		w := voting.DefaultVoteWeight
		base := float64(epoch.Unix())
		r := s.vote(t, "bob", a.ID, voting.Upvote)
		check(t, "bob's upvote", r, nil, voting.VoteResult{Previous: voting.NoVote, Score: base + 2*w, Points: 2, Upvotes: 2})
		r = s.vote(t, "bob", a.ID, voting.Downvote)
		check(t, "bob's downvote", r, nil, voting.VoteResult{Previous: voting.Upvote, Score: base, Upvotes: 1, Downvotes: 1})
		v, err := s.VoteOf(ctx, "bob", a.ID)
		check(t, "VoteOf", v, err, voting.Downvote)
		r = s.vote(t, "bob", a.ID, voting.CancelVote)
		check(t, "bob's cancel", r, nil, voting.VoteResult{Previous: voting.Downvote, Score: base + w, Points: 1, Upvotes: 1})
		list, err := s.VotesOf(ctx, "alice", []string{a.ID, "999", "x"})
		check(t, "VotesOf", list, err, []voting.VoteType{voting.Upvote, voting.NoVote, voting.NoVote})

		_, err = s.Vote(ctx, "bob", a.ID, 5)
		wantErr(t, "Vote of type 5", err, voting.ErrInvalidVote)
		_, err = s.Vote(ctx, "bob", "999", voting.Upvote)
		wantErr(t, "Vote on a missing article", err, voting.ErrNotFound)
		_, err = s.Article(ctx, "999")
		wantErr(t, "Article missing", err, voting.ErrNotFound)
		s.clock.Add(voting.DefaultVoteWindow)
		_, err = s.Vote(ctx, "carol", a.ID, voting.Upvote)
		wantErr(t, "Vote after the window", err, voting.ErrVotingClosed)
	})

	t.Run("Pages", func(t *testing.T) {
		s := newStore(t, b, voting.WithPageSize(2), voting.WithOrders(voting.Top, voting.Hot))
		var all []string
		for i := 0; i < 5; i++ {
			all = append(all, s.post(t, "alice", "p"+strconv.Itoa(i)).ID)
			s.clock.Add(time.Minute)
		}
		s.vote(t, "bob", all[1], voting.Upvote)
		s.vote(t, "carol", all[1], voting.Upvote)
		s.vote(t, "bob", all[3], voting.Downvote)
		n, err := s.Count(ctx)
		check(t, "Count", n, err, int64(5))
		byScore := []string{all[1], all[4], all[2], all[0], all[3]}
		for page := 1; page <= 3; page++ {
			list, err := s.Articles(ctx, voting.ScoreDesc, page)
			check(t, fmt.Sprintf("score page %d", page), ids(list), err, byScore[2*(page-1):min(2*page, 5)])
		}
		list, err := s.Articles(ctx, voting.TimeDesc, 1)
		check(t, "time page 1", ids(list), err, []string{all[4], all[3]})
		list, votes, err := s.ArticlesFor(ctx, "bob", voting.TimeDesc, 1)
		check(t, "bob's view of time page 1", fmt.Sprint(ids(list), votes), err, fmt.Sprint([]string{all[4], all[3]}, []voting.VoteType{voting.NoVote, voting.Downvote}))
		list, err = s.Articles(ctx, voting.Top, 1)
		check(t, "top page 1", ids(list), err, []string{all[1], all[4]})
		list, err = s.TopSince(ctx, 3*time.Minute, 1)
		check(t, "TopSince 3m", ids(list), err, []string{all[4], all[2]})
		_, err = s.Articles(ctx, voting.Best, 1)
		wantErr(t, "Articles of a disabled order", err, voting.ErrInvalidArgument)
		list, err = s.ArticlesByID(ctx, []string{all[2], "999", all[0]})
		check(t, "ArticlesByID", ids(list), err, []string{all[2], all[0]})
		if len(list) == 2 && (list[0].Title != "p2" || list[1].Upvotes != 1) {
			t.Errorf("ArticlesByID rows: %+v", list)
		}
	})

	t.Run("VoteBatch", func(t *testing.T) {
		s := newStore(t, b)
		a := s.post(t, "alice", "batch")
		var ballots []voting.Ballot
		for i := 0; i < 60; i++ { // more than one script of ballots
			ballots = append(ballots, voting.Ballot{User: "u" + strconv.Itoa(i), ID: a.ID, Vote: voting.Upvote})
		}
		ballots = append(ballots, voting.Ballot{User: "u0", ID: a.ID, Vote: voting.Downvote},
			voting.Ballot{User: "x", ID: "999", Vote: voting.Upvote}, voting.Ballot{User: "x", ID: a.ID, Vote: 7})
		results, err := s.VoteBatch(ctx, ballots)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != len(ballots) {
			t.Fatalf("%d results for %d ballots", len(results), len(ballots))
		}
		for i := 0; i < 60; i++ {
			if r := results[i]; r.Err != nil || r.Upvotes != int64(i+2) || r.Previous != voting.NoVote {
				t.Fatalf("ballot %d: %+v", i, r)
			}
		}
		if r := results[60]; r.Err != nil || r.Previous != voting.Upvote || r.Upvotes != 60 || r.Downvotes != 1 {
			t.Errorf("u0's second ballot: %+v", r)
		}
		wantErr(t, "ballot on a missing article", results[61].Err, voting.ErrNotFound)
		wantErr(t, "ballot of type 7", results[62].Err, voting.ErrInvalidVote)
		got, err := s.Article(ctx, a.ID)
		check(t, "votes after the batch", [2]int64{got.Upvotes, got.Downvotes}, err, [2]int64{60, 1})
	})

	t.Run("Groups", func(t *testing.T) {
		s := newStore(t, b)
		a := s.post(t, "alice", "a")
		s.clock.Add(time.Second)
		c := s.post(t, "alice", "c")
		if err := s.AddToGroups(ctx, a.ID, "redis", "go"); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToGroups(ctx, c.ID, "go"); err != nil {
			t.Fatal(err)
		}
		groups, err := s.Groups(ctx, a.ID)
		check(t, "Groups", groups, err, []string{"go", "redis"})
		n, err := s.GroupCount(ctx, "go")
		check(t, "GroupCount", n, err, int64(2))
		list, err := s.GroupArticles(ctx, "go", voting.ScoreDesc, 1)
		check(t, "go by score", ids(list), err, []string{c.ID, a.ID})
		s.vote(t, "bob", a.ID, voting.Upvote) // the cached page follows
		list, err = s.GroupArticles(ctx, "go", voting.ScoreDesc, 1)
		check(t, "go by score after a vote", ids(list), err, []string{a.ID, c.ID})
		if err := s.RemoveFromGroups(ctx, a.ID, "go"); err != nil {
			t.Fatal(err)
		}
		list, err = s.GroupArticles(ctx, "go", voting.ScoreDesc, 1)
		check(t, "go after a removal", ids(list), err, []string{c.ID})
		wantErr(t, "AddToGroups of a missing article", s.AddToGroups(ctx, "999", "go"), voting.ErrNotFound)
	})

	t.Run("Lifecycle", func(t *testing.T) {
		s := newStore(t, b, voting.WithUniqueLinks())
		old := s.post(t, "alice", "old")
		s.clock.Add(time.Hour)
		kept := s.post(t, "alice", "kept")
		_, err := s.Post(ctx, "bob", "again", "https://example.com/kept")
		wantErr(t, "Post of a link again", err, voting.ErrDuplicate)
		gone := s.post(t, "alice", "gone")
		if err := s.Delete(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "Delete again", s.Delete(ctx, gone.ID), voting.ErrNotFound)
		n, err := s.Prune(ctx, epoch.Add(time.Minute))
		check(t, "Prune", n, err, 1)
		_, err = s.Article(ctx, old.ID)
		wantErr(t, "Article pruned", err, voting.ErrNotFound)
		list, err := s.Articles(ctx, voting.ScoreDesc, 1)
		check(t, "page after Prune", ids(list), err, []string{kept.ID})
		if err := s.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		count, err := s.Count(ctx)
		check(t, "Count after Drop", count, err, int64(0))
	})
}

// methods calls every method of the store that talks to Redis, each once,
// on the article id; each is one round trip on a small store with warm
// scripts, but Drop, one per SCAN step, which it leaves out.
var methods = []struct {
	name string
	call func(ctx context.Context, s *store, id string) error
}{
	{"Post", func(ctx context.Context, s *store, id string) error {
		_, err := s.Post(ctx, "alice", "title "+id, "https://example.com/"+id)
		return err
	}},
	{"Article", func(ctx context.Context, s *store, id string) error { _, err := s.Article(ctx, id); return err }},
	{"ArticlesByID", func(ctx context.Context, s *store, id string) error {
		_, err := s.ArticlesByID(ctx, []string{id, "x"})
		return err
	}},
	{"Articles", func(ctx context.Context, s *store, id string) error {
		_, err := s.Articles(ctx, voting.ScoreDesc, 1)
		return err
	}},
	{"ArticlesFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.ArticlesFor(ctx, "bob", voting.ScoreDesc, 1)
		return err
	}},
	{"TopSince", func(ctx context.Context, s *store, id string) error {
		_, err := s.TopSince(ctx, time.Hour, 1)
		return err
	}},
	{"TopSinceFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.TopSinceFor(ctx, "bob", time.Hour, 1)
		return err
	}},
	{"Count", func(ctx context.Context, s *store, id string) error { _, err := s.Count(ctx); return err }},
	{"Vote", func(ctx context.Context, s *store, id string) error {
		_, err := s.Vote(ctx, "bob", id, voting.Upvote)
		return err
	}},
	{"VoteBatch", func(ctx context.Context, s *store, id string) error {
		_, err := s.VoteBatch(ctx, []voting.Ballot{{User: "carol", ID: id, Vote: voting.Downvote}, {User: "dave", ID: id, Vote: voting.Upvote}})
		return err
	}},
	{"VoteOf", func(ctx context.Context, s *store, id string) error { _, err := s.VoteOf(ctx, "bob", id); return err }},
	{"VotesOf", func(ctx context.Context, s *store, id string) error {
		_, err := s.VotesOf(ctx, "bob", []string{id, "1"})
		return err
	}},
	{"AddToGroups", func(ctx context.Context, s *store, id string) error { return s.AddToGroups(ctx, id, "go", "redis") }},
	{"Groups", func(ctx context.Context, s *store, id string) error { _, err := s.Groups(ctx, id); return err }},
	{"GroupArticles", func(ctx context.Context, s *store, id string) error {
		_, err := s.GroupArticles(ctx, "go", voting.Top, 1)
		return err
	}},
	{"GroupArticlesFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.GroupArticlesFor(ctx, "bob", "go", voting.Top, 1)
		return err
	}},
	{"GroupCount", func(ctx context.Context, s *store, id string) error { _, err := s.GroupCount(ctx, "go"); return err }},
	{"RemoveFromGroups", func(ctx context.Context, s *store, id string) error { return s.RemoveFromGroups(ctx, id, "redis") }},
	{"Submitted", func(ctx context.Context, s *store, id string) error {
		_, err := s.Submitted(ctx, "alice", 1)
		return err
	}},
	{"Upvoted", func(ctx context.Context, s *store, id string) error {
		_, err := s.Upvoted(ctx, "bob", 1)
		return err
	}},
	{"SubmittedFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.SubmittedFor(ctx, "bob", "alice", 1)
		return err
	}},
	{"UpvotedFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.UpvotedFor(ctx, "alice", "bob", 1)
		return err
	}},
	{"Karma", func(ctx context.Context, s *store, id string) error { _, err := s.Karma(ctx, "alice"); return err }},
	{"TopUsers", func(ctx context.Context, s *store, id string) error { _, err := s.TopUsers(ctx, 1); return err }},
	{"Rules", func(ctx context.Context, s *store, id string) error { _, err := s.Rules(ctx); return err }},
	{"SetRules", func(ctx context.Context, s *store, id string) error {
		_, err := s.SetRules(ctx, voting.WithKarma(1, -1))
		return err
	}},
	{"Edit", func(ctx context.Context, s *store, id string) error {
		_, err := s.Edit(ctx, id, "alice", "edited "+id, "https://example.com/edited/"+id)
		return err
	}},
	{"Comment", func(ctx context.Context, s *store, id string) error {
		c, err := s.Comment(ctx, id, "", "bob", "a comment on "+id)
		if err == nil {
			s.comment = c.ID
		}
		return err
	}},
	{"VoteComment", func(ctx context.Context, s *store, id string) error {
		_, err := s.VoteComment(ctx, "carol", s.commentID(), voting.Upvote)
		return err
	}},
	{"Thread", func(ctx context.Context, s *store, id string) error {
		_, err := s.Thread(ctx, id, voting.Best, 10)
		return err
	}},
	{"Replies", func(ctx context.Context, s *store, id string) error {
		_, err := s.Replies(ctx, s.commentID(), voting.TimeDesc, 10)
		return err
	}},
	{"ThreadFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.ThreadFor(ctx, "bob", id, voting.Best, 10)
		return err
	}},
	{"RepliesFor", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.RepliesFor(ctx, "bob", s.commentID(), voting.TimeDesc, 10)
		return err
	}},
	{"CommentsByID", func(ctx context.Context, s *store, id string) error {
		_, err := s.CommentsByID(ctx, []string{s.commentID(), "x"})
		return err
	}},
	{"CommentVotesOf", func(ctx context.Context, s *store, id string) error {
		_, err := s.CommentVotesOf(ctx, "carol", []string{s.commentID(), "x"})
		return err
	}},
	{"EditComment", func(ctx context.Context, s *store, id string) error {
		_, err := s.EditComment(ctx, s.commentID(), "bob", "edited")
		return err
	}},
	{"UserComments", func(ctx context.Context, s *store, id string) error {
		_, err := s.UserComments(ctx, "bob", 1)
		return err
	}},
	{"CommentVoters", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.CommentVoters(ctx, s.commentID(), "", 10)
		return err
	}},
	{"VotesBy", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.VotesBy(ctx, "bob", "", 10)
		return err
	}},
	{"Voters", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.Voters(ctx, id, "", 10)
		return err
	}},
	{"ReverseVotes", func(ctx context.Context, s *store, id string) error {
		_, err := s.ReverseVotes(ctx, "dave")
		return err
	}},
	{"Suspend", func(ctx context.Context, s *store, id string) error {
		return s.Suspend(ctx, "eve", voting.Refuse, s.clock.Now().Add(time.Hour))
	}},
	{"Suspended", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.Suspended(ctx, "eve")
		return err
	}},
	{"Unsuspend", func(ctx context.Context, s *store, id string) error { return s.Unsuspend(ctx, "eve") }},
	{"VoteEvents", func(ctx context.Context, s *store, id string) error {
		_, _, err := s.VoteEvents(ctx, "", 10)
		return err
	}},
	{"DeleteComment", func(ctx context.Context, s *store, id string) error { return s.DeleteComment(ctx, s.commentID()) }},
	{"Reconfigure", func(ctx context.Context, s *store, id string) error { _, err := s.Reconfigure(ctx); return err }},
	{"Delete", func(ctx context.Context, s *store, id string) error { return s.Delete(ctx, id) }},
	{"Prune", func(ctx context.Context, s *store, id string) error {
		_, err := s.Prune(ctx, epoch.Add(-time.Hour))
		return err
	}},
}

// commentID is the comment the comment methods call on.
func (s *store) commentID() string {
	if s.comment == "" {
		return "1"
	}
	return s.comment
}

// MethodNames returns the names of the methods the suite calls, every
// method of Store but Drop, Check (several commands), Recorded (a GET,
// no script), CheckIdentity (a GET and a TYPE) and Identity (none), for
// a test that keeps the list complete.
func MethodNames() []string {
	var names []string
	for _, m := range methods {
		names = append(names, m.name)
	}
	return names
}

// eachMethod calls f for each method with an article of s, a new one
// after Delete.
func eachMethod(t *testing.T, s *store, f func(name string, call func(ctx context.Context) error)) {
	a := s.post(t, "alice", "first")
	for _, m := range methods {
		id := a.ID
		f(m.name, func(ctx context.Context) error { return m.call(ctx, s, id) })
		if m.name == "Delete" {
			a = s.post(t, "alice", "second")
		}
	}
}

// RoundTrips checks that every method costs one round trip through b's
// pools once its script is loaded, VoteBatch's pipeline of scripts
// included, Post and Comment one more for their PING, and that a call
// with a done context costs none. It needs b.Trips.
func RoundTrips(t *testing.T, b Backend) {
	if b.Trips == nil {
		t.Skip("the backend counts no round trips")
	}
	s := newStore(t, b, voting.WithOrders(voting.Top), voting.WithUserPages(),
		voting.WithKarma(1, -1), voting.WithEditWindow(time.Hour), voting.WithVoteLog(), voting.WithVoteEvents(100))
	warm := func() { // every script loaded, as after a first call of each
		eachMethod(t, s, func(name string, call func(context.Context) error) {
			if err := call(context.Background()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		})
	}
	warm()
	eachMethod(t, s, func(name string, call func(context.Context) error) {
		before := b.Trips()
		if err := call(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := int64(1)
		if name == "Post" || name == "Comment" {
			want = 2 // a PING first (docs/OPERATIONS.md, "Failures")
		}
		if n := b.Trips() - before; n != want {
			t.Errorf("%s: %d round trips, want %d", name, n, want)
		}
	})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	eachMethod(t, s, func(name string, call func(context.Context) error) {
		before := b.Trips()
		err := call(done)
		wantErr(t, name+" with a canceled context", err, context.Canceled)
		if n := b.Trips() - before; n != 0 {
			t.Errorf("%s with a canceled context: %d round trips, want 0", name, n)
		}
	})
}

// ScriptFlush empties the script cache and the function library of the
// store's node (SCRIPT FLUSH, and FUNCTION FLUSH where the server has
// Functions) before every method, and many times while calls run: every
// call succeeds, as the store loads its library again, or falls back from
// NOSCRIPT to EVAL and the server learns the script again.
func ScriptFlush(t *testing.T, b Backend) {
	s := newStore(t, b, voting.WithOrders(voting.Top), voting.WithUserPages(),
		voting.WithKarma(1, -1), voting.WithEditWindow(time.Hour), voting.WithVoteLog(), voting.WithVoteEvents(100))
	flush := func() {
		if _, err := b.Do(t, s.key, "SCRIPT", "FLUSH"); err != nil {
			t.Error(err)
		}
		if b.Real {
			if _, err := b.Do(t, s.key, "FUNCTION", "FLUSH"); err != nil {
				t.Error(err)
			}
		}
	}
	eachMethod(t, s, func(name string, call func(context.Context) error) {
		flush()
		if err := call(context.Background()); err != nil {
			t.Errorf("%s after SCRIPT FLUSH: %v", name, err)
		}
	})

	a := s.post(t, "alice", "load")
	var wg sync.WaitGroup
	var votes atomic.Int64
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				user := fmt.Sprintf("w%d-%d", w, i)
				var err error
				if i%2 == 0 {
					_, err = s.Vote(context.Background(), user, a.ID, voting.Upvote)
				} else {
					_, err = s.VoteBatch(context.Background(), []voting.Ballot{{User: user, ID: a.ID, Vote: voting.Upvote}})
				}
				if err != nil {
					errs <- err
					return
				}
				votes.Add(1)
			}
		}(w)
	}
	for i := 0; i < 30; i++ {
		flush()
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("call during SCRIPT FLUSH: %v", err)
	}
	got, err := s.Article(context.Background(), a.ID)
	check(t, "upvotes after the load", got.Upvotes, err, 1+votes.Load())
}

// ContextDeadline pauses the store's node (CLIENT PAUSE from a side
// connection) while every method runs with a shorter deadline: each
// returns an error wrapping context.DeadlineExceeded promptly, no pool
// connection is left in use (with b.Conns), and the store works on once
// the pause ends, on no more connections than before. It needs b.Real.
func ContextDeadline(t *testing.T, b Backend) {
	if !b.Real {
		t.Skip("CLIENT PAUSE needs redis-server")
	}
	s := newStore(t, b, voting.WithOrders(voting.Top), voting.WithUserPages(),
		voting.WithKarma(1, -1), voting.WithEditWindow(time.Hour), voting.WithVoteLog(), voting.WithVoteEvents(100))
	a := s.post(t, "alice", "t")
	conns := func() (open, idle int) {
		if b.Conns == nil {
			return 0, 0
		}
		return b.Conns(s.key)
	}
	baseline, _ := conns()
	const deadline, pause = 100 * time.Millisecond, 600 * time.Millisecond
	if _, err := b.Do(t, s.key, "CLIENT", "PAUSE", pause.Milliseconds(), "ALL"); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for _, m := range methods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			err := m.call(ctx, s, a.ID)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			slowest = max(slowest, took)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s past its deadline = %v, want context.DeadlineExceeded", m.name, err)
			}
		}()
	}
	wg.Wait()
	if slowest > deadline+200*time.Millisecond {
		t.Errorf("slowest call returned after %v, deadline %v", slowest, deadline)
	}
	if open, idle := conns(); open != idle {
		t.Errorf("%d pool connections still in use after the deadlines", open-idle)
	}
	time.Sleep(time.Until(paused.Add(pause + 50*time.Millisecond)))
	// The store works on afterwards. The calls cut short may or may not
	// have run once the pause ended (Delete among them), so the vote is
	// on a new article.
	if _, err := s.Count(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Vote(context.Background(), "erin", s.post(t, "alice", "after").ID, voting.Upvote); err != nil {
		t.Fatal(err)
	}
	if open, _ := conns(); open > baseline {
		t.Errorf("pool holds %d connections, %d before the deadlines", open, baseline)
	}
}

// Reconnect closes the connections of the store's server before each
// method, with drop (a restart, CLIENT KILL): every call succeeds, the
// calls that can run twice sent again on another connection, Post and
// Comment on one that has just answered a PING, and Post posts once;
// so do Recorded, Check (Redis reachable) and Drop.
func Reconnect(t *testing.T, b Backend, drop func(t testing.TB)) {
	s := newStore(t, b, voting.WithOrders(voting.Top), voting.WithUserPages(),
		voting.WithKarma(1, -1), voting.WithEditWindow(time.Hour), voting.WithVoteLog(), voting.WithVoteEvents(100))
	ctx := context.Background()
	eachMethod(t, s, func(name string, call func(context.Context) error) {
		count, err := s.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		drop(t)
		if err := call(ctx); err != nil {
			t.Errorf("%s after the connections closed: %v", name, err)
		}
		if name == "Post" {
			n, err := s.Count(ctx)
			check(t, "Count after Post", n, err, count+1)
		}
	})
	drop(t)
	if _, _, err := s.Recorded(ctx); err != nil {
		t.Errorf("Recorded after the connections closed: %v", err)
	}
	drop(t)
	if h, err := s.Check(ctx); err != nil || !h.Reachable {
		t.Errorf("Check after the connections closed = %+v, %v", h, err)
	}
	drop(t)
	if err := s.Drop(ctx); err != nil {
		t.Errorf("Drop after the connections closed: %v", err)
	}
}
