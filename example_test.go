package voting_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// The examples run on an embedded miniredis, with a fixed clock so their
// output is stable (example_helper_test.go).

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

func ExampleStore_Article() {
	store, done := exampleStore(nil)
	defer done()
	post(store, "alice", "Redis in Action")

	ctx := context.Background()
	a, err := store.Article(ctx, "1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Title, a.Poster, a.Posted, a.Upvotes)
	_, err = store.Article(ctx, "2")
	fmt.Println(err)
	// Output:
	// Redis in Action alice 2026-11-22 12:00:00 +0000 UTC 1
	// voting: article: article not found: "2"
}

func ExampleStore_Vote() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]

	for _, v := range []struct {
		user string
		vote voting.VoteType
	}{
		{"bob", voting.Upvote},
		{"carol", voting.Downvote},
		{"carol", voting.Upvote},   // carol changes her mind
		{"bob", voting.CancelVote}, // bob takes his vote back
		{"bob", voting.CancelVote}, // a repeat changes nothing
	} {
		r, err := store.Vote(context.Background(), v.user, a.ID, v.vote)
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
	// bob   cancel (was up  ) up=2 down=0 score=+864
	// bob   cancel (was none) up=2 down=0 score=+864
}

// Every error wraps a sentinel: check it with errors.Is.
func ExampleStore_Vote_errors() {
	now := posted
	store, done := exampleStore(&now)
	defer done()
	a := post(store, "alice", "Old news")[0]

	ctx := context.Background()
	_, err := store.Vote(ctx, "bob", "404", voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrNotFound), err)
	var missing voting.VoteType // a request that left its vote out
	_, err = store.Vote(ctx, "bob", a.ID, missing)
	fmt.Println(errors.Is(err, voting.ErrInvalidVote), err)
	_, err = store.Vote(ctx, "", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrInvalidArgument), err)
	now = now.Add(voting.DefaultVoteWindow) // a week later
	_, err = store.Vote(ctx, "bob", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrVotingClosed), err)
	// Output:
	// true voting: vote: article not found: "404"
	// true voting: vote: invalid vote type: NoVote, the zero VoteType, is no ballot: send Upvote, Downvote, or CancelVote to take a vote back
	// true voting: vote: invalid argument: user is empty
	// true voting: vote: voting closed: "1"
}

func ExampleStore_VoteOf() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	vote(store, "bob", voting.Downvote, a.ID)

	for _, user := range []string{"alice", "bob", "carol"} {
		v, err := store.VoteOf(context.Background(), user, a.ID)
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
	now := posted
	store, done := exampleStore(&now)
	defer done()
	postEvery(store, &now, 10*time.Minute, "alice", "first", "second", "third")
	// Three upvotes (3 × 432 points) lift "first" above articles posted
	// 10 and 20 minutes (600 and 1200 seconds) later.
	for _, user := range []string{"bob", "carol", "dave"} {
		vote(store, user, voting.Upvote, "1")
	}

	for _, order := range []voting.Order{voting.ScoreDesc, voting.TimeDesc} {
		page, err := store.Articles(context.Background(), order, 1)
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

// Reddit's orders, and the top of a period.
func ExampleWithOrders() {
	now := posted
	store, done := exampleStore(&now, voting.WithOrders(voting.Top, voting.Controversial))
	defer done()
	postEvery(store, &now, 12*time.Hour, "alice", "loved", "fought over", "new")
	vote(store, "bob", voting.Upvote, "1")
	vote(store, "carol", voting.Upvote, "1", "3")
	vote(store, "dave", voting.Downvote, "2")

	ctx := context.Background()
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
	// top: loved(+3) new(+2) fought over(+0)
	// controversial: fought over(+0) new(+2) loved(+3)
	// top of the day: new(+2) fought over(+0)
}

func ExampleStore_VotesOf() {
	store, done := exampleStore(nil)
	defer done()
	post(store, "alice", "one", "two", "three")
	vote(store, "bob", voting.Downvote, "2")

	// One round trip for the arrows of a whole page.
	votes, err := store.VotesOf(context.Background(), "bob", []string{"1", "2", "3"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(votes)
	// Output:
	// [none down none]
}

// A queue consumer applies its votes in batches, one round trip each.
func ExampleStore_VoteBatch() {
	store, done := exampleStore(nil)
	defer done()
	post(store, "alice", "article")

	results, err := store.VoteBatch(context.Background(), []voting.Ballot{
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
	store, done := exampleStore(nil)
	defer done()
	post(store, "alice", "one", "two", "three")

	printArticles(store.ArticlesByID(context.Background(), []string{"3", "404", "1"}))
	// Output:
	// 3 three
	// 1 one
}

func ExampleStore_AddToGroups() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis streams")[0]

	ctx := context.Background()
	if err := store.AddToGroups(ctx, a.ID, "databases", "redis"); err != nil {
		log.Fatal(err)
	}
	page, err := store.GroupArticles(ctx, "redis", voting.ScoreDesc, 1)
	fmt.Println(len(page), page[0].Title, err)
	// Output:
	// 1 Redis streams <nil>
}

func ExampleStore_Groups() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis streams")[0]

	ctx := context.Background()
	groups, err := store.Groups(ctx, a.ID) // none yet
	fmt.Println(groups, len(groups), err)
	group(store, a.ID, "redis", "databases")
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
	store, done := exampleStore(nil)
	defer done()
	for _, a := range post(store, "alice", "Redis streams", "Redis on a Raspberry Pi") {
		group(store, a.ID, "redis")
	}

	ctx := context.Background()
	if err := store.RemoveFromGroups(ctx, "2", "redis", "hardware"); err != nil {
		log.Fatal(err)
	}
	groups, err := store.Groups(ctx, "2")
	fmt.Println(groups, err)
	// Output:
	// [] <nil>
}

// GroupCount sizes a group's pager, as Count does the front page's.
func ExampleStore_GroupCount() {
	store, done := exampleStore(nil, voting.WithPageSize(2))
	defer done()
	for i, a := range post(store, "alice", "one", "two", "three", "four", "five") {
		if i%2 == 0 {
			group(store, a.ID, "odd")
		}
	}

	odd, err := store.GroupCount(context.Background(), "odd")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("odd: %d articles, %d pages of 2\n", odd, (odd+1)/2)
	// Output:
	// odd: 3 articles, 2 pages of 2
}

func ExampleStore_GroupArticles() {
	store, done := exampleStore(nil)
	defer done()
	for _, p := range []struct{ title, group string }{
		{"Redis streams", "databases"},
		{"Go generics", "programming"},
		{"Postgres indexes", "databases"},
	} {
		group(store, post(store, "alice", p.title)[0].ID, p.group)
	}
	show := func() {
		page, err := store.GroupArticles(context.Background(), "databases", voting.ScoreDesc, 1)
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
	vote(store, "bob", voting.Upvote, "1")
	vote(store, "carol", voting.Upvote, "1")
	show()
	// Output:
	//  Postgres indexes(1 up) Redis streams(1 up)
	//  Redis streams(3 up) Postgres indexes(1 up)
}

// TopSince lists the best of a recent period, such as a day or a week,
// by net votes.
func ExampleStore_TopSince() {
	now := posted
	store, done := exampleStore(&now, voting.WithOrders(voting.Top))
	defer done()
	for _, p := range []struct {
		title string
		fans  []string
	}{
		{"nine days old", []string{"bob", "carol", "dave"}},
		{"five days old", []string{"bob"}},
		{"a day old", []string{"bob", "carol"}},
	} {
		a := post(store, "alice", p.title)[0]
		for _, fan := range p.fans {
			vote(store, fan, voting.Upvote, a.ID)
		}
		now = now.Add(4 * 24 * time.Hour)
	}
	now = now.Add(-3 * 24 * time.Hour) // a day after the last post

	week, err := store.TopSince(context.Background(), 7*24*time.Hour, 1)
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
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Oops")[0]
	group(store, a.ID, "drafts")

	ctx := context.Background()
	if err := store.Delete(ctx, a.ID); err != nil {
		log.Fatal(err)
	}
	_, err := store.Article(ctx, a.ID)
	fmt.Println(errors.Is(err, voting.ErrNotFound))
	n, err := store.GroupCount(ctx, "drafts")
	fmt.Println(n, err)
	fmt.Println(errors.Is(store.Delete(ctx, a.ID), voting.ErrNotFound))
	// Output:
	// true
	// 0 <nil>
	// true
}

// Count counts the live articles: a deleted one leaves the count.
func ExampleStore_Count() {
	store, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		post(store, "alice", fmt.Sprint("article ", i))
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
	mr, pool, done := examplePool()
	defer done()
	scratch, err := voting.New(pool, voting.WithKeyPrefix("scratch"))
	if err != nil {
		log.Fatal(err)
	}
	live, err := voting.New(pool) // prefix "voting"
	if err != nil {
		log.Fatal(err)
	}
	post(scratch, "alice", "article")
	post(live, "alice", "article")

	ctx := context.Background()
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
	now := posted
	store, done := exampleStore(&now)
	defer done()
	post(store, "alice", "old", "older")
	now = now.AddDate(0, 0, 200)
	post(store, "alice", "recent")

	n, err := store.Prune(context.Background(), now.AddDate(0, 0, -180))
	fmt.Println(n, "pruned", err)
	// Output:
	// 2 pruned <nil>
}

// ParseVoteType reads a vote from a form or a query string.
func ExampleParseVoteType() {
	for _, s := range []string{"up", "down", "cancel", "none", "sideways"} {
		v, err := voting.ParseVoteType(s)
		fmt.Println(v.IsBallot(), int(v), err)
	}
	// Output:
	// true 1 <nil>
	// true -1 <nil>
	// true 2 <nil>
	// false 0 <nil>
	// false -128 voting: invalid vote type: "sideways" is not up, down, cancel or none
}

// ParseOrder reads a page's order from a query string.
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

func ExampleOrder_String() {
	var names []string
	for o := voting.ScoreDesc; o.Valid(); o++ {
		names = append(names, o.String())
	}
	fmt.Println(strings.Join(names, ", "))
	// Output:
	// score-desc, score-asc, time-desc, time-asc, top, hot, best, controversial
}

// Valid tells an Order constant from any other number, such as one read
// from a config file.
func ExampleOrder_Valid() {
	fmt.Println(voting.Hot.Valid(), voting.Order(42).Valid(), voting.Order(42))
	// Output:
	// true false Order(42)
}

// An Order reads as its name in JSON.
func ExampleOrder_MarshalText() {
	b, err := json.Marshal(map[string]voting.Order{"front": voting.Hot, "new": voting.TimeDesc})
	fmt.Println(string(b), err)
	// Output:
	// {"front":"hot","new":"time-desc"} <nil>
}

// A request's order, decoded from JSON.
func ExampleOrder_UnmarshalText() {
	var req struct {
		Order voting.Order `json:"order"`
		Page  int          `json:"page"`
	}
	err := json.Unmarshal([]byte(`{"order": "top", "page": 2}`), &req)
	fmt.Println(req.Order, req.Page, err)
	err = json.Unmarshal([]byte(`{"order": "newest"}`), &req)
	fmt.Println(errors.Is(err, voting.ErrInvalidArgument))
	// Output:
	// top 2 <nil>
	// true
}

func ExampleVoteType_String() {
	fmt.Println(voting.Upvote, voting.Downvote, voting.CancelVote, voting.NoVote, voting.VoteType(7))
	// Output:
	// up down cancel none VoteType(7)
}

// Valid checks a vote that did not come from ParseVoteType.
func ExampleVoteType_Valid() {
	for _, n := range []int{1, 0, -1, 2, 3} {
		fmt.Print(voting.VoteType(n).Valid(), " ")
	}
	fmt.Println()
	// Output:
	// true true true true false
}

// IsBallot tells the votes a vote call takes from NoVote, the zero value
// and a read's answer, which it refuses.
func ExampleVoteType_IsBallot() {
	for _, v := range []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote, voting.NoVote} {
		fmt.Print(v, " ", v.IsBallot(), "; ")
	}
	fmt.Println()
	// Output:
	// up true; down true; cancel true; none false;
}

// A page's arrows, as JSON for a web client.
func ExampleVoteType_MarshalText() {
	store, done := exampleStore(nil)
	defer done()
	post(store, "alice", "one", "two")
	vote(store, "bob", voting.Upvote, "2")

	votes, err := store.VotesOf(context.Background(), "bob", []string{"1", "2"})
	if err != nil {
		log.Fatal(err)
	}
	b, err := json.Marshal(votes)
	fmt.Println(string(b), err)
	// Output:
	// ["none","up"] <nil>
}

// Ballots from a queue, decoded from JSON.
func ExampleVoteType_UnmarshalText() {
	var ballots []struct {
		User string          `json:"user"`
		ID   string          `json:"id"`
		Vote voting.VoteType `json:"vote"`
	}
	msg := `[{"user": "bob", "id": "1", "vote": "down"}, {"user": "carol", "id": "1", "vote": "none"}]`
	if err := json.Unmarshal([]byte(msg), &ballots); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", ballots)
	err := json.Unmarshal([]byte(`[{"vote": "meh"}]`), &ballots)
	fmt.Println(errors.Is(err, voting.ErrInvalidVote))
	// Output:
	// [{User:bob ID:1 Vote:down} {User:carol ID:1 Vote:none}]
	// true
}

// With WithUserPages, a store keeps each user's submitted and upvoted
// pages; without it, they are off.
func ExampleWithUserPages() {
	for _, opts := range [][]voting.Option{nil, {voting.WithUserPages()}} {
		store, done := exampleStore(nil, opts...)
		post(store, "alice", "Redis in Action")
		page, err := store.Submitted(context.Background(), "alice", 1)
		fmt.Println(len(page), err)
		done()
	}
	// Output:
	// 0 voting: submitted: invalid argument: user pages are not enabled (WithUserPages)
	// 1 <nil>
}

// A user's submitted page: their posts, newest first; a deleted one is
// gone from it.
func ExampleStore_Submitted() {
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	postEvery(store, &now, time.Minute, "alice", "Redis in Action", "Oops", "The Go Programming Language")
	ctx := context.Background()
	if err := store.Delete(ctx, "2"); err != nil {
		log.Fatal(err)
	}

	printArticles(store.Submitted(ctx, "alice", 1))
	// Output:
	// 3 The Go Programming Language
	// 1 Redis in Action
}

// A user's upvoted page: latest upvote first; a cancelled or switched
// upvote leaves it. A post is its poster's upvote.
func ExampleStore_Upvoted() {
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	post(store, "alice", "Redis in Action", "The Go Programming Language", "Lua")
	for _, id := range []string{"2", "1", "3"} {
		now = now.Add(time.Minute)
		vote(store, "bob", voting.Upvote, id)
	}
	vote(store, "bob", voting.Downvote, "3")

	for _, user := range []string{"bob", "alice"} {
		page, err := store.Upvoted(context.Background(), user, 1)
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
// reads through the replica's. A real service dials its replica
// (redis-server --replicaof the primary):
//
//	primary := newPool("10.0.0.1:6379")
//	replica := newPool("10.0.0.2:6379") // a replica of 10.0.0.1
//
// Here one miniredis stands in for both.
func ExampleWithReadPool() {
	_, primary, done := examplePool()
	defer done()
	replica := primary

	store, err := voting.New(primary, voting.WithReadPool(replica))
	if err != nil {
		log.Fatal(err)
	}
	a := post(store, "alice", "Replicas in Action")[0]
	// Vote replies with the article's fresh standing, from the primary:
	// show it to the voter; a read on the replica may lag behind it.
	ctx := context.Background()
	r, err := store.Vote(ctx, "bob", a.ID, voting.Upvote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("bob sees +%d\n", r.Upvotes)
	n, err := store.Count(ctx) // on the replica
	fmt.Println(n, "article", err)
	// Output:
	// bob sees +2
	// 1 article <nil>
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
// where readOnlyPool's Get calls redisc.ReadOnlyConn on each connection.
func ExampleWithReadPool_cluster() {
	cluster := &clusterStandIn{StartupNodes: []string{"10.0.0.1:6379"}}
	store, err := voting.New(cluster, voting.WithKeyPrefix("news"),
		voting.WithReadPool(readOnlyPool{cluster}))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// A user's karma: here, Reddit's, one point for each upvote on their
// articles, minus one for each downvote.
func ExampleStore_Karma() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1))
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	vote(store, "bob", voting.Upvote, a.ID)
	vote(store, "carol", voting.Upvote, a.ID)
	vote(store, "dave", voting.Downvote, a.ID)

	k, err := store.Karma(context.Background(), "alice")
	fmt.Println(k, err)
	// Output:
	// 1 <nil>
}

// Karma, Reddit style: an upvote gives the poster 1, a downvote takes 1,
// a cancelled vote gives it back, and a vote on one's own article moves
// nothing.
func ExampleWithKarma() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1))
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	vote(store, "alice", voting.Downvote, a.ID)

	for _, v := range []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote} {
		vote(store, "bob", v, a.ID)
		k, err := store.Karma(context.Background(), "alice")
		fmt.Println(v, k, err)
	}
	// Output:
	// up 1 <nil>
	// down -1 <nil>
	// cancel 0 <nil>
}

// Votes cost their voter karma, lamernews style: 1 an upvote and 6 a
// downvote, given back when the vote is cancelled.
func ExampleWithVoteCost() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1), voting.WithVoteCost(1, 6))
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	vote(store, "bob", voting.Upvote, a.ID)
	vote(store, "carol", voting.Downvote, a.ID)

	ctx := context.Background()
	for _, user := range []string{"alice", "bob", "carol"} {
		k, err := store.Karma(ctx, user)
		fmt.Println(user, k, err)
	}
	// Output:
	// alice 0 <nil>
	// bob -1 <nil>
	// carol -6 <nil>
}

// Downvotes need karma, as on Hacker News: here, at least 1.
func ExampleWithMinKarma() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1), voting.WithMinKarma(0, 1))
	defer done()
	post(store, "alice", "Redis in Action")
	post(store, "bob", "Spam, spam, spam")

	ctx := context.Background()
	_, err := store.Vote(ctx, "alice", "2", voting.Downvote)
	fmt.Println(errors.Is(err, voting.ErrNotAllowed), err)
	vote(store, "carol", voting.Upvote, "1") // alice earns a point
	_, err = store.Vote(ctx, "alice", "2", voting.Downvote)
	fmt.Println(err)
	// Output:
	// true voting: vote: not allowed: "2"
	// <nil>
}

// The users with the most karma, highest first, ties by name.
func ExampleStore_TopUsers() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1))
	defer done()
	post(store, "alice", "Redis in Action")
	post(store, "bob", "The Go book")
	post(store, "carol", "SICP")
	vote(store, "dave", voting.Upvote, "1", "2", "3")
	vote(store, "erin", voting.Upvote, "1", "2")
	vote(store, "erin", voting.Downvote, "3")

	top, err := store.TopUsers(context.Background(), 1)
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

// A poster may fix a typo; nobody else may.
func ExampleStore_Edit() {
	store, done := exampleStore(nil, voting.WithEditWindow(15*time.Minute))
	defer done()
	a, err := store.Post(context.Background(), "alice", "Redis in Acton", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}

	a, err = store.Edit(context.Background(), a.ID, "alice", "Redis in Action", a.Link)
	fmt.Println(a.Title, a.Link, err)
	_, err = store.Edit(context.Background(), a.ID, "bob", "Mine now", "")
	fmt.Println(err)
	// Output:
	// Redis in Action https://redis.io <nil>
	// voting: edit: not allowed: article "1" is not "bob"'s to edit, or its edit window has passed
}

// Edits are allowed for 15 minutes after the post.
func ExampleWithEditWindow() {
	now := posted
	store, done := exampleStore(&now, voting.WithEditWindow(15*time.Minute))
	defer done()
	a := post(store, "alice", "Redis in Acton")[0]

	for _, title := range []string{"Redis in Action", "Redis in Action, 2nd ed."} {
		now = now.Add(10 * time.Minute)
		_, err := store.Edit(context.Background(), a.ID, "alice", title, "")
		fmt.Println(errors.Is(err, voting.ErrNotAllowed))
	}
	// Output:
	// false
	// true
}

// A rate-limited call tells how long to wait: here, at most two votes a
// minute.
func ExampleRetryAfter() {
	now := posted
	store, done := exampleStore(&now, voting.WithVoteLimit(2, time.Minute))
	defer done()
	post(store, "alice", "one", "two", "three")

	for _, id := range []string{"1", "2", "3"} {
		_, err := store.Vote(context.Background(), "bob", id, voting.Upvote)
		fmt.Println(err, voting.RetryAfter(err))
		now = now.Add(20 * time.Second)
	}
	// Output:
	// <nil> 0s
	// <nil> 0s
	// voting: vote: rate limited: retry after 20s 20s
}

// At most 3 votes an hour per user: the fourth ballot of a batch is
// refused, the others counted.
func ExampleWithVoteLimit() {
	store, done := exampleStore(nil, voting.WithVoteLimit(3, time.Hour))
	defer done()
	post(store, "alice", "one", "two", "three", "four")

	var ballots []voting.Ballot
	for _, id := range []string{"1", "2", "3", "4"} {
		ballots = append(ballots, voting.Ballot{User: "bob", ID: id, Vote: voting.Upvote})
	}
	results, err := store.VoteBatch(context.Background(), ballots)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.Upvotes, errors.Is(r.Err, voting.ErrRateLimited))
	}
	// Output:
	// 2 false
	// 2 false
	// 2 false
	// 0 true
}

// One post per user every 15 minutes, lamernews style.
func ExampleWithPostInterval() {
	now := posted
	store, done := exampleStore(&now, voting.WithPostInterval(15*time.Minute))
	defer done()

	for _, wait := range []time.Duration{0, 10 * time.Minute, 5 * time.Minute} {
		now = now.Add(wait)
		_, err := store.Post(context.Background(), "alice", "Redis tips", "")
		fmt.Println(voting.RetryAfter(err), err)
	}
	// Output:
	// 0s <nil>
	// 5m0s voting: post: rate limited: retry after 5m0s
	// 0s <nil>
}

// A link may be posted again 48 hours after its last post, lamernews
// style; until then Post returns the article that has it.
func ExampleWithRepostAfter() {
	now := posted
	store, done := exampleStore(&now, voting.WithRepostAfter(48*time.Hour))
	defer done()
	ctx := context.Background()
	first, err := store.Post(ctx, "alice", "Redis", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}

	now = now.Add(24 * time.Hour)
	a, err := store.Post(ctx, "bob", "Redis!", "https://redis.io")
	fmt.Println(a.ID == first.ID, err)
	now = now.Add(24 * time.Hour)
	a, err = store.Post(ctx, "bob", "Redis!", "https://redis.io")
	fmt.Println(a.ID, err)
	// Output:
	// true voting: post: duplicate link: "https://redis.io" is article "1"
	// 2 <nil>
}

// With WithUniqueLinks, a retried Post (its reply lost) cannot post twice.
func ExampleWithUniqueLinks() {
	store, done := exampleStore(nil, voting.WithUniqueLinks())
	defer done()
	ctx := context.Background()
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

// By default a write refuses text that could hide what it shows or run
// in a browser: a javascript: link, an escape sequence in a title, a
// right-to-left override in a comment, a name with a space at its end.
func ExampleStore_Post_safeText() {
	store, done := exampleStore(nil)
	defer done()
	ctx := context.Background()

	_, err := store.Post(ctx, "mallory", "Free prizes", "javascript:alert(1)")
	fmt.Println(err)
	_, err = store.Post(ctx, "mallory", "Title\x1b[2J", "")
	fmt.Println(err)
	_, err = store.Post(ctx, "alice ", "Redis in Action", "https://redis.io")
	fmt.Println(errors.Is(err, voting.ErrInvalidArgument))
	a, err := store.Post(ctx, "alice", "Redis in Action", "HTTPS://redis.io/docs")
	fmt.Println(a.ID, err)
	_, err = store.Comment(ctx, a.ID, "", "mallory", "see gpj.\u202eexe")
	fmt.Println(err)
	// Output:
	// voting: post: invalid argument: link: scheme "javascript" is not http or https
	// voting: post: invalid argument: title: contains a control character U+001B at byte 5
	// true
	// 1 <nil>
	// voting: comment: invalid argument: body: contains a bidi control U+202E at byte 8
}

// A service that issues user names checks them as the store will.
func ExampleCheckUserName() {
	for _, name := range []string{"alice", "Zoë Ørsted", "alice ", "al\u200bice"} {
		fmt.Println(voting.CheckUserName(name))
	}
	// Output:
	// <nil>
	// <nil>
	// voting: invalid argument: user "alice ": ends with white space U+0020 at byte 5
	// voting: invalid argument: user "al\u200bice": contains a character that is not printable U+200B at byte 2
}

// WithLinkSchemes sets the schemes a link may have: here ftp besides
// http and https.
func ExampleWithLinkSchemes() {
	store, done := exampleStore(nil, voting.WithLinkSchemes("http", "https", "ftp"))
	defer done()
	ctx := context.Background()

	a, err := store.Post(ctx, "alice", "The RFCs", "ftp://ftp.rfc-editor.org/in-notes/")
	fmt.Println(a.Link, err)
	_, err = store.Post(ctx, "alice", "A mail", "mailto:alice@example.com")
	fmt.Println(err)
	// Output:
	// ftp://ftp.rfc-editor.org/in-notes/ <nil>
	// voting: post: invalid argument: link: scheme "mailto" is not http, https or ftp
}

// WithRawText keeps any text within the limits as given, for a site that
// shows it where control and bidi characters are harmless, or that moves
// data kept under other rules. A store without the option reads it back
// as it is.
func ExampleWithRawText() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	raw, err := voting.New(pool, voting.WithRawText())
	if err != nil {
		log.Fatal(err)
	}
	a, err := raw.Post(ctx, "alice ", "Column A\tColumn B", "urn:isbn:9781617290855")
	if err != nil {
		log.Fatal(err)
	}

	strict, err := voting.New(pool)
	if err != nil {
		log.Fatal(err)
	}
	got, err := strict.Article(ctx, a.ID)
	fmt.Printf("%q %q %q %v\n", got.Poster, got.Title, got.Link, err)
	_, err = strict.Post(ctx, "alice ", "Column A\tColumn B", "")
	fmt.Println(err)
	// Output:
	// "alice " "Column A\tColumn B" "urn:isbn:9781617290855" <nil>
	// voting: post: invalid argument: poster "alice ": ends with white space U+0020 at byte 5
}

// Two sites on one Redis, each under its prefix: every key of a store is
// "{prefix}:...", so they share nothing, and on a Redis Cluster each
// site's keys are in one slot.
func ExampleWithKeyPrefix() {
	_, pool, done := examplePool()
	defer done()
	sites := map[string]*voting.Store{}
	for _, prefix := range []string{"news", "jobs"} {
		store, err := voting.New(pool, voting.WithKeyPrefix(prefix))
		if err != nil {
			log.Fatal(err)
		}
		sites[prefix] = store
	}

	post(sites["news"], "alice", "Redis in Action")
	for _, prefix := range []string{"news", "jobs"} {
		n, err := sites[prefix].Count(context.Background())
		fmt.Println(prefix, n, err)
	}
	// Output:
	// news 1 <nil>
	// jobs 0 <nil>
}

// Each vote is worth an hour of freshness here, not the default 432
// seconds (a day per 200 votes).
func ExampleWithVoteWeight() {
	store, done := exampleStore(nil, voting.WithVoteWeight(3600))
	defer done()
	a := post(store, "alice", "Redis in Action")[0]

	r, err := store.Vote(context.Background(), "bob", a.ID, voting.Upvote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("score = posted + %.0fs\n", r.Score-float64(a.Posted.Unix()))
	// Output:
	// score = posted + 7200s
}

// Voting closes a day after the post here, not a week.
func ExampleWithVoteWindow() {
	now := posted
	store, done := exampleStore(&now, voting.WithVoteWindow(24*time.Hour))
	defer done()
	a := post(store, "alice", "Today's news")[0]

	now = now.Add(25 * time.Hour)
	_, err := store.Vote(context.Background(), "bob", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrVotingClosed), err)
	// Output:
	// true voting: vote: voting closed: "1"
}

// A group's cached page goes a minute after its last read here; the next
// read builds it again, as exact as ever.
func ExampleWithGroupCacheTTL() {
	mr, pool, done := examplePool()
	defer done()
	store, err := voting.New(pool, voting.WithGroupCacheTTL(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	a := post(store, "alice", "Redis streams")[0]
	group(store, a.ID, "redis")

	ctx := context.Background()
	if _, err := store.GroupArticles(ctx, "redis", voting.ScoreDesc, 1); err != nil {
		log.Fatal(err)
	}
	cache := "{voting}:cache:score:redis"
	fmt.Println(mr.TTL(cache))
	mr.FastForward(time.Minute)
	fmt.Println(mr.Exists(cache))
	// Output:
	// 1m0s
	// false
}

// Pages of two articles, and a pager sized by Count.
func ExampleWithPageSize() {
	const perPage = 2
	store, done := exampleStore(nil, voting.WithPageSize(perPage))
	defer done()
	post(store, "alice", "one", "two", "three", "four", "five")

	ctx := context.Background()
	n, err := store.Count(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for page := 1; page <= int(n+perPage-1)/perPage; page++ {
		list, err := store.Articles(ctx, voting.TimeAsc, page)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("page %d: %d articles from %q\n", page, len(list), list[0].Title)
	}
	// Output:
	// page 1: 2 articles from "one"
	// page 2: 2 articles from "three"
	// page 3: 1 articles from "five"
}

// A clock of the caller's dates the posts and closes voting: here, a
// test's clock that it moves by hand.
func ExampleWithClock() {
	_, pool, done := examplePool()
	defer done()
	now := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	store, err := voting.New(pool, voting.WithClock(func() time.Time { return now }))
	if err != nil {
		log.Fatal(err)
	}

	a := post(store, "alice", "Happy new year")[0]
	fmt.Println(a.Posted)
	now = now.AddDate(0, 0, 8)
	_, err = store.Vote(context.Background(), "bob", a.ID, voting.Upvote)
	fmt.Println(err)
	// Output:
	// 2030-01-01 09:00:00 +0000 UTC
	// voting: vote: voting closed: "1"
}

// A store that waits for a replica after every write. miniredis has no
// replicas, so its WAIT answers 0 at once and the vote, applied, comes
// back with ErrNotReplicated: a caller shows the result, and knows a
// failover may lose it.
func ExampleWithWaitReplicas() {
	store, done := exampleStore(nil, voting.WithWaitReplicas(1, 50*time.Millisecond))
	defer done()
	ctx := context.Background()
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

// A store whose every write is fsynced to the primary's append-only file
// before it returns (redis-server --appendonly yes, Redis 7.2 or later).
// miniredis has no WAITAOF, so here the post, applied, comes back with
// ErrNotReplicated.
func ExampleWithWaitAOF() {
	store, done := exampleStore(nil, voting.WithWaitAOF(1, 0, time.Second))
	defer done()

	a, err := store.Post(context.Background(), "alice", "Redis in Action", "")
	fmt.Println(a.ID, errors.Is(err, voting.ErrNotReplicated))
	// Output:
	// 1 true
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

// A hook that wraps another calls its Call: here, one that passes only
// the writes on to the hook it wraps.
func ExampleHookFunc_Call() {
	writesOnly := func(h voting.Hook) voting.Hook {
		return voting.HookFunc(func(ctx context.Context, call *voting.Call, next func(ctx context.Context) error) error {
			switch call.Op {
			case "Post", "Vote", "VoteBatch", "Edit", "Delete":
				return h.Call(ctx, call, next)
			}
			return next(ctx)
		})
	}
	audit := voting.HookFunc(func(ctx context.Context, call *voting.Call, next func(ctx context.Context) error) error {
		fmt.Println("audit:", call.Op)
		return next(ctx)
	})
	store, done := exampleStore(nil, voting.WithHook(writesOnly(audit)))
	defer done()

	a := post(store, "alice", "Redis in Action")[0]
	vote(store, "bob", voting.Upvote, a.ID)
	if _, err := store.Article(context.Background(), a.ID); err != nil {
		log.Fatal(err)
	}
	// Output:
	// audit: Post
	// audit: Vote
}

// The identity a store records with its first post: its key layout and
// the options every process writing to it must share.
func ExampleStore_Identity() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1), voting.WithUserPages())
	defer done()
	fmt.Println(store.Identity())
	// Output:
	// 7 karma userpages
}

// Recorded reads what the store's first write recorded.
func ExampleStore_Recorded() {
	store, done := exampleStore(nil, voting.WithOrders(voting.Top))
	defer done()
	ctx := context.Background()
	_, found, _ := store.Recorded(ctx)
	fmt.Println("before the first post:", found)
	post(store, "alice", "Redis in Action")
	id, found, err := store.Recorded(ctx)
	fmt.Println("after it:", found, id, err)
	// Output:
	// before the first post: false
	// after it: true 7 orders=top <nil>
}

// A process started with other shared options than the store records
// changes nothing: its writes get ErrIncompatible, naming the
// difference. Reconfigure, run once by an operator, records the new
// options; the processes still on the old ones then get ErrIncompatible.
func ExampleStore_Reconfigure() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	old, _ := voting.New(pool)
	a, _ := old.Post(ctx, "alice", "Redis in Action", "")

	withKarma, _ := voting.New(pool, voting.WithKarma(1, -1))
	_, err := withKarma.Vote(ctx, "bob", a.ID, voting.Upvote)
	fmt.Println(errors.Is(err, voting.ErrIncompatible), err)

	was, err := withKarma.Reconfigure(ctx)
	fmt.Printf("was %q, now %q, %v\n", was, withKarma.Identity(), err)
	_, err = withKarma.Vote(ctx, "bob", a.ID, voting.Upvote)
	fmt.Println("new options:", err)
	_, err = old.Vote(ctx, "carol", a.ID, voting.Upvote)
	fmt.Println("old options:", errors.Is(err, voting.ErrIncompatible))
	// Output:
	// true voting: vote: incompatible store: karma on here, off in the store
	// was "7", now "7 karma", <nil>
	// new options: <nil>
	// old options: true
}

// A service checks, once at start, that the store records its options,
// and refuses to start otherwise: New does not talk to Redis, and
// without the check the difference shows at the first write.
func ExampleStore_CheckIdentity() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	site, _ := voting.New(pool, voting.WithKeyPrefix("news"), voting.WithOrders(voting.Hot, voting.Best),
		voting.WithVoteLimit(5, time.Minute))
	fmt.Println("empty store:", site.CheckIdentity(ctx))
	site.Post(ctx, "alice", "Redis in Action", "")
	fmt.Println("same options:", site.CheckIdentity(ctx))

	other, _ := voting.New(pool, voting.WithKeyPrefix("news"), voting.WithOrders(voting.Hot, voting.Best),
		voting.WithVoteLimit(5, time.Minute), voting.WithKarma(1, -1))
	if err := other.CheckIdentity(ctx); err != nil {
		fmt.Println(errors.Is(err, voting.ErrIncompatible))
		fmt.Println(err)
	}
	// Output:
	// empty store: <nil>
	// same options: <nil>
	// true
	// voting: check identity: incompatible store: karma 1,-1 here, off in the store: to write with this process's options, record them first with "votectl -prefix news options -karma 1,-1"; or start the process with the store's: no -karma
}

// Check tells an operator, or a health endpoint, whether the store's
// deployment is sound.
func ExampleStore_Check() {
	store, done := exampleStore(nil)
	defer done()
	h, err := store.Check(context.Background())
	fmt.Println(h.Reachable, h.Compatible, h.Serious, len(h.Problems), err)
	// Output:
	// true true false 0 <nil>
}

// An identity's text, as Redis keeps it at {prefix}:store.
func ExampleIdentity_String() {
	id := voting.Identity{Layout: voting.LayoutVersion, Options: []string{"orders=top,hot", "karma"}}
	fmt.Println(id.String())
	// Output:
	// 7 orders=top,hot karma
}

// An operator's tool opens a recorded store with its own options.
func ExampleIdentity_StoreOptions() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	site, _ := voting.New(pool, voting.WithKarma(1, -1), voting.WithUniqueLinks())
	site.Post(ctx, "alice", "Redis in Action", "https://example.com")

	tool, _ := voting.New(pool)
	id, _, _ := tool.Recorded(ctx)
	opts, err := id.StoreOptions()
	if err != nil {
		log.Fatal(err)
	}
	tool, _ = voting.New(pool, opts...)
	rules, err := tool.Rules(ctx) // the store's numbers
	fmt.Println(tool.Identity(), tool.Identity().String() == site.Identity().String())
	fmt.Println(rules, err)
	// Output:
	// 7 karma uniquelinks true
	// karma=1,-1 <nil>
}

// A rule's numbers are data of the store: SetRules changes them for
// every process from its next call, with no restart. Here a process
// started with a limit of 2 votes a minute applies the store's 3.
func ExampleStore_SetRules() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	site, _ := voting.New(pool, voting.WithVoteLimit(2, time.Minute))
	var ids []string
	for _, title := range []string{"one", "two", "three"} {
		a, _ := site.Post(ctx, "alice", title, "")
		ids = append(ids, a.ID)
	}
	admin, _ := voting.New(pool, voting.WithVoteLimit(2, time.Minute))
	rules, err := admin.SetRules(ctx, voting.WithVoteLimit(3, time.Minute))
	fmt.Println(rules.VoteLimit, rules.VoteLimitPer, err)
	for _, id := range ids {
		_, err := site.Vote(ctx, "bob", id, voting.Upvote)
		fmt.Println("bob votes on", id+":", err)
	}
	_, err = admin.SetRules(ctx, voting.WithKarma(1, -1))
	fmt.Println(errors.Is(err, voting.ErrNotAllowed), err)
	// Output:
	// 3 1m0s <nil>
	// bob votes on 1: <nil>
	// bob votes on 2: <nil>
	// bob votes on 3: <nil>
	// true voting: set rules: not allowed: karma is off in this store (WithKarma): turning a rule on is Reconfigure's (votectl options)
}

// Rules reads the numbers the store applies: its own, recorded by its
// first post or SetRules, whatever the process's options say.
func ExampleStore_Rules() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	first, _ := voting.New(pool, voting.WithKarma(1, -1), voting.WithPostInterval(15*time.Minute))
	first.Post(ctx, "alice", "Redis in Action", "")
	later, _ := voting.New(pool, voting.WithKarma(2, -2), voting.WithPostInterval(time.Minute))
	rules, err := later.Rules(ctx)
	fmt.Println(rules.On, rules.KarmaPerUpvote, rules.PostInterval, err)
	fmt.Println(rules)
	// Output:
	// [karma postinterval] 1 15m0s <nil>
	// karma=1,-1 postinterval=900000
}

// Options gives a store the rules of another: here, a new store on
// another prefix with the numbers the first one applies.
func ExampleRules_Options() {
	_, pool, done := examplePool()
	defer done()
	ctx := context.Background()
	site, _ := voting.New(pool, voting.WithVoteLimit(10, time.Hour))
	site.SetRules(ctx, voting.WithVoteLimit(20, time.Hour))
	rules, _ := site.Rules(ctx)
	copyOf, _ := voting.New(pool, append(rules.Options(), voting.WithKeyPrefix("copy"))...)
	copied, err := copyOf.Rules(ctx)
	fmt.Println(copied, err)
	// Output:
	// votelimit=20,3600000 <nil>
}

// String gives the rules in the words of the rules record, as votectl
// options shows them, spans in milliseconds: a line for a log.
func ExampleRules_String() {
	store, done := exampleStore(nil, voting.WithKarma(1, -1), voting.WithVoteLimit(10, time.Minute))
	defer done()
	post(store, "alice", "Redis in Action") // the first post records the rules

	rules, err := store.Rules(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rules:", rules)
	fmt.Println(voting.Rules{On: []string{"postinterval"}, PostInterval: 15 * time.Minute})
	// Output:
	// rules: karma=1,-1 votelimit=10,60000
	// postinterval=900000
}

// comments posts, on article, a comment by each "poster: body" of list
// in turn, each a reply to the comment of the parents index given (-1
// for the article), and returns their ids.
func comments(store *voting.Store, article string, parents []int, list ...string) []string {
	var ids []string
	for i, pb := range list {
		poster, body, _ := strings.Cut(pb, ": ")
		parent := ""
		if parents[i] >= 0 {
			parent = ids[parents[i]]
		}
		c, err := store.Comment(context.Background(), article, parent, poster, body)
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return ids
}

// voteComments casts user's vote v on each of ids.
func voteComments(store *voting.Store, user string, v voting.VoteType, ids ...string) {
	for _, id := range ids {
		if _, err := store.VoteComment(context.Background(), user, id, v); err != nil {
			log.Fatal(err)
		}
	}
}

// printArticles prints the id and title of each article of list; err,
// the read's, is fatal.
func printArticles(list []voting.Article, err error) {
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range list {
		fmt.Println(a.ID, a.Title)
	}
}

// printThread prints a thread, each comment indented by its depth, with
// a "load more" stub where replies were left out; err, the read's, is
// fatal.
func printThread(list []voting.ThreadComment, err error) {
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range list {
		who := c.Poster + ": " + c.Body
		if c.Deleted {
			who = "[deleted]"
		}
		fmt.Printf("%s+%d -%d %s", strings.Repeat("  ", c.Depth), c.Upvotes, c.Downvotes, who)
		if c.More > 0 {
			fmt.Printf(" [%d more]", c.More)
		}
		fmt.Println()
	}
}

// A thread read best-first, as Reddit's: each comment followed by its
// replies, siblings by the lower bound of their upvote ratio. With a
// limit of 3, dave's reply waits behind a stub.
func ExampleStore_Thread() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, 0, -1, 2},
		"bob: Great book", "carol: Agreed", "dave: Chapter 2 is wrong", "alice: Fixed in the 2nd edition")
	voteComments(store, "carol", voting.Upvote, ids[0])
	voteComments(store, "erin", voting.Upvote, ids[0])
	voteComments(store, "erin", voting.Downvote, ids[2])

	printThread(store.Thread(ctx, a.ID, voting.Best, 3))
	// Output:
	// +3 -0 bob: Great book
	//   +1 -0 carol: Agreed
	// +1 -1 dave: Chapter 2 is wrong [1 more]
}

// A comment on an article, and a reply to it: each comes with its
// poster's own upvote.
func ExampleStore_Comment() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]

	c, err := store.Comment(ctx, a.ID, "", "bob", "Great book")
	fmt.Printf("%s on %s by %s: %q +%d %v\n", c.ID, c.Article, c.Poster, c.Body, c.Upvotes, err)
	r, err := store.Comment(ctx, a.ID, c.ID, "carol", "Agreed")
	fmt.Printf("%s, a reply to %s, %v\n", r.ID, r.Parent, err)
	_, err = store.Comment(ctx, a.ID, "", "dave", "   ")
	fmt.Println(errors.Is(err, voting.ErrInvalidArgument))
	// Output:
	// 1 on 1 by bob: "Great book" +1 <nil>
	// 2, a reply to 1, <nil>
	// true
}

// A comment's score is its points, upvotes minus downvotes.
func ExampleStore_VoteComment() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	c := comments(store, a.ID, []int{-1}, "bob: Great book")[0]

	for _, v := range []voting.VoteType{voting.Downvote, voting.Upvote, voting.CancelVote} {
		r, err := store.VoteComment(context.Background(), "carol", c, v)
		fmt.Println(r.Previous, r.Points, r.Upvotes, r.Downvotes, err)
	}
	// Output:
	// none 0 1 1 <nil>
	// down 2 2 0 <nil>
	// up 1 1 0 <nil>
}

// A batch's results as JSON for a queue consumer's log: a ballot's
// result, or its error.
func ExampleBallotResult_MarshalJSON() {
	now := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	store, done := exampleStore(&now)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]

	results, err := store.VoteBatch(context.Background(), []voting.Ballot{
		{User: "bob", ID: a.ID, Vote: voting.Upvote},
		{User: "carol", ID: "9", Vote: voting.Upvote},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(results)
	fmt.Println(string(out))
	// Output:
	// [{"previous":"none","score":1893489264,"points":2,"upvotes":2,"downvotes":0},{"previous":"none","points":0,"upvotes":0,"downvotes":0,"error":"voting: vote: article not found: \"9\""}]
}

// The replies under one comment, as a thread of their own: its direct
// replies have depth 0.
func ExampleStore_Replies() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, 0, 1, 0},
		"bob: Great book", "carol: Agreed", "dave: Me too", "erin: Which edition?")

	printThread(store.Replies(context.Background(), ids[0], voting.TimeAsc, 10))
	// Output:
	// +1 -0 carol: Agreed
	//   +1 -0 dave: Me too
	// +1 -0 erin: Which edition?
}

// A deleted comment with replies stays in its place, without poster or
// body; one without replies goes, and takes along a deleted parent left
// without replies.
func ExampleStore_DeleteComment() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, 0, -1}, "bob: Great book", "carol: Agreed", "dave: Meh")

	if err := store.DeleteComment(ctx, ids[0]); err != nil {
		log.Fatal(err)
	}
	printThread(store.Thread(ctx, a.ID, voting.TimeAsc, 10))
	if err := store.DeleteComment(ctx, ids[1]); err != nil {
		log.Fatal(err)
	}
	printThread(store.Thread(ctx, a.ID, voting.TimeAsc, 10))
	a, _ = store.Article(ctx, a.ID)
	fmt.Println(a.Comments, "comment left")
	// Output:
	// +1 -0 [deleted]
	//   +1 -0 carol: Agreed
	// +1 -0 dave: Meh
	// +1 -0 dave: Meh
	// 1 comment left
}

// The poster may edit a comment within the edit window.
func ExampleStore_EditComment() {
	store, done := exampleStore(nil, voting.WithEditWindow(15*time.Minute))
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	c := comments(store, a.ID, []int{-1}, "bob: Graet book")[0]

	edited, err := store.EditComment(context.Background(), c, "bob", "Great book")
	fmt.Println(edited.Body, err)
	_, err = store.EditComment(context.Background(), c, "carol", "Mine now")
	fmt.Println(errors.Is(err, voting.ErrNotAllowed))
	// Output:
	// Great book <nil>
	// true
}

// Comments by id, skipping those that are gone, and a user's arrows on
// them.
func ExampleStore_CommentVotesOf() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, -1}, "bob: Great book", "carol: Too long")
	voteComments(store, "dave", voting.Downvote, ids[1])

	ids = append(ids, "99")
	list, err := store.CommentsByID(ctx, ids)
	if err != nil {
		log.Fatal(err)
	}
	arrows, err := store.CommentVotesOf(ctx, "dave", ids)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(list), arrows)
	// Output:
	// 2 [none down none]
}

// A user's saved comments, in the user's order, in one round trip: a
// deleted comment kept for its replies comes without poster or body, and
// one that is gone is skipped.
func ExampleStore_CommentsByID() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, 0, -1}, "bob: Great book", "carol: Agreed", "dave: Meh")
	for _, id := range []string{ids[0], ids[2]} {
		if err := store.DeleteComment(ctx, id); err != nil {
			log.Fatal(err)
		}
	}

	saved := []string{ids[1], ids[2], ids[0], "99"}
	list, err := store.CommentsByID(ctx, saved)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range list {
		fmt.Printf("%s %q %q deleted=%v replies=%d\n", c.ID, c.Poster, c.Body, c.Deleted, c.Replies)
	}
	// Output:
	// 2 "carol" "Agreed" deleted=false replies=0
	// 1 "" "" deleted=true replies=1
}

// A user's latest comments, newest first.
func ExampleStore_UserComments() {
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	for _, body := range []string{"Great book", "Chapter 2 is wrong"} {
		now = now.Add(time.Minute)
		comments(store, a.ID, []int{-1}, "bob: "+body)
	}

	list, err := store.UserComments(context.Background(), "bob", 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range list {
		fmt.Println(c.ID, c.Body)
	}
	// Output:
	// 2 Chapter 2 is wrong
	// 1 Great book
}

// At most one comment every 30 seconds per user.
func ExampleWithCommentInterval() {
	now := posted
	store, done := exampleStore(&now, voting.WithCommentInterval(30*time.Second))
	defer done()
	a := post(store, "alice", "Redis in Action")[0]

	for _, wait := range []time.Duration{0, 10 * time.Second, 20 * time.Second} {
		now = now.Add(wait)
		_, err := store.Comment(context.Background(), a.ID, "", "bob", "First!")
		fmt.Println(voting.RetryAfter(err), errors.Is(err, voting.ErrRateLimited))
	}
	// Output:
	// 0s false
	// 20s true
	// 0s false
}
