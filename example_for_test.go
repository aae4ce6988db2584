package voting_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// A page view: the front page with the arrows of the user reading it,
// in one round trip.
func ExampleStore_ArticlesFor() {
	store, done := exampleStore(nil)
	defer done()
	post(store, "alice", "Redis in Action", "The Go Programming Language", "SQL Antipatterns")
	vote(store, "bob", voting.Upvote, "2")
	vote(store, "bob", voting.Downvote, "3")

	front, arrows, err := store.ArticlesFor(context.Background(), "bob", voting.ScoreDesc, 1)
	if err != nil {
		log.Fatal(err)
	}
	for i, a := range front {
		fmt.Printf("%-28s %+d  bob: %v\n", a.Title, a.Upvotes-a.Downvotes, arrows[i])
	}
	// Output:
	// The Go Programming Language  +2  bob: up
	// Redis in Action              +1  bob: none
	// SQL Antipatterns             +0  bob: down
}

// A group page with the arrows of the user reading it, in one round
// trip (a warm page; a cold one takes the steps GroupArticles takes).
func ExampleStore_GroupArticlesFor() {
	store, done := exampleStore(nil)
	defer done()
	for _, title := range []string{"Redis streams", "Go generics", "Postgres indexes"} {
		a := post(store, "alice", title)[0]
		if title != "Go generics" {
			group(store, a.ID, "databases")
		}
	}
	vote(store, "bob", voting.Upvote, "3")

	page, arrows, err := store.GroupArticlesFor(context.Background(), "bob", "databases", voting.ScoreDesc, 1)
	if err != nil {
		log.Fatal(err)
	}
	for i, a := range page {
		fmt.Printf("%-17s bob: %v\n", a.Title, arrows[i])
	}
	// Output:
	// Postgres indexes  bob: up
	// Redis streams     bob: none
}

// The week's top with the arrows of the user reading it.
func ExampleStore_TopSinceFor() {
	now := posted
	store, done := exampleStore(&now, voting.WithOrders(voting.Top))
	defer done()
	post(store, "alice", "a week old")
	now = now.Add(6 * 24 * time.Hour)
	post(store, "alice", "a day old", "new")
	vote(store, "bob", voting.Upvote, "2")
	vote(store, "carol", voting.Downvote, "3")
	now = now.Add(24 * time.Hour)

	week, arrows, err := store.TopSinceFor(context.Background(), "carol", 2*24*time.Hour, 1)
	if err != nil {
		log.Fatal(err)
	}
	for i, a := range week {
		fmt.Printf("%-9s %+d  carol: %v\n", a.Title, a.Upvotes-a.Downvotes, arrows[i])
	}
	// Output:
	// a day old +2  carol: none
	// new       +0  carol: down
}

// alice's submitted page, as bob sees it, with his arrows.
func ExampleStore_SubmittedFor() {
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	postEvery(store, &now, time.Minute, "alice", "Redis in Action", "Lua", "The Go Programming Language")
	vote(store, "bob", voting.Upvote, "1")
	vote(store, "bob", voting.Downvote, "2")

	page, arrows, err := store.SubmittedFor(context.Background(), "bob", "alice", 1)
	if err != nil {
		log.Fatal(err)
	}
	for i, a := range page {
		fmt.Printf("%-27s bob: %v\n", a.Title, arrows[i])
	}
	// Output:
	// The Go Programming Language bob: none
	// Lua                         bob: down
	// Redis in Action             bob: up
}

// bob's upvoted page, as carol sees it, with her arrows.
func ExampleStore_UpvotedFor() {
	now := posted
	store, done := exampleStore(&now, voting.WithUserPages())
	defer done()
	post(store, "alice", "Redis in Action", "The Go Programming Language")
	for _, id := range []string{"2", "1"} {
		now = now.Add(time.Minute)
		vote(store, "bob", voting.Upvote, id)
	}
	vote(store, "carol", voting.Downvote, "2")

	page, arrows, err := store.UpvotedFor(context.Background(), "carol", "bob", 1)
	if err != nil {
		log.Fatal(err)
	}
	for i, a := range page {
		fmt.Printf("%-27s carol: %v\n", a.Title, arrows[i])
	}
	// Output:
	// Redis in Action             carol: none
	// The Go Programming Language carol: down
}

// A thread with the arrows of the user reading it, in one round trip: a
// comment's poster reads their own upvote.
func ExampleStore_ThreadFor() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, 0, -1},
		"bob: Great book", "carol: Agreed", "dave: Chapter 2 is wrong")
	voteComments(store, "carol", voting.Upvote, ids[0])
	voteComments(store, "carol", voting.Downvote, ids[2])

	thread, arrows, err := store.ThreadFor(context.Background(), "carol", a.ID, voting.Best, 10)
	if err != nil {
		log.Fatal(err)
	}
	for i, c := range thread {
		fmt.Printf("%-26s carol: %v\n", strings.Repeat("  ", c.Depth)+c.Poster+": "+c.Body, arrows[i])
	}
	// Output:
	// bob: Great book            carol: up
	//   carol: Agreed            carol: up
	// dave: Chapter 2 is wrong   carol: down
}

// The replies under a comment with the arrows of the user reading them.
func ExampleStore_RepliesFor() {
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "Redis in Action")[0]
	ids := comments(store, a.ID, []int{-1, 0, 0},
		"bob: Great book", "carol: Agreed", "dave: Which edition?")
	voteComments(store, "bob", voting.Downvote, ids[2])

	replies, arrows, err := store.RepliesFor(context.Background(), "bob", ids[0], voting.TimeAsc, 10)
	if err != nil {
		log.Fatal(err)
	}
	for i, c := range replies {
		fmt.Printf("%-21s bob: %v\n", c.Poster+": "+c.Body, arrows[i])
	}
	// Output:
	// carol: Agreed         bob: none
	// dave: Which edition?  bob: down
}
