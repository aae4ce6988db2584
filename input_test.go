package voting

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/redistest"
)

// hostileCase is one hostile input to one public method. call returns the
// method's error; where a correct result is expected (want nil), call
// checks it too.
type hostileCase struct {
	name string
	want error // the sentinel, or nil for a correct result
	call func(t *testing.T, s *Store) error
}

var mib = strings.Repeat("x", 1<<20)

func hostileCases() []hostileCase {
	post := func(poster, title, link string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := s.Post(ctx, poster, title, link); return err }
	}
	vote := func(user, id string, v VoteType) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := s.Vote(ctx, user, id, v); return err }
	}
	article := func(id string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := s.Article(ctx, id); return err }
	}
	articles := func(o Order, page int) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error {
			list, err := s.Articles(ctx, o, page)
			if err == nil && page > 1 && len(list) != 0 {
				t.Errorf("page %d = %d articles, want none", page, len(list))
			}
			return err
		}
	}
	voteOf := func(user, id string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := s.VoteOf(ctx, user, id); return err }
	}
	add := func(id string, groups ...string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { return s.AddToGroups(ctx, id, groups...) }
	}
	remove := func(id string, groups ...string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { return s.RemoveFromGroups(ctx, id, groups...) }
	}
	groupPage := func(g string, o Order, page int) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := s.GroupArticles(ctx, g, o, page); return err }
	}
	del := func(id string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { return s.Delete(ctx, id) }
	}
	parse := func(in string) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := ParseVoteType(in); return err }
	}
	option := func(o Option) func(*testing.T, *Store) error {
		return func(t *testing.T, s *Store) error { _, err := New(s.pool, o); return err }
	}
	manyIDs := make([]string, MaxBatch+1)
	manyGroups := make([]string, MaxBatch+1)
	for i := range manyIDs {
		manyIDs[i] = "1"
		manyGroups[i] = "g"
	}
	bad, gone, vote0 := ErrInvalidArgument, ErrNotFound, ErrInvalidVote

	return []hostileCase{
		{"Post empty poster", bad, post("", "t", "")},
		{"Post blank poster", bad, post(" \t ", "t", "")},
		{"Post 1 MiB poster", bad, post(mib, "t", "")},
		{"Post invalid UTF-8 poster", bad, post("\xff\xfe", "t", "")},
		{"Post NUL in poster", bad, post("a\x00b", "t", "")},
		{"Post newline in poster", bad, post("a\nb", "t", "")},
		{"Post empty title", bad, post("p", "", "")},
		{"Post blank title", bad, post("p", "\n\t ", "")},
		{"Post 1 MiB title", bad, post("p", mib, "")},
		{"Post 1 MiB link", bad, post("p", "t", mib)},
		{"Post invalid UTF-8 title", bad, post("p", "t\xc3", "")},
		{"Post invalid UTF-8 link", bad, post("p", "t", "\x80")},
		{"Post key syntax in every field", nil, func(t *testing.T, s *Store) error {
			a, err := s.Post(ctx, "{other}:*", "{", "}\n\x00*:")
			if err != nil {
				return err
			}
			got, err := s.Article(ctx, a.ID)
			if err != nil || got.Poster != "{other}:*" || got.Title != "{" || got.Link != "}\n\x00*:" {
				t.Errorf("stored %+v, %v; want the fields byte for byte", got, err)
			}
			return err
		}},
		{"Vote id 1:x", gone, vote("u", "1:x", Upvote)},
		{"Vote id -1", gone, vote("u", "-1", Upvote)},
		{"Vote id 01", gone, vote("u", "01", Upvote)},
		{"Vote id 1e3", gone, vote("u", "1e3", Upvote)},
		{"Vote id 0", gone, vote("u", "0", Upvote)},
		{"Vote id *", gone, vote("u", "*", Upvote)},
		{"Vote id with space", gone, vote("u", " 1", Upvote)},
		{"Vote id with newline", gone, vote("u", "1\n", Upvote)},
		{"Vote id {other}", gone, vote("u", "{other}", Upvote)},
		{"Vote id 21 digits", bad, vote("u", "999999999999999999999", Upvote)},
		{"Vote id past int64", gone, vote("u", "9223372036854775808", Upvote)},
		{"Vote empty id", bad, vote("u", "", Upvote)},
		{"Vote 1 MiB id", bad, vote("u", mib, Upvote)},
		{"Vote type 2", vote0, vote("u", "1", 2)},
		{"Vote type -128", vote0, vote("u", "1", -128)},
		{"Vote type 3 on a bad id", vote0, vote("u", "", 3)},
		{"Vote empty user", bad, vote("", "1", Upvote)},
		{"Vote 1 MiB user", bad, vote(mib, "1", Upvote)},
		{"Vote NUL user", bad, vote("\x00", "1", Upvote)},
		{"Vote key syntax user", nil, func(t *testing.T, s *Store) error {
			if _, err := s.Vote(ctx, "{other}:*", "1", Downvote); err != nil {
				return err
			}
			v, err := s.VoteOf(ctx, "{other}:*", "1")
			if err == nil && v != Downvote {
				t.Errorf("VoteOf = %v, want down", v)
			}
			return err
		}},
		{"Article id 20 digits", gone, article("99999999999999999999")},
		{"Article id 1:x", gone, article("1:x")},
		{"Article empty id", bad, article("")},
		{"Articles page 0", bad, articles(ScoreDesc, 0)},
		{"Articles page -1", bad, articles(ScoreDesc, -1)},
		{"Articles page MinInt", bad, articles(TimeAsc, math.MinInt)},
		{"Articles huge page", nil, articles(ScoreDesc, math.MaxInt)},
		{"Articles page past the end", nil, articles(TimeDesc, 1<<40)},
		{"Articles Order 4", bad, articles(Order(4), 1)},
		{"Articles Order -1", bad, articles(Order(-1), 1)},
		{"VoteOf empty user", bad, voteOf("", "1")},
		{"VoteOf id 01", gone, voteOf("u", "01")},
		{"VoteOf unknown id", gone, voteOf("u", "424242")},
		{"VotesOf hostile ids", nil, func(t *testing.T, s *Store) error {
			votes, err := s.VotesOf(ctx, "{other}:*", []string{"1", "1:x", "-1", "*", "{other}", "01"})
			if err == nil && fmt.Sprint(votes) != "[down none none none none none]" {
				t.Errorf("VotesOf = %v", votes)
			}
			return err
		}},
		{"VotesOf empty id", bad, func(t *testing.T, s *Store) error { _, err := s.VotesOf(ctx, "u", []string{"1", ""}); return err }},
		{"VotesOf too many ids", bad, func(t *testing.T, s *Store) error { _, err := s.VotesOf(ctx, "u", manyIDs); return err }},
		{"AddToGroups key syntax names", nil, func(t *testing.T, s *Store) error {
			names := []string{"{other}", "*", ":", "}", "{", "a:b", "group:x"}
			if err := s.AddToGroups(ctx, "1", names...); err != nil {
				return err
			}
			groups, err := s.Groups(ctx, "1")
			if err == nil && len(groups) != len(names) {
				t.Errorf("Groups = %q, want %q", groups, names)
			}
			page, err := s.GroupArticles(ctx, "{other}", ScoreDesc, 1)
			if err == nil && (len(page) != 1 || page[0].ID != "1") {
				t.Errorf("group page = %+v", page)
			}
			return err
		}},
		{"AddToGroups empty name", bad, add("1", "g", "")},
		{"AddToGroups 1 MiB name", bad, add("1", mib)},
		{"AddToGroups newline in name", bad, add("1", "a\nb")},
		{"AddToGroups invalid UTF-8 name", bad, add("1", "\xed\xa0\x80")},
		{"AddToGroups too many groups", bad, add("1", manyGroups...)},
		{"AddToGroups id 01", gone, add("01", "g")},
		{"AddToGroups unknown id", gone, add("777", "g")},
		{"RemoveFromGroups id 1:x", gone, remove("1:x", "g")},
		{"RemoveFromGroups NUL name", bad, remove("1", "g\x00")},
		{"RemoveFromGroups key syntax name", nil, remove("1", "*")},
		{"Groups id *", gone, func(t *testing.T, s *Store) error { _, err := s.Groups(ctx, "*"); return err }},
		{"GroupArticles empty name", bad, groupPage("", ScoreDesc, 1)},
		{"GroupArticles blank name", bad, groupPage("  ", ScoreDesc, 1)},
		{"GroupArticles unknown group with *", nil, groupPage("nothing*", TimeAsc, 1)},
		{"GroupArticles Order 9", bad, groupPage("g", Order(9), 1)},
		{"GroupArticles page 0", bad, groupPage("g", ScoreDesc, 0)},
		{"GroupArticles huge page", nil, groupPage("{other}", ScoreAsc, math.MaxInt)},
		{"Delete id 1e3", gone, del("1e3")},
		{"Delete empty id", bad, del("")},
		{"Delete id 21 digits", bad, del("999999999999999999999")},
		{"ParseVoteType empty", vote0, parse("")},
		{"ParseVoteType UP", vote0, parse("UP")},
		{"ParseVoteType NUL", vote0, parse("up\x00")},
		{"ParseVoteType 1 MiB", vote0, parse(mib)},
		{"UnmarshalText sideways", vote0, func(t *testing.T, s *Store) error { var v VoteType; return v.UnmarshalText([]byte("sideways")) }},
		{"MarshalText VoteType 3", vote0, func(t *testing.T, s *Store) error { _, err := VoteType(3).MarshalText(); return err }},
		{"New prefix {other}", bad, option(WithKeyPrefix("{other}"))},
		{"New prefix with newline", bad, option(WithKeyPrefix("a\nb"))},
		{"New 1 MiB prefix", bad, option(WithKeyPrefix(mib))},
		{"New page size huge", bad, option(WithPageSize(math.MaxInt))},
	}
}

// TestHostileInput sends every hostile input of the table to a fresh
// miniredis and a fresh redis-server. Each gets its sentinel error or a
// correct result, never a panic; afterwards every key on the server is one
// of the store's, of a known family, and the vote invariant holds.
func TestHostileInput(t *testing.T) {
	run := func(t *testing.T, b *backend) {
		s, err := New(b.pool, WithKeyPrefix("hostile"))
		if err != nil {
			t.Fatal(err)
		}
		mustPost(t, s, "alice", "the one article")
		cases := hostileCases()
		sentinels := 0
		for _, c := range cases {
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
			case c.want != nil:
				sentinels++
			}
		}
		keys, err := redis.Strings(b.do(t, "KEYS", "*"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !storeKey(s.keys, k) {
				t.Errorf("key %q is not one of the store's", k)
			}
		}
		ids := allIDs(t, s)
		checkInvariant(t, s, DefaultVoteWeight, ids, []string{"alice", "{other}:*", "u", "p"})
		t.Logf("%d hostile inputs: %d sentinel errors, %d correct results, no panic; %d keys on the server, all {hostile}:..., invariant holds for %d articles",
			len(cases), sentinels, len(cases)-sentinels, len(keys), len(ids))
	}
	t.Run("miniredis", func(t *testing.T) {
		run(t, newBackend(t, "miniredis", miniredis.RunT(t).Addr(), nil))
	})
	t.Run("redis", func(t *testing.T) {
		run(t, newBackend(t, "redis", redistest.Start(t).Addr, nil))
	})
}

// storeKey reports whether key is a key of the store: one of its fixed
// keys, or a family's fixed part followed by a canonical id or a valid
// group name.
func storeKey(k keys, key string) bool {
	switch key {
	case k.seq, k.score, k.time:
		return true
	}
	for _, family := range []string{k.article, k.voted, k.groupsOf} {
		if rest, ok := strings.CutPrefix(key, family); ok && canonicalID(rest) {
			return true
		}
	}
	for _, family := range []string{k.group, k.cacheScore, k.cacheTime} {
		if rest, ok := strings.CutPrefix(key, family); ok && checkName("group", rest) == nil {
			return true
		}
	}
	return false
}

// TestHostileTableCoversEveryMethod keeps the table at 30 cases or more
// and over every public entry point.
func TestHostileTableCoversEveryMethod(t *testing.T) {
	cases := hostileCases()
	covered := map[string]int{}
	for _, c := range cases {
		covered[strings.Fields(c.name)[0]]++
	}
	for _, m := range []string{"New", "Post", "Article", "Articles", "Vote", "VoteOf", "VotesOf",
		"AddToGroups", "RemoveFromGroups", "Groups", "GroupArticles", "Delete",
		"ParseVoteType", "UnmarshalText", "MarshalText"} {
		if covered[m] == 0 {
			t.Errorf("no hostile case for %s", m)
		}
	}
	if len(cases) < 30 {
		t.Fatalf("%d hostile cases, want at least 30", len(cases))
	}
	t.Logf("%d hostile cases over %d entry points", len(cases), len(covered))
}

// TestEmptyGroupReadExpires reads a group before it has any article, then
// adds one: once the cache TTL has passed the group page shows it. (On
// miniredis an empty ZINTERSTORE result used to stay as a key without
// expiry, so the group read as empty for ever.)
func TestEmptyGroupReadExpires(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithGroupCacheTTL(50*time.Millisecond))
		a := mustPost(t, s, "alice", "t")
		if page, err := s.GroupArticles(ctx, "later", ScoreDesc, 1); err != nil || len(page) != 0 {
			t.Fatalf("empty group page = %v, %v", page, err)
		}
		if err := s.AddToGroups(ctx, a.ID, "later"); err != nil {
			t.Fatal(err)
		}
		b.elapse(60 * time.Millisecond)
		page, err := s.GroupArticles(ctx, "later", ScoreDesc, 1)
		if err != nil || len(page) != 1 {
			t.Fatalf("group page a TTL after the addition = %v, %v; want the article", page, err)
		}
		for _, k := range b.storeKeys(t, s) {
			if strings.Contains(k, ":cache:") && b.ttl(t, k) < 0 {
				t.Fatalf("cache key %q has no expiry", k)
			}
		}
	})
}
