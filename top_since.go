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

	"github.com/votekit/voting/internal/layout"
)

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
		return observeView(ctx, s, Call{Op: "TopSinceFor", Page: page, HasPage: true}, func(ctx context.Context) ([]Article, []VoteType, error) {
			return s.TopSinceFor(ctx, user, d, page)
		})
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

// topSinceArgs lays out top_since.lua's arguments. KEYS[1..2]: the top
// and time orderings. ARGV[1..2]: the prefixes of articles and TopSince
// buckets; ARGV[3..5]: cutoff, start, stop; ARGV[6]: the work one call
// may read of the edge; ARGV[7]: "1" when edge is given; ARGV[8..9]: the
// voter records' prefix and the user, or "" and ""; ARGV[10..]: edge.
// Edge, when not nil, lists the first members of the edge bucket's part
// in the period, which the steps of top_since_edge.lua found
// (Store.topSinceEdge). With a user, the reply carries their votes
// (TopSinceFor); the edge's members come after the user, so a plain read
// sends "" for both.
func (s *Store) topSinceArgs(user string, cutoff, start, stop int64, edge []string) []interface{} {
	k := s.keys
	args := []interface{}{k.orderingKey("top"), k.orderingKey("time"), k.article, k.topBucket, cutoff, start, stop, s.edge}
	given := ""
	if edge != nil {
		given = "1"
	}
	voted := interface{}("")
	if user != "" {
		voted = s.votePrefixes[2]
	}
	return appendStrings(append(args, given, voted, user), edge)
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
	to := (layout.BucketOf(topEdgeSize, cutoff) + 1) * topEdgeSize
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

// topSinceEdgeArgs lays out a step of top_since_edge.lua: the edge
// bucket's members posted in [from, to), after (afterTime, afterMember),
// above (overValue, overMember). KEYS[1..2]: the time ordering and the
// edge bucket. ARGV[1..2]: from, to; ARGV[3..4]: afterTime, afterMember;
// ARGV[5]: the most members a step reads; ARGV[6..7]: overValue,
// overMember.
func (s *Store) topSinceEdgeArgs(from, to int64, afterTime, afterMember, overValue, overMember string) []interface{} {
	k := s.keys
	return []interface{}{k.orderingKey("time"), k.topBucketKey(topEdgeSize, from),
		from, to, afterTime, afterMember, s.edge, overValue, overMember}
}

// topEdgeSize is the size in seconds of the TopSince buckets the period
// starts in (lib/base.lua BUCKETS[1]).
var topEdgeSize = layout.BucketSizes[0]
