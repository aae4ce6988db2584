package voting

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/votekit/voting/internal/layout"
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
	// MaxModerationPage is the most entries one call of VotesBy, Voters,
	// CommentVoters or VoteEvents asks for.
	MaxModerationPage = 1000
)

// canonicalID reports whether id has the form the store issues
// (layout.IsID): a decimal from 1 to the int64 maximum, without a leading
// zero. Any other string names no article.
func canonicalID(id string) bool { return layout.IsID(id) }

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

// checkName validates a user, poster or group name that a call looks
// up: 1 to [MaxNameLen] bytes of printable UTF-8 (graphic characters and
// spaces: no control, format or invisible characters, so two names that
// look alike are alike), not only white space. No name the store ever
// took breaks it, so a lookup it refuses could find nothing; a name a
// call writes is checked by textRules.name too.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalidArgument, what)
	case len(s) > MaxNameLen:
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidArgument, what, MaxNameLen)
	}
	if i := unprintableAt(s); i >= 0 {
		return fmt.Errorf("%w: %s %q: %s", ErrInvalidArgument, what, s, badRune(s, i, "a character that is not printable"))
	}
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: %s is blank", ErrInvalidArgument, what)
	}
	return nil
}

// CheckUserName returns nil for a user name that the writes of a store
// without [WithRawText] take (as a poster, a voter), else an error
// wrapping [ErrInvalidArgument] that says why: it is empty, longer than
// [MaxNameLen] bytes, blank, holds a character that is not printable
// (a control, zero-width, bidi or other invisible character, invalid
// UTF-8), or white space at either end. Group names follow the same
// rules. A service that issues names (a sign-up form, tokens) checks them
// with it, so that a name it issues never fails later as a bad argument.
func CheckUserName(user string) error { return textRules{}.name("user", user) }

// textRules are the checks of the text a write stores: the names it
// writes, titles, links and comment bodies. The zero value holds the
// rules of a store without [WithRawText] or [WithLinkSchemes].
type textRules struct {
	raw     bool     // WithRawText: lengths, valid UTF-8 and printable names alone
	schemes []string // WithLinkSchemes, lower case; nil for http and https
}

// defaultSchemes are the schemes a link may have without WithLinkSchemes.
var defaultSchemes = []string{"http", "https"}

// The kinds of text checkChars knows.
const (
	titleText = iota // no control character, bidi control or line separator
	bodyText         // as a title, but newlines (LF, CRLF), tabs and U+2028, U+2029 pass
	linkText         // as a title, and no white space
)

// name validates a name that a call writes (a poster, a voter, a group
// an article joins): checkName, and no white space at either end, so
// that "alice " is not a second alice. It allocates nothing for a name
// it takes: Vote checks its voter with it.
func (r textRules) name(what, s string) error {
	if err := checkName(what, s); err != nil || r.raw {
		return err
	}
	if c, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(c) {
		return fmt.Errorf("%w: %s %q: starts with white space %U", ErrInvalidArgument, what, s, c)
	}
	if c, n := utf8.DecodeLastRuneInString(s); unicode.IsSpace(c) {
		return fmt.Errorf("%w: %s %q: ends with white space %U at byte %d", ErrInvalidArgument, what, s, c, len(s)-n)
	}
	return nil
}

// post checks the user (named who), title and link of a Post or an Edit.
func (r textRules) post(who, user, title, link string) error {
	if err := r.name(who, user); err != nil {
		return err
	}
	if err := r.text("title", title, MaxTitleLen, titleText); err != nil {
		return err
	}
	return r.link(link)
}

// comment checks the poster (named who) and body of a Comment or an
// EditComment.
func (r textRules) comment(who, user, body string) error {
	if err := r.name(who, user); err != nil {
		return err
	}
	return r.text("body", body, MaxCommentLen, bodyText)
}

// text validates a title or comment body: not blank, at most max bytes
// of valid UTF-8, and, unless raw, free of the characters checkChars
// refuses in text of kind k.
func (r textRules) text(what, s string, max, k int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s is blank", ErrInvalidArgument, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidArgument, what, max)
	}
	return r.chars(what, s, k)
}

// chars is checkChars, or, for raw text, the check of valid UTF-8 alone.
func (r textRules) chars(what, s string, k int) error {
	if !r.raw {
		return checkChars(what, s, k)
	}
	if i := invalidUTF8At(s); i >= 0 {
		return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, what, badRune(s, i, ""))
	}
	return nil
}

// link validates an article's link: empty (a text post), or at most
// [MaxLinkLen] bytes of valid UTF-8 and, unless raw, an absolute URL
// (net/url) of one of the schemes (case-insensitive), with a host and no
// user info, without white space, control or bidi control characters.
func (r textRules) link(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxLinkLen {
		return fmt.Errorf("%w: link is longer than %d bytes", ErrInvalidArgument, MaxLinkLen)
	}
	if err := r.chars("link", s, linkText); err != nil || r.raw {
		return err
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%w: link: is not a URL: %v", ErrInvalidArgument, err)
	}
	schemes := r.schemes
	if schemes == nil {
		schemes = defaultSchemes
	}
	switch {
	case u.Scheme == "":
		return fmt.Errorf("%w: link: is not an absolute URL (no scheme such as %s:)", ErrInvalidArgument, schemes[len(schemes)-1])
	case !slices.Contains(schemes, strings.ToLower(u.Scheme)):
		return fmt.Errorf("%w: link: scheme %q is not %s", ErrInvalidArgument, u.Scheme, orList(schemes))
	case u.Opaque != "" || u.Hostname() == "":
		return fmt.Errorf("%w: link: has no host", ErrInvalidArgument)
	case u.User != nil:
		return fmt.Errorf("%w: link: has user info (a user name or password)", ErrInvalidArgument)
	}
	return nil
}

// orList is list as words: "http or https", "ftp, http or https".
func orList(list []string) string {
	if len(list) == 1 {
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// checkChars validates text of kind k (titleText, bodyText, linkText):
// valid UTF-8 without control characters (C0, DEL, C1), bidi embeddings,
// overrides and isolates (U+202A to U+202E, U+2066 to U+2069), which
// reorder the text around them, or line and paragraph separators
// (U+2028, U+2029); a body keeps LF, CRLF, tab and the separators; a
// link has no white space either. Its error names what and the first
// character refused, with its byte offset.
func checkChars(what, s string, k int) error {
	for i, c := range s {
		var bad string
		switch {
		case c == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, what, badRune(s, i, ""))
			}
		case c < 0x20 || c >= 0x7f && c < 0xa0:
			if k == bodyText && (c == '\n' || c == '\t' || c == '\r' && strings.HasPrefix(s[i+1:], "\n")) {
				continue
			}
			bad = "a control character"
		case c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069:
			bad = "a bidi control"
		case (c == 0x2028 || c == 0x2029) && k != bodyText:
			bad = "a line or paragraph separator"
		case k == linkText && unicode.IsSpace(c):
			bad = "white space"
		}
		if bad != "" {
			return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, what, badRune(s, i, bad))
		}
	}
	return nil
}

// badRune describes the character of s at byte i that a check refuses,
// kind saying what it is ("a control character"): "contains a control
// character U+001B at byte 4", or, where i starts no valid UTF-8,
// "invalid UTF-8 at byte 4".
func badRune(s string, i int, kind string) string {
	c, n := utf8.DecodeRuneInString(s[i:])
	if c == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("invalid UTF-8 at byte %d", i)
	}
	return fmt.Sprintf("contains %s %U at byte %d", kind, c, i)
}

// invalidUTF8At returns the offset of the first byte of s that starts no
// valid UTF-8, or -1 if s is valid UTF-8.
func invalidUTF8At(s string) int {
	for i, c := range s {
		if c == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return -1
}

// checkBatch validates the length n of one call's list of what (ids,
// ballots, groups): at most [MaxBatch].
func checkBatch(n int, what string) error {
	if n > MaxBatch {
		return fmt.Errorf("%w: more than %d %s", ErrInvalidArgument, MaxBatch, what)
	}
	return nil
}

// checkGroups validates the group names of one call with check:
// checkName for the groups an article leaves, textRules.name for those
// it joins.
func checkGroups(groups []string, check func(what, s string) error) error {
	if err := checkBatch(len(groups), "groups"); err != nil {
		return err
	}
	for _, g := range groups {
		if err := check("group name", g); err != nil {
			return err
		}
	}
	return nil
}

// printable reports whether s is valid UTF-8 of graphic characters
// (letters, marks, numbers, punctuation, symbols) and spaces only.
func printable(s string) bool { return unprintableAt(s) < 0 }

// unprintableAt returns the offset of the first character of s that is
// not printable, or -1 if there is none. unicode.IsGraphic refuses
// controls, format characters (zero-width spaces and joiners, the word
// joiner, the soft hyphen, bidi marks, embeddings, overrides and
// isolates, BOM), line and paragraph separators, private-use, surrogate
// and unassigned code points, and invalid UTF-8. The default-ignorable
// characters it lets through, which render as nothing (Hangul fillers,
// variation selectors, the combining grapheme joiner), are refused too.
func unprintableAt(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
		if !unicode.IsGraphic(r) || unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return i
		}
	}
	return -1
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

// checkLimit checks the limit of a moderator's page: 1 to
// MaxModerationPage.
func checkLimit(limit int) error {
	if limit < 1 || limit > MaxModerationPage {
		return fmt.Errorf("%w: limit %d is not within 1 and %d", ErrInvalidArgument, limit, MaxModerationPage)
	}
	return nil
}
