package voting

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what callers pass in. Input beyond them gets [ErrInvalidArgument]
// before Redis is touched.
const (
	// MaxNameLen is the longest user, poster or group name, in bytes.
	MaxNameLen = 256
	// MaxTitleLen is the longest article title, in bytes.
	MaxTitleLen = 1024
	// MaxLinkLen is the longest article link, in bytes.
	MaxLinkLen = 4096
	// MaxBatch is the most ids one VotesOf, ArticlesByID, CommentsByID or
	// CommentVotesOf call, ballots one VoteBatch call, or groups one
	// AddToGroups or RemoveFromGroups call may name.
	MaxBatch = 1000
	// MaxArticleGroups is the most groups one article may be in. A vote
	// updates the article's place in the cached pages of each of its
	// groups, so this bounds the work of one vote.
	MaxArticleGroups = 32
	// MaxPageSize is the largest page size WithPageSize accepts.
	MaxPageSize = 1000
	// MaxPrefixLen is the longest key prefix, in bytes.
	MaxPrefixLen = 64
	// MaxTopSince is how deep TopSince lists: pages past its first
	// MaxTopSince articles are empty, as Reddit's listings end at 1000.
	MaxTopSince = 1000
	// MaxUserPageEntries is how many entries each of a user's pages
	// (Submitted, Upvoted) keeps: the latest, as Reddit's listings end
	// at 1000. An older entry is dropped when a new one comes.
	MaxUserPageEntries = 1000
)

// maxID is the largest id the store issues: ids are the decimal strings
// "1" to "9223372036854775807" (the int64 maximum).
const maxID = "9223372036854775807"

// canonicalID reports whether id has the form the store issues: 1 to 19
// decimal digits without a leading zero, at most maxID. Any other string
// names no article.
func canonicalID(id string) bool {
	if len(id) == 0 || len(id) > len(maxID) || id[0] == '0' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return len(id) < len(maxID) || id <= maxID
}

// canonicalIDs returns the ids of list that are canonical (canonicalID),
// in their order, and the index in list of each: the ids a batch read
// asks Redis about.
func canonicalIDs(list []string) (ids []string, at []int) {
	ids, at = make([]string, 0, len(list)), make([]int, 0, len(list))
	for i, id := range list {
		if canonicalID(id) {
			ids = append(ids, id)
			at = append(at, i)
		}
	}
	return ids, at
}

// checkPrefix validates a key prefix: non-empty, at most [MaxPrefixLen]
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

// checkName validates a user, poster or group name: 1 to [MaxNameLen] bytes
// of printable UTF-8 (graphic characters and spaces: no control, format
// or invisible characters, so two names that look alike are alike), not
// only white space.
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

// checkPost checks the user (named who), title and link of a Post or an
// Edit.
func checkPost(who, user, title, link string) error {
	if err := checkName(who, user); err != nil {
		return err
	}
	if err := checkText("title", title, MaxTitleLen, true); err != nil {
		return err
	}
	return checkText("link", link, MaxLinkLen, false)
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

// checkBatch validates the length n of one call's list of what (ids,
// ballots, groups): at most [MaxBatch].
func checkBatch(n int, what string) error {
	if n > MaxBatch {
		return fmt.Errorf("%w: more than %d %s", ErrInvalidArgument, MaxBatch, what)
	}
	return nil
}

// checkGroups validates the group names of one call.
func checkGroups(groups []string) error {
	if err := checkBatch(len(groups), "groups"); err != nil {
		return err
	}
	for _, g := range groups {
		if err := checkName("group name", g); err != nil {
			return err
		}
	}
	return nil
}

// printable reports whether s is valid UTF-8 of graphic characters
// (letters, marks, numbers, punctuation, symbols) and spaces only:
// unicode.IsGraphic rejects controls, format characters (zero-width
// spaces and joiners, bidi overrides, BOM), private-use, surrogate and
// unassigned code points. The default-ignorable characters it lets
// through, which render as nothing (Hangul fillers, variation selectors,
// the combining grapheme joiner), are rejected too.
func printable(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if !unicode.IsGraphic(r) || unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return false
		}
	}
	return true
}

// Limits of karma and the rules (WithKarma, WithVoteCost, WithMinKarma,
// WithVoteLimit). Redis keeps karma as a sorted set's score, a float64,
// exact for whole numbers up to 2^53.
const (
	// MaxKarmaPoints bounds the karma one vote moves or costs
	// (WithKarma, WithVoteCost): from -MaxKarmaPoints to MaxKarmaPoints.
	MaxKarmaPoints = 1_000_000
	// MaxKarma bounds the least karma WithMinKarma may ask: from
	// -MaxKarma to MaxKarma.
	MaxKarma = 1 << 50
	// MaxVoteLimit is the most votes WithVoteLimit may allow per span;
	// the store keeps the times of each user's last that many votes.
	MaxVoteLimit = 100_000
)

// Limits of comments (comments.go).
const (
	// MaxCommentLen is the longest comment body, in bytes.
	MaxCommentLen = 10000
	// MaxThread is the most comments one Thread or Replies returns.
	MaxThread = 500
	// MaxThreadDepth is how many levels of comments one Thread or Replies
	// shows; deeper replies are counted in More.
	MaxThreadDepth = 10
	// MaxCommentDepth is how deep a comment may be: a reply to the
	// article has depth 0, and a comment of depth MaxCommentDepth-1 takes
	// no reply (ErrInvalidArgument). It bounds the work of a Comment and
	// a DeleteComment, which walk a comment's ancestors.
	MaxCommentDepth = 1000
)

// checkComment checks the poster (named who) and body of a Comment or
// an EditComment: a body not blank, valid UTF-8 of at most
// MaxCommentLen bytes, kept byte for byte.
func checkComment(who, user, body string) error {
	if err := checkName(who, user); err != nil {
		return err
	}
	return checkText("body", body, MaxCommentLen, true)
}
