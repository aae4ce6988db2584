package voting

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
)

// rowFields is the width of one article row, as lua/rows.lua writes it:
// id, title, link, poster, posted, upvotes, downvotes, score.
const rowFields = 8

// parseArticles turns the rows of a read script into Articles: the one
// parser behind Article, Articles and GroupArticles.
func parseArticles(rows []interface{}) ([]Article, error) {
	if len(rows)%rowFields != 0 {
		return nil, fmt.Errorf("reply of %d fields is not whole rows", len(rows))
	}
	list := make([]Article, len(rows)/rowFields)
	for i := range list {
		if err := parseArticle(rows[i*rowFields:(i+1)*rowFields], &list[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func parseArticle(row []interface{}, a *Article) error {
	var b [rowFields][]byte
	for i, v := range row {
		f, ok := v.([]byte)
		if !ok {
			return fmt.Errorf("article row field %d: unexpected %T", i, v)
		}
		b[i] = f
	}
	posted, err := strconv.ParseInt(string(b[4]), 10, 64)
	if err != nil {
		return fmt.Errorf("article %q: posted: %w", b[0], err)
	}
	up, err := strconv.ParseInt(string(b[5]), 10, 64)
	if err != nil {
		return fmt.Errorf("article %q: upvotes: %w", b[0], err)
	}
	down, err := strconv.ParseInt(string(b[6]), 10, 64)
	if err != nil {
		return fmt.Errorf("article %q: downvotes: %w", b[0], err)
	}
	score, err := strconv.ParseFloat(string(b[7]), 64)
	if err != nil {
		return fmt.Errorf("article %q: score: %w", b[0], err)
	}
	*a = Article{
		ID:        string(b[0]),
		Title:     string(b[1]),
		Link:      string(b[2]),
		Poster:    string(b[3]),
		Posted:    time.Unix(posted, 0),
		Score:     score,
		Upvotes:   up,
		Downvotes: down,
	}
	return nil
}

// The statuses of lua/vote.lua's reply.
const (
	voteApplied  = 0 // the vote is in place; the result follows
	voteNotFound = 1 // the article does not exist
	voteClosed   = 2 // the article's voting window has ended
)

// parseVote parses the vote script's reply: a status, then, for status 0
// (applied), the previous vote, the score and the counters. It reads the
// fields one by one rather than with redis.Scan, whose pointer arguments
// would cost an allocation each on the hottest path.
func parseVote(reply []interface{}) (status int64, r VoteResult, err error) {
	if len(reply) == 0 {
		return 0, r, fmt.Errorf("empty vote reply")
	}
	if status, err = redis.Int64(reply[0], nil); err != nil || status != voteApplied {
		return status, r, err
	}
	if len(reply) != 5 {
		return 0, r, fmt.Errorf("vote reply of %d fields, want 5", len(reply))
	}
	prev, err := redis.Int64(reply[1], nil)
	if err == nil {
		r.Score, err = redis.Float64(reply[2], nil)
	}
	if err == nil {
		r.Upvotes, err = redis.Int64(reply[3], nil)
	}
	if err == nil {
		r.Downvotes, err = redis.Int64(reply[4], nil)
	}
	r.Previous = VoteType(prev)
	return voteApplied, r, err
}
