package voting_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// The examples run on an embedded miniredis, with a fixed clock so their
// output is stable. A real service passes a pool to its Redis and leaves
// the clock alone.

var posted = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// exampleStore returns a store on a fresh miniredis whose clock reads
// posted, and a function that closes both.
func exampleStore(opts ...voting.Option) (*voting.Store, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	opts = append([]voting.Option{voting.WithClock(func() time.Time { return posted })}, opts...)
	store, err := voting.New(pool, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return store, func() { pool.Close(); mr.Close() }
}

func ExampleNew() {
	mr, err := miniredis.Run() // stands in for a real Redis
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()

	pool := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", mr.Addr())
		},
	}
	defer pool.Close()

	store, err := voting.New(pool,
		voting.WithKeyPrefix("news"), // every key is "{news}:..."
		voting.WithVoteWindow(72*time.Hour),
		voting.WithPageSize(10),
	)
	if err != nil {
		log.Fatal(err)
	}
	a, err := store.Post(context.Background(), "alice", "Hello, voting", "https://example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("posted article", a.ID)
	fmt.Println(mr.Keys())
	// Output:
	// posted article 1
	// [{news}:article:1 {news}:score {news}:seq {news}:time {news}:voted:1]
}

func ExampleStore_Post() {
	store, done := exampleStore()
	defer done()

	a, err := store.Post(context.Background(), "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	// The poster's own upvote counts: score = post time + 432.
	fmt.Printf("id=%s up=%d down=%d score=%.0f (posted %d)\n",
		a.ID, a.Upvotes, a.Downvotes, a.Score, a.Posted.Unix())
	// Output:
	// id=1 up=1 down=0 score=1795349232 (posted 1795348800)
}

func ExampleStore_Vote() {
	ctx := context.Background()
	store, done := exampleStore()
	defer done()
	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}

	for _, v := range []struct {
		user string
		vote voting.VoteType
	}{
		{"bob", voting.Upvote},
		{"carol", voting.Downvote},
		{"carol", voting.Upvote}, // carol changes her mind
		{"bob", voting.NoVote},   // bob cancels
		{"bob", voting.NoVote},   // a repeat changes nothing
	} {
		r, err := store.Vote(ctx, v.user, a.ID, v.vote)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-5s %-4v (was %-4v) up=%d down=%d score=+%.0f\n",
			v.user, v.vote, r.Previous, r.Upvotes, r.Downvotes, r.Score-float64(a.Posted.Unix()))
	}

	_, err = store.Vote(ctx, "dave", "404", voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrNotFound), err)
	// Output:
	// bob   up   (was none) up=2 down=0 score=+864
	// carol down (was none) up=2 down=1 score=+432
	// carol up   (was down) up=3 down=0 score=+1296
	// bob   none (was up  ) up=2 down=0 score=+864
	// bob   none (was none) up=2 down=0 score=+864
	// true voting: article not found: "404"
}

func ExampleStore_Vote_closed() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(voting.WithClock(func() time.Time { return now }))
	defer done()
	a, err := store.Post(ctx, "alice", "Old news", "")
	if err != nil {
		log.Fatal(err)
	}

	now = now.Add(voting.DefaultVoteWindow) // a week later
	_, err = store.Vote(ctx, "bob", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrVotingClosed))
	// Output:
	// true
}

func ExampleStore_Articles() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(voting.WithClock(func() time.Time { return now }))
	defer done()
	for _, title := range []string{"first", "second", "third"} {
		if _, err := store.Post(ctx, "alice", title, ""); err != nil {
			log.Fatal(err)
		}
		now = now.Add(10 * time.Minute)
	}
	// Three upvotes (3 × 432 points) lift "first" above articles posted
	// 10 and 20 minutes (600 and 1200 seconds) later.
	for _, user := range []string{"bob", "carol", "dave"} {
		if _, err := store.Vote(ctx, user, "1", voting.Upvote); err != nil {
			log.Fatal(err)
		}
	}

	for _, order := range []voting.Order{voting.ScoreDesc, voting.TimeDesc} {
		page, err := store.Articles(ctx, order, 1)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(order, ":")
		for _, a := range page {
			fmt.Printf(" %s(%d up)", a.Title, a.Upvotes)
		}
		fmt.Println()
	}
	// Output:
	// score-desc: first(4 up) third(1 up) second(1 up)
	// time-desc: third(1 up) second(1 up) first(4 up)
}

func ExampleStore_VotesOf() {
	ctx := context.Background()
	store, done := exampleStore()
	defer done()
	for i := 0; i < 3; i++ {
		if _, err := store.Post(ctx, "alice", "article", ""); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := store.Vote(ctx, "bob", "2", voting.Downvote); err != nil {
		log.Fatal(err)
	}

	// One round trip for the arrows of a whole page.
	votes, err := store.VotesOf(ctx, "bob", []string{"1", "2", "3"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(votes)
	// Output:
	// [none down none]
}

func ExampleStore_GroupArticles() {
	ctx := context.Background()
	store, done := exampleStore()
	defer done()
	for _, p := range []struct{ title, group string }{
		{"Redis streams", "databases"},
		{"Go generics", "programming"},
		{"Postgres indexes", "databases"},
	} {
		a, err := store.Post(ctx, "alice", p.title, "")
		if err != nil {
			log.Fatal(err)
		}
		if err := store.AddToGroups(ctx, a.ID, p.group); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := store.Vote(ctx, "bob", "3", voting.Upvote); err != nil {
		log.Fatal(err)
	}

	// The group's page is cached for a minute (WithGroupCacheTTL).
	page, err := store.GroupArticles(ctx, "databases", voting.ScoreDesc, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range page {
		fmt.Println(a.ID, a.Title, a.Upvotes)
	}
	groups, err := store.Groups(ctx, "1")
	fmt.Println(groups, err)
	// Output:
	// 3 Postgres indexes 2
	// 1 Redis streams 1
	// [databases] <nil>
}

func ExampleStore_Delete() {
	ctx := context.Background()
	store, done := exampleStore()
	defer done()
	a, err := store.Post(ctx, "alice", "Oops", "")
	if err != nil {
		log.Fatal(err)
	}
	if err := store.AddToGroups(ctx, a.ID, "drafts"); err != nil {
		log.Fatal(err)
	}

	if err := store.Delete(ctx, a.ID); err != nil {
		log.Fatal(err)
	}
	_, err = store.Article(ctx, a.ID)
	fmt.Println(errors.Is(err, voting.ErrNotFound))
	page, err := store.GroupArticles(ctx, "drafts", voting.TimeDesc, 1)
	fmt.Println(len(page), err)
	fmt.Println(errors.Is(store.Delete(ctx, a.ID), voting.ErrNotFound))
	// Output:
	// true
	// 0 <nil>
	// true
}

func ExampleParseVoteType() {
	for _, s := range []string{"up", "down", "none", "sideways"} {
		v, err := voting.ParseVoteType(s)
		fmt.Println(int(v), err)
	}
	// Output:
	// 1 <nil>
	// -1 <nil>
	// 0 <nil>
	// 0 voting: invalid vote type: "sideways" is not up, down or none
}
