package voting_test

import (
	"fmt"
	"time"

	"github.com/votekit/voting"
)

// An article's value in each order, as the store ranks it: here one
// posted at noon with the default weight, 10 upvotes and 2 downvotes.
func ExampleOrder_Value() {
	posted := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, o := range []voting.Order{voting.ScoreDesc, voting.TimeDesc, voting.Top, voting.Hot, voting.Best, voting.Controversial} {
		fmt.Printf("%-13s %.4f\n", o, o.Value(posted, voting.DefaultVoteWeight, 10, 2))
	}
	// Output:
	// score-desc    1795352256.0000
	// time-desc     1795348800.0000
	// top           8.0000
	// hot           14696.9208
	// best          0.6578
	// controversial 1.6438
}
