package voting

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// hostileCase is one hostile input to one public method. call returns the
// method's error; where a result is expected (want nil), call checks it.
type hostileCase struct {
	name string // "Method: input"
	want error  // the sentinel, or nil for a result
	call func(t *testing.T, s *Store) error
}

var (
	mib = strings.Repeat("x", 1<<20)
	// malformedIDs are ids the store never issues, of every length: each
	// names no article.
	malformedIDs = []string{"", "0", "01", "-1", "+1", "1:x", " 1", "1\n", "*", "{other}", "１", "1e3", "0x1",
		"9223372036854775808", "99999999999999999999", "999999999999999999999", strings.Repeat("1", 1<<20)}
	// badNames break the rules of user, poster and group names.
	badNames = []string{"", " ", " \t ", "\u00a0\u2003", mib, "a\x00b", "a\nb", "a\u0085b", "a\u200bb", "\u202eevil",
		"\ufeffalice", "\ue000", "a\u2028b", "\xff\xfe", "\xed\xa0\x80"}
	// spacedNames have white space at an end: no write takes them (so
	// "alice " is never a second alice), and a lookup of one, which could
	// name data a store kept under WithRawText, gets a result.
	spacedNames = []string{"alice ", " alice", "alice\u00a0", "\u3000alice", "alice\u2003"}
)

// votesOnMalformed is the case of votesOf, the method named name
// (VotesOf, CommentVotesOf), on "1" and each of malformedIDs for the
// user "{other}:*", who downvoted 1: down, then none for each.
func votesOnMalformed(name string, votesOf func(*Store, context.Context, string, []string) ([]VoteType, error)) func(*testing.T, *Store) error {
	return func(t *testing.T, s *Store) error {
		votes, err := votesOf(s, ctx, "{other}:*", append([]string{"1"}, malformedIDs...))
		want := "[down" + strings.Repeat(" none", len(malformedIDs)) + "]"
		if err == nil && fmt.Sprint(votes) != want {
			t.Errorf("%s = %v, want %s", name, votes, want)
		}
		return err
	}
}

// hostileCases returns the table: for each public method of Store that
// takes input, hostile values of each parameter. The store it runs on
// has article "1" by alice, all orders and unique links.
func hostileCases() []hostileCase {
	bad, gone, vote0 := ErrInvalidArgument, ErrNotFound, ErrInvalidVote
	cases := []hostileCase{
		{"Post: key syntax and globs in every field", nil, func(t *testing.T, s *Store) error {
			const poster, title, link = "{other}:*", "{", "https://example.com/{other}:link:*?[ab]\\"
			a, err := s.Post(ctx, poster, title, link)
			if err != nil {
				return err
			}
			got, err := s.Article(ctx, a.ID)
			if err == nil && (got.Poster != poster || got.Title != title || got.Link != link) {
				t.Errorf("stored %+v, want the fields byte for byte", got)
			}
			if dup, err := s.Post(ctx, "bob", "again", link); !errors.Is(err, ErrDuplicate) || dup.ID != a.ID {
				t.Errorf("second Post of the link = %+v, %v; want article %s and ErrDuplicate", dup, err, a.ID)
			}
			return err
		}},
		{"Post: unicode names and text", nil, func(t *testing.T, s *Store) error {
			_, err := s.Post(ctx, "Zoë 渡辺 🗳", "Ünïcode ✓ title, with a family 👨\u200d👩\u200d👧", "https://例え.jp/パス")
			return err
		}},
		{"Post: 1 MiB title", bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, "p", mib, ""); return err }},
		{"Post: 1 MiB link", bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, "p", "t", mib); return err }},
		{"Post: invalid UTF-8 link", bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, "p", "t", "\x80"); return err }},
		{"Post: javascript: link", bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, "p", "t", "javascript:alert(1)"); return err }},
		{"Post: ESC in the title", bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, "p", "a\x1b[2J", ""); return err }},

		{"Vote: key syntax user", nil, func(t *testing.T, s *Store) error {
			if _, err := s.Vote(ctx, "{other}:*", "1", Downvote); err != nil {
				return err
			}
			v, err := s.VoteOf(ctx, "{other}:*", "1")
			if err == nil && v != Downvote {
				t.Errorf("VoteOf = %v, want down", v)
			}
			return err
		}},
		{"Vote: type 3", vote0, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, "u", "1", 3); return err }},
		{"Vote: NoVote", vote0, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, "u", "1", NoVote); return err }},
		{"Vote: type -128", vote0, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, "u", "1", -128); return err }},
		{"Vote: type 3 by no user on no id", vote0, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, "", "", 3); return err }},

		{"VoteBatch: hostile ballots", nil, func(t *testing.T, s *Store) error {
			ballots := []Ballot{{"u", "", Upvote}, {"u", "1", 5}, {"", "1", Upvote}, {"{other}:*", "1", Downvote},
				{"u", "01", Upvote}, {"u", "424242", Upvote}, {"u", strings.Repeat("9", 1<<20), Downvote}, {"a\u200bb", "1", Upvote}}
			want := []error{gone, vote0, bad, nil, gone, gone, gone, bad}
			results, err := s.VoteBatch(ctx, ballots)
			for i, r := range results {
				if !errors.Is(r.Err, want[i]) || (want[i] == nil) != (r.Err == nil) {
					t.Errorf("ballot %d: %v, want %v", i, r.Err, want[i])
				}
			}
			return err
		}},
		{"VoteBatch: MaxBatch+1 ballots", bad, func(t *testing.T, s *Store) error {
			_, err := s.VoteBatch(ctx, make([]Ballot, MaxBatch+1))
			return err
		}},

		{"ArticlesByID: malformed ids", nil, func(t *testing.T, s *Store) error {
			list, err := s.ArticlesByID(ctx, append(append([]string{"1"}, malformedIDs...), "1"))
			if err == nil && (len(list) != 2 || list[0].ID != "1" || list[1].ID != "1") {
				t.Errorf("ArticlesByID = %+v, want article 1 twice", list)
			}
			return err
		}},
		{"ArticlesByID: MaxBatch+1 ids", bad, func(t *testing.T, s *Store) error {
			_, err := s.ArticlesByID(ctx, make([]string, MaxBatch+1))
			return err
		}},

		{"VotesOf: malformed ids", nil, votesOnMalformed("VotesOf", (*Store).VotesOf)},
		{"VotesOf: MaxBatch+1 ids", bad, func(t *testing.T, s *Store) error {
			_, err := s.VotesOf(ctx, "u", make([]string, MaxBatch+1))
			return err
		}},

		{"Comment: key syntax and globs in the poster and body", nil, func(t *testing.T, s *Store) error {
			const poster, body = "{other}:*", "{other}:comment:*?[ab]\\ \n\ttabbed"
			c, err := s.Comment(ctx, "1", "", poster, body)
			if err != nil {
				return err
			}
			list, err := s.CommentsByID(ctx, []string{c.ID})
			if err == nil && (len(list) != 1 || list[0].Poster != poster || list[0].Body != body) {
				t.Errorf("stored %+v, want the fields byte for byte", list)
			}
			return err
		}},
		{"Comment: 1 MiB body", bad, func(t *testing.T, s *Store) error { _, err := s.Comment(ctx, "1", "", "p", mib); return err }},
		{"Comment: malformed parent", gone, func(t *testing.T, s *Store) error {
			_, err := s.Comment(ctx, "1", strings.Repeat("9", 1<<20), "p", "b")
			return err
		}},
		{"VoteComment: key syntax user", nil, func(t *testing.T, s *Store) error {
			_, err := s.VoteComment(ctx, "{other}:*", "1", Downvote)
			return err
		}},
		{"VoteComment: malformed id", gone, func(t *testing.T, s *Store) error {
			_, err := s.VoteComment(ctx, "u", "1:u", Upvote)
			return err
		}},
		{"Replies: malformed id", gone, func(t *testing.T, s *Store) error { _, err := s.Replies(ctx, "*", Best, 1); return err }},
		{"Replies: limit MaxInt", bad, func(t *testing.T, s *Store) error { _, err := s.Replies(ctx, "1", Best, math.MaxInt); return err }},
		{"CommentsByID: malformed ids", nil, func(t *testing.T, s *Store) error {
			list, err := s.CommentsByID(ctx, append([]string{"1"}, malformedIDs...))
			if err == nil && len(list) != 1 {
				t.Errorf("CommentsByID = %+v, want comment 1", list)
			}
			return err
		}},
		{"CommentVotesOf: malformed ids", nil, votesOnMalformed("CommentVotesOf", (*Store).CommentVotesOf)},
		{"EditComment: 1 MiB body", bad, func(t *testing.T, s *Store) error { _, err := s.EditComment(ctx, "1", "p", mib); return err }},
		{"EditComment: malformed id", gone, func(t *testing.T, s *Store) error { _, err := s.EditComment(ctx, "01", "p", "b"); return err }},
		{"UserComments: key syntax user", nil, func(t *testing.T, s *Store) error {
			list, err := s.UserComments(ctx, "{other}:*", 1)
			if err == nil && len(list) != 1 {
				t.Errorf("UserComments = %+v, want the one comment", list)
			}
			return err
		}},
		{"DeleteComment: malformed id", gone, func(t *testing.T, s *Store) error { return s.DeleteComment(ctx, "-1") }},

		{"Articles: page 0", bad, func(t *testing.T, s *Store) error { _, err := s.Articles(ctx, ScoreDesc, 0); return err }},
		{"Articles: page MinInt", bad, func(t *testing.T, s *Store) error { _, err := s.Articles(ctx, TimeAsc, math.MinInt); return err }},
		{"Articles: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) { return s.Articles(ctx, Hot, math.MaxInt) })},
		{"Articles: page past the end", nil, emptyPage(func(s *Store) ([]Article, error) { return s.Articles(ctx, TimeDesc, 1<<40) })},
		{"Articles: Order 99", bad, func(t *testing.T, s *Store) error { _, err := s.Articles(ctx, Order(99), 1); return err }},
		{"Articles: Order -1", bad, func(t *testing.T, s *Store) error { _, err := s.Articles(ctx, Order(-1), 1); return err }},
		{"ArticlesFor: page MinInt", bad, func(t *testing.T, s *Store) error {
			_, _, err := s.ArticlesFor(ctx, "bob", TimeAsc, math.MinInt)
			return err
		}},
		{"ArticlesFor: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) {
			list, _, err := s.ArticlesFor(ctx, "bob", Hot, math.MaxInt)
			return list, err
		})},
		{"ArticlesFor: Order -1", bad, func(t *testing.T, s *Store) error { _, _, err := s.ArticlesFor(ctx, "bob", Order(-1), 1); return err }},
		{"ArticlesFor: key syntax user", nil, func(t *testing.T, s *Store) error {
			list, votes, err := s.ArticlesFor(ctx, "{other}:*", ScoreDesc, 1)
			if err == nil && len(votes) != len(list) {
				t.Errorf("ArticlesFor = %d articles, %d votes", len(list), len(votes))
			}
			return err
		}},
		{"TopSinceFor: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) {
			list, _, err := s.TopSinceFor(ctx, "bob", time.Hour, math.MaxInt)
			return list, err
		})},
		{"TopSinceFor: key syntax user", nil, func(t *testing.T, s *Store) error {
			list, votes, err := s.TopSinceFor(ctx, "{other}:*", time.Hour, 1)
			if err == nil && len(votes) != len(list) {
				t.Errorf("TopSinceFor = %d articles, %d votes", len(list), len(votes))
			}
			return err
		}},
		{"GroupArticlesFor: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) {
			list, _, err := s.GroupArticlesFor(ctx, "bob", "g", Hot, math.MaxInt)
			return list, err
		})},
		{"SubmittedFor: key syntax user", nil, func(t *testing.T, s *Store) error {
			list, votes, err := s.SubmittedFor(ctx, "{other}:*", "alice", 1)
			if err == nil && (len(list) != 1 || len(votes) != 1) {
				t.Errorf("SubmittedFor = %d articles, %d votes", len(list), len(votes))
			}
			return err
		}},
		{"UpvotedFor: page MinInt", bad, func(t *testing.T, s *Store) error {
			_, _, err := s.UpvotedFor(ctx, "bob", "alice", math.MinInt)
			return err
		}},
		{"ThreadFor: key syntax user", nil, func(t *testing.T, s *Store) error {
			_, _, err := s.ThreadFor(ctx, "{other}:*", "1", Best, 10)
			return err
		}},
		{"RepliesFor: malformed id", gone, func(t *testing.T, s *Store) error {
			_, _, err := s.RepliesFor(ctx, "bob", "-1", Best, 10)
			return err
		}},

		{"TopSince: period 0", bad, func(t *testing.T, s *Store) error { _, err := s.TopSince(ctx, 0, 1); return err }},
		{"TopSince: period MinInt64", bad, func(t *testing.T, s *Store) error { _, err := s.TopSince(ctx, math.MinInt64, 1); return err }},
		{"TopSince: period MaxInt64", nil, func(t *testing.T, s *Store) error {
			list, err := s.TopSince(ctx, math.MaxInt64, 1)
			if err == nil && len(list) == 0 {
				t.Error("TopSince of 292 years is empty")
			}
			return err
		}},
		{"TopSince: page 0", bad, func(t *testing.T, s *Store) error { _, err := s.TopSince(ctx, time.Hour, 0); return err }},
		{"TopSince: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) { return s.TopSince(ctx, time.Hour, math.MaxInt) })},

		{"VoteOf: unknown id", gone, func(t *testing.T, s *Store) error { _, err := s.VoteOf(ctx, "u", "424242"); return err }},

		{"AddToGroups: key syntax and glob names", nil, func(t *testing.T, s *Store) error {
			names := []string{"{other}", "*", ":", "}", "{", "a:b", "group:x", "cache:score:x", "[ab]", "back\\slash"}
			if err := s.AddToGroups(ctx, "1", names...); err != nil {
				return err
			}
			groups, err := s.Groups(ctx, "1")
			if err == nil && len(groups) != len(names) {
				t.Errorf("Groups = %q, want %q", groups, names)
			}
			page, err := s.GroupArticles(ctx, "{other}", Controversial, 1)
			if err == nil && (len(page) != 1 || page[0].ID != "1") {
				t.Errorf("group page = %+v, want article 1", page)
			}
			return err
		}},
		{"AddToGroups: past MaxArticleGroups", bad, func(t *testing.T, s *Store) error {
			before, err := s.Groups(ctx, "1")
			if err != nil {
				return err
			}
			var many []string
			for i := 0; i <= MaxArticleGroups; i++ {
				many = append(many, fmt.Sprintf("many%d", i))
			}
			err = s.AddToGroups(ctx, "1", many...)
			if after, gerr := s.Groups(ctx, "1"); gerr != nil || fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("groups after a refused AddToGroups = %q, %v; want %q", after, gerr, before)
			}
			return err
		}},
		{"AddToGroups: MaxBatch+1 groups", bad, func(t *testing.T, s *Store) error {
			return s.AddToGroups(ctx, "1", make([]string, MaxBatch+1)...)
		}},
		{"AddToGroups: unknown id", gone, func(t *testing.T, s *Store) error { return s.AddToGroups(ctx, "777", "g") }},

		{"RemoveFromGroups: glob name", nil, func(t *testing.T, s *Store) error {
			if err := s.RemoveFromGroups(ctx, "1", "*"); err != nil {
				return err
			}
			groups, err := s.Groups(ctx, "1")
			if err == nil && (len(groups) == 0 || strings.Contains(fmt.Sprint(groups), "*")) {
				t.Errorf("Groups after removing \"*\" = %q, want all but \"*\"", groups)
			}
			return err
		}},

		{"GroupArticles: glob name of no group", nil, emptyPage(func(s *Store) ([]Article, error) {
			return s.GroupArticles(ctx, "*", TimeAsc, 1)
		})},
		{"GroupArticles: Order 9", bad, func(t *testing.T, s *Store) error { _, err := s.GroupArticles(ctx, "g", Order(9), 1); return err }},
		{"GroupArticles: page 0", bad, func(t *testing.T, s *Store) error { _, err := s.GroupArticles(ctx, "g", ScoreDesc, 0); return err }},
		{"GroupArticles: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) {
			return s.GroupArticles(ctx, "{other}", ScoreAsc, math.MaxInt)
		})},

		{"GroupCount: key syntax name", nil, func(t *testing.T, s *Store) error {
			n, err := s.GroupCount(ctx, "{other}")
			if err == nil && n != 1 {
				t.Errorf("GroupCount = %d, want 1", n)
			}
			return err
		}},

		{"Submitted: page 0", bad, func(t *testing.T, s *Store) error { _, err := s.Submitted(ctx, "alice", 0); return err }},
		{"Submitted: page MaxInt", nil, emptyPage(func(s *Store) ([]Article, error) {
			return s.Submitted(ctx, "alice", math.MaxInt)
		})},
		{"Upvoted: page -1", bad, func(t *testing.T, s *Store) error { _, err := s.Upvoted(ctx, "alice", -1); return err }},
		{"Upvoted: key syntax user", nil, emptyPage(func(s *Store) ([]Article, error) {
			return s.Upvoted(ctx, "{other}:never*", 1)
		})},

		{"Prune: the zero time", nil, func(t *testing.T, s *Store) error {
			n, err := s.Prune(ctx, time.Time{})
			if err == nil && n != 0 {
				t.Errorf("Prune of the zero time deleted %d", n)
			}
			return err
		}},

		{"New: Order 42", bad, func(t *testing.T, s *Store) error { _, err := New(s.pool, WithOrders(Top, Order(42))); return err }},
	}
	for _, p := range []string{"{other}", "*}", mib, "a\x00b", "a\nb", "a\u200bb", "\u202e", "\ufeff", "\ue000", "\xff"} {
		cases = append(cases, hostileCase{fmt.Sprintf("New: prefix %.20q", p), bad,
			func(t *testing.T, s *Store) error { _, err := New(s.pool, WithKeyPrefix(p)); return err }})
	}

	for _, n := range badNames {
		q := fmt.Sprintf("%.20q", n)
		cases = append(cases,
			hostileCase{"Post: poster " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, n, "t", ""); return err }},
			hostileCase{"Vote: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, n, "1", Upvote); return err }},
			hostileCase{"TopSinceFor: user " + q, bad, func(t *testing.T, s *Store) error {
				_, _, err := s.TopSinceFor(ctx, n, time.Hour, 1)
				return err
			}},
			hostileCase{"UpvotedFor: user " + q, bad, func(t *testing.T, s *Store) error {
				_, _, err := s.UpvotedFor(ctx, "bob", n, 1)
				return err
			}},
			hostileCase{"ThreadFor: user " + q, bad, func(t *testing.T, s *Store) error {
				_, _, err := s.ThreadFor(ctx, n, "1", Best, 10)
				return err
			}},
			hostileCase{"RepliesFor: user " + q, bad, func(t *testing.T, s *Store) error {
				_, _, err := s.RepliesFor(ctx, n, "1", Best, 10)
				return err
			}},
			hostileCase{"AddToGroups: name " + q, bad, func(t *testing.T, s *Store) error { return s.AddToGroups(ctx, "1", "g", n) }},
			hostileCase{"RemoveFromGroups: name " + q, bad, func(t *testing.T, s *Store) error { return s.RemoveFromGroups(ctx, "1", n) }},
			hostileCase{"GroupArticles: name " + q, bad, func(t *testing.T, s *Store) error { _, err := s.GroupArticles(ctx, n, ScoreDesc, 1); return err }},
			hostileCase{"GroupCount: name " + q, bad, func(t *testing.T, s *Store) error { _, err := s.GroupCount(ctx, n); return err }},
			hostileCase{"Submitted: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Submitted(ctx, n, 1); return err }},
			hostileCase{"Upvoted: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Upvoted(ctx, n, 1); return err }},
			hostileCase{"VotesBy: user " + q, bad, func(t *testing.T, s *Store) error { _, _, err := s.VotesBy(ctx, n, "", 10); return err }},
			hostileCase{"ReverseVotes: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.ReverseVotes(ctx, n); return err }},
			hostileCase{"Suspend: user " + q, bad, func(t *testing.T, s *Store) error { return s.Suspend(ctx, n, Refuse, s.now().Add(time.Hour)) }},
			hostileCase{"Unsuspend: user " + q, bad, func(t *testing.T, s *Store) error { return s.Unsuspend(ctx, n) }},
			hostileCase{"Suspended: user " + q, bad, func(t *testing.T, s *Store) error { _, _, err := s.Suspended(ctx, n); return err }},
		)
		cases = append(cases, voterReadCases(n, q, bad)...)
	}
	cases = append(cases, hostileCase{"VoteEvents: after {other}", bad, func(t *testing.T, s *Store) error {
		_, _, err := s.VoteEvents(ctx, "{other}", 10)
		return err
	}})
	for _, id := range malformedIDs {
		cases = append(cases, hostileCase{fmt.Sprintf("CommentVoters: id %.20q", id), gone,
			func(t *testing.T, s *Store) error { _, _, err := s.CommentVoters(ctx, id, "", 10); return err }})
	}
	for _, n := range spacedNames {
		q := fmt.Sprintf("%q", n)
		cases = append(cases,
			hostileCase{"Post: poster " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Post(ctx, n, "t", ""); return err }},
			hostileCase{"Edit: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Edit(ctx, "1", n, "t", ""); return err }},
			hostileCase{"Vote: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, n, "1", Upvote); return err }},
			hostileCase{"VoteBatch: user " + q, bad, func(t *testing.T, s *Store) error {
				r, err := s.VoteBatch(ctx, []Ballot{{n, "1", Upvote}})
				if err == nil {
					err = r[0].Err
				}
				return err
			}},
			hostileCase{"Comment: poster " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Comment(ctx, "1", "", n, "b"); return err }},
			hostileCase{"EditComment: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.EditComment(ctx, "1", n, "b"); return err }},
			hostileCase{"VoteComment: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.VoteComment(ctx, n, "1", Upvote); return err }},
			hostileCase{"AddToGroups: name " + q, bad, func(t *testing.T, s *Store) error { return s.AddToGroups(ctx, "1", "g", n) }},
			hostileCase{"RemoveFromGroups: name " + q, nil, func(t *testing.T, s *Store) error { return s.RemoveFromGroups(ctx, "1", n) }},
			hostileCase{"UpvotedFor: user " + q, nil, emptyPage(func(s *Store) ([]Article, error) {
				list, _, err := s.UpvotedFor(ctx, "bob", n, 1)
				return list, err
			})},
			hostileCase{"GroupArticles: name " + q, nil, emptyPage(func(s *Store) ([]Article, error) { return s.GroupArticles(ctx, n, ScoreDesc, 1) })},
			hostileCase{"GroupCount: name " + q, nil, func(t *testing.T, s *Store) error { _, err := s.GroupCount(ctx, n); return err }},
			hostileCase{"Submitted: user " + q, nil, emptyPage(func(s *Store) ([]Article, error) { return s.Submitted(ctx, n, 1) })},
			hostileCase{"Upvoted: user " + q, nil, emptyPage(func(s *Store) ([]Article, error) { return s.Upvoted(ctx, n, 1) })},
			hostileCase{"Karma: user " + q, nil, func(t *testing.T, s *Store) error { _, err := s.Karma(ctx, n); return err }},
			hostileCase{"UserComments: user " + q, nil, func(t *testing.T, s *Store) error { _, err := s.UserComments(ctx, n, 1); return err }},
		)
		cases = append(cases, voterReadCases(n, q, nil)...)
	}
	// Karma and the rules (karma.go, rules.go).
	cases = append(cases,
		hostileCase{"Karma: key syntax name", nil, func(t *testing.T, s *Store) error {
			k, err := s.Karma(ctx, "{other}")
			if err == nil && k != 0 {
				t.Errorf("Karma = %d, want 0", k)
			}
			return err
		}},
		hostileCase{"TopUsers: page 0", bad, func(t *testing.T, s *Store) error { _, err := s.TopUsers(ctx, 0); return err }},
		hostileCase{"TopUsers: page MaxInt", nil, func(t *testing.T, s *Store) error {
			list, err := s.TopUsers(ctx, math.MaxInt)
			if err == nil && len(list) != 0 {
				t.Errorf("%d users, want none", len(list))
			}
			return err
		}},
		hostileCase{"SetRules: no rule", bad, func(t *testing.T, s *Store) error { _, err := s.SetRules(ctx); return err }},
		hostileCase{"SetRules: a nil option", bad, func(t *testing.T, s *Store) error { _, err := s.SetRules(ctx, nil); return err }},
		hostileCase{"SetRules: a vote limit of -1", bad, func(t *testing.T, s *Store) error {
			_, err := s.SetRules(ctx, WithVoteLimit(-1, time.Minute))
			return err
		}},
		hostileCase{"Edit: title of MaxTitleLen+1", bad, func(t *testing.T, s *Store) error {
			_, err := s.Edit(ctx, "1", "alice", strings.Repeat("x", MaxTitleLen+1), "")
			return err
		}},
	)
	for _, n := range badNames {
		q := fmt.Sprintf("%.20q", n)
		cases = append(cases,
			hostileCase{"Karma: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Karma(ctx, n); return err }},
			hostileCase{"Edit: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Edit(ctx, "1", n, "t", ""); return err }},
		)
	}
	// Every method about one article: a malformed id of any length is not found.
	for _, m := range methods {
		if !m.one {
			continue
		}
		for _, id := range malformedIDs {
			cases = append(cases, hostileCase{fmt.Sprintf("%s: id %.20q", m.name, id), gone,
				func(t *testing.T, s *Store) error { return m.call(ctx, s, id) }})
		}
	}
	return cases
}

// emptyPage returns a case body that expects an empty page.
// voterReadCases are the cases of the reads of the votes of the user n
// (q, as a case's name writes it), each of which wants want.
func voterReadCases(n, q string, want error) []hostileCase {
	return []hostileCase{
		{"VoteOf: user " + q, want, func(t *testing.T, s *Store) error { _, err := s.VoteOf(ctx, n, "1"); return err }},
		{"VotesOf: user " + q, want, func(t *testing.T, s *Store) error { _, err := s.VotesOf(ctx, n, []string{"1"}); return err }},
		{"ArticlesFor: user " + q, want, func(t *testing.T, s *Store) error {
			_, _, err := s.ArticlesFor(ctx, n, ScoreDesc, 1)
			return err
		}},
		{"GroupArticlesFor: user " + q, want, func(t *testing.T, s *Store) error {
			_, _, err := s.GroupArticlesFor(ctx, n, "g", ScoreDesc, 1)
			return err
		}},
		{"SubmittedFor: user " + q, want, func(t *testing.T, s *Store) error {
			_, _, err := s.SubmittedFor(ctx, n, "alice", 1)
			return err
		}},
	}
}

func emptyPage(read func(s *Store) ([]Article, error)) func(t *testing.T, s *Store) error {
	return func(t *testing.T, s *Store) error {
		list, err := read(s)
		if err == nil && len(list) != 0 {
			t.Errorf("%d articles, want none", len(list))
		}
		return err
	}
}

// TestHostileInput sends every hostile input of the table to a store
// holding one article. Each gets its sentinel error or a correct result,
// never a panic. Afterwards every key the inputs could have reached is a
// key of the store, of one of its families, and the vote invariant holds.
func TestHostileInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Top, Hot, Best, Controversial), WithUniqueLinks(), WithUserPages(), WithVoteLog(), WithVoteEvents(100))
		mustPost(t, s, "alice", "the one article")
		covered := map[string]bool{}
		for _, c := range hostileCases() {
			covered[strings.TrimSuffix(strings.Fields(c.name)[0], ":")] = true
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				return c.call(t, s)
			}()
			switch {
			case c.want == nil && err != nil:
				t.Errorf("%s: %v, want a result", c.name, err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		for _, m := range methods {
			if !covered[m.name] && m.name != "Count" && m.name != "Drop" && m.name != "Reconfigure" && m.name != "Rules" { // they take no input
				t.Errorf("no hostile case for %s", m.name)
			}
		}

		// On miniredis, a server of the test's own, every key; elsewhere
		// every key the hostile names could have made.
		pattern := "*other*"
		if b.mr != nil {
			pattern = "*"
		}
		keys := append(serverKeys(t, b, pattern), b.storeKeys(t, s)...)
		for _, k := range keys {
			if got := families(s.keys, k); len(got) != 1 {
				t.Errorf("key %q is not a key of the store (families %v)", k, got)
			}
		}
		checkInvariant(t, s, DefaultVoteWeight, idsOf(allArticles(t, s, TimeAsc)), []string{"alice", "bob", "{other}:*", "u", "Zoë 渡辺 🗳"})
	})
}

// serverKeys returns the keys matching pattern on b's server, or on every
// node of the cluster.
func serverKeys(t *testing.T, b *backend, pattern string) []string {
	t.Helper()
	if b.node == nil {
		list, err := redis.Strings(b.do(t, "KEYS", pattern), nil)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	c, _ := redistest.SharedCluster(t)
	var list []string
	for _, n := range c.Nodes {
		keys, err := redis.Strings(n.Do("KEYS", pattern))
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, keys...)
	}
	return list
}

// textCase is one input to one field of a write: field is "title",
// "body", "link" or "name"; want is "" for an input the default rules
// take, else a part of the error's text; raw says whether WithRawText's
// rules take it.
type textCase struct {
	field, in, want string
	raw             bool
}

// textCases returns the table of the rules of text a write stores, each
// rule at its boundary.
func textCases() []textCase {
	cases := []textCase{
		{"title", "Plain title", "", true},
		{"title", "a b\u00a0c\u3000d", "", true},                               // spaces inside
		{"title", "👨\u200d👩\u200d👧 family, \u200b ZWSP, \u200e LRM", "", true}, // joiners, marks
		{"title", "a\u202fb\u2065c\u206ad", "", true},                          // beside the bidi controls
		{"title", "a\u2027b\u202ac", "a bidi control U+202A at byte 5", true},
		{"title", "a\xffb", "title: invalid UTF-8 at byte 1", false},
		{"title", "a\xed\xa0\x80", "title: invalid UTF-8 at byte 1", false}, // a surrogate
		{"title", "a\x1b[2J", "title: contains a control character U+001B at byte 1", true},
		{"title", "\x00", "contains a control character U+0000 at byte 0", true},
		{"title", "a\r\nb", "control character U+000D at byte 1", true},
		{"title", " ", "title is blank", false},
		{"title", strings.Repeat("x", MaxTitleLen), "", true},
		{"title", strings.Repeat("x", MaxTitleLen+1), "title is longer than", false},
		{"body", "line one\nline two\n\ttabbed", "", true},
		{"body", "crlf\r\nline", "", true},
		{"body", "crlf\r\n", "", true},
		{"body", "lone\rcr", "body: contains a control character U+000D at byte 4", true},
		{"body", "end\r", "control character U+000D at byte 3", true},
		{"body", "a\u2028b\u2029c", "", true},
		{"body", "a\vb", "control character U+000B", true},
		{"body", "\n\t ", "body is blank", false},
		{"body", "a\xc0", "body: invalid UTF-8 at byte 1", false},
		{"body", strings.Repeat("x", MaxCommentLen+1), "body is longer than", false},

		{"link", "", "", true},
		{"link", "http://example.com", "", true},
		{"link", "HTTPS://EXAMPLE.COM/a?b=c#d", "", true},
		{"link", "hTtP://example.com/", "", true},
		{"link", "https://[::1]:8080/x", "", true},
		{"link", "https://例え.jp/パス?q=ü", "", true},
		{"link", "https://example.com/a%20b", "", true},
		{"link", "javascript:alert(1)", `link: scheme "javascript" is not http or https`, true},
		{"link", "JavaScript:alert(1)", `scheme "javascript" is not http or https`, true},
		{"link", "data:text/html,<script>", `scheme "data"`, true},
		{"link", "mailto:bob@example.com", `scheme "mailto"`, true},
		{"link", "ftp://example.com/f", `scheme "ftp"`, true},
		{"link", "/relative/path", "link: is not an absolute URL", true},
		{"link", "example.com/page", "is not an absolute URL", true},
		{"link", "//example.com/page", "is not an absolute URL", true},
		{"link", "https:", "link: has no host", true},
		{"link", "https://", "has no host", true},
		{"link", "https:///path", "has no host", true},
		{"link", "https://:443/", "has no host", true},
		{"link", "http:example.com", "has no host", true},
		{"link", "https://bob:secret@example.com", "link: has user info", true},
		{"link", "https://bob@example.com", "has user info", true},
		{"link", "https://@example.com", "has user info", true},
		{"link", "https://example.com/a b", "link: contains white space U+0020 at byte 21", true},
		{"link", " https://example.com", "white space U+0020 at byte 0", true},
		{"link", "https://example.com/\u00a0", "white space U+00A0", true},
		{"link", "https://example.com/\u2028", "a line or paragraph separator U+2028", true},
		{"link", "https://example.com/\t", "control character U+0009", true},
		{"link", "https://example.com/\u202e", "bidi control U+202E", true},
		{"link", "https://example.com/%zz", "link: is not a URL", true},
		{"link", "http://[::1", "is not a URL", true},
		{"link", "https://example.com/\xff", "link: invalid UTF-8 at byte 20", false},
		{"link", "https://example.com/" + strings.Repeat("x", MaxLinkLen-20), "", true},
		{"link", "https://example.com/" + strings.Repeat("x", MaxLinkLen-19), "link is longer than", false},

		{"name", "alice", "", true},
		{"name", "Zoë 渡辺 🗳", "", true},
		{"name", "a b\u00a0c", "", true}, // spaces inside
		{"name", "alice ", `"alice ": ends with white space U+0020 at byte 5`, true},
		{"name", " alice", "starts with white space U+0020", true},
		{"name", "alice\u00a0", "ends with white space U+00A0", true},
		{"name", "\u2003alice", "starts with white space U+2003", true},
		{"name", "alice\u3000", "ends with white space U+3000", true},
		{"name", "alice\t", "a character that is not printable U+0009 at byte 5", false},
		{"name", " ", "is blank", false},
		{"name", "a\xffb", "invalid UTF-8 at byte 1", false},
	}
	// Every control character, in each field; a body keeps LF and tab.
	for c := rune(0); c < 0xa0; c++ {
		if c == 0x20 {
			c = 0x7f
		}
		in := "a" + string(c) + "b"
		want := fmt.Sprintf("contains a control character %U at byte 1", c)
		cases = append(cases, textCase{"title", in, "title: " + want, true},
			textCase{"link", "https://example.com/" + in, fmt.Sprintf("link: contains a control character %U at byte 21", c), true},
			textCase{"name", in, fmt.Sprintf("a character that is not printable %U at byte 1", c), false})
		if c == '\n' || c == '\t' {
			cases = append(cases, textCase{"body", in, "", true})
		} else {
			cases = append(cases, textCase{"body", in, "body: " + want, true})
		}
	}
	cases = append(cases, textCase{"title", "a\x20\x7e\u00a0\u00a1b", "", true}) // the neighbours of the controls
	// Every bidi embedding, override and isolate, in each field.
	for _, c := range []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069} {
		in := "ab" + string(c) + "c"
		want := fmt.Sprintf("contains a bidi control %U at byte 2", c)
		cases = append(cases, textCase{"title", in, "title: " + want, true}, textCase{"body", in, "body: " + want, true},
			textCase{"link", "https://example.com/" + in, "link: contains a bidi control", true},
			textCase{"name", in, fmt.Sprintf("a character that is not printable %U at byte 2", c), false})
	}
	// Line and paragraph separators: a body keeps them.
	for _, c := range []rune{0x2028, 0x2029} {
		in := "a" + string(c) + "b"
		cases = append(cases, textCase{"title", in, fmt.Sprintf("title: contains a line or paragraph separator %U at byte 1", c), true},
			textCase{"body", in, "", true}, textCase{"name", in, "not printable", false})
	}
	// The invisible characters, which no name holds (a title may).
	for _, c := range []rune{0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0x200e, 0x200f, 0x180e, 0x3164, 0xfe0f, 0x034f} {
		cases = append(cases, textCase{"name", "al" + string(c) + "ice", fmt.Sprintf("a character that is not printable %U at byte 2", c), false},
			textCase{"name", string(c) + "alice", "not printable", false})
	}
	return cases
}

// check runs c's input through r's check of its field, as Post, Comment
// or Vote runs it.
func (c textCase) check(r textRules) error {
	switch c.field {
	case "title":
		return r.post("poster", "alice", c.in, "")
	case "body":
		return r.comment("poster", "alice", c.in)
	case "link":
		return r.post("poster", "alice", "t", c.in)
	}
	return r.name("user", c.in)
}

// TestTextRules runs each rule of the text writes store at its
// boundary, under the default rules and WithRawText's: a refusal wraps
// ErrInvalidArgument and names the field, the character and its byte.
func TestTextRules(t *testing.T) {
	for _, c := range textCases() {
		err := c.check(textRules{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %+q: %v, want no error", c.field, c.in, err)
		case c.want != "" && (!errors.Is(err, ErrInvalidArgument) || !strings.Contains(fmt.Sprint(err), c.want)):
			t.Errorf("%s %+q: %v, want ErrInvalidArgument saying %q", c.field, c.in, err, c.want)
		}
		if err := c.check(textRules{raw: true}); (err == nil) != (c.want == "" || c.raw) {
			t.Errorf("%s %+q under WithRawText: %v, want an error: %v", c.field, c.in, err, !c.raw)
		}
	}
	// The error's whole text, as a Post returns it.
	err := opErr("post", textRules{}.post("poster", "alice", "abcd\x1b", ""))
	if want := "voting: post: invalid argument: title: contains a control character U+001B at byte 4"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// TestNameLookups: a name a call only looks up passes checkName, which
// every name a store took passes (white space at an end included, which
// WithRawText lets a write keep); what no store ever took is refused.
func TestNameLookups(t *testing.T) {
	for _, n := range spacedNames {
		if err := checkName("user", n); err != nil {
			t.Errorf("lookup of %+q: %v", n, err)
		}
		if err := (textRules{raw: true}).name("user", n); err != nil {
			t.Errorf("raw write of %+q: %v", n, err)
		}
		if err := (textRules{}).name("user", n); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("write of %+q: %v", n, err)
		}
	}
	for _, n := range badNames {
		if err := checkName("user", n); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("lookup of %.20q: %v", n, err)
		}
	}
}

// TestLinkSchemes: WithLinkSchemes replaces http and https, in any case;
// New rejects an empty list, a malformed scheme, and the option with
// WithRawText.
func TestLinkSchemes(t *testing.T) {
	var c config
	WithLinkSchemes("FTP", "https", "ftp", "git+ssh")(&c)
	r := c.text.rules()
	if fmt.Sprint(r.schemes) != "[ftp https git+ssh]" {
		t.Fatalf("schemes = %q", r.schemes)
	}
	for link, want := range map[string]string{
		"ftp://example.com/f":      "",
		"FTP://example.com/f":      "",
		"git+ssh://example.com/r":  "",
		"https://example.com":      "",
		"http://example.com":       `scheme "http" is not ftp, https or git+ssh`,
		"ftp://bob@example.com/f":  "has user info",
		"ftp:/f":                   "has no host",
		"ftp://example.com/a b":    "white space",
		"javascript://example.com": `scheme "javascript"`,
	} {
		err := r.link(link)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("link %q: %v, want %q", link, err, want)
		}
	}
	if err := (textRules{schemes: []string{"ftp"}}).link("https://example.com"); err == nil || !strings.Contains(err.Error(), `is not ftp`) {
		t.Errorf("https with ftp alone: %v", err)
	}

	pool := &redis.Pool{}
	for _, opts := range [][]Option{
		{WithLinkSchemes()},
		{WithLinkSchemes("")},
		{WithLinkSchemes("http", "1http")},
		{WithLinkSchemes("ht tp")},
		{WithLinkSchemes("http:")},
		{WithLinkSchemes("+x")},
		{WithLinkSchemes("é")},
		{WithLinkSchemes("http"), WithRawText()},
	} {
		if _, err := New(pool, opts...); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New with %d options: %v, want ErrInvalidArgument", len(opts), err)
		}
	}
	for _, opts := range [][]Option{{WithLinkSchemes("a")}, {WithLinkSchemes("z9+-.")}, {WithRawText()}} {
		if _, err := New(pool, opts...); err != nil {
			t.Errorf("New: %v", err)
		}
	}
}

// TestRefusedTextChangesNothing: each write of text the rules refuse
// gets ErrInvalidArgument before Redis is touched, and the store is as
// it was; the lookups of a name with white space at an end get results.
func TestRefusedTextChangesNothing(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	s, _ := newStore(t, b, WithEditWindow(time.Hour), WithUserPages(), WithKarma(1, -1), WithOrders(Top))
	a := mustPost(t, s, "alice", "the article")
	c := mustComment(t, s, a.ID, "", "alice", "the comment")
	if err := s.AddToGroups(ctx, a.ID, "news"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, b, s)
	for name, call := range map[string]func() error{
		"Post: NUL in the title":        func() error { _, err := s.Post(ctx, "bob", "a\x00b", ""); return err },
		"Post: ESC in the title":        func() error { _, err := s.Post(ctx, "bob", "a\x1b[2Jb", ""); return err },
		"Post: RLO in the title":        func() error { _, err := s.Post(ctx, "bob", "txt.\u202eexe", ""); return err },
		"Post: U+2028 in the title":     func() error { _, err := s.Post(ctx, "bob", "a\u2028b", ""); return err },
		"Post: newline in the title":    func() error { _, err := s.Post(ctx, "bob", "a\nb", ""); return err },
		"Post: javascript: link":        func() error { _, err := s.Post(ctx, "bob", "t", "javascript:alert(1)"); return err },
		"Post: link with user info":     func() error { _, err := s.Post(ctx, "bob", "t", "https://a:b@example.com"); return err },
		"Post: poster with a space":     func() error { _, err := s.Post(ctx, "alice ", "t", ""); return err },
		"Edit: ESC in the title":        func() error { _, err := s.Edit(ctx, a.ID, "alice", "a\x1b", ""); return err },
		"Edit: data: link":              func() error { _, err := s.Edit(ctx, a.ID, "alice", "t", "data:text/html,x"); return err },
		"Edit: user with a space":       func() error { _, err := s.Edit(ctx, a.ID, " alice", "t", ""); return err },
		"Comment: NUL in the body":      func() error { _, err := s.Comment(ctx, a.ID, "", "bob", "a\x00b"); return err },
		"Comment: RLI in the body":      func() error { _, err := s.Comment(ctx, a.ID, "", "bob", "a\u2067b"); return err },
		"Comment: poster with NBSP":     func() error { _, err := s.Comment(ctx, a.ID, "", "bob\u00a0", "b"); return err },
		"EditComment: ESC in the body":  func() error { _, err := s.EditComment(ctx, c.ID, "alice", "\x1b[31mred"); return err },
		"EditComment: user with space":  func() error { _, err := s.EditComment(ctx, c.ID, "alice ", "b"); return err },
		"Vote: voter with a space":      func() error { _, err := s.Vote(ctx, "bob ", a.ID, Upvote); return err },
		"VoteComment: voter with space": func() error { _, err := s.VoteComment(ctx, "bob ", c.ID, Upvote); return err },
		"VoteBatch: voter with a space": func() error {
			r, err := s.VoteBatch(ctx, []Ballot{{"bob ", a.ID, Upvote}})
			if err == nil {
				err = r[0].Err
			}
			return err
		},
		"AddToGroups: group with a space": func() error { return s.AddToGroups(ctx, a.ID, "news ") },
		"AddToGroups: group with ZWSP":    func() error { return s.AddToGroups(ctx, a.ID, "ne\u200bws") },
	} {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	for name, call := range map[string]func() error{
		"VoteOf":           func() error { _, err := s.VoteOf(ctx, "alice ", a.ID); return err },
		"Karma":            func() error { _, err := s.Karma(ctx, "alice "); return err },
		"Submitted":        func() error { _, err := s.Submitted(ctx, "alice ", 1); return err },
		"UserComments":     func() error { _, err := s.UserComments(ctx, "alice ", 1); return err },
		"GroupCount":       func() error { _, err := s.GroupCount(ctx, "news "); return err },
		"RemoveFromGroups": func() error { return s.RemoveFromGroups(ctx, a.ID, "news ") },
	} {
		if err := call(); err != nil {
			t.Errorf("%s of a name with a space: %v", name, err)
		}
	}
	if after := snapshot(t, b, s); !maps.Equal(before, after) {
		t.Errorf("refused writes changed the store:\nbefore %v\nafter  %v", before, after)
	}
}

// TestRawTextReadsBack: what a store with WithRawText writes, which the
// default rules refuse, a store of the same prefix without the option
// reads back byte for byte, by the names it was written under; the
// option is no part of the store's identity.
func TestRawTextReadsBack(t *testing.T) {
	mr := miniredis.RunT(t)
	b := newBackend(t, "miniredis", mr.Addr(), mr)
	opts := []Option{WithEditWindow(time.Hour), WithUserPages(), WithKarma(1, -1)}
	strict, clock := newStore(t, b, opts...)
	raw, err := New(b.pool, append([]Option{WithKeyPrefix(strict.keys.prefix), WithClock(clock.Now), WithRawText()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Identity().String() != strict.Identity().String() {
		t.Fatalf("identities %q and %q differ", raw.Identity(), strict.Identity())
	}
	const poster, voter, group = "alice ", "\u00a0bob", "news "
	const title, link, body = "a\x1b[2J\x00 txt.\u202eexe\u2028b", "javascript:alert(1)", "\x07bell\r\u2066x"
	a, err := raw.Post(ctx, poster, title, link)
	if err != nil {
		t.Fatal(err)
	}
	c, err := raw.Comment(ctx, a.ID, "", poster, body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Vote(ctx, voter, a.ID, Upvote); err != nil {
		t.Fatal(err)
	}
	if err := raw.AddToGroups(ctx, a.ID, group); err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Post(ctx, poster, title, link); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("strict Post of the same: %v", err)
	}

	got, err := strict.Article(ctx, a.ID)
	if err != nil || got.Poster != poster || got.Title != title || got.Link != link {
		t.Errorf("Article = %+v, %v", got, err)
	}
	if list, err := strict.ArticlesByID(ctx, []string{a.ID}); err != nil || len(list) != 1 || list[0].Title != title {
		t.Errorf("ArticlesByID = %+v, %v", list, err)
	}
	if list, err := strict.CommentsByID(ctx, []string{c.ID}); err != nil || len(list) != 1 || list[0].Body != body || list[0].Poster != poster {
		t.Errorf("CommentsByID = %+v, %v", list, err)
	}
	if th, err := strict.Thread(ctx, a.ID, Best, 10); err != nil || len(th) != 1 || th[0].Body != body {
		t.Errorf("Thread = %+v, %v", th, err)
	}
	if list, err := strict.Submitted(ctx, poster, 1); err != nil || len(list) != 1 {
		t.Errorf("Submitted(%q) = %+v, %v", poster, list, err)
	}
	if list, err := strict.Upvoted(ctx, voter, 1); err != nil || len(list) != 1 {
		t.Errorf("Upvoted(%q) = %+v, %v", voter, list, err)
	}
	if list, err := strict.UserComments(ctx, poster, 1); err != nil || len(list) != 1 || list[0].Body != body {
		t.Errorf("UserComments(%q) = %+v, %v", poster, list, err)
	}
	if v, err := strict.VoteOf(ctx, voter, a.ID); err != nil || v != Upvote {
		t.Errorf("VoteOf(%q) = %v, %v", voter, v, err)
	}
	if k, err := strict.Karma(ctx, poster); err != nil || k != 1 {
		t.Errorf("Karma(%q) = %d, %v", poster, k, err)
	}
	if list, err := strict.GroupArticles(ctx, group, ScoreDesc, 1); err != nil || len(list) != 1 {
		t.Errorf("GroupArticles(%q) = %+v, %v", group, list, err)
	}
	if err := strict.RemoveFromGroups(ctx, a.ID, group); err != nil {
		t.Errorf("RemoveFromGroups(%q): %v", group, err)
	}
	if n, err := strict.GroupCount(ctx, group); err != nil || n != 0 {
		t.Errorf("GroupCount(%q) after its removal = %d, %v", group, n, err)
	}
	// The article's poster edits it under the default rules with text
	// they take; its name they do not.
	if _, err := strict.Edit(ctx, a.ID, poster, "clean", ""); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("strict Edit by %q: %v", poster, err)
	}
	if e, err := raw.Edit(ctx, a.ID, poster, "clean", "https://example.com/"); err != nil || e.Title != "clean" {
		t.Errorf("raw Edit: %+v, %v", e, err)
	}
}

// TestNameAllocs: the check of a voter's name, on Vote's path, allocates
// nothing for a name it takes.
func TestNameAllocs(t *testing.T) {
	r := textRules{}
	if n := testing.AllocsPerRun(100, func() {
		if r.ballot("Zoë 渡辺 🗳 user000042", Upvote) != nil {
			t.Fatal("refused")
		}
	}); n != 0 {
		t.Errorf("ballot check: %v allocations, want 0", n)
	}
}
