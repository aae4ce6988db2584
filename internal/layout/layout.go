// Package layout is the one definition of what a store keeps where, which
// the package voting (keys.go, the reply decoders), its Lua scripts and
// cmd/votectl share: the hash tag and the key families, the encoding of
// ids as sorted-set members, the TopSince buckets, the fixed widths of
// the records' counts, the records' codecs and their limits (record.go),
// the rules record's codec (rules.go), moderation's values
// (moderation.go), the orderings and the formulas of their values
// (order.go) and the statuses of the scripts' replies. The Lua keeps the
// same numbers as locals of lua/lib/, which a test of this package holds to
// these (layout_test.go, record_test.go), and a test of the package
// voting holds the codecs to the records the scripts write.
// docs/LAYOUT.md describes it for people, and tests of the package
// voting hold it to the families and the codecs here.
//
// A store's keys share one hash tag, built by Tag alone: the one place a
// second tag per store (a site over several cluster nodes) would change.
package layout

import "strconv"

// Tag returns the prefix every key of the store under prefix starts
// with, "{prefix}:", a Redis Cluster hash tag: all keys of a store live in
// one hash slot, so one script may touch any of them.
func Tag(prefix string) string { return "{" + prefix + "}:" }

// Pattern returns a SCAN pattern that matches every key of the store
// under prefix and nothing else: its tag, the prefix's glob characters
// escaped, then anything.
func Pattern(prefix string) string { return FamilyPattern(prefix, "") }

// FamilyPattern returns a SCAN pattern that matches the keys of the
// store under prefix whose names start with family (UserVotes, say)
// after the tag, and nothing else: glob characters escaped, then
// anything.
func FamilyPattern(prefix, family string) string {
	start := Tag(prefix) + family
	p := make([]byte, 0, 2*len(start)+1)
	for i := 0; i < len(start); i++ {
		switch c := start[i]; c {
		case '*', '?', '[', ']', '\\':
			p = append(p, '\\', c)
		default:
			p = append(p, c)
		}
	}
	return string(append(p, '*'))
}

// The key families, by the fixed part after the tag. Those that end in
// a colon are prefixes to which an id, a user's name, a group, an
// ordering or a bucket is appended; the others are single keys. No
// family's fixed part is a prefix of another's.
const (
	Seq       = "seq"      // the last issued article id
	Store     = "store"    // the store's identity (voting.Identity)
	Rules     = "rules"    // the numbers of the rules (voting.Rules)
	Backfill  = "backfill" // where a Reconfigure's backfill of the links is, while it runs
	By        = "by:"      // the orderings: by:score, by:time, by:top...
	Top       = "top:"     // the TopSince buckets: top:<size>:<n>
	Article   = "article:"
	Voted     = "voted:"
	Groups    = "groups:" // an article's groups
	Group     = "group:"  // a group's articles
	Cache     = "cache:"  // a group's cached pages: cache:<ordering>:<group>
	Link      = "link:"
	Submitted = "submitted:"
	Upvoted   = "upvoted:"
	Karma     = "karma"
	VoteLog   = "votelog:" // the times of a user's last votes (WithVoteLimit)
	LastPost  = "lastpost:"

	CSeq        = "cseq"     // the last issued comment id
	Comments    = "comments" // the articles' live comment counts
	Comment     = "comment:"
	CBody       = "cbody:" // layout 4's comment bodies
	Thread      = "thread:"
	Kids        = "kids:"
	CVoted      = "cvoted:"
	Commented   = "commented:"
	LastComment = "lastcomment:"
	Moving      = "cmoving"   // the cursor of a move of layout 4's comments
	Removing    = "cremoving" // the cids whose removal a DeleteComment left to a later step

	UserVotes  = "ulog:"     // a user's standing votes (WithVoteLog): a journal (LogEntry)
	UserVotes6 = "uvotes:"   // layout 6's log of them, a sorted set, which Reconfigure moves
	Suspended  = "suspended" // the suspensions
	Events     = "events"    // the stream of vote events (WithVoteEvents)
)

// The rules' names, as the identity names a rule that is on and the
// rules record names its numbers ("votelimit=10,60000"), in RuleNames'
// order.
const (
	RuleKarma           = "karma"
	RuleCost            = "cost"
	RuleMinKarma        = "minkarma"
	RuleVoteLimit       = "votelimit"
	RulePostInterval    = "postinterval"
	RuleRepostAfter     = "repostafter"
	RuleEditWindow      = "editwindow"
	RuleCommentInterval = "commentinterval"
)

// RuleNames are the rules in the order of their words.
var RuleNames = [...]string{RuleKarma, RuleCost, RuleMinKarma, RuleVoteLimit, RulePostInterval,
	RuleRepostAfter, RuleEditWindow, RuleCommentInterval}

// The words of the identity (voting.Identity) for the shared options
// that are not rules: "orders=top,hot", "userpages", "uniquelinks",
// "votelog", "events=100000".
const (
	OptionOrders      = "orders"
	OptionUserPages   = "userpages"
	OptionUniqueLinks = "uniquelinks"
	OptionVoteLog     = "votelog"
	OptionEvents      = "events"
)

// IsRule reports whether name is a rule's.
func IsRule(name string) bool {
	_, ok := RuleIndex(name)
	return ok
}

// MemberBase and TopMemberBase are what a member's first byte adds to
// its id's digit count (Member, TopMember).
const (
	MemberBase    = 96
	TopMemberBase = 64
)

// Member returns the sorted-set member of an article or comment id: its
// digit count as a letter, then the id, so that members sort by id as
// numbers ("a9" < "b10") (lib/base.lua member).
func Member(id string) string { return string(rune(MemberBase+len(id))) + id }

// TopMember returns a comment's member in its parent's top band: as
// Member, with capitals (lib/tree.lua topMember).
func TopMember(id string) string { return string(rune(TopMemberBase+len(id))) + id }

// IDOf returns the id of a member (Member or TopMember); ok is false
// for a string no id makes.
func IDOf(m string) (id string, ok bool) {
	if len(m) < 2 {
		return "", false
	}
	c, n := int(m[0]), len(m)-1
	if c != MemberBase+n && c != TopMemberBase+n {
		return "", false
	}
	for i := 1; i < len(m); i++ {
		if m[i] < '0' || m[i] > '9' || i == 1 && m[i] == '0' {
			return "", false
		}
	}
	return m[1:], true
}

// BucketSizes are the sizes, in seconds, of the TopSince buckets: 10
// minutes, a day and 30 days, each dividing the next (lib/base.lua
// BUCKETS).
var BucketSizes = [3]int64{600, 86400, 2592000}

// BucketOf returns the number of the TopSince bucket of size seconds
// that holds time t (Unix s): bucket n holds [n·size, (n+1)·size), t /
// size rounded down, as lib/record.lua bucket's math.floor.
func BucketOf(size, t int64) int64 {
	n := t / size
	if t%size != 0 && t < 0 {
		n--
	}
	return n
}

// Bucket returns the name, after the hash tag, of the TopSince bucket of
// size seconds that holds time t (lib/record.lua bucket).
func Bucket(size, t int64) string {
	return Top + strconv.FormatInt(size, 10) + ":" + strconv.FormatInt(BucketOf(size, t), 10)
}

// The records' counts (an article's and a comment's up and down, and a
// comment's links) are CountDigits digits at fixed places, so that a vote
// writes them in place: none is past MaxCount (lib/record.lua
// COUNT_DIGITS, MAX_COUNT).
const (
	CountDigits = 10
	MaxCount    = 9999999999
)

// TopBase is the offset of a comment's top band in its parent's Best
// and Top sorted set: its top value less TopBase (lib/tree.lua
// TOP_BASE), 2^50.
const TopBase = 1 << 50

// The statuses every script's reply starts with ({status, ...}; a vote
// done replies one string instead): lib/base.lua, lib/rules.lua and
// lib/tree.lua name them.
const (
	StatusOK          = 0 // done; the rest of the reply follows
	StatusNotFound    = 1 // the article does not exist
	StatusClosed      = 2 // the article's voting has closed
	StatusDuplicate   = 3 // a live article has the link; its row follows
	StatusBuilding    = 4 // a step of a group cache build was done: call again
	StatusLimit       = 5 // the article would be in more than MaxArticleGroups groups
	StatusCorrupt     = 6 // the user's field in the voter record holds no vote's value
	StatusNotAllowed  = 7 // a rule forbids the call
	StatusRateLimited = 8 // a rate limit refuses the call; the ms to wait follow
	StatusInvalid     = 9 // the input does not fit the data; the reason follows
)
