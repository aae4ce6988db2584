package goredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
)

// TestWaitReplicas runs a store with WithWaitReplicas through the
// adapter, on a primary with a replica: with the replica live every
// write is acknowledged; with it asleep (DEBUG SLEEP), a vote returns
// its result with ErrNotReplicated. WAIT on any connection but the
// vote's own would answer 1 at once, as the replica's last
// acknowledgement covers a connection that wrote nothing: the adapter
// sends the script and WAIT in one pipeline, on one connection.
func TestWaitReplicas(t *testing.T) {
	redistest.Require(t)
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary, "--enable-debug-command", "yes")
	client := redis.NewClient(&redis.Options{Addr: primary.Addr})
	defer client.Close()
	ctx := context.Background()
	// A live replica on a loaded machine may take a while: the store
	// that must see it acknowledge waits long.
	patient, err := voting.New(NewPool(client), voting.WithKeyPrefix("wait"), voting.WithWaitReplicas(1, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s, err := voting.New(NewPool(client), voting.WithKeyPrefix("wait"), voting.WithWaitReplicas(1, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	a, err := patient.Post(ctx, "alice", "title", "")
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if _, err := patient.VoteBatch(ctx, []voting.Ballot{{User: "carol", ID: a.ID, Vote: voting.Upvote}}); err != nil {
		t.Fatalf("VoteBatch: %v", err)
	}

	slept := make(chan error, 1)
	go func() { _, err := replica.Do("DEBUG", "SLEEP", 2); slept <- err }()
	defer func() {
		if err := <-slept; err != nil {
			t.Error(err)
		}
	}()
	if err := replica.WaitAsleep(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	r, err := s.Vote(ctx, "bob", a.ID, voting.Upvote)
	if !errors.Is(err, voting.ErrNotReplicated) || r.Upvotes != 3 {
		t.Errorf("Vote with the replica asleep: %+v, %v; want its result and ErrNotReplicated", r, err)
	}
}
