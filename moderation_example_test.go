package voting_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/votekit/voting"
)

// A user's standing votes, newest first, a page at a time.
func ExampleWithVoteLog() {
	ctx := context.Background()
	now := posted
	store, done := exampleStore(&now, voting.WithVoteLog())
	defer done()
	post(store, "alice", "one", "two", "three")
	for _, id := range []string{"1", "2", "3"} {
		if _, err := store.Vote(ctx, "bob", id, voting.Upvote); err != nil {
			log.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	if _, err := store.Vote(ctx, "bob", "2", voting.Downvote); err != nil { // moves to the front
		log.Fatal(err)
	}
	cursor := ""
	for {
		list, next, err := store.VotesBy(ctx, "bob", cursor, 2)
		if err != nil {
			log.Fatal(err)
		}
		for _, v := range list {
			fmt.Println(v.ID, v.Vote, v.At.Format(time.Kitchen))
		}
		if next == "" {
			break
		}
		cursor = next
	}
	// Output:
	// 2 down 12:03PM
	// 3 up 12:02PM
	// 1 up 12:00PM
}

// VotesBy needs the vote log.
func ExampleStore_VotesBy() {
	store, done := exampleStore(nil)
	defer done()
	_, _, err := store.VotesBy(context.Background(), "bob", "", 10)
	fmt.Println(err)
	// Output:
	// voting: votes by: not allowed: the store keeps no vote log (WithVoteLog)
}

// Who voted on an article, the poster's own upvote included.
func ExampleStore_Voters() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "one")[0]
	if _, err := store.Vote(ctx, "bob", a.ID, voting.Downvote); err != nil {
		log.Fatal(err)
	}
	list, next, err := store.Voters(ctx, a.ID, "", 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range list {
		fmt.Println(v.User, v.Vote)
	}
	fmt.Printf("next %q\n", next)
	// Unordered output:
	// alice up
	// bob down
	// next ""
}

// Who voted on a comment: its poster's implied upvote first.
func ExampleStore_CommentVoters() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "one")[0]
	c, err := store.Comment(ctx, a.ID, "", "carol", "first!")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.VoteComment(ctx, "bob", c.ID, voting.Downvote); err != nil {
		log.Fatal(err)
	}
	list, _, err := store.CommentVoters(ctx, c.ID, "", 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range list {
		fmt.Println(v.User, v.Vote)
	}
	// Output:
	// carol up
	// bob down
}

// A voting ring's votes taken back: counts, scores and karma as if
// they had never been cast.
func ExampleStore_ReverseVotes() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithVoteLog(), voting.WithKarma(1, -1))
	defer done()
	a := post(store, "alice", "one")[0]
	for _, u := range []string{"sock1", "sock2", "bob"} {
		if _, err := store.Vote(ctx, u, a.ID, voting.Upvote); err != nil {
			log.Fatal(err)
		}
	}
	for _, u := range []string{"sock1", "sock2"} {
		n, err := store.ReverseVotes(ctx, u)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u, n)
	}
	a, _ = store.Article(ctx, a.ID)
	karma, _ := store.Karma(ctx, "alice")
	fmt.Println(a.Upvotes, karma)
	// Output:
	// sock1 1
	// sock2 1
	// 2 1
}

// Refuse: the suspended user's votes are refused until the end.
func ExampleStore_Suspend() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "one")[0]
	if err := store.Suspend(ctx, "troll", voting.Refuse, posted.Add(72*time.Hour)); err != nil {
		log.Fatal(err)
	}
	_, err := store.Vote(ctx, "troll", a.ID, voting.Downvote)
	fmt.Println(err)
	fmt.Println(voting.RetryAfter(err))
	// Output:
	// voting: vote: not allowed: suspended, for 72h0m0s more
	// 72h0m0s
}

// Shadow: the user sees the vote as cast; it counts nowhere.
func ExampleShadow() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "one")[0]
	if err := store.Suspend(ctx, "ring", voting.Shadow, posted.Add(time.Hour)); err != nil {
		log.Fatal(err)
	}
	r, err := store.Vote(ctx, "ring", a.ID, voting.Upvote)
	if err != nil {
		log.Fatal(err)
	}
	seen, _ := store.VoteOf(ctx, "ring", a.ID)
	a, _ = store.Article(ctx, a.ID)
	fmt.Println("told:", r.Upvotes, "sees:", seen, "counted:", a.Upvotes)
	// Output:
	// told: 2 sees: up counted: 1
}

// A user's suspension, and its end.
func ExampleStore_Suspended() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	if err := store.Suspend(ctx, "troll", voting.Shadow, posted.Add(time.Hour)); err != nil {
		log.Fatal(err)
	}
	mode, until, _ := store.Suspended(ctx, "troll")
	fmt.Println(mode, until.Sub(posted))
	if err := store.Unsuspend(ctx, "troll"); err != nil {
		log.Fatal(err)
	}
	mode, until, _ = store.Suspended(ctx, "troll")
	fmt.Println(mode, until.IsZero())
	// Output:
	// shadow 1h0m0s
	// none true
}

// Unsuspend ends a suspension before its time.
func ExampleStore_Unsuspend() {
	ctx := context.Background()
	store, done := exampleStore(nil)
	defer done()
	a := post(store, "alice", "one")[0]
	if err := store.Suspend(ctx, "bob", voting.Refuse, posted.Add(time.Hour)); err != nil {
		log.Fatal(err)
	}
	if err := store.Unsuspend(ctx, "bob"); err != nil {
		log.Fatal(err)
	}
	r, err := store.Vote(ctx, "bob", a.ID, voting.Upvote)
	fmt.Println(r.Upvotes, err)
	// Output:
	// 2 <nil>
}

// The vote events, read in order from the oldest kept; a consumer
// remembers the last ID and reads on from it.
func ExampleWithVoteEvents() {
	ctx := context.Background()
	store, done := exampleStore(nil, voting.WithVoteEvents(100_000))
	defer done()
	a := post(store, "alice", "one")[0]
	if _, err := store.Vote(ctx, "bob", a.ID, voting.Upvote); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Vote(ctx, "bob", a.ID, voting.Downvote); err != nil {
		log.Fatal(err)
	}
	if err := store.Suspend(ctx, "bob", voting.Refuse, posted.Add(time.Hour)); err != nil {
		log.Fatal(err)
	}
	events, last, err := store.VoteEvents(ctx, "", 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range events {
		fmt.Println(e.Kind, e.User, e.Target, e.From, e.To)
	}
	more, _, _ := store.VoteEvents(ctx, last, 100)
	fmt.Println(len(more))
	// Output:
	// vote bob 1 none up
	// vote bob 1 up down
	// suspend bob refuse none none
	// 0
}

// VoteEvents needs the stream.
func ExampleStore_VoteEvents() {
	store, done := exampleStore(nil)
	defer done()
	_, _, err := store.VoteEvents(context.Background(), "", 10)
	fmt.Println(err)
	// Output:
	// voting: vote events: not allowed: the store keeps no vote events (WithVoteEvents)
}

// Suspension's names.
func ExampleSuspension_String() {
	fmt.Println(voting.Refuse, voting.Shadow)
	// Output:
	// refuse shadow
}
