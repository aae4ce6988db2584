package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/votekit/voting"
	"github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/testkit/redistest"
)

// Reshard moves the hash slots of two stores to other masters of c, as
// redis-cli --cluster reshard does, while workers post, vote (VoteBatch
// too) and change groups through pool, the cluster-aware pool under test,
// and checks afterwards:
//   - every move completed, and left no key of the slot on its source;
//   - every error a call returned wraps voting.ErrTryAgain, or is a
//     network error (after which the call's outcome is unknown);
//   - no acknowledged write is lost: each user's vote, each article's
//     groups and each acknowledged post are what the workers last saw
//     acknowledged;
//   - the invariants hold: counts against voters, scores, group pages
//     against groups, karma against the votes, upvoted pages against the
//     upvotes.
//
// One store is plain, with groups; the other keeps karma and user pages.
func Reshard(t *testing.T, c *redistest.Cluster, pool func(t testing.TB) voting.Pool) {
	stores := []*reshardStore{
		newReshardStore(t, c, pool, "plain"),
		newReshardStore(t, c, pool, "karma", voting.WithKarma(1, -1), voting.WithUserPages()),
	}
	const workers = 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, rs := range stores {
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(rs *reshardStore, w int) {
				defer wg.Done()
				rs.work(ctx, w)
			}(rs, w)
		}
	}
	// Let the load run, move each store's slot while it runs, then let it
	// run on the new owner.
	time.Sleep(300 * time.Millisecond)
	for _, rs := range stores {
		to := c.Nodes[0]
		for _, n := range c.Nodes {
			if n != rs.owner {
				to = n
				break
			}
		}
		moved, err := c.MoveSlot(rs.slot, to, 2, 5*time.Millisecond)
		if err != nil {
			cancel()
			wg.Wait()
			t.Fatalf("%s: move of slot %d: %v", rs.name, rs.slot, err)
		}
		if n, err := redisInt(rs.owner.Do("CLUSTER", "COUNTKEYSINSLOT", rs.slot)); err != nil || n != 0 {
			t.Errorf("%s: the source still holds %d keys of slot %d (%v)", rs.name, n, rs.slot, err)
		}
		t.Logf("%s: moved %d keys of slot %d from %s to %s", rs.name, moved, rs.slot, rs.owner.Addr, to.Addr)
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	wg.Wait()
	for _, rs := range stores {
		rs.afterMove(t)
		rs.check(t)
	}
}

// afterMove checks that calls succeed on the slot's new owner: a post, a
// vote and a group change, each retried while it gets ErrTryAgain (a
// cluster-aware pool follows the MOVED that the old owner answers), for
// at most two seconds.
func (rs *reshardStore) afterMove(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	retry := func(what string, call func() error) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for {
			err := call()
			if err == nil {
				return
			}
			if !errors.Is(err, voting.ErrTryAgain) || time.Now().After(deadline) {
				t.Fatalf("%s: %s after the move: %v", rs.name, what, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	user := rs.users[0][0]
	var a voting.Article
	retry("post", func() (err error) { a, err = rs.s.Post(ctx, user, "after the move", ""); return err })
	rs.ids = append(rs.ids, a.ID)
	rs.posted[a.ID] = a
	rs.owner2[a.ID] = 0
	rs.votes[user+" "+a.ID] = voting.Upvote
	rs.groups[a.ID] = map[string]bool{reshardGroups[0]: true}
	voter := rs.users[1][0]
	retry("vote", func() error { _, err := rs.s.Vote(ctx, voter, a.ID, voting.Downvote); return err })
	rs.votes[voter+" "+a.ID] = voting.Downvote
	retry("add to groups", func() error { return rs.s.AddToGroups(ctx, a.ID, reshardGroups[0]) })
}

func redisInt(v interface{}, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("reply %T, want an integer", v)
	}
	return n, nil
}

// reshardStore is one store of Reshard and what its workers saw
// acknowledged.
type reshardStore struct {
	name  string
	s     *voting.Store
	slot  int
	owner *redistest.Server
	users [][]string // each worker's own users: one worker's calls per user, in order
	karma bool

	mu       sync.Mutex
	ids      []string                   // the articles acknowledged, posted before the load or by it
	votes    map[string]voting.VoteType // user + " " + id -> the last vote acknowledged
	unknown  map[string]bool            // user + " " + id, or "g " + id: a call's outcome is unknown
	groups   map[string]map[string]bool // id -> its groups as last acknowledged (of the worker that owns id)
	owner2   map[string]int             // id -> the worker that changes its groups
	calls    map[string]int             // op -> calls acknowledged
	tryAgain map[string]int             // op -> ErrTryAgain
	netErrs  map[string]int             // op -> network errors
	bad      []string                   // errors of other kinds
	posted   map[string]voting.Article  // acknowledged posts
}

var reshardGroups = []string{"g0", "g1", "g2"}

func newReshardStore(t *testing.T, c *redistest.Cluster, pool func(t testing.TB) voting.Pool, name string, opts ...voting.Option) *reshardStore {
	t.Helper()
	prefix := fmt.Sprintf("reshard-%s-%d", name, seq.Add(1))
	s, err := voting.New(pool(t), append([]voting.Option{voting.WithKeyPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	slot := redistest.Slot(layout.Tag(prefix) + layout.Seq)
	owner, err := c.NodeOf(slot)
	if err != nil {
		t.Fatal(err)
	}
	rs := &reshardStore{name: name, s: s, slot: slot, owner: owner, karma: len(opts) > 0,
		votes: map[string]voting.VoteType{}, unknown: map[string]bool{}, groups: map[string]map[string]bool{},
		owner2: map[string]int{}, calls: map[string]int{}, tryAgain: map[string]int{}, netErrs: map[string]int{},
		posted: map[string]voting.Article{}}
	for w := 0; w < 4; w++ {
		var us []string
		for u := 0; u < 6; u++ {
			us = append(us, fmt.Sprintf("u%d-%d", w, u))
		}
		rs.users = append(rs.users, us)
	}
	// Articles before the load, so that the slot holds data to move.
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		a, err := s.Post(ctx, rs.users[i%4][0], "before "+strconv.Itoa(i), "")
		if err != nil {
			t.Fatal(err)
		}
		rs.ids = append(rs.ids, a.ID)
		rs.posted[a.ID] = a
		rs.owner2[a.ID] = i % 4
		rs.votes[rs.users[i%4][0]+" "+a.ID] = voting.Upvote
		rs.groups[a.ID] = map[string]bool{}
		if i%2 == 0 {
			if err := s.AddToGroups(ctx, a.ID, reshardGroups[i%3]); err != nil {
				t.Fatal(err)
			}
			rs.groups[a.ID][reshardGroups[i%3]] = true
		}
	}
	return rs
}

// outcome records err of op: true when the call was acknowledged.
func (rs *reshardStore) outcome(op string, err error) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	switch {
	case err == nil:
		rs.calls[op]++
		return true
	case errors.Is(err, voting.ErrTryAgain):
		rs.tryAgain[op]++
		defer time.Sleep(time.Millisecond) // as a caller backs off, out of the lock
	case isNetError(err):
		rs.netErrs[op]++
	default:
		rs.bad = append(rs.bad, op+": "+err.Error())
	}
	return false
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, io.ErrUnexpectedEOF)
}

// work runs worker w's calls until ctx is done.
func (rs *reshardStore) work(ctx context.Context, w int) {
	rng := rand.New(rand.NewSource(int64(w)))
	users := rs.users[w]
	call := context.Background() // calls are not cut short by the end
	posts := 0
	for n := 0; ctx.Err() == nil; n++ {
		user := users[rng.Intn(len(users))]
		rs.mu.Lock()
		id := rs.ids[rng.Intn(len(rs.ids))]
		rs.mu.Unlock()
		v := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}[rng.Intn(3)]
		switch r := rng.Intn(20); {
		case r == 0:
			if posts == 20 || rng.Intn(10) > 0 {
				continue
			}
			posts++
			a, err := rs.s.Post(call, user, fmt.Sprintf("post %d by %d", n, w), "")
			if rs.outcome("post", err) {
				rs.mu.Lock()
				rs.ids = append(rs.ids, a.ID)
				rs.posted[a.ID] = a
				rs.owner2[a.ID] = w
				rs.groups[a.ID] = map[string]bool{}
				rs.votes[user+" "+a.ID] = voting.Upvote
				rs.mu.Unlock()
			}
		case r <= 3:
			rs.mu.Lock()
			mine := rs.owner2[id] == w
			rs.mu.Unlock()
			if !mine {
				continue
			}
			g := reshardGroups[rng.Intn(len(reshardGroups))]
			var err error
			op := "add to groups"
			if rng.Intn(2) == 0 {
				err = rs.s.AddToGroups(call, id, g)
			} else {
				op = "remove from groups"
				err = rs.s.RemoveFromGroups(call, id, g)
			}
			ok := rs.outcome(op, err)
			rs.mu.Lock()
			if ok {
				rs.groups[id][g] = op == "add to groups"
			} else if !errors.Is(err, voting.ErrTryAgain) {
				rs.unknown["g "+id] = true
			}
			rs.mu.Unlock()
		case r == 4:
			ballots := []voting.Ballot{{User: user, ID: id, Vote: v}}
			res, err := rs.s.VoteBatch(call, ballots)
			if err == nil {
				err = res[0].Err
			}
			rs.voted(user, id, v, "vote batch", err)
		default:
			_, err := rs.s.Vote(call, user, id, v)
			rs.voted(user, id, v, "vote", err)
		}
	}
}

func (rs *reshardStore) voted(user, id string, v voting.VoteType, op string, err error) {
	ok := rs.outcome(op, err)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	switch {
	case ok && v == voting.CancelVote:
		rs.votes[user+" "+id] = voting.NoVote // what VoteOf reads
	case ok:
		rs.votes[user+" "+id] = v
	case !errors.Is(err, voting.ErrTryAgain):
		rs.unknown[user+" "+id] = true
	}
}

// check checks what the load left against what it saw acknowledged.
func (rs *reshardStore) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	t.Logf("%s: acknowledged %v; ErrTryAgain %v; network errors %v", rs.name, rs.calls, rs.tryAgain, rs.netErrs)
	for i, e := range rs.bad {
		if i == 10 {
			t.Errorf("%s: ... %d errors in all", rs.name, len(rs.bad))
			break
		}
		t.Errorf("%s: an error neither ErrTryAgain nor the network's: %s", rs.name, e)
	}
	var all []string
	for _, us := range rs.users {
		all = append(all, us...)
	}
	sort.Strings(rs.ids)
	karma := map[string]int64{}
	members := map[string]map[string]bool{}
	for _, id := range rs.ids {
		a, err := rs.s.Article(ctx, id)
		if err != nil {
			t.Fatalf("%s: acknowledged article %s: %v", rs.name, id, err)
		}
		if want := rs.posted[id]; a.Title != want.Title || a.Poster != want.Poster || !a.Posted.Equal(want.Posted) {
			t.Errorf("%s: article %s is %+v, was posted as %+v", rs.name, id, a, want)
		}
		var up, down int64
		for _, u := range all {
			got, err := rs.s.VoteOf(ctx, u, id)
			if err != nil {
				t.Fatalf("%s: vote of %s on %s: %v", rs.name, u, id, err)
			}
			key := u + " " + id
			if want := rs.votes[key]; !rs.unknown[key] && got != want {
				t.Errorf("%s: %s's vote on %s is %v, the last acknowledged %v", rs.name, u, id, got, want)
			}
			switch got {
			case voting.Upvote:
				up++
			case voting.Downvote:
				down++
			}
			if u != a.Poster {
				karma[a.Poster] += map[voting.VoteType]int64{voting.Upvote: 1, voting.Downvote: -1}[got]
			}
		}
		if a.Upvotes != up || a.Downvotes != down {
			t.Errorf("%s: article %s counts %d up %d down, its voters %d and %d", rs.name, id, a.Upvotes, a.Downvotes, up, down)
		}
		if want := float64(a.Posted.Unix()) + 432*float64(up-down); a.Score != want {
			t.Errorf("%s: article %s score %v, want %v", rs.name, id, a.Score, want)
		}
		groups, err := rs.s.Groups(ctx, id)
		if err != nil {
			t.Fatalf("%s: groups of %s: %v", rs.name, id, err)
		}
		got := map[string]bool{}
		for _, g := range groups {
			got[g] = true
			if members[g] == nil {
				members[g] = map[string]bool{}
			}
			members[g][id] = true
		}
		if !rs.unknown["g "+id] {
			for _, g := range reshardGroups {
				if got[g] != rs.groups[id][g] {
					t.Errorf("%s: article %s in group %s: %v, last acknowledged %v", rs.name, id, g, got[g], rs.groups[id][g])
				}
			}
		}
	}
	// Group pages against the groups, in score order.
	for _, g := range reshardGroups {
		var page []voting.Article
		for p := 1; ; p++ {
			list, err := rs.s.GroupArticles(ctx, g, voting.ScoreDesc, p)
			if err != nil {
				t.Fatalf("%s: group %s page %d: %v", rs.name, g, p, err)
			}
			if len(list) == 0 {
				break
			}
			page = append(page, list...)
		}
		if len(page) != len(members[g]) {
			t.Errorf("%s: group %s lists %d articles, has %d", rs.name, g, len(page), len(members[g]))
		}
		for i, a := range page {
			if !members[g][a.ID] {
				t.Errorf("%s: group %s lists %s, not a member", rs.name, g, a.ID)
			}
			if fresh, err := rs.s.Article(ctx, a.ID); err != nil || fresh.Score != a.Score {
				t.Errorf("%s: group %s lists %s at score %v, its score is %v (%v)", rs.name, g, a.ID, a.Score, fresh.Score, err)
			}
			if i > 0 && page[i-1].Score < a.Score {
				t.Errorf("%s: group %s out of score order at %d", rs.name, g, i)
			}
		}
	}
	if !rs.karma {
		return
	}
	for _, u := range all {
		got, err := rs.s.Karma(ctx, u)
		if err != nil {
			t.Fatalf("%s: karma of %s: %v", rs.name, u, err)
		}
		if got != karma[u] {
			t.Errorf("%s: karma of %s is %d, its articles' votes give %d", rs.name, u, got, karma[u])
		}
		upvoted := map[string]bool{}
		for p := 1; ; p++ {
			list, err := rs.s.Upvoted(ctx, u, p)
			if err != nil {
				t.Fatalf("%s: upvoted of %s: %v", rs.name, u, err)
			}
			if len(list) == 0 {
				break
			}
			for _, a := range list {
				upvoted[a.ID] = true
			}
		}
		for _, id := range rs.ids {
			v, err := rs.s.VoteOf(ctx, u, id)
			if err != nil {
				t.Fatal(err)
			}
			if (v == voting.Upvote) != upvoted[id] {
				t.Errorf("%s: %s's vote on %s is %v, on the upvoted page: %v", rs.name, u, id, v, upvoted[id])
			}
		}
	}
}
