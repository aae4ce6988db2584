package voting

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/redistest"
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
		{"Vote: type 2", vote0, func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, "u", "1", 2); return err }},
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
			hostileCase{"VoteOf: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.VoteOf(ctx, n, "1"); return err }},
			hostileCase{"VotesOf: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.VotesOf(ctx, n, []string{"1"}); return err }},
			hostileCase{"ArticlesFor: user " + q, bad, func(t *testing.T, s *Store) error {
				_, _, err := s.ArticlesFor(ctx, n, ScoreDesc, 1)
				return err
			}},
			hostileCase{"AddToGroups: name " + q, bad, func(t *testing.T, s *Store) error { return s.AddToGroups(ctx, "1", "g", n) }},
			hostileCase{"RemoveFromGroups: name " + q, bad, func(t *testing.T, s *Store) error { return s.RemoveFromGroups(ctx, "1", n) }},
			hostileCase{"GroupArticles: name " + q, bad, func(t *testing.T, s *Store) error { _, err := s.GroupArticles(ctx, n, ScoreDesc, 1); return err }},
			hostileCase{"GroupCount: name " + q, bad, func(t *testing.T, s *Store) error { _, err := s.GroupCount(ctx, n); return err }},
			hostileCase{"Submitted: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Submitted(ctx, n, 1); return err }},
			hostileCase{"Upvoted: user " + q, bad, func(t *testing.T, s *Store) error { _, err := s.Upvoted(ctx, n, 1); return err }},
		)
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
			hostileCase{"VoteOf: user " + q, nil, func(t *testing.T, s *Store) error { _, err := s.VoteOf(ctx, n, "1"); return err }},
			hostileCase{"VotesOf: user " + q, nil, func(t *testing.T, s *Store) error { _, err := s.VotesOf(ctx, n, []string{"1"}); return err }},
			hostileCase{"ArticlesFor: user " + q, nil, func(t *testing.T, s *Store) error {
				_, _, err := s.ArticlesFor(ctx, n, ScoreDesc, 1)
				return err
			}},
			hostileCase{"GroupArticles: name " + q, nil, emptyPage(func(s *Store) ([]Article, error) { return s.GroupArticles(ctx, n, ScoreDesc, 1) })},
			hostileCase{"GroupCount: name " + q, nil, func(t *testing.T, s *Store) error { _, err := s.GroupCount(ctx, n); return err }},
			hostileCase{"Submitted: user " + q, nil, emptyPage(func(s *Store) ([]Article, error) { return s.Submitted(ctx, n, 1) })},
			hostileCase{"Upvoted: user " + q, nil, emptyPage(func(s *Store) ([]Article, error) { return s.Upvoted(ctx, n, 1) })},
			hostileCase{"Karma: user " + q, nil, func(t *testing.T, s *Store) error { _, err := s.Karma(ctx, n); return err }},
			hostileCase{"UserComments: user " + q, nil, func(t *testing.T, s *Store) error { _, err := s.UserComments(ctx, n, 1); return err }},
		)
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
		s, _ := newStore(t, b, WithOrders(Top, Hot, Best, Controversial), WithUniqueLinks(), WithUserPages())
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
			if !covered[m.name] && m.name != "Count" && m.name != "Drop" && m.name != "Reconfigure" { // they take no input
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
