package voting

import (
	"context"
	"fmt"

	"github.com/votekit/voting/internal/layout"
)

// Articles returns page (1-based) of all articles in the given order, with
// every article's fields, in one round trip. A page past the end is empty.
// A page below 1, an unknown Order or one the store has not enabled
// ([WithOrders]) gets [ErrInvalidArgument].
func (s *Store) Articles(ctx context.Context, order Order, page int) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Articles", Order: order, HasOrder: true, Page: page, HasPage: true}, func(ctx context.Context) ([]Article, error) { return s.Articles(ctx, order, page) })
	}
	list, _, err := s.articlesPage(ctx, "articles", "", order, page)
	return list, err
}

// pageArgs lays out page.lua's arguments. KEYS[1]: the ordering of o.
// ARGV[1]: the articles' prefix; ARGV[2..3]: start and stop, ranks,
// inclusive; ARGV[4]: desc ("1" from the highest value down).
func (s *Store) pageArgs(o Order, start, stop int64) []interface{} {
	return s.pageArgsRoom(o, start, stop, 0)
}

// pageArgsRoom is pageArgs with room for more arguments after them.
func (s *Store) pageArgsRoom(o Order, start, stop int64, more int) []interface{} {
	name, desc := o.ordering()
	args := withRoom(5 + more)
	return append(args, s.orderingArgs[name], s.votePrefixes[1], start, stop, flagArg(desc))
}

// parsePage parses page.lua's reply, {page}: the page's rows as one
// string, each the article's member (lib/base.lua member: one byte of the id's
// length, plus 96, then the id), the length of its record in decimal,
// '+' and the article's live comment count where it has any, a space
// and the record. Each article's strings (id, title, link, poster)
// are cut from one string of its own row, so that an article kept does
// not keep its page: one allocation an article, and one for the list.
func parsePage(rest []interface{}) ([]Article, error) {
	if len(rest) != 1 {
		return nil, fmt.Errorf("page reply of %d fields, want 2", len(rest)+1)
	}
	page, ok := rest[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("page reply: unexpected %T", rest[0])
	}
	n := 0
	for off := 0; off < len(page); n++ {
		_, next, err := pageRow(page, off)
		if err != nil {
			return nil, err
		}
		off = next
	}
	list := make([]Article, n)
	off := 0
	for i := range list {
		rec, next, _ := pageRow(page, off)
		row := string(page[off:next])
		id := row[1 : 1+row[0]-layout.MemberBase]
		if err := parseRecord(row[rec:], &list[i]); err != nil {
			return nil, fmt.Errorf("article %q: %w", id, err)
		}
		list[i].ID = id
		list[i].Comments = rowComments(row[:rec])
		off = next
	}
	return list, nil
}

// ArticlesFor returns page (1-based) of all articles in the given order,
// exactly as [Store.Articles] returns it, and user's vote on each of them,
// as [Store.VotesOf] reads it: votes[i] is the vote on list[i], [NoVote]
// where there is none or the article's voting has closed. It reads them
// in one script, one round trip, where Articles and VotesOf take two: a
// page view with its arrows, as Reddit's listings give the logged-in
// user's vote on each item. The page and the votes are one atomic read.
// A page past the end is empty. A user name that VotesOf refuses, a page
// below 1, an unknown Order or one the store has not enabled
// ([WithOrders]) gets [ErrInvalidArgument].
func (s *Store) ArticlesFor(ctx context.Context, user string, order Order, page int) ([]Article, []VoteType, error) {
	if s.hooked(ctx) {
		return observeView(ctx, s, Call{Op: "ArticlesFor", Order: order, HasOrder: true, Page: page, HasPage: true}, func(ctx context.Context) ([]Article, []VoteType, error) {
			return s.ArticlesFor(ctx, user, order, page)
		})
	}
	const op = "articles for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.articlesPage(ctx, op, user, order, page)
}

// articlesPage is the body of Articles (user "", no votes) and
// ArticlesFor, op theirs.
func (s *Store) articlesPage(ctx context.Context, op, user string, order Order, page int) ([]Article, []VoteType, error) {
	start, stop, err := s.pageRange(order, page, maxRank)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	if start < 0 {
		return []Article{}, []VoteType{}, nil
	}
	if user == "" {
		list, err := s.read(ctx, op, pageScript, s.pageArgs(order, start, stop), true, parsePage)
		return list, nil, err
	}
	reply, err := s.evalRoom(ctx, pageForScript, s.pageForArgs(user, order, start, stop), true)
	rest, err := s.rest(op, "", reply, err)
	if err != nil {
		return nil, nil, err
	}
	list, votes, err := parsePageFor(rest)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	return list, votes, nil
}

// pageForArgs lays out page_for.lua's arguments: pageArgs's, then the
// voter records' prefix and the user (ARGV[5..6]).
func (s *Store) pageForArgs(user string, o Order, start, stop int64) []interface{} {
	return append(s.pageArgsRoom(o, start, stop, 2), s.votePrefixes[2], user)
}

// parsePageFor reads page_for.lua's reply: a page, as parsePage reads
// it, and a vote a row of it, as parseVotes reads them.
func parsePageFor(rest []interface{}) ([]Article, []VoteType, error) {
	if len(rest) != 2 {
		return nil, nil, fmt.Errorf("page reply of %d fields, want 3", len(rest)+1)
	}
	list, err := parsePage(rest[:1])
	if err != nil {
		return nil, nil, err
	}
	votes, _, err := parseVotes(rest[1:], len(list))
	if err != nil {
		return nil, nil, err
	}
	return list, votes, nil
}

// maxRank bounds the ranks a page may start at; no sorted set holds more.
const maxRank = 1 << 40

// pageRange validates a page request and returns its inclusive ranks,
// cut at depth articles. A page at or past depth gets start -1: empty,
// without a round trip.
func (s *Store) pageRange(order Order, page int, depth int64) (start, stop int64, err error) {
	switch {
	case !order.Valid():
		return 0, 0, fmt.Errorf("%w: unknown order %v", ErrInvalidArgument, order)
	case order.optional() && !s.enabled[order]:
		return 0, 0, fmt.Errorf("%w: order %v is not enabled (WithOrders)", ErrInvalidArgument, order)
	case page < 1:
		return 0, 0, fmt.Errorf("%w: page %d is below 1", ErrInvalidArgument, page)
	case int64(page-1) >= (depth+int64(s.pageSize)-1)/int64(s.pageSize):
		// The page starts at or past depth; a page that straddles it is
		// cut short below.
		return -1, -1, nil
	}
	start = int64(page-1) * int64(s.pageSize)
	return start, min(start+int64(s.pageSize), depth) - 1, nil
}
