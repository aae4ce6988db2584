package main

import (
	"context"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// TestCheckPosterReupvoteOnComment: a comment's poster who cancels
// their own upvote and upvotes again has the vote logged
// (comment_vote.lua, docs/OPERATIONS.md "Moderation"), while the comment
// voter record holds no field for it (the upvote is implied again):
// check takes the implied upvote as standing (comments.go
// checker.commentVotes) and finds the store it wrote clean.
func TestCheckPosterReupvoteOnComment(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		st, _, c := commentedStore(t, addr, "mchk3", voting.WithKeyPrefix("mchk3"), voting.WithClock(func() time.Time { return now }),
			voting.WithVoteLog())
		if _, err := st.VoteComment(ctx, c.Poster, c.ID, voting.CancelVote); err != nil {
			t.Fatal(err)
		}
		if _, err := st.VoteComment(ctx, c.Poster, c.ID, voting.Upvote); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "mchk3", "check"); code != 0 {
			t.Fatalf("check: %d\n%s%s", code, out, errs)
		}
	})
}
