package voting

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/votekit/voting/internal/redistest"
)

// The fuzz targets run their seeds (f.Add and testdata/fuzz/) in every
// go test; CI fuzzes each for a short fixed time:
//
//	go test -run '^$' -fuzz '^FuzzKeys$' -fuzztime=20s .
//	go test -run '^$' -fuzz '^FuzzParseVoteType$' -fuzztime=20s .

// FuzzKeys checks key building and input validation: a prefix, a group
// name and an id that the store accepts never yield a key outside the
// store's hash tag, nor one that another family (or another name or id)
// could also produce; ids are accepted exactly when canonical; every
// rejection is a documented sentinel.
func FuzzKeys(f *testing.F) {
	for _, seed := range [][3]string{
		{"voting", "go", "1"},
		{"site:news", "{other}", "01"},
		{"a", "*", "1:x"},
		{"p", "groups:1", "-1"},
		{"p", "score:x", "1e3"},
		{"x y", ":", "9223372036854775807"},
		{"ü", "cache:time:g", "9223372036854775808"},
		{"{", "}", "999999999999999999999"},
		{"", " ", ""},
		{"p\n", "a\x00", "\xff"},
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
		built := map[string]string{} // key -> its family
		add := func(family, key string) {
			if hashTag(key) != prefix || redistest.Slot(key) != redistest.Slot(prefix) {
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
		add("score", k.score)
		add("time", k.time)

		nameErr := checkName("group name", name)
		if nameErr != nil && !errors.Is(nameErr, ErrInvalidArgument) {
			t.Fatalf("checkName(%q) = %v, want ErrInvalidArgument", name, nameErr)
		}
		if (nameErr == nil) != validName(name) {
			t.Fatalf("checkName(%q) = %v, but the rules say valid=%v", name, nameErr, validName(name))
		}
		if nameErr == nil {
			add("group", k.groupKey(name))
			add("cache:score", k.cacheKey(name, ScoreDesc))
			add("cache:time", k.cacheKey(name, TimeAsc))
		}

		idErr := checkID(id)
		n, perr := strconv.ParseInt(id, 10, 64)
		canonical := perr == nil && n > 0 && strconv.FormatInt(n, 10) == id
		switch {
		case canonical != canonicalID(id) || canonical != (idErr == nil):
			t.Fatalf("id %q: canonical %v, canonicalID %v, checkID %v", id, canonical, canonicalID(id), idErr)
		case idErr == nil:
			add("article", k.articleKey(id))
			add("voted", k.votedKey(id))
			add("groups", k.groupsOfKey(id))
		case id == "" || len(id) > MaxIDLen:
			if !errors.Is(idErr, ErrInvalidArgument) {
				t.Fatalf("checkID(%q) = %v, want ErrInvalidArgument", id, idErr)
			}
		case !errors.Is(idErr, ErrNotFound):
			t.Fatalf("checkID(%q) = %v, want ErrNotFound", id, idErr)
		}
	})
}

// hashTag returns what Redis Cluster hashes of key: the text between the
// first "{" and the next "}" when not empty, else the whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// families returns every key family that could have made key: a fixed
// key, or a family's fixed part followed by a valid id or group name.
func families(k keys, key string) []string {
	var list []string
	for family, fixed := range map[string]string{"seq": k.seq, "score": k.score, "time": k.time} {
		if key == fixed {
			list = append(list, family)
		}
	}
	for family, part := range map[string]string{"article": k.article, "voted": k.voted, "groups": k.groupsOf} {
		if rest, ok := strings.CutPrefix(key, part); ok && checkID(rest) == nil {
			list = append(list, family)
		}
	}
	for family, part := range map[string]string{"group": k.group, "cache:score": k.cacheScore, "cache:time": k.cacheTime} {
		if rest, ok := strings.CutPrefix(key, part); ok && checkName("group name", rest) == nil {
			list = append(list, family)
		}
	}
	return list
}

// validName restates the documented rules for names independently of
// checkName.
func validName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen || !utf8.ValidString(s) {
		return false
	}
	blank := true
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
		if !unicode.IsSpace(r) {
			blank = false
		}
	}
	return !blank
}

// FuzzParseVoteType checks that ParseVoteType accepts exactly what String
// returns for the three votes, rejects all else with ErrInvalidVote, and
// agrees with the text methods; and that any VoteType value is valid
// exactly when it is one of the three, and otherwise refused by
// MarshalText.
func FuzzParseVoteType(f *testing.F) {
	for _, s := range []string{"up", "down", "none", "", "UP", " up", "up\x00", "+1", "-1", "0", "VoteType(2)", "\xff"} {
		f.Add(s, int8(len(s)-3))
	}
	f.Fuzz(func(t *testing.T, s string, n int8) {
		v, err := ParseVoteType(s)
		var u VoteType
		uerr := u.UnmarshalText([]byte(s))
		if err != nil {
			if !errors.Is(err, ErrInvalidVote) || !errors.Is(uerr, ErrInvalidVote) {
				t.Fatalf("ParseVoteType(%q) = %v; UnmarshalText = %v; want ErrInvalidVote", s, err, uerr)
			}
			if s == "up" || s == "down" || s == "none" {
				t.Fatalf("ParseVoteType(%q) rejected a valid vote", s)
			}
		} else {
			text, merr := v.MarshalText()
			if !v.Valid() || v.String() != s || string(text) != s || merr != nil || uerr != nil || u != v {
				t.Fatalf("ParseVoteType(%q) = %v: String %q, MarshalText %q %v, UnmarshalText %v %v", s, v, v.String(), text, merr, u, uerr)
			}
		}

		w := VoteType(n)
		if w.Valid() != (n >= -1 && n <= 1) {
			t.Fatalf("VoteType(%d).Valid() = %v", n, w.Valid())
		}
		text, merr := w.MarshalText()
		switch {
		case w.Valid():
			back, err := ParseVoteType(string(text))
			if merr != nil || err != nil || back != w {
				t.Fatalf("VoteType(%d): MarshalText %q %v, parsed back %v %v", n, text, merr, back, err)
			}
		case !errors.Is(merr, ErrInvalidVote):
			t.Fatalf("VoteType(%d).MarshalText() = %q, %v; want ErrInvalidVote", n, text, merr)
		case w.String() != "VoteType("+strconv.Itoa(int(n))+")":
			t.Fatalf("VoteType(%d).String() = %q", n, w.String())
		}
	})
}
