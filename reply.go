package voting

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// Every script replies {status, ...}, but vote.lua, whose vote done is one
// string (vote.go parseVote). The reads of a page and of votes put their
// rows in one string after the status (page.go parsePage, votes.go
// parseVotes), so that the client reads one value, not one per field.
// These are the statuses, as internal/layout defines them; decode splits
// them from the rest, and statusErr turns them into the package's errors.
// This file is the contract every reply keeps, and the rows of articles
// and comments that several replies share; each operation's own parser
// sits beside its method.
const (
	statusOK          = layout.StatusOK
	statusNotFound    = layout.StatusNotFound
	statusClosed      = layout.StatusClosed
	statusDup         = layout.StatusDuplicate
	statusBuilding    = layout.StatusBuilding
	statusLimit       = layout.StatusLimit
	statusCorrupt     = layout.StatusCorrupt
	statusNotAllowed  = layout.StatusNotAllowed  // the rules' (rules.go)
	statusRateLimited = layout.StatusRateLimited // the rules' (rules.go)
	statusInvalid     = layout.StatusInvalid     // the comments' (comments.go)
)

// errBuilding is the error of statusBuilding: a step of a group cache's
// build was done, and GroupArticles calls again.
var errBuilding = errors.New("group cache being built")

// errCorrupt is the error of a voter record that holds something other
// than a vote, written by hand: it wraps none of the sentinels.
var errCorrupt = errors.New("corrupt voter record")

// decode splits a script's reply into its status and the rest.
func decode(reply interface{}, err error) (int64, []interface{}, error) {
	values, err := redis.Values(reply, scriptError(err))
	if err != nil {
		return 0, nil, err
	}
	if len(values) == 0 {
		return 0, nil, errors.New("empty reply")
	}
	status, err := redis.Int64(values[0], nil)
	if err != nil {
		return 0, nil, fmt.Errorf("reply status: %w", err)
	}
	return status, values[1:], nil
}

// scriptError returns the error a script raised as the script said it,
// without the decoration redis-server adds ("ERR " before, " script:
// <sha>, on @user_script:<line>." after), and Redis's refusals of a
// call wrapped in their sentinels (errors.go refusal): ErrTryAgain,
// ErrOutOfMemory. Other errors are returned as they are.
func scriptError(err error) error {
	e, ok := err.(redis.Error)
	if !ok {
		return retriesSpent(err)
	}
	msg := strings.TrimPrefix(string(e), "ERR ")
	if i := strings.Index(msg, " script: "); i >= 0 && strings.HasPrefix(msg, "voting: ") {
		msg = msg[:i]
	}
	if err, ok := parseIncompatible(msg); ok {
		return err
	}
	return refusal(redis.Error(msg), msg)
}

// statusErrs are the errors of the statuses other than statusOK.
var statusErrs = map[int64]error{
	statusNotFound:    ErrNotFound,
	statusClosed:      ErrVotingClosed,
	statusDup:         ErrDuplicate,
	statusBuilding:    errBuilding,
	statusLimit:       ErrInvalidArgument,
	statusCorrupt:     errCorrupt,
	statusNotAllowed:  ErrNotAllowed,
	statusRateLimited: ErrRateLimited,
	statusInvalid:     ErrInvalidArgument,
}

// statusErr returns the error of op for a status other than statusOK
// about the article id ("" for none).
func statusErr(op string, status int64, id string) error {
	e := &opError{op: op, err: statusErrs[status]}
	switch {
	case e.err == nil:
		e.err = fmt.Errorf("unexpected reply status %d", status)
	case status == statusLimit:
		e.detail = fmt.Sprintf("article %q would be in more than %d groups", id, MaxArticleGroups)
	case id != "":
		e.detail = strconv.Quote(id)
	}
	return e
}

// rowFields is the width of one article row, as lib/record.lua's rows writes it:
// id, record (parseRecord), live comment count.
const rowFields = 3

// parseArticles turns article rows into Articles: the one parser behind
// every read of articles.
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

// parseRowsFor parses the rest of the reply of a read of article rows
// for user: with a user, the rows, then the user's vote on each, one
// byte a row (lib/record.lua withVotes); without ("", a plain read), the
// rows alone, and no votes.
func parseRowsFor(rest []interface{}, user string) ([]Article, []VoteType, error) {
	if user == "" {
		list, err := parseArticles(rest)
		return list, nil, err
	}
	return parseWithVotes(rest, rowFields, parseArticles)
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
	if err := parseRecord(string(b[1]), a); err != nil {
		return fmt.Errorf("article %q: %w", b[0], err)
	}
	n, err := strconv.ParseInt(string(b[2]), 10, 64)
	if err != nil {
		return fmt.Errorf("article %q: comment count: %w", b[0], err)
	}
	a.ID, a.Comments = string(b[0]), n
	return nil
}

// rowComments returns the comment count in a page row's head (pageRow
// checked it): what follows '+', or 0 where there is none.
func rowComments(head string) int64 {
	_, count, ok := strings.Cut(head[:len(head)-1], "+")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(count, 10, 64)
	return n
}

// pageRow finds the row of page that starts at off: it returns where its
// record starts, counted from off, and where the next row starts.
func pageRow(page []byte, off int) (rec, next int, _ error) {
	row := page[off:]
	if len(row) == 0 || row[0] <= layout.MemberBase {
		return 0, 0, errors.New("page reply: malformed row")
	}
	id := 1 + int(row[0]-layout.MemberBase)
	size := bytes.IndexByte(row[min(id, len(row)):], ' ')
	if size < 1 {
		return 0, 0, errors.New("page reply: malformed row")
	}
	head := row[id : id+size]
	rec = id + size + 1
	if plus := bytes.IndexByte(head, '+'); plus >= 0 {
		count, err := strconv.ParseInt(string(head[plus+1:]), 10, 64)
		if err != nil || count < 0 {
			return 0, 0, errors.New("page reply: malformed row")
		}
		head = head[:plus]
	}
	n, err := strconv.Atoi(string(head))
	if err != nil || n < 0 || n > len(row)-rec {
		return 0, 0, errors.New("page reply: malformed row")
	}
	return rec, off + rec + n, nil
}

// parseRecord parses an article's record (layout.ParseRecord) into a's
// title, link, poster, post time, counts and score. The three strings
// are cut from rec.
func parseRecord(rec string, a *Article) error {
	var r layout.Record
	weight, err := layout.ParseRecordWeight(rec, &r)
	if err != nil {
		return err
	}
	*a = Article{
		Score:     articleScore(r.Posted, weight, r.Up, r.Down),
		Poster:    r.Poster,
		Title:     r.Title,
		Link:      r.Link,
		Posted:    time.Unix(r.Posted, 0).UTC(),
		Upvotes:   r.Up,
		Downvotes: r.Down,
	}
	return nil
}

// scan decodes a reply of fixed shape: it checks that the status is
// statusOK and that the rest has one field for each of dest, and stores
// them in dest as redis.Scan does (*string, *int64, *float64).
func scan(status int64, rest []interface{}, dest ...interface{}) error {
	if status != statusOK {
		return fmt.Errorf("unexpected reply status %d", status)
	}
	if len(rest) != len(dest) {
		return fmt.Errorf("reply of %d fields, want %d", len(rest)+1, len(dest)+1)
	}
	_, err := redis.Scan(rest, dest...)
	return err
}

// parseStrings decodes the rest of a reply that is a list of strings.
func parseStrings(rest []interface{}) ([]string, error) {
	return redis.Strings(rest, nil)
}

// parseWithVotes parses rows of width fields each, which parse reads,
// then the user's vote on each, one byte a row (lib/record.lua
// withVotes, lib/tree.lua's rows).
func parseWithVotes[T any](rest []interface{}, width int, parse func(rows []interface{}) ([]T, error)) ([]T, []VoteType, error) {
	if len(rest)%width != 1 {
		return nil, nil, fmt.Errorf("reply of %d fields is not rows and their votes", len(rest))
	}
	list, err := parse(rest[:len(rest)-1])
	if err != nil {
		return nil, nil, err
	}
	votes, _, err := parseVotes(rest[len(rest)-1:], len(list))
	if err != nil {
		return nil, nil, err
	}
	return list, votes, nil
}

// parseVotes parses votes.lua's reply, {votes}: one byte per id, the
// vote ('+', '-', '0') or what stands in its place ('n' not found, 'c' a
// corrupt voter record), into the votes and each one's status.
func parseVotes(rest []interface{}, n int) ([]VoteType, []int64, error) {
	if len(rest) != 1 {
		return nil, nil, fmt.Errorf("votes reply of %d fields, want 2", len(rest)+1)
	}
	b, ok := rest[0].([]byte)
	if !ok || len(b) != n {
		return nil, nil, fmt.Errorf("votes reply %q for %d ids", rest[0], n)
	}
	votes := make([]VoteType, n)
	status := make([]int64, n)
	for i, c := range b {
		switch c {
		case '+':
			votes[i] = Upvote
		case '-':
			votes[i] = Downvote
		case '0':
		case 'n':
			status[i] = statusNotFound
		case 'c':
			status[i] = statusCorrupt
		default:
			return nil, nil, fmt.Errorf("vote %q in reply", c)
		}
	}
	return votes, status, nil
}

// parseRetry decodes the rest of a RATE_LIMITED reply, {milliseconds},
// into its error.
func parseRetry(rest []interface{}) error {
	if len(rest) != 1 {
		return fmt.Errorf("rate limited reply of %d fields, want 2", len(rest)+1)
	}
	ms, err := redis.Int64(rest[0], nil)
	if err != nil {
		return fmt.Errorf("rate limited reply: %w", err)
	}
	return &retryError{after: time.Duration(max(ms, 1)) * time.Millisecond}
}

// parseRefused decodes the rest of a NOT_ALLOWED reply: nothing for a
// rule's refusal, the milliseconds left for a suspended user's
// (lib/moderation.lua refused), into its error.
func parseRefused(rest []interface{}) error {
	if len(rest) == 0 {
		return ErrNotAllowed
	}
	ms, err := redis.Int64(rest[0], nil)
	if err != nil || len(rest) != 1 {
		return fmt.Errorf("not allowed reply of %d fields: %v", len(rest)+1, err)
	}
	// Capped where a Duration overflows (~292 years: a ban for good).
	return &retryError{after: time.Duration(min(max(ms, 1), math.MaxInt64/int64(time.Millisecond))) * time.Millisecond,
		sentinel: ErrNotAllowed}
}

// parseCommentRecord parses a comment's record (layout.ParseCommentRecord)
// into c, all but its ID; its strings are cut from rec. A deleted
// comment's poster, which the record keeps, is left out.
func parseCommentRecord(rec string, c *Comment) error {
	var r layout.CommentRecord
	if err := layout.ParseCommentRecordInto(rec, &r); err != nil {
		return err
	}
	*c = Comment{
		Article: r.Article, Parent: r.Parent,
		Poster: r.Poster, Body: r.Body,
		Posted:  time.Unix(r.Posted, 0).UTC(),
		Upvotes: r.Up, Downvotes: r.Down, Replies: r.Replies, Deleted: r.Deleted,
	}
	if c.Deleted {
		c.Poster = ""
	}
	return nil
}
