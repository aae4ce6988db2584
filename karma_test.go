package voting

import (
	"errors"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// unchanged fails t when the store's keys differ from before.
func unchanged(t *testing.T, b *backend, s *Store, before map[string]string) {
	t.Helper()
	after := snapshot(t, b, s)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("key %s: %s, was %s", k, after[k], v)
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("key %s appeared: %s", k, v)
		}
	}
}

func karmaOf(t *testing.T, s *Store, user string) int64 {
	t.Helper()
	k, err := s.Karma(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKarma(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithKarma(3, -2), WithVoteCost(1, 4))
		a, err := s.Post(ctx, "alice", "A", "")
		if err != nil {
			t.Fatal(err)
		}
		want := func(user string, k int64) {
			t.Helper()
			if got := karmaOf(t, s, user); got != k {
				t.Errorf("karma of %s: %d, want %d", user, got, k)
			}
		}
		want("alice", 0) // the poster's own upvote moves nothing
		want("nobody", 0)
		steps := []struct {
			v          VoteType
			alice, bob int64
		}{
			{Upvote, 3, -1},
			{Upvote, 3, -1}, // no change
			{Downvote, -2, -4},
			{NoVote, 0, 0},
			{Downvote, -2, -4},
			{Upvote, 3, -1},
		}
		for _, st := range steps {
			if _, err := s.Vote(ctx, "bob", a.ID, ballot(st.v)); err != nil {
				t.Fatal(err)
			}
			want("alice", st.alice)
			want("bob", st.bob)
		}
		// The poster's own votes move nothing.
		for _, v := range []VoteType{NoVote, Downvote, Upvote} {
			if _, err := s.Vote(ctx, "alice", a.ID, ballot(v)); err != nil {
				t.Fatal(err)
			}
			want("alice", 3)
		}
		// Karma stays after voting closes, and after a delete.
		clock.Add(DefaultVoteWindow)
		if _, err := s.Vote(ctx, "bob", a.ID, CancelVote); !errors.Is(err, ErrVotingClosed) {
			t.Fatalf("vote after the window: %v", err)
		}
		want("alice", 3)
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		want("alice", 3)
		want("bob", -1)
	})
}

func TestTopUsers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithKarma(1, -1), WithPageSize(2))
		if got, err := s.TopUsers(ctx, 1); err != nil || len(got) != 0 {
			t.Fatalf("empty store: %v, %v", got, err)
		}
		posts := map[string]string{}
		for _, p := range []string{"carol", "alice", "bob", "dave"} {
			a, err := s.Post(ctx, p, "by "+p, "")
			if err != nil {
				t.Fatal(err)
			}
			posts[p] = a.ID
		}
		votes := []Ballot{
			{"x", posts["bob"], Upvote}, {"y", posts["bob"], Upvote},
			{"x", posts["alice"], Upvote}, {"x", posts["carol"], Upvote},
			{"x", posts["dave"], Downvote},
		}
		for _, v := range votes {
			if _, err := s.Vote(ctx, v.User, v.ID, ballot(v.Vote)); err != nil {
				t.Fatal(err)
			}
		}
		var got []UserKarma
		for page := 1; ; page++ {
			list, err := s.TopUsers(ctx, page)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 0 {
				break
			}
			got = append(got, list...)
		}
		want := []UserKarma{{"bob", 2}, {"alice", 1}, {"carol", 1}, {"dave", -1}}
		if !slices.Equal(got, want) {
			t.Errorf("TopUsers: %v, want %v", got, want)
		}
		if _, err := s.TopUsers(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("page 0: %v", err)
		}
	})
}

func TestKarmaOptions(t *testing.T) {
	pool := &redis.Pool{}
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"min karma without karma", []Option{WithMinKarma(1, 1)}},
		{"cost without karma", []Option{WithVoteCost(1, 1)}},
		{"karma too large", []Option{WithKarma(MaxKarmaPoints+1, 0)}},
		{"karma too small", []Option{WithKarma(0, -MaxKarmaPoints-1)}},
		{"cost too large", []Option{WithKarma(1, -1), WithVoteCost(0, MaxKarmaPoints+1)}},
		{"least karma too large", []Option{WithKarma(1, -1), WithMinKarma(MaxKarma+1, 0)}},
		{"no votes", []Option{WithVoteLimit(0, time.Hour)}},
		{"too many votes", []Option{WithVoteLimit(MaxVoteLimit+1, time.Hour)}},
		{"short vote span", []Option{WithVoteLimit(1, time.Millisecond-1)}},
		{"zero post interval", []Option{WithPostInterval(0)}},
		{"short repost", []Option{WithRepostAfter(time.Second - 1)}},
		{"short edit window", []Option{WithEditWindow(time.Second - 1)}},
	} {
		if _, err := New(pool, tc.opts...); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	if _, err := New(pool, WithKarma(MaxKarmaPoints, -MaxKarmaPoints), WithVoteCost(1, 6), WithMinKarma(-MaxKarma, MaxKarma),
		WithVoteLimit(MaxVoteLimit, time.Millisecond), WithPostInterval(time.Millisecond),
		WithRepostAfter(time.Second), WithEditWindow(time.Second)); err != nil {
		t.Errorf("options at their limits: %v", err)
	}
}

// TestKarmaInvariant votes, switches and cancels from many goroutines at
// once, then checks every user's karma against the standing votes: the
// votes on their articles minus the cost of their own, own articles
// aside.
func TestKarmaInvariant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		const perUp, perDown, costUp, costDown = 3, -2, 1, 5
		s, clock := newStore(t, b, WithKarma(perUp, perDown), WithVoteCost(costUp, costDown))
		users := []string{"u0", "u1", "u2", "u3", "u4", "u5"}
		var ids []string
		poster := map[string]string{}
		for i := 0; i < 6; i++ {
			a, err := s.Post(ctx, users[i%4], "t", "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
			poster[a.ID] = a.Poster
		}
		raceOps(t, 12, 60, func(g int, rng *rand.Rand) error {
			u := users[rng.Intn(len(users))]
			id := ids[rng.Intn(len(ids))]
			v := VoteType(rng.Intn(3) - 1)
			if g%3 == 0 {
				_, err := s.VoteBatch(ctx, []Ballot{{u, id, ballot(v)}, {u, id, ballot(VoteType(rng.Intn(3) - 1))}})
				return err
			}
			_, err := s.Vote(ctx, u, id, ballot(v))
			return err
		})
		check := func() {
			t.Helper()
			want := map[string]int64{}
			for _, id := range ids {
				for _, u := range users {
					v, err := s.VoteOf(ctx, u, id)
					if err != nil {
						t.Fatal(err)
					}
					if u == poster[id] {
						continue
					}
					want[poster[id]] += worthOf(v, perUp, perDown)
					want[u] -= worthOf(v, costUp, costDown)
				}
			}
			for _, u := range users {
				if got := karmaOf(t, s, u); got != want[u] {
					t.Errorf("karma of %s: %d, want %d", u, got, want[u])
				}
			}
		}
		check()
		checkInvariant(t, s, DefaultVoteWeight, ids, users)
		// Once voting closes, karma stays: the voter records are still
		// there (the server's clock), so the model still reads them.
		clock.Add(DefaultVoteWindow)
		for _, id := range ids {
			if _, err := s.Vote(ctx, "u5", id, Upvote); !errors.Is(err, ErrVotingClosed) {
				t.Fatal(err)
			}
		}
		check()
	})
}

// raceOps runs op n times from each of goroutines goroutines at once,
// each with a random source of its own, seeded by its number g, and
// fails t on the first error of each.
func raceOps(t *testing.T, goroutines, n int, op func(g int, rng *rand.Rand) error) {
	t.Helper()
	eachWorker(goroutines, func(g int, rng *rand.Rand) {
		for i := 0; i < n; i++ {
			if err := op(g, rng); err != nil {
				t.Error(err)
				return
			}
		}
	})
}

// eachWorker runs f in n goroutines at once, f(w, rng) in the w-th,
// rng a random source of its own seeded by w, and waits for them all.
func eachWorker(n int, f func(w int, rng *rand.Rand)) {
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			f(w, rand.New(rand.NewSource(int64(w))))
		}(w)
	}
	wg.Wait()
}

func worthOf(v VoteType, up, down int64) int64 {
	switch v {
	case Upvote:
		return up
	case Downvote:
		return down
	}
	return 0
}
