package main

// layout.go is everything votectl knows of the store's key layout beyond
// the package's API: the key families, the article record, the voter
// record's "" field, a comment's record, the orderings' members and
// values, and the writes that put an article and its indexes in place.
// It follows docs/LAYOUT.md ("Keys", "Records"),
// lua/lib/record.lua (RECORD, VOTE_META, eachIndex), lua/lib/tree.lua
// (CREC, commentRecord, topMember, TOP_BASE, placeAt) and the orderings'
// values of voting.Order.Value (layout 5, voting.LayoutVersion); when
// the layout changes, this file changes with it, and nothing else
// in votectl names a key.

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting"
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
	famSuspended   = ilayout.Suspended
	famEvents      = ilayout.Events
	famOther       = "other" // a key under the prefix of no family (votectl's import marker, or by hand)
)

var familyOrder = []string{famSeq, famStore, famRules, famBackfill, famArticle, famVoted, famBy, famTop, famGroups, famGroup, famCache,
	famLink, famSubmitted, famUpvoted, famKarma, famVoteLog, famLastPost,
	famCSeq, famComments, famMoving, famRemoving, famComment, famCBody, famThread, famKids, famCVoted, famCommented, famLastComment,
	famUVotes, famSuspended, famEvents, famOther}

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
		famComment, famCBody, famThread, famKids, famCVoted, famCommented, famLastComment, famUVotes} {
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
	optionalOrders = []string{"top", "hot", "best", "controversial"}
	allOrderings   = []string{"score", "time", "top", "hot", "best", "controversial"}
	bucketSizes    = ilayout.BucketSizes[:]
)

// member is an id's member in the orderings, groups and pages: its digit
// count as a letter, then the id ("a7", "b42").
func member(id string) string { return ilayout.Member(id) }

// idOf reverses member; ok is false for what no id makes.
func idOf(m string) (string, bool) {
	if len(m) < 2 || int(m[0]) != 96+len(m)-1 || !canonicalID(m[1:]) {
		return "", false
	}
	return m[1:], true
}

// The codec's limits on the numbers of the records (lua/lib/record.lua
// RECORD, COUNTS, MAX_COUNT; lua/lib/tree.lua CREC; reply.go
// parseRecord, parseCommentRecord): import refuses a value past them,
// which would break a record's layout or the store's arithmetic.
const (
	// maxCount bounds the fields of COUNT_DIGITS (10) digits at fixed
	// places: an article's and a comment's up and down, and a comment id,
	// which its parent's and siblings' link fields hold (comment.lua
	// issues none past it).
	maxCount = ilayout.MaxCount
	// maxExact bounds a number the scripts read as a Lua number, or
	// Redis keeps as a sorted set's score, both doubles, which hold an
	// integer exactly up to 2^53: a post time, a close, an expiry in ms,
	// a karma, a last post's or comment's ms.
	maxExact = 1 << 53
)

// limit is the range of a number field of a record.
type limit struct{ lo, hi int64 }

var (
	countLimit = limit{0, maxCount}
	exactLimit = limit{-maxExact, maxExact}
	// cidLimit is a comment id's: countLimit, from 1.
	cidLimit = limit{1, maxCount}
)

// check returns an error that names field where v is past l, else nil.
func (l limit) check(field string, v int64) error {
	if v < l.lo || v > l.hi {
		return fmt.Errorf("%s %d is past the record's limit (%d to %d)", field, v, l.lo, l.hi)
	}
	return nil
}

// checkCID returns an error that names field where s is no comment id
// the record's links hold: a canonical id up to maxCount.
func checkCID(field, s string) error {
	if !canonicalID(s) {
		return fmt.Errorf("%s %q is not an id", field, s)
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return cidLimit.check(field, n)
}

// checkWeight returns an error that names field where w is no weight a
// record holds: finite, at least 0.
func checkWeight(field string, w float64) error {
	if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
		return fmt.Errorf("%s %v is past the record's limit (finite, at least 0)", field, w)
	}
	return nil
}

// field is a number field of a line, its name as the line spells it.
type field struct {
	name string
	v    int64
	l    limit
}

// checkFields returns the error of the first of fs past its limit.
func checkFields(fs ...field) error {
	for _, f := range fs {
		if err := f.l.check(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// canonicalID reports whether s is an id as the store issues them.
func canonicalID(s string) bool {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// lessID orders ids as numbers.
func lessID(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func sortIDs(ids []string) { sort.Slice(ids, func(i, j int) bool { return lessID(ids[i], ids[j]) }) }

// record is an article's record (lib/record.lua RECORD):
// "<up> <down> <posted> <weight> <orders> <#poster> <#title>:<poster><title><link>".
type record struct {
	Up, Down, Posted    int64
	Weight, Orders      string // as the record holds them: "432.0", "top,hot"
	Poster, Title, Link string
}

var errMalformed = errors.New("malformed record")

func parseRecord(s string) (record, error) {
	var f [7]string
	rest, ok := cutFields(s, f[:])
	if !ok {
		return record{}, errMalformed
	}
	var n [5]int64
	for i, at := range [...]int{0, 1, 2, 5, 6} {
		v, err := strconv.ParseInt(f[at], 10, 64)
		if err != nil || v < 0 && at != 2 {
			return record{}, fmt.Errorf("%w: field %d %q", errMalformed, at+1, f[at])
		}
		n[i] = v
	}
	if _, err := strconv.ParseFloat(f[3], 64); err != nil {
		return record{}, fmt.Errorf("%w: weight %q", errMalformed, f[3])
	}
	np, nt := n[3], n[4]
	if np > int64(len(rest)) || nt > int64(len(rest))-np {
		return record{}, fmt.Errorf("%w: lengths past its end", errMalformed)
	}
	return record{Up: n[0], Down: n[1], Posted: n[2], Weight: f[3], Orders: f[4],
		Poster: rest[:np], Title: rest[np : np+nt], Link: rest[np+nt:]}, nil
}

// cutFields cuts the head of a record (an article's, a comment's), all
// before its first ':', into the fields f, separated by single spaces,
// and returns the rest: no field of a head holds a ':'.
func cutFields(s string, f []string) (rest string, ok bool) {
	head, rest, ok := strings.Cut(s, ":")
	if !ok || strings.Count(head, " ") != len(f)-1 {
		return "", false
	}
	copy(f, strings.Split(head, " "))
	return rest, true
}

func (r record) String() string {
	return fmt.Sprintf("%010d %010d %d %s %s %d %d:%s%s%s", r.Up, r.Down, r.Posted, r.Weight, r.Orders,
		len(r.Poster), len(r.Title), r.Poster, r.Title, r.Link)
}

// orderList is the record's orders as a list (never nil).
func (r record) orderList() []string {
	if r.Orders == "" {
		return []string{}
	}
	return strings.Split(r.Orders, ",")
}

func (r record) has(order string) bool {
	return strings.Contains(","+r.Orders+",", ","+order+",")
}

// weightValue is the record's weight as a number.
func (r record) weightValue() float64 { w, _ := strconv.ParseFloat(r.Weight, 64); return w }

// formatWeight writes a weight as the package does: plain decimals, and
// always a point ("432.0").
func formatWeight(w float64) string {
	s := strconv.FormatFloat(w, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// value is the article's value in an ordering, as the store keeps it
// (voting.Order.Value): score, time and top to the bit; hot, best and
// controversial may differ from the server's Lua in the last bits, so
// check compares them with sameValue. An unknown ordering gets NaN.
func (r record) value(ordering string) float64 {
	o, err := voting.ParseOrder(ordering)
	if err != nil {
		return math.NaN()
	}
	return o.Value(time.Unix(r.Posted, 0), r.weightValue(), r.Up, r.Down)
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
		n := int64(math.Floor(float64(posted) / float64(size)))
		out = append(out, l.tag+famTop+strconv.FormatInt(size, 10)+":"+strconv.FormatInt(n, 10))
	}
	return out
}

// meta is the voter record's "" field (lib/record.lua VOTE_META):
// "<up> <down> <groups> <posted> <closes> <weight> <orders>".
type meta struct {
	Up, Down, Groups, Posted, Closes int64
	Weight, Orders                   string
}

func parseMeta(s string) (meta, error) {
	f := strings.Split(s, " ")
	if len(f) != 7 {
		return meta{}, fmt.Errorf("malformed voter record field \"\": %q", s)
	}
	var n [5]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return meta{}, fmt.Errorf("malformed voter record field \"\": %q", s)
		}
		n[i] = v
	}
	return meta{Up: n[0], Down: n[1], Groups: n[2], Posted: n[3], Closes: n[4], Weight: f[5], Orders: f[6]}, nil
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
var commentOrders = []string{"hot", "controversial", "score"}

// topBase is lib/tree.lua TOP_BASE, 2^50: a reply's top value less it
// is its score in its parent's top band.
const topBase = ilayout.TopBase

// topMember is a comment's member in its parent's top band: as member,
// with capitals (lib/tree.lua topMember).
func topMember(id string) string { return ilayout.TopMember(id) }

// crecord is a comment's record (lib/tree.lua CREC).
type crecord struct {
	Up, Down, Replies       int64
	First, Last, Next, Prev string // "" for none
	Deleted                 bool
	Article, Parent         string // Parent "" for a reply to the article
	Posted, Closes          int64
	Depth                   int
	Orders, Weight          string // "hot,score" ("" for none); the weight "" unless in score
	Poster, Body            string // Body "" once deleted; its first byte only from a head (readChunk)
}

// The offsets of a record's fields that the store's scripts write in
// place (lib/tree.lua C_UP...), each of linkDigits digits, and the
// most bytes of a record's head, all but its body, that the store reads
// (lib/tree.lua HEAD).
const (
	cUp, cReplies, cFirst, cLast, cNext, cPrev = 0, 22, 33, 44, 55, 66
	linkDigits                                 = 10
	maxHead                                    = 640
)

// parseComment reads a comment's record.
func parseComment(s string) (crecord, error) {
	var f [16]string
	rest, ok := cutFields(s, f[:])
	if !ok {
		return crecord{}, errMalformed
	}
	var n [11]int64 // up, down, replies, the four links, posted, closes, depth, #poster
	for i, at := range [...]int{0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 15} {
		v, err := strconv.ParseInt(f[at], 10, 64)
		if err != nil || v < 0 && at != 10 && at != 11 || at < 7 && len(f[at]) != linkDigits {
			return crecord{}, fmt.Errorf("%w: field %d %q", errMalformed, at+1, f[at])
		}
		n[i] = v
	}
	link := func(v int64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	c := crecord{Up: n[0], Down: n[1], Replies: n[2], First: link(n[3]), Last: link(n[4]), Next: link(n[5]),
		Prev: link(n[6]), Deleted: f[7] == "1", Article: f[8], Parent: f[9], Posted: n[7], Closes: n[8],
		Depth: int(n[9]), Orders: f[13], Weight: f[14]}
	if c.Parent == "0" {
		c.Parent = ""
	}
	if f[7] != "0" && f[7] != "1" || !canonicalID(c.Article) || (c.Parent != "" && !canonicalID(c.Parent)) {
		return crecord{}, fmt.Errorf("%w: deleted %q, article %q, parent %q", errMalformed, f[7], f[8], f[9])
	}
	if c.Weight != "" {
		if _, err := strconv.ParseFloat(c.Weight, 64); err != nil {
			return crecord{}, fmt.Errorf("%w: weight %q", errMalformed, c.Weight)
		}
	}
	if n[10] > int64(len(rest)) {
		return crecord{}, fmt.Errorf("%w: lengths past its end", errMalformed)
	}
	c.Poster, c.Body = rest[:n[10]], rest[n[10]:]
	return c, nil
}

// String is the record as lib/tree.lua commentRecord writes it, byte
// for byte.
func (c crecord) String() string {
	p := c.Parent
	if p == "" {
		p = "0"
	}
	x := "0"
	if c.Deleted {
		x = "1"
	}
	return fmt.Sprintf("%010d %010d %010d %s %s %s %s %s %s %s %d %d %d %s %s %d:%s%s", c.Up, c.Down, c.Replies,
		padLink(c.First), padLink(c.Last), padLink(c.Next), padLink(c.Prev), x,
		c.Article, p, c.Posted, c.Closes, c.Depth, c.Orders, c.Weight, len(c.Poster), c.Poster, c.Body)
}

// padLink is a link field as the record holds it: the cid with leading
// zeros, all zeros for none.
func padLink(id string) string {
	return strings.Repeat("0", max(linkDigits-len(id), 0)) + id
}

// place is a comment's entry in one of its parent's sorted sets.
type place struct {
	key, member string
	value       float64
	ordering    string // the ordering of the value: best, top or an optional one
}

// places are the comment's entries in its parent's sorted sets: its best
// and top bands, then its optional orderings (lib/tree.lua placeAt).
func (c crecord) places(l layout, id string) []place {
	name := c.parentName()
	out := []place{{l.kids(name), member(id), c.value("best"), "best"},
		{l.kids(name), topMember(id), c.value("top") - topBase, "top"}}
	if c.Orders != "" {
		for _, o := range strings.Split(c.Orders, ",") {
			out = append(out, place{l.kidsOrdering(o, name), member(id), c.value(o), o})
		}
	}
	return out
}

// value is the comment's value in an ordering (voting.Order.Value, as
// lib/record.lua value): its weight counts in score only.
func (c crecord) value(ordering string) float64 {
	w := c.Weight
	if w == "" {
		w = "0"
	}
	return record{Up: c.Up, Down: c.Down, Posted: c.Posted, Weight: w}.value(ordering)
}

// parentName is the name of the comment's parent in the kids keys.
func (c crecord) parentName() string {
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
func cvoteField(cid, user string) string { return cid + ":" + user }

// Moderation's values (lua/lib/moderation.lua): a shadowed user's vote
// in a voter record, a vote log's entry and a suspension.

// shadowVote returns the vote (1 or -1) of a shadow vote's value, "1s"
// or "-1s", which a voter record keeps for a shadowed user (Shadow): the
// user's reads show it, and no count, karma, page or log has it; 0 for
// any other value.
func shadowVote(v string) int {
	switch v {
	case "1s":
		return 1
	case "-1s":
		return -1
	}
	return 0
}

// A vote log's (WithVoteLog) member is "a<id>" for an article, "c<cid>"
// for a comment; its score twice the time of the vote (Unix s, the
// store's clock), plus 1 for an upvote (lib/moderation.lua logScore).
var logKinds = map[byte]string{'a': "article", 'c': "comment"}

// logEntry parses a vote log's entry: the item's kind ("article" or
// "comment") and id, the vote and its time; ok is false for what the
// store never logs.
func logEntry(m string, score float64) (kind, id string, vote int, at int64, ok bool) {
	if len(m) < 2 || score != math.Trunc(score) || math.Abs(score) > maxExact {
		return "", "", 0, 0, false
	}
	kind, id = logKinds[m[0]], m[1:]
	if kind == "" || !canonicalID(id) {
		return "", "", 0, 0, false
	}
	s := int64(score)
	at, vote = s>>1, -1 // floor, for a negative time too
	if s&1 == 1 {
		vote = 1
	}
	return kind, id, vote, at, true
}

// The suspensions' hash holds user -> "<mode> <until>", mode "r"
// (Refuse) or "s" (Shadow), until in Unix ms (lib/moderation.lua).
var suspensionModes = map[string]string{"r": "refuse", "s": "shadow"}

// parseSuspension parses a suspension's value into its mode's name
// ("refuse" or "shadow") and its end in Unix ms.
func parseSuspension(v string) (mode string, untilMs int64, ok bool) {
	code, ends, found := strings.Cut(v, " ")
	mode = suspensionModes[code]
	n, err := strconv.ParseInt(ends, 10, 64)
	if !found || mode == "" || err != nil || n < 0 || strconv.FormatInt(n, 10) != ends {
		return "", 0, false
	}
	return mode, n, true
}
