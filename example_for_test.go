package voting_test

import (
	"context"
	"fmt"
	"log"

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
