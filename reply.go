package voting

import (
	"fmt"
	"strconv"
	"time"
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
