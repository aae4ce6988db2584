package voting

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/votekit/voting/testkit/redistest"
)

// The fuzz targets run their seeds (f.Add and testdata/fuzz/) in every
// go test; CI fuzzes each for a short fixed time:
//
//	go test -run '^$' -fuzz '^FuzzKeys$' -fuzztime=20s .
//	go test -run '^$' -fuzz '^FuzzParseVoteType$' -fuzztime=20s .

// orderings returns the names of the store's orderings.
func orderings() []string {
	var list []string
	seen := map[string]bool{}
	for o := ScoreDesc; o <= Controversial; o++ {
		if name, _ := o.ordering(); !seen[name] {
			seen[name] = true
			list = append(list, name)
		}
	}
	return list
}

// families returns every key family of k that could have made key: a
// fixed key, or a family's fixed part followed by a name that family
// accepts (a canonical id, a valid group name, a link, a bucket).
func families(k keys, key string) []string {
	var list []string
	if key == k.seq {
		list = append(list, "seq")
	}
	for _, o := range orderings() {
		if key == k.orderingKey(o) {
			list = append(list, "by:"+o)
		}
		if rest, ok := strings.CutPrefix(key, k.cache+o+":"); ok && checkName("group name", rest) == nil {
			list = append(list, "cache:"+o)
		}
	}
	if rest, ok := strings.CutPrefix(key, k.topBucket); ok {
		size, n, _ := strings.Cut(rest, ":")
		if _, err := strconv.ParseInt(n, 10, 64); err == nil && (size == "600" || size == "86400" || size == "2592000") {
			list = append(list, "top")
		}
	}
	for _, f := range []struct{ family, part string }{{"article", k.article}, {"voted", k.voted}, {"groups", k.groupsOf}} {
		if rest, ok := strings.CutPrefix(key, f.part); ok && canonicalID(rest) {
			list = append(list, f.family)
		}
	}
	if rest, ok := strings.CutPrefix(key, k.group); ok && checkName("group name", rest) == nil {
		list = append(list, "group")
	}
	if rest, ok := strings.CutPrefix(key, k.link); ok && rest != "" && (textRules{raw: true}).link(rest) == nil {
		list = append(list, "link")
	}
	if key == k.karma {
		list = append(list, "karma")
	}
	for _, f := range []struct{ family, key string }{{"cseq", k.cseq}, {"comments", k.comments}, {"cmoving", k.moving}, {"cremoving", k.removing}} {
		if key == f.key {
			list = append(list, f.family)
		}
	}
	for _, f := range []struct{ family, part string }{{"comment", k.comment}, {"cbody", k.body}, {"cvoted", k.cvoted},
		{"thread", k.thread}} {
		if rest, ok := strings.CutPrefix(key, f.part); ok && canonicalID(rest) {
			list = append(list, f.family)
		}
	}
	if rest, ok := strings.CutPrefix(key, k.kids); ok {
		if canonicalID(rest) || (strings.HasPrefix(rest, "a") && canonicalID(rest[1:])) {
			list = append(list, "kids")
		}
		o, parent, _ := strings.Cut(rest, ":")
		if slices.Contains([]string{"best", "top", "hot", "controversial", "score"}, o) &&
			(canonicalID(parent) || (strings.HasPrefix(parent, "a") && canonicalID(parent[1:]))) {
			list = append(list, "kids:"+o)
		}
	}
	if key == k.record {
		list = append(list, "store")
	}
	if key == k.backfill {
		list = append(list, "backfill")
	}
	for _, f := range []struct{ family, key string }{{"suspended", k.suspended}, {"events", k.events}} {
		if key == f.key {
			list = append(list, f.family)
		}
	}
	for _, f := range []struct{ family, part string }{{"submitted", k.submitted}, {"upvoted", k.upvoted},
		{"votelog", k.voteLog}, {"lastpost", k.lastPost}, {"commented", k.commented}, {"lastcomment", k.lastComment},
		{"uvotes", k.userVotes}} {
		if rest, ok := strings.CutPrefix(key, f.part); ok && checkName("user", rest) == nil {
			list = append(list, f.family)
		}
	}
	return list
}

// globLiteral parses a Redis glob pattern by stringmatchlen's rules ("\"
// quotes the next byte; "*", "?" and "[" begin wildcards; a trailing "\"
// is itself) and returns the literal text before its first wildcard and
// the pattern from that wildcard on.
func globLiteral(p string) (literal, rest string) {
	var b []byte
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) {
				i++
			}
		case '*', '?', '[':
			return string(b), p[i:]
		}
		b = append(b, p[i])
	}
	return string(b), ""
}

// validName restates the documented rules for names apart from checkName:
// 1 to MaxNameLen bytes of UTF-8 of letters, marks, numbers, punctuation,
// symbols and spaces (no controls, format, private-use or unassigned
// code points, no line or paragraph separators), not only white space.
func validName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen || !utf8.ValidString(s) {
		return false
	}
	blank := true
	for _, r := range s {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs) ||
			unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return false // not graphic, or graphic but drawn as nothing
		}
		if !unicode.IsSpace(r) {
			blank = false
		}
	}
	return !blank
}

// FuzzKeys checks key naming and the input checks it relies on: a
// prefix, a group name, a link and an id the store accepts never yield a
// key outside the store's hash tag, nor one that another family (or
// another name) could also produce; SCAN patterns match exactly the
// store's keys; ids are accepted exactly when canonical; every rejection
// is ErrInvalidArgument.
func FuzzKeys(f *testing.F) {
	for _, seed := range [][3]string{
		{"voting", "go", "1"},
		{"site:news", "{other}", "01"},
		{"a*b", "*", "1:x"},
		{"x?y", "groups:1", "-1"},
		{"[ab]", "cache:score:x", "1e3"},
		{"back\\slash", ":", "9223372036854775807"},
		{"ü", "by:score", "9223372036854775808"},
		{"{", "}", "999999999999999999999"},
		{"", " ", ""},
		{"p\n", "a\u200bb", "\xff"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, prefix, name, id string) {
		if err := checkPrefix(prefix); err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("checkPrefix(%q) = %v, want ErrInvalidArgument", prefix, err)
			}
			prefix = DefaultKeyPrefix
		}
		k := newKeys(prefix)
		tag := "{" + prefix + "}:"
		if literal, rest := globLiteral(k.pattern()); literal != tag || rest != "*" {
			t.Fatalf("pattern %q matches %q then %q, want %q then *", k.pattern(), literal, rest, tag)
		}
		built := map[string]string{} // key -> its family
		add := func(family, key string) {
			t.Helper()
			if !strings.HasPrefix(key, tag) || redistest.Slot(key) != redistest.Slot(k.seq) {
				t.Fatalf("%s key %q is outside the hash tag {%s}", family, key, prefix)
			}
			if got := families(k, key); len(got) != 1 || got[0] != family {
				t.Fatalf("%s key %q could be made by %v", family, key, got)
			}
			if other, ok := built[key]; ok {
				t.Fatalf("key %q made by %s and %s", key, family, other)
			}
			built[key] = family
		}
		add("seq", k.seq)
		for _, o := range orderings() {
			add("by:"+o, k.orderingKey(o))
		}
		add("top", k.topBucket+"600:3000000")
		add("top", k.topBucket+"86400:-1")
		add("karma", k.karma)
		add("cseq", k.cseq)
		add("cmoving", k.moving)
		add("cremoving", k.removing)
		add("comments", k.comments)
		add("store", k.record)
		add("backfill", k.backfill)
		add("suspended", k.suspended)
		add("events", k.events)

		nameErr := checkName("group name", name)
		if nameErr != nil && !errors.Is(nameErr, ErrInvalidArgument) {
			t.Fatalf("checkName(%q) = %v, want ErrInvalidArgument", name, nameErr)
		}
		if (nameErr == nil) != validName(name) {
			t.Fatalf("checkName(%q) = %v, but the rules say valid=%v", name, nameErr, validName(name))
		}
		if nameErr == nil {
			add("votelog", k.voteLog+name)
			add("uvotes", k.userVotesKey(name))
			add("lastpost", k.lastPostKey(name))
			add("lastcomment", k.lastCommentKey(name))
			add("group", k.groupKey(name))
			for _, o := range orderings() {
				add("cache:"+o, k.cacheKey(name, o))
			}
		}
		if nameErr == nil { // user names follow the rules of group names
			add("submitted", k.submittedKey(name))
			add("upvoted", k.upvotedKey(name))
			add("commented", k.commentedKey(name))
		}
		if name != "" && (textRules{raw: true}).link(name) == nil {
			add("link", k.link+name)
		}

		n, perr := strconv.ParseInt(id, 10, 64)
		canonical := perr == nil && n > 0 && strconv.FormatInt(n, 10) == id
		if canonical != canonicalID(id) {
			t.Fatalf("canonicalID(%q) = %v, want %v", id, canonicalID(id), canonical)
		}
		if canonical {
			add("article", k.articleKey(id))
			add("voted", k.votedKey(id))
			add("groups", k.groupsOfKey(id))
			add("comment", k.commentKey(id))
			add("cbody", k.body+id)
			add("cvoted", k.cvoted+id)
			add("thread", k.threadKey(id))
			add("kids", k.kids+id)
			add("kids", k.kids+"a"+id)
			for _, o := range []string{"best", "top", "hot", "controversial", "score"} {
				add("kids:"+o, k.kids+o+":"+id)
				add("kids:"+o, k.kids+o+":a"+id)
			}
		}
	})
}

// TestPattern gives stores hostile prefixes, each glob-like, next to
// stores whose prefixes the unescaped glob would match: each store's
// pattern matches all its own keys and no other's, on the server's own
// KEYS; and Drop of each hostile store leaves every other store whole.
func TestPattern(t *testing.T) {
	// Each hostile prefix, then prefixes its unescaped glob matches. All
	// get the same suffix, unique to the run.
	hostile := [][]string{
		{"a*b", "aXYb", "a*bb"},
		{"x?y", "xzy"},
		{"[ab]", "a", "b"},
		{"back\\slash", "backslash"},
		{"a]b\\", "a]b"},
	}
	wantFamilies := "[article by:score by:time by:top cache:score group groups link seq store top voted]"
	forEachBackend(t, func(t *testing.T, b *backend) {
		n := strconv.FormatInt(prefixSeq.Add(1), 10)
		var stores []*Store
		isHostile := map[*Store]bool{}
		for _, group := range hostile {
			for i, p := range group {
				s, _ := newStore(t, b, WithKeyPrefix(p+n), WithOrders(Top), WithUniqueLinks())
				a := mustPost(t, s, "alice", "t")
				mustVote(t, s, "bob", a.ID, Downvote)
				if err := s.AddToGroups(ctx, a.ID, "g*"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.GroupArticles(ctx, "g*", ScoreDesc, 1); err != nil {
					t.Fatal(err)
				}
				stores = append(stores, s)
				isHostile[s] = i == 0
			}
		}
		// keysOf returns the keys KEYS lists for s's pattern, checking
		// that each is a key of s.
		keysOf := func(s *Store) string {
			t.Helper()
			keys := b.storeKeys(t, s)
			for _, key := range keys {
				if got := families(s.keys, key); len(got) != 1 {
					t.Errorf("prefix %q: KEYS %q lists %q, a key of families %v", s.keys.prefix, s.keys.pattern(), key, got)
				}
			}
			return fmt.Sprint(keys)
		}
		before := map[*Store]string{}
		for _, s := range stores {
			seen := map[string]bool{}
			for _, key := range b.storeKeys(t, s) {
				for _, f := range families(s.keys, key) {
					seen[f] = true
				}
			}
			var list []string
			for f := range seen {
				list = append(list, f)
			}
			slices.Sort(list)
			if got := fmt.Sprint(list); got != wantFamilies {
				t.Errorf("prefix %q: KEYS %q lists keys of %s, want %s", s.keys.prefix, s.keys.pattern(), got, wantFamilies)
			}
			before[s] = keysOf(s)
		}
		dropped := map[*Store]bool{}
		for _, s := range stores {
			if !isHostile[s] {
				continue
			}
			if err := s.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			dropped[s] = true
			if keys := b.storeKeys(t, s); len(keys) != 0 {
				t.Errorf("prefix %q: Drop left %q", s.keys.prefix, keys)
			}
			for _, o := range stores {
				if got := keysOf(o); !dropped[o] && got != before[o] {
					t.Errorf("Drop of prefix %q changed prefix %q: %s, was %s", s.keys.prefix, o.keys.prefix, got, before[o])
				}
			}
		}
	})
}

// TestCommentCountsKey: lib/record.lua commentCounts finds the counts'
// hash as the article records' prefix's sibling, "{prefix}:comments"
// where they are "{prefix}:article:", without an argument on every read.
func TestCommentCountsKey(t *testing.T) {
	for _, p := range []string{"voting", "a:b", "x"} {
		k := newKeys(p)
		if got := strings.TrimSuffix(k.article, "article:") + "comments"; got != k.comments {
			t.Errorf("prefix %q: commentCounts would read %q, the counts are at %q", p, got, k.comments)
		}
	}
}

// TestMovingKey: lib/tree.lua moving finds the flag of a Reconfigure
// moving comments of layout 4 as the sibling, in the same hash tag, of
// any key it is given, "{prefix}:cmoving", without an argument on every
// comment call.
func TestMovingKey(t *testing.T) {
	for _, p := range []string{"voting", "a:b", "x"} {
		k := newKeys(p)
		tag := k.comment[:strings.Index(k.comment, "}:")+2]
		if got := tag + "cmoving"; got != k.moving {
			t.Errorf("prefix %q: moving would read %q, the flag is at %q", p, got, k.moving)
		}
	}
}

// TestSuspensionKeys keeps the key lib/moderation.lua suspendedKeyOf
// names, as the sibling of the store's record, keys.go's.
func TestSuspensionKeys(t *testing.T) {
	for _, prefix := range []string{"voting", "site:news", "a}b"} {
		k := newKeys(prefix)
		if strings.TrimSuffix(k.record, "store")+"suspended" != k.suspended {
			t.Errorf("prefix %q: %q is not the record's sibling", prefix, k.suspended)
		}
	}
}
