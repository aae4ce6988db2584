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
// *now (posted if now is nil), and a function that closes both.
func exampleStore(now *time.Time, opts ...voting.Option) (*voting.Store, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	pool := &redis.Pool{MaxIdle: 4, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	if now == nil {
		now = &posted
	}
	opts = append([]voting.Option{voting.WithClock(func() time.Time { return *now })}, opts...)
	store, err := voting.New(pool, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return store, func() { pool.Close(); mr.Close() }
}

// A news site: post, vote, read the front page and a user's arrows.
func Example() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()

	redisBook, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	goBook, err := store.Post(ctx, "bob", "The Go Programming Language", "https://go.dev")
	if err != nil {
		log.Fatal(err)
	}
	for _, user := range []string{"carol", "dave"} {
		if _, err := store.Vote(ctx, user, goBook.ID, voting.Upvote); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := store.Vote(ctx, "carol", redisBook.ID, voting.Downvote); err != nil {
		log.Fatal(err)
	}

	front, err := store.Articles(ctx, voting.ScoreDesc, 1)
	if err != nil {
		log.Fatal(err)
	}
	ids := make([]string, len(front))
	for i, a := range front {
		ids[i] = a.ID
	}
	arrows, err := store.VotesOf(ctx, "carol", ids)
	if err != nil {
		log.Fatal(err)
	}
	for i, a := range front {
		fmt.Printf("%s %-28s +%d -%d  carol: %v\n", a.ID, a.Title, a.Upvotes, a.Downvotes, arrows[i])
	}
	// Output:
	// 2 The Go Programming Language  +3 -0  carol: up
	// 1 Redis in Action              +1 -1  carol: down
}

func ExampleNew() {
	mr, err := miniredis.Run() // stands in for a real Redis
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()

	pool := &redis.Pool{
		MaxIdle:     16, // without it, every call dials a new connection
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", mr.Addr(),
				redis.DialReadTimeout(time.Second), redis.DialWriteTimeout(time.Second))
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
	// [{news}:article:1 {news}:by:score {news}:by:time {news}:seq {news}:store {news}:voted:1]
}

// On a Redis Cluster, all keys of a store are in the slot of its prefix.
// A cluster-aware pool whose connections bind to a key, such as
// *redisc.Cluster from github.com/mna/redisc, is a voting.Pool as it is:
//
//	cluster := &redisc.Cluster{StartupNodes: []string{"10.0.0.1:6379"}, CreatePool: newPool}
//	store, err := voting.New(cluster, voting.WithKeyPrefix("news"))
//
// Without one, a plain pool to the node that owns the slot works, as here,
// until the slot moves.
func ExampleNew_cluster() {
	const prefix = "news"
	node, err := redis.Dial("tcp", "10.0.0.1:6379") // any node of the cluster
	if err != nil {
		log.Fatal(err)
	}
	slot, err := redis.Int(node.Do("CLUSTER", "KEYSLOT", "{"+prefix+"}"))
	if err != nil {
		log.Fatal(err)
	}
	slots, err := redis.Values(node.Do("CLUSTER", "SLOTS"))
	node.Close()
	if err != nil {
		log.Fatal(err)
	}
	var owner string
	for _, s := range slots {
		r, _ := redis.Values(s, nil) // start, end, [host, port, ...], replicas...
		if len(r) < 3 {
			continue
		}
		start, _ := redis.Int(r[0], nil)
		end, _ := redis.Int(r[1], nil)
		addr, _ := redis.Values(r[2], nil)
		if start <= slot && slot <= end && len(addr) >= 2 {
			host, _ := redis.String(addr[0], nil)
			port, _ := redis.Int(addr[1], nil)
			owner = fmt.Sprintf("%s:%d", host, port)
		}
	}
	pool := &redis.Pool{MaxIdle: 16, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", owner)
	}}
	store, err := voting.New(pool, voting.WithKeyPrefix(prefix))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

func ExampleStore_Post() {
	store, done := exampleStore(nil)
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

// With WithUniqueLinks, a retried Post (its reply lost) cannot post twice.
func ExampleWithUniqueLinks() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithUniqueLinks())
	defer done()

	first, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	again, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	fmt.Println(errors.Is(err, voting.ErrDuplicate), again.ID == first.ID)
	fmt.Println(err)
	// Output:
	// true true
	// voting: post: duplicate link: "https://redis.io" is article "1"
}

func ExampleStore_Article() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	if _, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io"); err != nil {
		log.Fatal(err)
	}

	a, err := store.Article(ctx, "1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Title, a.Link, a.Poster, a.Posted, a.Upvotes)
	_, err = store.Article(ctx, "2")
	fmt.Println(err)
	// Output:
	// Redis in Action https://redis.io alice 2026-11-22 12:00:00 +0000 UTC 1
	// voting: article: article not found: "2"
}

func ExampleStore_Vote() {
	ctx := context.Background()
	store, done := exampleStore(nil)
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
	// Output:
	// bob   up   (was none) up=2 down=0 score=+864
	// carol down (was none) up=2 down=1 score=+432
	// carol up   (was down) up=3 down=0 score=+1296
	// bob   none (was up  ) up=2 down=0 score=+864
	// bob   none (was none) up=2 down=0 score=+864
}

// Every error wraps a sentinel: check it with errors.Is.
func ExampleStore_Vote_errors() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now)
	defer done()
	a, err := store.Post(ctx, "alice", "Old news", "")
	if err != nil {
		log.Fatal(err)
	}

	_, err = store.Vote(ctx, "bob", "404", voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrNotFound), err)
	_, err = store.Vote(ctx, "bob", a.ID, voting.VoteType(2))
	fmt.Println(errors.Is(err, voting.ErrInvalidVote), err)
	_, err = store.Vote(ctx, "", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrInvalidArgument), err)
	now = now.Add(voting.DefaultVoteWindow) // a week later
	_, err = store.Vote(ctx, "bob", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrVotingClosed), err)
	// Output:
	// true voting: vote: article not found: "404"
	// true voting: vote: invalid vote type: 2
	// true voting: vote: invalid argument: user is empty
	// true voting: vote: voting closed: "1"
}

func ExampleStore_VoteOf() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a, err := store.Post(ctx, "alice", "Redis in Action", "")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Vote(ctx, "bob", a.ID, voting.Downvote); err != nil {
		log.Fatal(err)
	}

	for _, user := range []string{"alice", "bob", "carol"} {
		v, err := store.VoteOf(ctx, user, a.ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(user, v)
	}
	// Output:
	// alice up
	// bob down
	// carol none
}

func ExampleStore_Articles() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now)
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
	n, err := store.Count(ctx)
	fmt.Println(n, "articles", err)
	// Output:
	// score-desc: first(4 up) third(1 up) second(1 up)
	// time-desc: third(1 up) second(1 up) first(4 up)
	// 3 articles <nil>
}

// Reddit's orders, and the top of a period.
func ExampleWithOrders() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithOrders(voting.Top, voting.Controversial))
	defer done()
	for _, title := range []string{"loved", "fought over", "new"} {
		if _, err := store.Post(ctx, "alice", title, ""); err != nil {
			log.Fatal(err)
		}
		now = now.Add(12 * time.Hour)
	}
	ballots := []voting.Ballot{
		{User: "bob", ID: "1", Vote: voting.Upvote},
		{User: "carol", ID: "1", Vote: voting.Upvote},
		{User: "bob", ID: "2", Vote: voting.Downvote},
		{User: "carol", ID: "2", Vote: voting.Downvote},
		{User: "dave", ID: "2", Vote: voting.Upvote},
	}
	if _, err := store.VoteBatch(ctx, ballots); err != nil {
		log.Fatal(err)
	}

	show := func(label string, page []voting.Article, err error) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(label, ":")
		for _, a := range page {
			fmt.Printf(" %s(%+d)", a.Title, a.Upvotes-a.Downvotes)
		}
		fmt.Println()
	}
	page, err := store.Articles(ctx, voting.Top, 1)
	show("top", page, err)
	page, err = store.Articles(ctx, voting.Controversial, 1)
	show("controversial", page, err)
	page, err = store.TopSince(ctx, 24*time.Hour, 1)
	show("top of the day", page, err)
	// Output:
	// top: loved(+3) new(+1) fought over(+0)
	// controversial: fought over(+0) new(+1) loved(+3)
	// top of the day: new(+1) fought over(+0)
}

func ExampleStore_VotesOf() {
	ctx := context.Background()
	store, done := exampleStore(nil)
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

// A queue consumer applies its votes in batches, one round trip each.
func ExampleStore_VoteBatch() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	if _, err := store.Post(ctx, "alice", "article", ""); err != nil {
		log.Fatal(err)
	}

	results, err := store.VoteBatch(ctx, []voting.Ballot{
		{User: "bob", ID: "1", Vote: voting.Upvote},
		{User: "bob", ID: "1", Vote: voting.Downvote}, // replaces bob's upvote
		{User: "carol", ID: "9", Vote: voting.Upvote},
	})
	if err != nil {
		log.Fatal(err) // the call as a whole failed
	}
	for _, r := range results {
		fmt.Println(r.Previous, r.Upvotes, r.Downvotes, r.Err)
	}
	// Output:
	// none 2 0 <nil>
	// up 1 1 <nil>
	// none 0 0 voting: vote: article not found: "9"
}

// A user's bookmarks, in the user's order, in one round trip.
func ExampleStore_ArticlesByID() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	for _, title := range []string{"one", "two", "three"} {
		if _, err := store.Post(ctx, "alice", title, ""); err != nil {
			log.Fatal(err)
		}
	}

	list, err := store.ArticlesByID(ctx, []string{"3", "404", "1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range list {
		fmt.Println(a.ID, a.Title)
	}
	// Output:
	// 3 three
	// 1 one
}

func ExampleStore_AddToGroups() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a, err := store.Post(ctx, "alice", "Redis streams", "")
	if err != nil {
		log.Fatal(err)
	}

	if err := store.AddToGroups(ctx, a.ID, "databases", "redis", "drafts"); err != nil {
		log.Fatal(err)
	}
	if err := store.RemoveFromGroups(ctx, a.ID, "drafts"); err != nil {
		log.Fatal(err)
	}
	groups, err := store.Groups(ctx, a.ID)
	fmt.Println(groups, err)
	n, err := store.GroupCount(ctx, "drafts")
	fmt.Println(n, err)
	// Output:
	// [databases redis] <nil>
	// 0 <nil>
}

func ExampleStore_Groups() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a, err := store.Post(ctx, "alice", "Redis streams", "")
	if err != nil {
		log.Fatal(err)
	}

	groups, err := store.Groups(ctx, a.ID) // none yet
	fmt.Println(groups, len(groups), err)
	if err := store.AddToGroups(ctx, a.ID, "redis", "databases"); err != nil {
		log.Fatal(err)
	}
	groups, err = store.Groups(ctx, a.ID) // sorted by name
	fmt.Println(groups, err)
	_, err = store.Groups(ctx, "404")
	fmt.Println(errors.Is(err, voting.ErrNotFound))
	// Output:
	// [] 0 <nil>
	// [databases redis] <nil>
	// true
}

// Removing an article from a group takes it off the group's pages at once;
// groups it is not in are ignored.
func ExampleStore_RemoveFromGroups() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	for _, title := range []string{"Redis streams", "Redis on a Raspberry Pi"} {
		a, err := store.Post(ctx, "alice", title, "")
		if err != nil {
			log.Fatal(err)
		}
		if err := store.AddToGroups(ctx, a.ID, "redis"); err != nil {
			log.Fatal(err)
		}
	}

	if err := store.RemoveFromGroups(ctx, "2", "redis", "hardware"); err != nil {
		log.Fatal(err)
	}
	page, err := store.GroupArticles(ctx, "redis", voting.TimeDesc, 1)
	for _, a := range page {
		fmt.Println(a.Title)
	}
	fmt.Println(err)
	// Output:
	// Redis streams
	// <nil>
}

// GroupCount sizes a group's pager, as Count does the front page's.
func ExampleStore_GroupCount() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithPageSize(2))
	defer done()
	for i := 0; i < 5; i++ {
		a, err := store.Post(ctx, "alice", fmt.Sprint("article ", i+1), "")
		if err != nil {
			log.Fatal(err)
		}
		if i%2 == 0 {
			if err := store.AddToGroups(ctx, a.ID, "odd"); err != nil {
				log.Fatal(err)
			}
		}
	}

	all, err := store.Count(ctx)
	if err != nil {
		log.Fatal(err)
	}
	odd, err := store.GroupCount(ctx, "odd")
	if err != nil {
		log.Fatal(err)
	}
	pages := func(n int64) int64 { return (n + 1) / 2 } // 2 a page
	fmt.Printf("front page: %d articles, %d pages\n", all, pages(all))
	fmt.Printf("odd: %d articles, %d pages\n", odd, pages(odd))
	// Output:
	// front page: 5 articles, 3 pages
	// odd: 3 articles, 2 pages
}

func ExampleStore_GroupArticles() {
	ctx := context.Background()
	store, done := exampleStore(nil)
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
	show := func() {
		page, err := store.GroupArticles(ctx, "databases", voting.ScoreDesc, 1)
		if err != nil {
			log.Fatal(err)
		}
		for _, a := range page {
			fmt.Printf(" %s(%d up)", a.Title, a.Upvotes)
		}
		fmt.Println()
	}
	show()
	// Group pages are exact at once: a vote moves the article there too.
	for _, user := range []string{"bob", "carol"} {
		if _, err := store.Vote(ctx, user, "1", voting.Upvote); err != nil {
			log.Fatal(err)
		}
	}
	show()
	// Output:
	//  Postgres indexes(1 up) Redis streams(1 up)
	//  Redis streams(3 up) Postgres indexes(1 up)
}

// TopSince lists the best of a recent period, such as a day or a week,
// by net votes.
func ExampleStore_TopSince() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithOrders(voting.Top))
	defer done()
	for _, p := range []struct {
		title string
		fans  int
	}{{"nine days old", 3}, {"five days old", 1}, {"a day old", 2}} {
		a, err := store.Post(ctx, "alice", p.title, "")
		if err != nil {
			log.Fatal(err)
		}
		for i := 0; i < p.fans; i++ {
			if _, err := store.Vote(ctx, fmt.Sprint("fan", i), a.ID, voting.Upvote); err != nil {
				log.Fatal(err)
			}
		}
		now = now.Add(4 * 24 * time.Hour)
	}
	now = now.Add(-3 * 24 * time.Hour) // a day after the last post

	week, err := store.TopSince(ctx, 7*24*time.Hour, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range week {
		fmt.Println(a.Title, a.Upvotes-a.Downvotes)
	}
	// Output:
	// a day old 3
	// five days old 2
}

func ExampleStore_Delete() {
	ctx := context.Background()
	store, done := exampleStore(nil)
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

// Count counts the live articles: a deleted one leaves the count.
func ExampleStore_Count() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	for i := 1; i <= 3; i++ {
		if _, err := store.Post(ctx, "alice", fmt.Sprint("article ", i), ""); err != nil {
			log.Fatal(err)
		}
		fmt.Println(store.Count(ctx))
	}
	if err := store.Delete(ctx, "2"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(store.Count(ctx))
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 3 <nil>
	// 2 <nil>
}

// Drop removes a store's keys and leaves other prefixes alone: here, a
// test's store on a shared server.
func ExampleStore_Drop() {
	ctx := context.Background()
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	pool := &redis.Pool{MaxIdle: 4, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	defer pool.Close()
	scratch, err := voting.New(pool, voting.WithKeyPrefix("scratch"))
	if err != nil {
		log.Fatal(err)
	}
	live, err := voting.New(pool) // prefix "voting"
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range []*voting.Store{scratch, live} {
		if _, err := s.Post(ctx, "alice", "article", ""); err != nil {
			log.Fatal(err)
		}
	}

	if err := scratch.Drop(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(scratch.Count(ctx))
	fmt.Println(live.Count(ctx))
	fmt.Println(mr.Keys())
	// Output:
	// 0 <nil>
	// 1 <nil>
	// [{voting}:article:1 {voting}:by:score {voting}:by:time {voting}:seq {voting}:store {voting}:voted:1]
}

// A periodic Prune keeps memory flat: here, articles older than 180 days go.
func ExampleStore_Prune() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now)
	defer done()
	for _, title := range []string{"old", "older", "recent"} {
		if _, err := store.Post(ctx, "alice", title, ""); err != nil {
			log.Fatal(err)
		}
		now = now.AddDate(0, 0, 100)
	}

	n, err := store.Prune(ctx, now.AddDate(0, 0, -180))
	fmt.Println(n, err)
	left, err := store.Count(ctx)
	fmt.Println(left, err)
	// Output:
	// 2 <nil>
	// 1 <nil>
}

func ExampleParseVoteType() {
	for _, s := range []string{"up", "down", "none", "sideways"} {
		v, err := voting.ParseVoteType(s)
		fmt.Println(v.Valid(), int(v), err)
	}
	// Output:
	// true 1 <nil>
	// true -1 <nil>
	// true 0 <nil>
	// false -128 voting: invalid vote type: "sideways" is not up, down or none
}

func ExampleParseOrder() {
	for _, s := range []string{"score-desc", "hot", "sideways"} {
		o, err := voting.ParseOrder(s)
		fmt.Println(o, o.Valid(), err)
	}
	// Output:
	// score-desc true <nil>
	// hot true <nil>
	// Order(-1) false voting: invalid argument: unknown order "sideways"
}

// A user's submitted page: their posts, newest first; a deleted one is
// gone from it.
func ExampleStore_Submitted() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	for _, title := range []string{"Redis in Action", "Oops", "The Go Programming Language"} {
		if _, err := store.Post(ctx, "alice", title, ""); err != nil {
			log.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	if err := store.Delete(ctx, "2"); err != nil {
		log.Fatal(err)
	}
	page, err := store.Submitted(ctx, "alice", 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range page {
		fmt.Println(a.ID, a.Title)
	}
	// Output:
	// 3 The Go Programming Language
	// 1 Redis in Action
}

// A user's upvoted page: latest upvote first; a cancelled or switched
// upvote leaves it. A post is its poster's upvote.
func ExampleStore_Upvoted() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	for _, title := range []string{"Redis in Action", "The Go Programming Language", "Lua"} {
		if _, err := store.Post(ctx, "alice", title, ""); err != nil {
			log.Fatal(err)
		}
	}
	for _, v := range []struct {
		id   string
		vote voting.VoteType
	}{{"2", voting.Upvote}, {"1", voting.Upvote}, {"3", voting.Upvote}, {"3", voting.Downvote}} {
		now = now.Add(time.Minute)
		if _, err := store.Vote(ctx, "bob", v.id, v.vote); err != nil {
			log.Fatal(err)
		}
	}
	for _, user := range []string{"bob", "alice"} {
		page, err := store.Upvoted(ctx, user, 1)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(user, ":")
		for _, a := range page {
			fmt.Print(" ", a.ID)
		}
		fmt.Println()
	}
	// Output:
	// bob: 1 2
	// alice: 3 2 1
}

// Reads on a replica: the store writes through the primary's pool and
// reads through the replica's. Here one miniredis stands in for both; a
// real service dials its replica (redis-server --replicaof the primary).
func ExampleWithReadPool() {
	mr, err := miniredis.Run() // stands in for the primary and its replica
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	newPool := func(addr string) *redis.Pool {
		return &redis.Pool{MaxIdle: 16, IdleTimeout: time.Minute,
			DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", addr,
					redis.DialReadTimeout(time.Second), redis.DialWriteTimeout(time.Second))
			}}
	}
	primary := newPool(mr.Addr()) // "10.0.0.1:6379"
	replica := newPool(mr.Addr()) // "10.0.0.2:6379", a replica of 10.0.0.1
	defer primary.Close()
	defer replica.Close()

	ctx := context.Background()
	store, err := voting.New(primary, voting.WithReadPool(replica),
		voting.WithClock(func() time.Time { return posted }))
	if err != nil {
		log.Fatal(err)
	}
	a, err := store.Post(ctx, "alice", "Replicas in Action", "")
	if err != nil {
		log.Fatal(err)
	}
	// Vote replies with the article's fresh standing, from the primary:
	// show it to the voter; a read on the replica may lag behind it.
	r, err := store.Vote(ctx, "bob", a.ID, voting.Upvote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("bob sees +%d\n", r.Upvotes)
	page, err := store.Articles(ctx, voting.ScoreDesc, 1) // on the replica
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range page {
		fmt.Printf("%s %s +%d\n", a.ID, a.Title, a.Upvotes)
	}
	// Output:
	// bob sees +2
	// 1 Replicas in Action +2
}

// On a Redis Cluster, the read pool hands out the cluster's connections
// made read-only before the store binds them to its slot, so that they
// reach a replica of the slot's master and send READONLY. With
// github.com/mna/redisc:
//
//	cluster := &redisc.Cluster{StartupNodes: []string{"10.0.0.1:6379"}, CreatePool: newPool}
//	reads := readOnlyPool{cluster}
//	store, err := voting.New(cluster, voting.WithKeyPrefix("news"), voting.WithReadPool(reads))
//
// where readOnlyPool's Get calls redisc.ReadOnlyConn on each connection,
// as below, with a stand-in for redisc.
func ExampleWithReadPool_cluster() {
	cluster := &clusterStandIn{StartupNodes: []string{"10.0.0.1:6379"}}
	store, err := voting.New(cluster, voting.WithKeyPrefix("news"),
		voting.WithReadPool(readOnlyPool{cluster}))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// readOnlyPool is the read pool of a store on a Redis Cluster: it makes
// each connection of the cluster read-only before the store binds it.
type readOnlyPool struct{ cluster voting.Pool }

func (p readOnlyPool) Get() redis.Conn {
	c := p.cluster.Get()
	if err := readOnlyConn(c); err != nil { // redisc.ReadOnlyConn(c)
		c.Close()
		return errorConn{err}
	}
	return c
}

// errorConn is a connection that fails every command with err, as
// redigo's pools hand out when they cannot connect; the store returns
// its Err.
type errorConn struct{ err error }

func (c errorConn) Close() error                                   { return nil }
func (c errorConn) Err() error                                     { return c.err }
func (c errorConn) Do(string, ...interface{}) (interface{}, error) { return nil, c.err }
func (c errorConn) Send(string, ...interface{}) error              { return c.err }
func (c errorConn) Flush() error                                   { return c.err }
func (c errorConn) Receive() (interface{}, error)                  { return nil, c.err }

// readOnlyConn stands in for redisc.ReadOnlyConn: it calls the
// connection's ReadOnly method, which a *redisc.Conn has.
func readOnlyConn(c redis.Conn) error {
	if rc, ok := c.(interface{ ReadOnly() error }); ok {
		return rc.ReadOnly()
	}
	return errors.New("redisc: no ReadOnly method")
}

// clusterStandIn stands in for *redisc.Cluster, which is not a
// dependency of this module, in the example above: it is never run.
type clusterStandIn struct{ StartupNodes []string }

func (c *clusterStandIn) Get() redis.Conn {
	return errorConn{errors.New("clusterStandIn: a stand-in for redisc.Cluster")}
}

// Karma, lamernews style: an upvote gives the poster 1 and costs the
// voter 1, a downvote takes 1 and costs 6, and a vote on one's own
// article moves nothing.
func ExampleStore_Karma() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithKarma(1, -1), voting.WithVoteCost(1, 6))
	defer done()

	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range []voting.Ballot{{User: "bob", ID: a.ID, Vote: voting.Upvote}, {User: "carol", ID: a.ID, Vote: voting.Downvote}} {
		if _, err := store.Vote(ctx, b.User, b.ID, b.Vote); err != nil {
			log.Fatal(err)
		}
	}
	for _, user := range []string{"alice", "bob", "carol", "dave"} {
		k, err := store.Karma(ctx, user)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(user, k)
	}
	// Output:
	// alice 0
	// bob -1
	// carol -6
	// dave 0
}

// The users with the most karma, highest first, ties by name.
func ExampleStore_TopUsers() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithKarma(1, -1))
	defer done()

	for _, p := range []struct{ poster, title string }{{"alice", "Redis in Action"}, {"bob", "The Go book"}, {"carol", "SICP"}} {
		a, err := store.Post(ctx, p.poster, p.title, "")
		if err != nil {
			log.Fatal(err)
		}
		for _, voter := range []string{"dave", "erin"} {
			v := voting.Upvote
			if p.poster == "carol" && voter == "erin" {
				v = voting.Downvote
			}
			if _, err := store.Vote(ctx, voter, a.ID, v); err != nil {
				log.Fatal(err)
			}
		}
	}
	top, err := store.TopUsers(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range top {
		fmt.Println(u.User, u.Karma)
	}
	// Output:
	// alice 2
	// bob 2
	// carol 0
}

// A poster may fix a typo within the edit window; nobody else may.
func ExampleStore_Edit() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithEditWindow(15*time.Minute))
	defer done()

	a, err := store.Post(ctx, "alice", "Redis in Acton", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	now = now.Add(10 * time.Minute)
	a, err = store.Edit(ctx, a.ID, "alice", "Redis in Action", "https://redis.io")
	fmt.Println(a.Title, err)
	_, err = store.Edit(ctx, a.ID, "bob", "Mine now", "")
	fmt.Println(errors.Is(err, voting.ErrNotAllowed))
	now = now.Add(5 * time.Minute)
	_, err = store.Edit(ctx, a.ID, "alice", "Redis in Action, 2nd ed.", "")
	fmt.Println(errors.Is(err, voting.ErrNotAllowed))
	// Output:
	// Redis in Action <nil>
	// true
	// true
}

// A rate-limited call tells how long to wait: here, at most two votes a
// minute.
func ExampleRetryAfter() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithVoteLimit(2, time.Minute))
	defer done()

	var ids []string
	for _, title := range []string{"one", "two", "three"} {
		a, err := store.Post(ctx, "alice", title, "")
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	for _, id := range ids {
		_, err := store.Vote(ctx, "bob", id, voting.Upvote)
		fmt.Println(err, voting.RetryAfter(err))
		now = now.Add(20 * time.Second)
	}
	// Output:
	// <nil> 0s
	// <nil> 0s
	// voting: vote: rate limited: retry after 20s 20s
}

// A store that waits for a replica after every write. miniredis has no
// replicas, so its WAIT answers 0 at once and the vote, applied, comes
// back with ErrNotReplicated: a caller shows the result, and knows a
// failover may lose it.
func ExampleWithWaitReplicas() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithWaitReplicas(1, 50*time.Millisecond))
	defer done()

	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil && !errors.Is(err, voting.ErrNotReplicated) {
		log.Fatal(err)
	}
	r, err := store.Vote(ctx, "bob", a.ID, voting.Upvote)
	switch {
	case errors.Is(err, voting.ErrNotReplicated):
		fmt.Printf("applied on the primary only: +%d (%v)\n", r.Upvotes, err)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("on a replica too: +%d\n", r.Upvotes)
	}
	// Output:
	// applied on the primary only: +2 (voting: vote: not replicated: 0 of 1 replicas acknowledged within 50ms)
}

// A hook sees every call of the store: here, a log line per call, with
// its operation, what identifies it, its round trips and its error. Hooks
// run in the order given, the first outermost; votingotel's Tracing and
// Metrics are hooks too.
func ExampleWithHook() {
	logCalls := voting.HookFunc(func(ctx context.Context, call *voting.Call, next func(ctx context.Context) error) error {
		err := next(ctx)
		line := call.Op
		if call.HasOrder {
			line += " order=" + call.Order.String()
		}
		if call.HasPage {
			line += fmt.Sprintf(" page=%d", call.Page)
		}
		if call.Count > 0 {
			line += fmt.Sprintf(" count=%d", call.Count)
		}
		fmt.Printf("%s round_trips=%d err=%v\n", line, call.RoundTrips, err != nil)
		return err
	})
	store, done := exampleStore(nil, voting.WithHook(logCalls))
	defer done()

	ctx := context.Background()
	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	ballots := []voting.Ballot{{User: "bob", ID: a.ID, Vote: voting.Upvote}, {User: "carol", ID: a.ID, Vote: voting.Downvote}}
	if _, err := store.VoteBatch(ctx, ballots); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Articles(ctx, voting.Hot, 1); !errors.Is(err, voting.ErrInvalidArgument) {
		log.Fatal(err) // Hot is not enabled
	}
	if _, err := store.Articles(ctx, voting.ScoreDesc, 1); err != nil {
		log.Fatal(err)
	}
	// Each script's first call loads it: miniredis has no Functions
	// (FCALL refused, then EVALSHA, NOSCRIPT, then EVAL); later calls take
	// one round trip. A refused call takes none.
	// Output:
	// Post round_trips=3 err=false
	// VoteBatch count=2 round_trips=1 err=false
	// Articles order=hot page=1 round_trips=0 err=true
	// Articles order=score-desc page=1 round_trips=2 err=false
}
