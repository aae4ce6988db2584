package main

// layout.go is everything votectl knows of the store's key layout beyond
// the package's API: the key families, the orderings' members and
// values, and the writes that put an article and its indexes in place.
// The families, the members and the records' codecs (the article record,
// the voter record's "" field and votes, a comment's record) and their
// limits are internal/layout's, the package's own; this file names them
// for votectl and adds what only votectl does with them. It follows
// docs/LAYOUT.md ("Keys", "Records"), lua/lib/record.lua (eachIndex),
// lua/lib/tree.lua (topMember, TOP_BASE, placeAt) and the orderings'
// values of voting.Order.Value (layout 5, voting.LayoutVersion); when
// the layout changes, internal/layout and this file change with it, and
// nothing else in votectl names a key.

import (
	"math"
	"sort"
	"strings"
	"time"

	ilayout "github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// layout names the keys of the store under one prefix.
type layout struct {
	prefix string
	tag    string // "{prefix}:"
}

func newLayout(prefix string) layout { return layout{prefix: prefix, tag: ilayout.Tag(prefix)} }

// The key families, by the fixed part after the tag. families lists the
// prefixes of the families named by an id, a user, a group or an
// ordering; single keys are matched whole.
// They are internal/layout's, the package's own.
const (
	famSeq         = ilayout.Seq
	famStore       = ilayout.Store    // the store's identity (voting.Identity)
	famRules       = ilayout.Rules    // the numbers of the rules (voting.Rules)
	famBackfill    = ilayout.Backfill // where a Reconfigure's backfill is, while it runs
	famKarma       = ilayout.Karma
	famBy          = ilayout.By
	famTop         = ilayout.Top
	famArticle     = ilayout.Article
	famVoted       = ilayout.Voted
	famGroups      = ilayout.Groups
	famGroup       = ilayout.Group
	famCache       = ilayout.Cache
	famLink        = ilayout.Link
	famSubmitted   = ilayout.Submitted
	famUpvoted     = ilayout.Upvoted
	famVoteLog     = ilayout.VoteLog
	famLastPost    = ilayout.LastPost
	famCSeq        = ilayout.CSeq
	famComments    = ilayout.Comments
	famMoving      = ilayout.Moving   // while Reconfigure moves the comments of a store of layout 4
	famRemoving    = ilayout.Removing // the cids whose removal a DeleteComment left to a later step
	famComment     = ilayout.Comment
	famCBody       = ilayout.CBody // layout 4's bodies: none in a store of a later layout
	famThread      = ilayout.Thread
	famKids        = ilayout.Kids
	famCVoted      = ilayout.CVoted
	famCommented   = ilayout.Commented
	famLastComment = ilayout.LastComment
	famUVotes      = ilayout.UserVotes
	famUVotes6     = ilayout.UserVotes6 // layout 6's vote logs: none once Reconfigure has moved them
	famSuspended   = ilayout.Suspended
	famEvents      = ilayout.Events
	famOther       = "other" // a key under the prefix of no family (votectl's import marker, or by hand)
)

var familyOrder = []string{famSeq, famStore, famRules, famBackfill, famArticle, famVoted, famBy, famTop, famGroups, famGroup, famCache,
	famLink, famSubmitted, famUpvoted, famKarma, famVoteLog, famLastPost,
	famCSeq, famComments, famMoving, famRemoving, famComment, famCBody, famThread, famKids, famCVoted, famCommented, famLastComment,
	famUVotes, famUVotes6, famSuspended, famEvents, famOther}

// importMarker is the key votectl's import writes first and deletes last
// (export.go): while it exists, the store holds an unfinished import.
const importMarker = "votectl:import"

// family splits a key of the store into its family and the name after
// the family's prefix; ok is false for a key outside the prefix.
func (l layout) family(key string) (fam, name string, ok bool) {
	rest, ok := strings.CutPrefix(key, l.tag)
	if !ok {
		return "", "", false
	}
	switch rest {
	case famSeq, famKarma, famStore, famRules, famBackfill, famCSeq, famComments, famMoving, famRemoving, famSuspended, famEvents:
		return rest, "", true
	}
	for _, f := range []string{famBy, famTop, famArticle, famVoted, famGroups, famGroup, famCache,
		famLink, famSubmitted, famUpvoted, famVoteLog, famLastPost,
		famComment, famCBody, famThread, famKids, famCVoted, famCommented, famLastComment, famUVotes, famUVotes6} {
		if n, ok := strings.CutPrefix(rest, f); ok {
			return f, n, true
		}
	}
	return famOther, rest, true
}

func (l layout) key(fam, name string) string { return l.tag + fam + name }
func (l layout) seq() string                 { return l.tag + famSeq }
func (l layout) karma() string               { return l.tag + famKarma }
func (l layout) marker() string              { return l.tag + importMarker }
func (l layout) ordering(o string) string    { return l.tag + famBy + o }

// pattern is the SCAN pattern of every key of the store, glob characters
// of the prefix escaped.
func (l layout) pattern() string {
	var b strings.Builder
	b.WriteByte('{')
	for _, c := range []byte(l.prefix) {
		if strings.IndexByte(`*?[]\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteString("}:*")
	return b.String()
}

// optionalOrders are the orderings beside score and time, in lib/base.lua
// ORDERS's order; bucketSizes the TopSince buckets' sizes (seconds).
var (
	optionalOrders = ilayout.OptionalOrders
	allOrderings   = ilayout.Orderings
	bucketSizes    = ilayout.BucketSizes[:]
)

// member is an id's member in the orderings, groups and pages: its digit
// count as a letter, then the id ("a7", "b42").
func member(id string) string { return ilayout.Member(id) }

// idOf reverses member; ok is false for what no id makes.
func idOf(m string) (string, bool) {
	if len(m) < 2 || m != member(m[1:]) || !canonicalID(m[1:]) {
		return "", false
	}
	return m[1:], true
}

// maxExact bounds a number the scripts read as a Lua number, or Redis
// keeps as a sorted set's score (internal/layout MaxExact, 2^53): a
// post time, a close, an expiry in ms, a karma, a last post's or
// comment's ms. The limits of the records' fields are the codec's
// (ilayout.Record.Check, CommentRecord.Check, CheckExact, CheckCID).
const maxExact = ilayout.MaxExact

// canonicalID reports whether s is an id as the store issues them.
func canonicalID(s string) bool { return ilayout.IsID(s) }

// lessID orders ids as numbers.
func lessID(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func sortIDs(ids []string) { sort.Slice(ids, func(i, j int) bool { return lessID(ids[i], ids[j]) }) }

// record is an article's record (lib/record.lua RECORD), as
// internal/layout's codec reads and writes it (ParseRecord, String).
type record = ilayout.Record

// formatWeight writes a weight as the package does (ilayout.FormatWeight).
func formatWeight(w float64) string { return ilayout.FormatWeight(w) }

// recordValue is the article's value in an ordering, as the store keeps it
// (ilayout.Value): score, time and top to the bit; hot, best and
// controversial may differ from the server's Lua in the last bits, so
// check compares them with sameValue. An unknown ordering gets NaN.
func recordValue(r record, ordering string) float64 {
	return ilayout.Value(ordering, r.Posted, r.WeightValue(), r.Up, r.Down)
}

func sameValue(ordering string, a, b float64) bool {
	switch ordering {
	case "score", "time", "top":
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
}

// buckets are the TopSince bucket keys of a post time.
func (l layout) buckets(posted int64) []string {
	var out []string
	for _, size := range bucketSizes {
		out = append(out, l.tag+ilayout.Bucket(size, posted))
	}
	return out
}

// cacheKey splits a cache's name ("<ordering>:<group>").
func splitCache(name string) (ordering, group string, ok bool) {
	return strings.Cut(name, ":")
}

// restoreOf is article id of record r as restore.Put writes it with the
// store's own script (the package's lua/restore.lua): the record whole
// or its counts alone, and, while voting is open (closes > 0), the voter
// record's times.
func restoreOf(id string, r record, whole bool, closes, expireAtMs int64, groups []string) restore.Article {
	return restore.Article{ID: id, Up: r.Up, Down: r.Down, Posted: r.Posted, Weight: r.Weight, Orders: r.Orders,
		Poster: r.Poster, Title: r.Title, Link: r.Link, Whole: whole, Closes: closes, ExpireAtMs: expireAtMs, Groups: groups}
}

// Comments (lua/lib/tree.lua, layout 5): a comment's record is one
// string, its body included (CREC), and each parent's replies are a
// linked list by id (first newest, last oldest, next older, prev newer)
// and sorted sets: Best and Top in one, kids:<parent>, in two bands (the
// best value under member(cid), the top value less topBase under
// topMember(cid)), and each optional ordering at
// kids:<ordering>:<parent>; the parent is named by its cid, or by "a" and
// the article's id for the top level. Layout 4 kept the record in a hash,
// the body at cbody:<cid>, and Best and Top at kids:best:<parent> and
// kids:top:<parent>: votectl refuses a store of layout 4, or one whose
// comments Reconfigure is moving (cmoving), and check reports those keys
// in a store of layout 5.

// commentOrders are the optional comment orderings beside best and top,
// in lib/tree.lua CORDERINGS's order.
var commentOrders = ilayout.CommentOrderings

// topBase is lib/tree.lua TOP_BASE, 2^50: a reply's top value less it
// is its score in its parent's top band.
const topBase = ilayout.TopBase

// topMember is a comment's member in its parent's top band: as member,
// with capitals (lib/tree.lua topMember).
func topMember(id string) string { return ilayout.TopMember(id) }

// crecord is a comment's record (lib/tree.lua CREC), as internal/layout's
// codec reads and writes it (ParseCommentRecord, String): votectl reads
// a record by its head and the first bytes of its body (readChunk), at
// most ilayout.CommentHead bytes and one more, and writes the link
// fields of ilayout.CountDigits digits in place at their offsets
// (ilayout.CUp...).
type crecord = ilayout.CommentRecord

// place is a comment's entry in one of its parent's sorted sets.
type place struct {
	key, member string
	value       float64
	ordering    string // the ordering of the value: best, top or an optional one
}

// places are comment id's entries in its parent's sorted sets: its best
// and top bands, then its optional orderings (lib/tree.lua placeAt).
func places(l layout, id string, c crecord) []place {
	name := parentName(c)
	out := []place{{l.kids(name), member(id), commentValue(c, "best"), "best"},
		{l.kids(name), topMember(id), commentValue(c, "top") - topBase, "top"}}
	for _, o := range c.OrderList() {
		out = append(out, place{l.kidsOrdering(o, name), member(id), commentValue(c, o), o})
	}
	return out
}

// commentValue is the comment's value in an ordering (voting.Order.Value, as
// lib/record.lua value): its weight counts in score only.
func commentValue(c crecord, ordering string) float64 {
	w := c.Weight
	if w == "" {
		w = "0"
	}
	return recordValue(record{Up: c.Up, Down: c.Down, Posted: c.Posted, Weight: w}, ordering)
}

// parentName is the name of comment c's parent in the kids keys.
func parentName(c crecord) string {
	if c.Parent == "" {
		return "a" + c.Article
	}
	return c.Parent
}

// kids is the key of the replies to parent (a cid, or "a" and an article
// id) in Best and Top; kidsOrdering in an optional ordering.
func (l layout) kids(parent string) string { return l.key(famKids, parent) }
func (l layout) kidsOrdering(ordering, parent string) string {
	return l.key(famKids, ordering+":"+parent)
}

// kidsName splits the name of a kids key (after "kids:") into its
// ordering ("" for Best and Top) and its parent; ok is false for a name
// layout 5 does not make, kids:best: and kids:top: of layout 4 among
// them.
func kidsName(name string) (ordering, parent string, ok bool) {
	ordering, parent, found := strings.Cut(name, ":")
	if !found {
		ordering, parent = "", name
	} else if !contains(commentOrders, ordering) {
		return "", "", false
	}
	id := strings.TrimPrefix(parent, "a")
	return ordering, parent, canonicalID(id)
}

// cvoteField is a vote's field in the article's comment voter record.
func cvoteField(cid, user string) string { return ilayout.CVoteField(cid, user) }

// Moderation's values (lua/lib/moderation.lua): a shadowed user's vote
// in a voter record, a logged vote's value, a vote log's line and a
// suspension.

// shadowVote returns the vote (1 or -1) of a shadow vote's value, "1s"
// or "-1s" (ilayout.ParseVoteValue), which a voter record keeps for a
// shadowed user (Shadow): the user's reads show it, and no count, karma,
// page or log has it; 0 for any other value.
func shadowVote(v string) int {
	if vote, shadow, _ := ilayout.ParseVoteValue(v); shadow {
		return vote
	}
	return 0
}

// countedVote returns the vote (1 or -1) of a voter record's value that
// counts: "1", "-1", or a logged vote's "1@<offset>", "-1@<offset>"
// (ilayout.ParseVoteValue); 0 for a shadow vote, "0" (a vote taken
// back) and any other value.
func countedVote(v string) int {
	if vote, shadow, ok := ilayout.ParseVoteValue(v); ok && !shadow {
		return vote
	}
	return 0
}

// voteValue reads a voter record's value v as an export line's vote:
// the vote (1, -1, or 0 for "0", a vote taken back, which the record
// keeps while it lives: ilayout.VoteValue) and whether it is a shadow
// vote; ok is false for any other value. A logged vote's offset is left
// out: the log's lines (uvote) carry the vote, and an import links the
// value to its line again. An export writes a vote of 0 only for a
// comment's poster, whose none differs from their implied upvote; any
// other voter's is no vote, and no line.
func voteValue(v string) (vote int, shadow, ok bool) {
	return ilayout.ParseVoteValue(v)
}

// logOffset returns the offset of a logged vote's line in its voter's
// vote log, from the vote's value in its voter record ("1@4096",
// ilayout.VoteLogOffset); -1 for a value of no line.
func logOffset(v string) int64 {
	if off, ok := ilayout.VoteLogOffset(v); ok {
		return off
	}
	return -1
}

// logLineOf is the line of a vote log's entry x (restore.VoteLog) as the
// store writes it (ilayout.LogEntry.Line), which the store's restore
// script appends.
func logLineOf(x restore.Entry) string {
	return ilayout.LogEntry{Comment: x.Item == "comment", ID: x.ID, Vote: x.Vote, At: int64(x.N)}.Line()
}

// logItem is a vote log line's item as export's lines name it: "article"
// or "comment".
func logItem(e ilayout.LogEntry) string {
	if e.Comment {
		return "comment"
	}
	return "article"
}

// storeNowMs is t as the store's scripts take their clock to tell
// whether a suspension is on: whole seconds (the store sends Unix
// seconds; lib/moderation.lua suspensionOf), in ms. A suspension that
// ends within the current second is still on, for Store.Suspended and a
// vote as for votectl.
func storeNowMs(t time.Time) int64 { return t.Unix() * 1000 }

// suspensionModes are the names of the suspensions' modes
// (ilayout.ParseSuspension) in votectl's lines.
var suspensionModes = map[string]string{ilayout.SuspendRefuse: "refuse", ilayout.SuspendShadow: "shadow"}

// parseSuspension parses a suspension's value into its mode's name
// ("refuse" or "shadow") and its end in Unix ms.
func parseSuspension(v string) (mode string, untilMs int64, ok bool) {
	code, until, ok := ilayout.ParseSuspension(v)
	return suspensionModes[code], until, ok
}
