package voting

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what callers pass in. Longer or malformed input gets
// ErrInvalidArgument before Redis is touched.
const (
	// MaxNameLen is the longest user, poster or group name, in bytes.
	MaxNameLen = 256
	// MaxTitleLen is the longest article title, in bytes.
	MaxTitleLen = 1024
	// MaxLinkLen is the longest article link, in bytes.
	MaxLinkLen = 4096
	// MaxIDLen is the longest article id accepted, in bytes. Ids are the
	// decimal strings the store issues ("1", "2", ...), at most 19 digits.
	MaxIDLen = 20
	// MaxBatch is the most ids one VotesOf call, or groups one
	// AddToGroups or RemoveFromGroups call, may name.
	MaxBatch = 1000
	// MaxPrefixLen is the longest key prefix, in bytes.
	MaxPrefixLen = 64
)

// keys names every Redis key of one store; nothing else in the package
// builds a key. Every name starts with "{prefix}:", a Redis Cluster hash
// tag, so all keys of a store live in one hash slot and one script may
// touch any of them. The layout (see doc.go):
//
//	{p}:seq               string  last issued article id
//	{p}:score             zset    id -> score
//	{p}:time              zset    id -> post time (Unix seconds)
//	{p}:article:<id>      hash    title, link, poster, posted, up, down
//	{p}:voted:<id>        hash    user -> 1 or -1; expires when voting closes
//	{p}:groups:<id>       set     the groups the article is in
//	{p}:group:<name>      set     the ids in the group
//	{p}:cache:score:<name> zset   cached group ∩ score, short TTL
//	{p}:cache:time:<name>  zset   cached group ∩ time, short TTL
//
// No family's fixed part is a prefix of another's, and ids are canonical
// decimals, so no id or group name can reach another family's keys.
type keys struct {
	prefix           string // as given to WithKeyPrefix, without braces
	seq, score, time string
	// Prefixes to which an id or a group name is appended. Scripts that
	// build keys themselves receive these.
	article, voted, groupsOf, group, cacheScore, cacheTime string
}

func newKeys(prefix string) keys {
	tag := "{" + prefix + "}:"
	return keys{
		prefix:     prefix,
		seq:        tag + "seq",
		score:      tag + "score",
		time:       tag + "time",
		article:    tag + "article:",
		voted:      tag + "voted:",
		groupsOf:   tag + "groups:",
		group:      tag + "group:",
		cacheScore: tag + "cache:score:",
		cacheTime:  tag + "cache:time:",
	}
}

func (k keys) articleKey(id string) string  { return k.article + id }
func (k keys) votedKey(id string) string    { return k.voted + id }
func (k keys) groupsOfKey(id string) string { return k.groupsOf + id }
func (k keys) groupKey(name string) string  { return k.group + name }

// ordering returns the zset an order reads, and whether it reads it
// from the highest score down.
func (k keys) ordering(o Order) (key string, desc bool) {
	switch o {
	case ScoreAsc:
		return k.score, false
	case TimeDesc:
		return k.time, true
	case TimeAsc:
		return k.time, false
	default:
		return k.score, true
	}
}

// cacheKey returns the cached group page for an order. Both directions of
// one ordering share a cache.
func (k keys) cacheKey(group string, o Order) string {
	if o == TimeDesc || o == TimeAsc {
		return k.cacheTime + group
	}
	return k.cacheScore + group
}

// checkPrefix validates a key prefix: non-empty, at most MaxPrefixLen
// bytes of printable UTF-8 without braces, which would break the hash tag.
func checkPrefix(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: key prefix is empty", ErrInvalidArgument)
	case len(p) > MaxPrefixLen:
		return fmt.Errorf("%w: key prefix is longer than %d bytes", ErrInvalidArgument, MaxPrefixLen)
	case strings.ContainsAny(p, "{}"):
		return fmt.Errorf("%w: key prefix %q contains a brace", ErrInvalidArgument, p)
	case !printable(p):
		return fmt.Errorf("%w: key prefix %q is not printable UTF-8", ErrInvalidArgument, p)
	}
	return nil
}

// checkID validates an article id. Empty and over-long ids are invalid
// arguments; any other string that is not a canonical positive decimal
// ("1", "2", ... never "01", "-1" or "1e3") cannot have been issued by the
// store, so it is not found, without a round trip.
func checkID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: article id is empty", ErrInvalidArgument)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: article id is longer than %d bytes", ErrInvalidArgument, MaxIDLen)
	}
	if !canonicalID(id) {
		return fmt.Errorf("%w: article %q", ErrNotFound, id)
	}
	return nil
}

// canonicalID reports whether id has the form the store issues: 1 to 19
// decimal digits without a leading zero (a positive int64).
func canonicalID(id string) bool {
	if len(id) == 0 || len(id) > 19 || id[0] == '0' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return len(id) < 19 || id <= "9223372036854775807"
}

// checkName validates a user, poster or group name: 1 to MaxNameLen bytes
// of valid UTF-8, without control characters, not only white space. Names
// are otherwise free: users are hash fields, and group names come last in
// their keys, after a fixed part no other key family shares.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalidArgument, what)
	case len(s) > MaxNameLen:
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidArgument, what, MaxNameLen)
	case !printable(s):
		return fmt.Errorf("%w: %s %q is not printable UTF-8", ErrInvalidArgument, what, s)
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s is blank", ErrInvalidArgument, what)
	}
	return nil
}

// checkText validates a title or link: valid UTF-8 of at most max bytes,
// stored byte for byte. A title must not be blank; a link may be empty.
func checkText(what, s string, max int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s is blank", ErrInvalidArgument, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidArgument, what, max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidArgument, what)
	}
	return nil
}

// checkGroups validates the group names of one call.
func checkGroups(groups []string) error {
	if len(groups) > MaxBatch {
		return fmt.Errorf("%w: more than %d groups", ErrInvalidArgument, MaxBatch)
	}
	for _, g := range groups {
		if err := checkName("group name", g); err != nil {
			return err
		}
	}
	return nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
