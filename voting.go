package voting

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Post posts an article by poster and records the poster's own upvote, so
// the article starts with one upvote and a score of its post time plus one
// vote weight. The poster may later change or cancel that vote. Title
// must not be blank; link may be empty (a text post); both are stored
// byte for byte. A title with a control character, a bidi control or a
// line or paragraph separator, a link that is not an http or https URL
// with a host, and a poster with white space at either end get
// [ErrInvalidArgument] ([WithRawText] and [WithLinkSchemes] relax them).
// With [WithUniqueLinks], a link a live article has already gets that
// article and an error wrapping [ErrDuplicate]; so does, with
// [WithRepostAfter], a link an article posted within its span has. With
// [WithPostInterval], a post too soon after the poster's last gets
// [ErrRateLimited] ([RetryAfter]).
//
// Post sends its script on a connection that has just answered a PING
// (docs/OPERATIONS.md, "Failures"). A Post whose reply is lost may or
// may not have posted, and returns an error wrapping [ErrUnknownOutcome];
// without WithUniqueLinks a retry may post the article twice.
func (s *Store) Post(ctx context.Context, poster, title, link string) (Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Post"}, func(ctx context.Context) (Article, error) { return s.Post(ctx, poster, title, link) })
	}
	const op = "post"
	if err := s.text.post("poster", poster, title, link); err != nil {
		return Article{}, opErr(op, err)
	}
	t := s.now()
	posted := t.Unix()
	args := s.appendPostRules(s.postArgs(poster, title, link, posted), poster, t)
	reply, err := s.eval(ctx, postScript, args)
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Article{}, err
	}
	switch status {
	case statusOK:
		a := Article{Title: title, Link: link, Poster: poster, Posted: time.Unix(posted, 0).UTC(), Upvotes: 1}
		if err := scan(status, rest, &a.ID, &a.Score); err != nil {
			return Article{}, opErr(op, err)
		}
		return a, replicationErr(op, late)
	case statusDup:
		list, err := parseArticles(rest)
		if err != nil || len(list) != 1 {
			return Article{}, opErr(op, fmt.Errorf("duplicate reply: %v", err))
		}
		return list[0], &opError{op: op, err: ErrDuplicate, detail: fmt.Sprintf("%q is article %q", link, list[0].ID)}
	case statusRateLimited:
		return Article{}, opErr(op, parseRetry(rest))
	case statusNotAllowed: // a suspended poster (moderation.go)
		return Article{}, opErr(op, parseRefused(rest))
	}
	return Article{}, statusErr(op, status, "")
}

// Article returns the article with the given id, or an error wrapping
// ErrNotFound.
func (s *Store) Article(ctx context.Context, id string) (Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Article"}, func(ctx context.Context) (Article, error) { return s.Article(ctx, id) })
	}
	const op = "article"
	if !canonicalID(id) {
		return Article{}, notFound(op, id)
	}
	list, err := s.articles(ctx, op, []string{id})
	if err != nil {
		return Article{}, err
	}
	if len(list) == 0 {
		return Article{}, notFound(op, id)
	}
	return list[0], nil
}

// ArticlesByID returns the articles with the given ids, in the order of
// ids, in one round trip, skipping ids that name no article (never
// posted, deleted, or malformed). At most [MaxBatch] ids.
func (s *Store) ArticlesByID(ctx context.Context, ids []string) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "ArticlesByID", Count: len(ids)}, func(ctx context.Context) ([]Article, error) { return s.ArticlesByID(ctx, ids) })
	}
	return readByID(ctx, "articles by id", ids, s.articles)
}

func (s *Store) articles(ctx context.Context, op string, ids []string) ([]Article, error) {
	return s.readRows(ctx, op, articlesScript, s.articlesArgs(ids))
}

// Articles returns page (1-based) of all articles in the given order, with
// every article's fields, in one round trip. A page past the end is empty.
// A page below 1, an unknown Order or one the store has not enabled
// ([WithOrders]) gets [ErrInvalidArgument].
func (s *Store) Articles(ctx context.Context, order Order, page int) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Articles", Order: order, HasOrder: true, Page: page, HasPage: true}, func(ctx context.Context) ([]Article, error) { return s.Articles(ctx, order, page) })
	}
	const op = "articles"
	start, stop, err := s.pageRange(order, page, maxRank)
	if err != nil {
		return nil, opErr(op, err)
	}
	if start < 0 {
		return []Article{}, nil
	}
	return s.read(ctx, op, pageScript, s.pageArgs(order, start, stop), true, parsePage)
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
		r, err := observe(ctx, s, Call{Op: "ArticlesFor", Order: order, HasOrder: true, Page: page, HasPage: true},
			func(ctx context.Context) (view[Article], error) {
				list, votes, err := s.ArticlesFor(ctx, user, order, page)
				return view[Article]{list, votes}, err
			})
		return r.list, r.votes, err
	}
	const op = "articles for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	start, stop, err := s.pageRange(order, page, maxRank)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	if start < 0 {
		return []Article{}, []VoteType{}, nil
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

// view is the two results of ArticlesFor and the other reads for a
// user (GroupArticlesFor, ThreadFor...), as one result of their hooks.
type view[T any] struct {
	list  []T
	votes []VoteType
}

// TopSince returns page (1-based) of the articles posted within the last d
// by the store's clock (at or after its now minus d, to the second), by
// net votes, ties newest first, usually in one round trip. It lists the
// first MaxTopSince articles of the period; later pages are empty. It
// needs Top enabled ([WithOrders]) and sees the articles posted with Top
// enabled; a d of zero or less, or a page below 1, gets
// [ErrInvalidArgument].
//
// The articles posted in the 10-minute bucket where the period starts
// (the edge) may be any number (24,000 at 40 posts a second): one round
// trip reads at most 2,000 of them. When the period's part of that
// bucket holds more, and the page is not found among the bucket's first
// 2,000 by net votes, TopSince reads that part in bounded steps, one
// round trip of up to 2,000 articles each, then reads the page with what
// they found: 2 + n/2,000 round trips for a part of n articles, each a
// script of a few milliseconds. Between those steps other calls run: the
// steps choose the bucket's first articles by their net votes when each
// step runs, so an article voted past them meanwhile may be missing from
// the page, which is otherwise read, ranked and filled at the last step.
func (s *Store) TopSince(ctx context.Context, d time.Duration, page int) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "TopSince", Page: page, HasPage: true}, func(ctx context.Context) ([]Article, error) { return s.TopSince(ctx, d, page) })
	}
	list, _, err := s.topSince(ctx, "top since", "", d, page)
	return list, err
}

// TopSinceFor returns page (1-based) of the articles posted within the
// last d, exactly as [Store.TopSince] returns it, and user's vote on
// each of them, as [Store.VotesOf] reads it: votes[i] is the vote on
// list[i], [NoVote] where there is none or the article's voting has
// closed. It takes the round trips TopSince takes (usually one),
// reading the votes in the script that reads the page, so the page and
// its votes are one atomic read. A user name that VotesOf refuses gets
// [ErrInvalidArgument], as do the periods and pages TopSince refuses.
func (s *Store) TopSinceFor(ctx context.Context, user string, d time.Duration, page int) ([]Article, []VoteType, error) {
	if s.hooked(ctx) {
		r, err := observe(ctx, s, Call{Op: "TopSinceFor", Page: page, HasPage: true},
			func(ctx context.Context) (view[Article], error) {
				list, votes, err := s.TopSinceFor(ctx, user, d, page)
				return view[Article]{list, votes}, err
			})
		return r.list, r.votes, err
	}
	const op = "top since for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.topSince(ctx, op, user, d, page)
}

// topSince is the body of TopSince (user "", no votes) and TopSinceFor,
// op theirs.
func (s *Store) topSince(ctx context.Context, op, user string, d time.Duration, page int) ([]Article, []VoteType, error) {
	if d <= 0 {
		return nil, nil, opErr(op, fmt.Errorf("%w: period %v is not positive", ErrInvalidArgument, d))
	}
	start, stop, err := s.pageRange(Top, page, MaxTopSince)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	if start < 0 {
		return []Article{}, []VoteType{}, nil
	}
	// The first whole second at or after now - d.
	cutoff := s.now().Add(-d)
	first := cutoff.Unix()
	if cutoff.Nanosecond() > 0 {
		first++
	}
	list, votes, err := s.readRowsFor(ctx, op, topSinceScript, s.topSinceArgs(user, first, start, stop, nil), user)
	if !errors.Is(err, errBuilding) {
		return list, votes, err
	}
	edge, err := s.topSinceEdge(ctx, op, first, int(stop+1))
	if err != nil {
		return nil, nil, err
	}
	return s.readRowsFor(ctx, op, topSinceScript, s.topSinceArgs(user, first, start, stop, edge), user)
}

// edgeMember is a member of TopSince's edge and its net votes.
type edgeMember struct {
	m     string
	v     float64
	value string // v as Redis wrote it
}

// topSinceEdge returns the first need members, in TopSince's order, of
// the articles in cutoff's 10-minute bucket posted at or after cutoff:
// the edge of a period starting there, read in steps of
// top_since_edge.lua, each of up to s.edge articles, keeping the first
// need found so far, and asking each step only for those that would come
// before the need-th.
func (s *Store) topSinceEdge(ctx context.Context, op string, cutoff int64, need int) ([]string, error) {
	to := (floorDiv(cutoff, topEdgeSize) + 1) * topEdgeSize
	var first []edgeMember
	afterTime, afterMember, overValue, overMember := "", "", "", ""
	for {
		rest, err := s.call(ctx, op, topSinceEdge, "", s.topSinceEdgeArgs(cutoff, to, afterTime, afterMember, overValue, overMember))
		if err != nil {
			return nil, err
		}
		if len(rest) < 3 || len(rest)%2 != 1 {
			return nil, opErr(op, fmt.Errorf("edge step reply of %d fields", len(rest)))
		}
		head, err := redis.Strings(rest[:3], nil)
		if err != nil {
			return nil, opErr(op, fmt.Errorf("edge step reply: %w", err))
		}
		pairs, err := redis.Strings(rest[3:], nil)
		if err != nil {
			return nil, opErr(op, fmt.Errorf("edge step reply: %w", err))
		}
		for i := 0; i < len(pairs); i += 2 {
			v, err := strconv.ParseFloat(pairs[i+1], 64)
			if err != nil {
				return nil, opErr(op, fmt.Errorf("edge step reply: %w", err))
			}
			first = append(first, edgeMember{pairs[i], v, pairs[i+1]})
		}
		// TopSince's order: net votes, then id, highest first; members
		// compare as their ids do.
		slices.SortFunc(first, func(a, b edgeMember) int {
			return cmp.Or(cmp.Compare(b.v, a.v), strings.Compare(b.m, a.m))
		})
		if len(first) >= need {
			first = first[:need]
			overValue, overMember = first[need-1].value, first[need-1].m
		}
		if head[0] == "1" {
			break
		}
		afterTime, afterMember = head[1], head[2]
	}
	members := make([]string, len(first))
	for i, e := range first {
		members[i] = e.m
	}
	return members, nil
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

// Count returns the number of articles of the store.
func (s *Store) Count(ctx context.Context) (int64, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Count"}, func(ctx context.Context) (int64, error) { return s.Count(ctx) })
	}
	return s.count(ctx, "count", s.keys.orderingKey("time"), "zset")
}

func (s *Store) count(ctx context.Context, op, key, kind string) (int64, error) {
	var n int64
	if _, err := s.evalScan(ctx, op, countScript, []interface{}{key, kind}, &n); err != nil {
		return 0, err
	}
	return n, nil
}

// Vote records user's vote v on the article: [Upvote], [Downvote], or
// [CancelVote] to take it back. It replaces the user's previous vote, which
// the result reports; voting the same way again changes nothing, so a
// retried Vote is safe. It returns an error wrapping [ErrInvalidVote] for
// any other v, [NoVote] (the zero value) included, before Redis is touched;
// [ErrInvalidArgument] for a user name Post would refuse, [ErrNotFound] for
// an unknown article,
// and [ErrVotingClosed] once voting has closed: the store's clock passed the
// article's close, or its voter records expired. A voter record holding
// anything but a vote (written by hand) gets an error that wraps none of
// the sentinels, and the vote changes nothing. With [WithKarma] the vote
// moves the poster's karma (and, with [WithVoteCost], the voter's); with
// [WithMinKarma] a voter with too little karma gets [ErrNotAllowed], and
// with [WithVoteLimit] one over the limit gets [ErrRateLimited]
// ([RetryAfter]). A refused vote changes nothing. With
// [WithWaitReplicas], a vote applied but not known to be on the replicas
// returns its VoteResult and an error wrapping [ErrNotReplicated].
func (s *Store) Vote(ctx context.Context, user, id string, v VoteType) (VoteResult, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Vote"}, func(ctx context.Context) (VoteResult, error) { return s.Vote(ctx, user, id, v) })
	}
	const op = "vote"
	if err := s.text.vote(op, user, id, v, notFound); err != nil {
		return VoteResult{}, err
	}
	t := s.now()
	reply, err := s.evalRoom(ctx, voteScript, s.appendVoteRules(s.voteArgs(user, id, v, t.Unix()), t), true)
	return voteReply(op, id, reply, err, notFound)
}

// ballot validates a vote and its user, a name the vote writes; ids are
// checked apart, as a malformed one is not found.
func (r textRules) ballot(user string, v VoteType) error {
	switch {
	case v == NoVote:
		return fmt.Errorf("%w: NoVote, the zero VoteType, is no ballot: send Upvote, Downvote, or CancelVote to take a vote back", ErrInvalidVote)
	case !v.IsBallot():
		return fmt.Errorf("%w: %v", ErrInvalidVote, v)
	}
	return r.name("user", user)
}

// vote is the check of Vote and VoteComment, op theirs, before Redis is
// touched: the ballot, then the id, whose malformed form gets
// missing(op, id).
func (r textRules) vote(op, user, id string, v VoteType, missing func(op, id string) error) error {
	if err := r.ballot(user, v); err != nil {
		return opErr(op, err)
	}
	if !canonicalID(id) {
		return missing(op, id)
	}
	return nil
}

// voteReply is the result of Vote and VoteComment, op theirs, from the
// reply of their script (and its error): an id not found gets
// missing(op, id), a vote applied but not known to be on the replicas
// its result and an error wrapping [ErrNotReplicated].
func voteReply(op, id string, reply interface{}, err error, missing func(op, id string) error) (VoteResult, error) {
	late := unreplicated(&err)
	status, r, err := parseVote(reply, err)
	if err != nil {
		return VoteResult{}, opErr(op, err)
	}
	switch status {
	case statusOK:
		return r, replicationErr(op, late)
	case statusNotFound:
		return VoteResult{}, missing(op, id)
	}
	return VoteResult{}, statusErr(op, status, id)
}

// VoteOf returns user's vote on the article: [NoVote] if the user has not
// voted, has cancelled, or the article's voting closed and its voter
// records expired. An unknown article gets [ErrNotFound]. A voter record
// holding anything but a vote (written by hand) gets an error that wraps
// none of the sentinels, never an invalid VoteType.
func (s *Store) VoteOf(ctx context.Context, user, id string) (VoteType, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "VoteOf"}, func(ctx context.Context) (VoteType, error) { return s.VoteOf(ctx, user, id) })
	}
	const op = "vote of"
	if err := checkName("user", user); err != nil {
		return NoVote, opErr(op, err)
	}
	if !canonicalID(id) {
		return NoVote, notFound(op, id)
	}
	votes, status, err := s.votesOf(ctx, op, user, []string{id}, true)
	if err != nil {
		return NoVote, err
	}
	if status[0] != statusOK {
		return NoVote, statusErr(op, status[0], id)
	}
	return votes[0], nil
}

// VotesOf returns user's vote on each of ids, in one round trip, so a page
// can show its arrows: votes[i] is the vote on ids[i], [NoVote] where there is
// none, no such article exists, or the voter record holds something other
// than a vote (written by hand). At most [MaxBatch] ids. It runs no
// script: it reads the store's record and an HGET an id in one pipeline,
// which costs Redis about 60% of what a script would (votes.go), and it
// refuses a store of another layout as the scripts do. Unlike them it is
// not one atomic read: a vote cast while it runs may show on one article
// and not yet on another.
func (s *Store) VotesOf(ctx context.Context, user string, ids []string) ([]VoteType, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "VotesOf", Count: len(ids)}, func(ctx context.Context) ([]VoteType, error) { return s.VotesOf(ctx, user, ids) })
	}
	return votesByID(ctx, "votes of", user, ids, s.readVotes)
}

// votesByID is the body of VotesOf and CommentVotesOf, op theirs: it
// checks user and ids (at most [MaxBatch]), and read gets user's votes
// on the canonical ids, in their order; the others are NoVote, and
// where there are none read is not called.
func votesByID(ctx context.Context, op, user string, ids []string, read func(ctx context.Context, op, user string, ids []string) ([]VoteType, error)) ([]VoteType, error) {
	if err := checkName("user", user); err != nil {
		return nil, opErr(op, err)
	}
	if err := checkBatch(len(ids), "ids"); err != nil {
		return nil, opErr(op, err)
	}
	if !slices.ContainsFunc(ids, func(id string) bool { return !canonicalID(id) }) && len(ids) > 0 {
		return read(ctx, op, user, ids)
	}
	asked, at := canonicalIDs(ids) // the ids that may exist, and their indexes in ids
	if len(asked) == 0 {
		return make([]VoteType, len(ids)), nil
	}
	got, err := read(ctx, op, user, asked)
	if err != nil {
		return nil, err
	}
	return spreadVotes(len(ids), at, got), nil
}

// spreadVotes returns n votes, got[j] at at[j], NoVote elsewhere.
func spreadVotes(n int, at []int, got []VoteType) []VoteType {
	votes := make([]VoteType, n)
	for j, i := range at {
		votes[i] = got[j]
	}
	return votes
}

// votesOf reads user's votes on ids, and with exists tells the ids of
// no article (statusNotFound) from those whose voting closed.
func (s *Store) votesOf(ctx context.Context, op, user string, ids []string, exists bool) ([]VoteType, []int64, error) {
	reply, err := s.evalRoom(ctx, votesScript, s.votesArgs(user, ids, exists), true)
	return votesReply(op, reply, err, len(ids))
}

// Delete removes the article and every trace of it, in one atomic step:
// its fields, its place in every ordering and cached group page, its
// voter records, its group memberships, its link and its entry on its
// poster's submitted page ([WithUserPages]); the upvoted pages of its
// voters drop it when next read. Afterwards the article is not found
// anywhere; deleting it again gets [ErrNotFound].
// The karma its votes earned or cost ([WithKarma]) stays: taking it back
// would need the article's voter list, which may be huge or expired.
//
// An article with comments loses them first, 200 a round trip, one
// short script each, and the last step removes the article: Delete of
// an article with n comments takes 1 + n/200 round trips (docs/OPERATIONS.md,
// "Deleting comments and articles"). Until the last, the article and the
// comments not yet removed are read as before, and an error leaves the
// article with the rest: call Delete again to go on.
func (s *Store) Delete(ctx context.Context, id string) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "Delete"}, func(ctx context.Context) error { return s.Delete(ctx, id) })
	}
	const op = "delete"
	if !canonicalID(id) {
		return notFound(op, id)
	}
	for {
		rest, err := s.call(ctx, op, deleteScript, id, s.deleteArgs(id))
		var more int64
		if len(rest) == 1 {
			more, _ = redis.Int64(rest[0], nil)
		}
		if err != nil || more == 0 {
			return err
		}
	}
}
