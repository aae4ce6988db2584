package goredis_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/votekit/voting"
	"github.com/votekit/voting/goredis"
)

// A store on a go-redis client: the service's own client, no second pool.
// (The example runs on an embedded miniredis with a fixed clock; a
// service passes its client and leaves the clock alone.)
func Example() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		log.Fatal(err)
	}
	defer mr.Close()

	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	store, err := voting.New(goredis.NewPool(rdb),
		voting.WithKeyPrefix("news"), voting.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	r, err := store.Vote(ctx, "bob", a.ID, voting.Upvote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("article %s: %d upvotes, score %.0f\n", a.ID, r.Upvotes, r.Score)
	page, err := store.Articles(ctx, voting.ScoreDesc, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range page {
		fmt.Printf("%s %q by %s\n", a.ID, a.Title, a.Poster)
	}
	// Output:
	// article 1: 2 upvotes, score 1795349664
	// 1 "Redis in Action" by alice
}

// exampleClient returns a go-redis client to an embedded miniredis,
// which stands in for the service's Redis, and a function that closes
// both.
func exampleClient() (*redis.Client, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	return rdb, func() { rdb.Close(); mr.Close() }
}

// traceHook prints each command go-redis runs, as a tracing hook such as
// redisotel's would make a span of it.
type traceHook struct{}

func (traceHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (traceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil {
			fmt.Printf("span %s: %s\n", cmd.Name(), strings.Fields(err.Error())[0])
		} else {
			fmt.Printf("span %s\n", cmd.Name())
		}
		return err
	}
}

func (traceHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		fmt.Printf("span pipeline of %d %s\n", len(cmds), cmds[0].Name())
		return next(ctx, cmds)
	}
}

// The store's calls go through the client's hooks, one script each, so
// tracing (redisotel.InstrumentTracing(rdb)) shows one span per call. On
// redis-server 7 a call is an FCALL or FCALL_RO of the store's library,
// which the first call that finds it missing loads. A server without
// Functions, as this miniredis, refuses the first FCALL_RO, and the store
// runs scripts from then on: the first call of each script meets NOSCRIPT
// and sends the script itself. VoteBatch sends its scripts as one
// pipeline.
func ExampleNewPool_hooks() {
	rdb, done := exampleClient()
	defer done()
	store, err := voting.New(goredis.NewPool(rdb))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil { // a connection made before the hook
		log.Fatal(err)
	}
	rdb.AddHook(traceHook{})

	if _, err := store.Count(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Count(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := store.VoteBatch(ctx, []voting.Ballot{{User: "bob", ID: "1", Vote: voting.Upvote}}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// span fcall_ro: ERR
	// span evalsha: NOSCRIPT
	// span eval
	// span evalsha
	// span pipeline of 1 eval
}

// On a Redis Cluster, NewPool takes the ClusterClient as it is: each call
// of the store goes to the node of its keys' slot.
func ExampleNewPool_cluster() {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{"localhost:7000", "localhost:7001", "localhost:7002"},
		// Let go-redis, too, stop waiting when a call's deadline passes.
		ContextTimeoutEnabled: true,
	})
	defer rdb.Close()
	store, err := voting.New(goredis.NewPool(rdb), voting.WithKeyPrefix("news"))
	if err != nil {
		log.Fatal(err)
	}
	_ = store // store.Post, store.Vote, ...
}
