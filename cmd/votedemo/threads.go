package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/votekit/voting"
)

// The day's comment threads: at the end of each simulated day, readers
// comment on the two articles at the top of the front page (once per
// article), reply to each other and vote on the comments; the demo then
// prints each thread's first comments, best first, as Reddit shows them.
// The comments draw on a random source of their own, so that they leave
// the articles' traffic, and the verdict, as they were.

const (
	// threadArticles is how many of the day's top articles get a thread.
	threadArticles = 2
	// threadComments is how many comments each thread gets, and
	// threadShown how many of them the demo prints.
	threadComments = 12
	threadShown    = 6
	// commentVoters is how many readers vote on each comment at most.
	commentVoters = 8
)

// commentBodies are the readers' comments: on the article, then
// replies.
var commentBodies = [][]string{
	{"Great write-up, thanks.", "We tried this in production; it held up.", "The benchmarks look off to me.",
		"Wish this had been around five years ago.", "Does this work on a cluster?", "Clear and to the point."},
	{"Same experience here.", "Which version did you test?", "Agreed, with one caveat: memory.",
		"Source? I measured the opposite.", "It does, with hash tags.", "This."},
}

// threads is the state of the day's threads: which articles have one.
type threads struct {
	rng  *rand.Rand
	done map[string]bool
}

func newThreads(seed uint64) *threads {
	return &threads{rng: rand.New(rand.NewPCG(seed, 0x636f6d6d)), done: map[string]bool{}}
}

// printThreads gives the first articles of top a thread each, if they
// have none yet, and prints each thread's first comments, best first.
func (s *sim) printThreads(ctx context.Context, top []voting.Article) error {
	for _, a := range top[:min(threadArticles, len(top))] {
		if !s.threads.done[a.ID] {
			if err := s.comment(ctx, a.ID); err != nil {
				return err
			}
			s.threads.done[a.ID] = true
		}
		art, err := s.store.Article(ctx, a.ID)
		if err != nil {
			return err
		}
		list, err := s.store.Thread(ctx, a.ID, voting.Best, threadShown)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "Comments on #%s %q, best first (%d of %d)\n", a.ID, clip(a.Title, 44), len(list), art.Comments)
		rows := [][]string{{"points", "", "comment"}}
		for _, c := range list {
			more := ""
			if c.More > 0 {
				more = fmt.Sprintf(" [%d more]", c.More)
			}
			rows = append(rows, []string{
				fmt.Sprintf("%+d", c.Upvotes-c.Downvotes), fmt.Sprintf("%d/%d", c.Upvotes, c.Downvotes),
				strings.Repeat("  ", c.Depth) + c.Poster + ": " + c.Body + more,
			})
		}
		writeTable(s.out, rows, "rrl")
	}
	return nil
}

// comment posts threadComments comments on the article, each a reply to
// an earlier one or to the article, and votes on them.
func (s *sim) comment(ctx context.Context, article string) error {
	r := s.threads.rng
	var ids []string
	for i := 0; i < threadComments; i++ {
		parent := ""
		if len(ids) > 0 && r.IntN(2) == 0 {
			parent = ids[r.IntN(len(ids))]
		}
		bodies := commentBodies[0]
		if parent != "" {
			bodies = commentBodies[1]
		}
		c, err := s.store.Comment(ctx, article, parent, fmt.Sprintf("reader%d", r.IntN(users)), bodies[r.IntN(len(bodies))])
		if err != nil {
			return err
		}
		ids = append(ids, c.ID)
		first := r.IntN(users)
		for j := r.IntN(commentVoters + 1); j > 0; j-- {
			v := voting.Upvote
			if r.IntN(4) == 0 {
				v = voting.Downvote
			}
			if _, err := s.store.VoteComment(ctx, fmt.Sprintf("reader%d", (first+j)%users), c.ID, v); err != nil {
				return err
			}
		}
	}
	return nil
}
