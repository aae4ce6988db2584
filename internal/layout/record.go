package layout

// The codecs of the records: an article's (Record), its voter record's
// "" field (VoteMeta) and values (VoteValue), and a comment's
// (CommentRecord). Each Parse validates what it reads against the
// limits the scripts keep (Check), and each String writes the record as
// the scripts do, byte for byte: lib/record.lua writeRecord and
// voteMeta, lib/tree.lua commentRecord. Check is what votectl's import
// refuses a value by, so that the limits have one place.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxExact bounds a number the scripts read as a Lua number or Redis
// keeps as a sorted set's score, both doubles, which hold an integer
// exactly up to 2^53: a post time, a close, a karma, a time in ms.
const MaxExact = 1 << 53

// The fixed places of a comment's record (lib/tree.lua C_UP...): the
// offsets of the fields a script writes in place, each CountDigits
// digits, and of its meta; and CommentHead, the most bytes of its head
// (all but the body) that the scripts read and Comment writes (HEAD).
const (
	CUp, CDown, CReplies, CFirst, CLast, CNext, CPrev, CDeleted, CMeta = 0, 11, 22, 33, 44, 55, 66, 77, 79
	CommentHead                                                        = 640
)

// ErrMalformed is what every Parse's error wraps: a value that is not a
// record the scripts write.
var ErrMalformed = errors.New("malformed record")

// CheckCount returns an error that names field where v is no count of
// a record: 0 to MaxCount.
func CheckCount(field string, v int64) error { return checkRange(field, v, 0, MaxCount) }

// CheckExact returns an error that names field where v is past
// ±MaxExact (a post time, a close, a karma, a time in ms).
func CheckExact(field string, v int64) error { return checkRange(field, v, -MaxExact, MaxExact) }

func checkRange(field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d is past the record's limit (%d to %d)", field, v, lo, hi)
	}
	return nil
}

// CheckWeight returns an error that names field where w is no weight a
// record holds: finite, at least 0.
func CheckWeight(field string, w float64) error {
	if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
		return fmt.Errorf("%s %v is past the record's limit (finite, at least 0)", field, w)
	}
	return nil
}

// CheckCID returns an error that names field where s is no comment id a
// record's links hold: a canonical id (IsID) up to MaxCount.
func CheckCID(field, s string) error {
	if !IsID(s) {
		return fmt.Errorf("%s %q is not an id", field, s)
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return checkRange(field, n, 1, MaxCount)
}

// IsID reports whether s is an id as the store issues them: a canonical
// decimal from 1 to 2^63-1.
func IsID(s string) bool {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) < 19 || s <= "9223372036854775807"
}

// FormatWeight writes a vote weight as the records hold it: plain
// decimals with a point ("432.0", "0.00001"), which every Lua reads:
// never an exponent, and never a bare integer, which miniredis's
// tonumber reads as an int64 and turns to nil past its maximum (1e21).
func FormatWeight(w float64) string {
	s := strconv.FormatFloat(w, 'f', -1, 64)
	if strings.IndexByte(s, '.') < 0 {
		s += ".0"
	}
	return s
}

// parseWeight reads a record's weight field.
func parseWeight(field, s string) (float64, error) {
	w, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q", ErrMalformed, field, s)
	}
	if err := CheckWeight(field, w); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return w, nil
}

// parseCount reads a field of CountDigits digits at a fixed place (a
// count, or a comment's link).
func parseCount(field, s string) (int64, error) {
	if len(s) != CountDigits {
		return 0, fmt.Errorf("%w: %s %q is not %d digits", ErrMalformed, field, s, CountDigits)
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s %q is not %d digits", ErrMalformed, field, s, CountDigits)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// parseExact reads a whole number up to ±MaxExact (a time).
func parseExact(field, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		err = CheckExact(field, n)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q", ErrMalformed, field, s)
	}
	return n, nil
}

// parseLength reads the length of a record's string, at most rest.
func parseLength(field, s string, rest int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > rest {
		return 0, fmt.Errorf("%w: %s %q past its end", ErrMalformed, field, s)
	}
	return n, nil
}

// cutHead cuts len(f) fields off the front of s into f, each ended by a
// space but the last, ended by a colon (a record's head), and returns
// the rest: no field of a head holds a space or a colon.
func cutHead(s string, f []string) (rest string, ok bool) {
	last := len(f) - 1
	for i := range f {
		j := 0
		for j < len(s) && s[j] != ' ' && s[j] != ':' {
			j++
		}
		if j == len(s) || (s[j] == ':') != (i == last) {
			return "", false
		}
		f[i], s = s[:j], s[j+1:]
	}
	return s, true
}

// Record is an article's record, one string at Article + id (lib/record.lua
// RECORD):
//
//	<up> <down> <posted> <weight> <orders> <#poster> <#title>:<poster><title><link>
//
// up and down CountDigits digits each, with leading zeros, so that a
// vote writes them in place; posted in Unix seconds; the weight as
// FormatWeight writes it; the optional orders it is in, comma-separated,
// "" for none; the lengths in bytes of the poster's name and of the
// title, which follow with the link, byte for byte.
type Record struct {
	Up, Down, Posted    int64
	Weight              string // as the record holds it: "432.0"
	Orders              string // "top,hot", "" for none
	Poster, Title, Link string
}

// recordFields is the number of fields of an article record's head.
const recordFields = 7

// ParseRecord reads an article's record; its strings are cut from s,
// without a copy. It checks what Check does, and that the record is
// laid out as the scripts write it.
func ParseRecord(s string) (Record, error) {
	var r Record
	_, err := ParseRecordWeight(s, &r)
	return r, err
}

// ParseRecordWeight is ParseRecord into r, and returns the record's
// weight as a number too: the read path's, which needs both.
func ParseRecordWeight(s string, r *Record) (weight float64, err error) {
	var f [recordFields]string
	rest, ok := cutHead(s, f[:])
	if !ok {
		return 0, ErrMalformed
	}
	var np, nt int
	if r.Up, err = parseCount("up", f[0]); err != nil {
		return 0, err
	}
	if r.Down, err = parseCount("down", f[1]); err != nil {
		return 0, err
	}
	if r.Posted, err = parseExact("posted", f[2]); err != nil {
		return 0, err
	}
	if weight, err = parseWeight("weight", f[3]); err != nil {
		return 0, err
	}
	if np, err = parseLength("poster's length", f[5], len(rest)); err != nil {
		return 0, err
	}
	if nt, err = parseLength("title's length", f[6], len(rest)-np); err != nil {
		return 0, err
	}
	r.Weight, r.Orders = f[3], f[4]
	r.Poster, r.Title, r.Link = rest[:np], rest[np:np+nt], rest[np+nt:]
	return weight, nil
}

// Check returns an error that names the first field of r past its
// limit: the counts (CheckCount), the post time (CheckExact), the
// weight (a number CheckWeight takes).
func (r Record) Check() error {
	if err := CheckCount("up", r.Up); err != nil {
		return err
	}
	if err := CheckCount("down", r.Down); err != nil {
		return err
	}
	if err := CheckExact("posted", r.Posted); err != nil {
		return err
	}
	w, err := strconv.ParseFloat(r.Weight, 64)
	if err != nil {
		return fmt.Errorf("weight %q is not a number", r.Weight)
	}
	return CheckWeight("weight", w)
}

// String is the record as lib/record.lua writeRecord writes it.
func (r Record) String() string {
	return string(r.Append(make([]byte, 0, 2*CountDigits+48+len(r.Orders)+len(r.Poster)+len(r.Title)+len(r.Link))))
}

// Append appends the record, as String writes it, to b.
func (r Record) Append(b []byte) []byte {
	b = appendCount(b, r.Up)
	b = append(b, ' ')
	b = appendCount(b, r.Down)
	b = append(b, ' ')
	b = strconv.AppendInt(b, r.Posted, 10)
	b = append(append(append(b, ' '), r.Weight...), ' ')
	b = append(append(b, r.Orders...), ' ')
	b = strconv.AppendInt(b, int64(len(r.Poster)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(r.Title)), 10)
	b = append(b, ':')
	return append(append(append(b, r.Poster...), r.Title...), r.Link...)
}

// WeightValue is the record's weight as a number (0 for none).
func (r Record) WeightValue() float64 { w, _ := strconv.ParseFloat(r.Weight, 64); return w }

// OrderList is the record's orders as a list (never nil).
func (r Record) OrderList() []string { return orderList(r.Orders) }

// Has reports whether the record's orders name order.
func (r Record) Has(order string) bool { return hasOrder(r.Orders, order) }

func orderList(orders string) []string {
	if orders == "" {
		return []string{}
	}
	return strings.Split(orders, ",")
}

func hasOrder(orders, order string) bool {
	return strings.Contains(","+orders+",", ","+order+",")
}

// appendCount appends n with leading zeros to CountDigits digits, as
// lib/record.lua COUNTS and lib/tree.lua pad write a count or a link.
func appendCount(b []byte, n int64) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], n, 10)
	for i := len(s); i < CountDigits; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// VoteMeta is the "" field of an article's voter record, at Voted + id,
// which holds what a vote needs of the article while its voting is open
// (lib/record.lua VOTE_META):
//
//	<up> <down> <groups> <posted> <closes> <weight> <orders>
//
// the counts as the record has them, how many groups the article is
// in, its post time and the store's time its voting closes (Unix
// seconds), its weight and orders as the record has them.
type VoteMeta struct {
	Up, Down, Groups, Posted, Closes int64
	Weight, Orders                   string
}

// ParseVoteMeta reads a voter record's "" field.
func ParseVoteMeta(s string) (VoteMeta, error) {
	var f [7]string
	for i := range f {
		j := strings.IndexByte(s, ' ')
		if i == len(f)-1 {
			if j >= 0 {
				return VoteMeta{}, fmt.Errorf("malformed voter record field \"\": %q", s)
			}
			j = len(s)
		} else if j < 0 {
			return VoteMeta{}, fmt.Errorf("malformed voter record field \"\": %q", s)
		}
		f[i], s = s[:j], s[min(j+1, len(s)):]
	}
	var m VoteMeta
	var err error
	bad := func(err error) (VoteMeta, error) { return VoteMeta{}, fmt.Errorf("voter record field \"\": %w", err) }
	if m.Up, err = parseCount("up", f[0]); err != nil {
		return bad(err)
	}
	if m.Down, err = parseCount("down", f[1]); err != nil {
		return bad(err)
	}
	if m.Groups, err = parseExact("groups", f[2]); err != nil || m.Groups < 0 {
		return bad(fmt.Errorf("%w: groups %q", ErrMalformed, f[2]))
	}
	if m.Posted, err = parseExact("posted", f[3]); err != nil {
		return bad(err)
	}
	if m.Closes, err = parseExact("closes", f[4]); err != nil {
		return bad(err)
	}
	if _, err = parseWeight("weight", f[5]); err != nil {
		return bad(err)
	}
	m.Weight, m.Orders = f[5], f[6]
	return m, nil
}

// String is the field as lib/record.lua voteMeta writes it.
func (m VoteMeta) String() string {
	b := make([]byte, 0, 2*CountDigits+48+len(m.Orders))
	b = appendCount(b, m.Up)
	b = append(b, ' ')
	b = appendCount(b, m.Down)
	for _, n := range [...]int64{m.Groups, m.Posted, m.Closes} {
		b = strconv.AppendInt(append(b, ' '), n, 10)
	}
	b = append(append(b, ' '), m.Weight...)
	b = append(append(b, ' '), m.Orders...)
	return string(b)
}

// VoteValue is a user's field in a voter record (an article's, or a
// comment's, at CVoted + aid under "<cid>:<user>"): "1" or "-1", "0"
// for none (a vote taken back, which keeps its field while the record
// lives, so that the record's hash table never shrinks under a walk of
// its voters: lib/ballot.lua VOTES), and for a shadowed voter's vote
// (voting.Shadow) "1s" or "-1s", which its voter's reads show and no
// count has (lib/ballot.lua, lib/moderation.lua). A vote in a store
// with the vote log is LoggedVoteValue's.
func VoteValue(vote int, shadow bool) string {
	s := strconv.Itoa(vote)
	if shadow {
		s += "s"
	}
	return s
}

// LoggedVoteValue is the field of a vote logged at offset off of its
// voter's vote log (LogEntry): "1@<off>" or "-1@<off>".
func LoggedVoteValue(vote int, off int64) string {
	return strconv.Itoa(vote) + "@" + strconv.FormatInt(off, 10)
}

// ParseVoteValue reads a voter record's user field: the vote, 1 or -1,
// or 0 for "0", none, and whether it is a shadow vote; ok is false for
// any other value. A logged vote's offset is VoteLogOffset's.
func ParseVoteValue(v string) (vote int, shadow, ok bool) {
	switch v {
	case "0":
		return 0, false, true
	case "1":
		return 1, false, true
	case "-1":
		return -1, false, true
	case "1s":
		return 1, true, true
	case "-1s":
		return -1, true, true
	}
	if _, ok := VoteLogOffset(v); ok {
		if v[0] == '-' {
			return -1, false, true
		}
		return 1, false, true
	}
	return 0, false, false
}

// VoteLogOffset returns the offset of a logged vote's line in its
// voter's vote log (LoggedVoteValue); ok is false for a value without.
func VoteLogOffset(v string) (off int64, ok bool) {
	vs, o, found := strings.Cut(v, "@")
	if !found || (vs != "1" && vs != "-1") || !isOffset(o) {
		return 0, false
	}
	n, err := strconv.ParseInt(o, 10, 64)
	return n, err == nil
}

// isOffset reports whether s is a canonical offset: "0", or digits
// without a leading zero.
func isOffset(s string) bool { return s == "0" || (IsID(s) && len(s) <= 15) }

// CommentRecord is a comment's record, one string at Comment + cid, its
// body in it (lib/tree.lua CREC):
//
//	<up> <down> <replies> <first> <last> <next> <prev> <deleted> <meta> <#poster>:<poster><body>
//
// up, down and replies (its live descendants), and its links, the cids
// of its newest and oldest reply and of its next older and previous
// newer sibling, CountDigits digits each with leading zeros (0 for no
// link) at fixed places (CUp...), so that a script writes them in place;
// deleted 1 once deleted, else 0; meta what never changes: the article
// id, the parent's cid (0 for a reply to the article), the post time
// and the close (Unix s), the depth, the optional orderings,
// comma-separated ("" for none), and the weight ("" unless in the score
// ordering); the length in bytes of the poster's name, which the body
// follows byte for byte ("" once deleted).
type CommentRecord struct {
	Up, Down, Replies       int64
	First, Last, Next, Prev string // "" for none
	Deleted                 bool
	Article, Parent         string // Parent "" for a reply to the article
	Posted, Closes          int64
	Depth                   int
	Orders, Weight          string // "hot,score" ("" for none); the weight "" unless in score
	Poster, Body            string // Body "" once deleted
}

// commentFields is the number of fields of a comment record's head.
const commentFields = 16

// ParseCommentRecord reads a comment's record, or its head and the
// first bytes of its body (as a GETRANGE of CommentHead bytes reads
// it); its strings are cut from s, without a copy. It checks what Check
// does, and that the record is laid out as the scripts write it.
func ParseCommentRecord(s string) (CommentRecord, error) {
	var c CommentRecord
	err := ParseCommentRecordInto(s, &c)
	return c, err
}

// ParseCommentRecordInto is ParseCommentRecord into c.
func ParseCommentRecordInto(s string, c *CommentRecord) (err error) {
	var f [commentFields]string
	rest, ok := cutHead(s, f[:])
	if !ok {
		return ErrMalformed
	}
	var n [7]int64
	for i, name := range [...]string{"up", "down", "replies", "first", "last", "next", "prev"} {
		if n[i], err = parseCount(name, f[i]); err != nil {
			return err
		}
	}
	var links [4]string
	for i, v := range n[3:] {
		if v != 0 {
			links[i] = strings.TrimLeft(f[3+i], "0")
		}
	}
	if f[7] != "0" && f[7] != "1" {
		return fmt.Errorf("%w: deleted %q", ErrMalformed, f[7])
	}
	parent := f[9]
	if parent == "0" {
		parent = ""
	}
	if !IsID(f[8]) || parent != "" && CheckCID("parent", parent) != nil {
		return fmt.Errorf("%w: article %q, parent %q", ErrMalformed, f[8], f[9])
	}
	*c = CommentRecord{Up: n[0], Down: n[1], Replies: n[2], First: links[0], Last: links[1], Next: links[2], Prev: links[3],
		Deleted: f[7] == "1", Article: f[8], Parent: parent, Orders: f[13], Weight: f[14]}
	if c.Posted, err = parseExact("posted", f[10]); err != nil {
		return err
	}
	if c.Closes, err = parseExact("closes", f[11]); err != nil {
		return err
	}
	depth, err := strconv.Atoi(f[12])
	if err != nil || depth < 0 || f[12] != strconv.Itoa(depth) {
		return fmt.Errorf("%w: depth %q", ErrMalformed, f[12])
	}
	c.Depth = depth
	if c.Weight != "" {
		if _, err := parseWeight("weight", c.Weight); err != nil {
			return err
		}
	}
	np, err := parseLength("poster's length", f[15], len(rest))
	if err != nil {
		return err
	}
	c.Poster, c.Body = rest[:np], rest[np:]
	return nil
}

// Check returns an error that names the first field of c past its
// limit: the counts (CheckCount), the links and the parent (CheckCID),
// the times (CheckExact), the weight (CheckWeight), and the head, all
// but the body, which takes at most CommentHead bytes.
func (c CommentRecord) Check() error {
	for _, f := range [...]struct {
		name string
		v    int64
	}{{"up", c.Up}, {"down", c.Down}, {"replies", c.Replies}} {
		if err := CheckCount(f.name, f.v); err != nil {
			return err
		}
	}
	for _, f := range [...]struct{ name, v string }{{"first", c.First}, {"last", c.Last}, {"next", c.Next},
		{"prev", c.Prev}, {"parent", c.Parent}} {
		if f.v != "" {
			if err := CheckCID(f.name, f.v); err != nil {
				return err
			}
		}
	}
	if !IsID(c.Article) {
		return fmt.Errorf("article %q is not an id", c.Article)
	}
	if err := CheckExact("posted", c.Posted); err != nil {
		return err
	}
	if err := CheckExact("closes", c.Closes); err != nil {
		return err
	}
	if c.Depth < 0 {
		return fmt.Errorf("depth %d is below 0", c.Depth)
	}
	if c.Weight != "" {
		w, err := strconv.ParseFloat(c.Weight, 64)
		if err != nil {
			return fmt.Errorf("weight %q is not a number", c.Weight)
		}
		if err := CheckWeight("weight", w); err != nil {
			return err
		}
	}
	if head := c.HeadLen(); head > CommentHead {
		return fmt.Errorf("its record's head (all but the body) takes %d bytes, more than the store reads, %d", head, CommentHead)
	}
	return nil
}

// HeadLen is the length of the record's head, all but the body.
func (c CommentRecord) HeadLen() int { return len(c.appendHead(nil)) }

// String is the record as lib/tree.lua commentRecord writes it.
func (c CommentRecord) String() string {
	return string(c.Append(make([]byte, 0, 160+len(c.Orders)+len(c.Poster)+len(c.Body))))
}

// Append appends the record, as String writes it, to b.
func (c CommentRecord) Append(b []byte) []byte {
	return append(c.appendHead(b), c.Body...)
}

func (c CommentRecord) appendHead(b []byte) []byte {
	b = appendCount(b, c.Up)
	b = appendCount(append(b, ' '), c.Down)
	b = appendCount(append(b, ' '), c.Replies)
	for _, l := range [...]string{c.First, c.Last, c.Next, c.Prev} {
		b = append(b, ' ')
		b = append(b, PadLink(l)...)
	}
	x := byte('0')
	if c.Deleted {
		x = '1'
	}
	b = append(b, ' ', x, ' ')
	b = append(append(b, c.Article...), ' ')
	if c.Parent == "" {
		b = append(b, '0')
	} else {
		b = append(b, c.Parent...)
	}
	b = strconv.AppendInt(append(b, ' '), c.Posted, 10)
	b = strconv.AppendInt(append(b, ' '), c.Closes, 10)
	b = strconv.AppendInt(append(b, ' '), int64(c.Depth), 10)
	b = append(append(b, ' '), c.Orders...)
	b = append(append(b, ' '), c.Weight...)
	b = strconv.AppendInt(append(b, ' '), int64(len(c.Poster)), 10)
	b = append(b, ':')
	return append(b, c.Poster...)
}

// OrderList is the comment's optional orderings as a list (never nil).
func (c CommentRecord) OrderList() []string { return orderList(c.Orders) }

// PadLink is a link field as a comment's record holds it: the cid with
// leading zeros to CountDigits digits, all zeros for none ("").
func PadLink(cid string) string {
	return strings.Repeat("0", max(CountDigits-len(cid), 0)) + cid
}

// Counts is up and down as the records write them in place, at an
// article record's start and at a comment record's CUp (lib/record.lua
// COUNTS).
func Counts(up, down int64) string {
	return string(appendCount(append(appendCount(make([]byte, 0, 2*CountDigits+1), up), ' '), down))
}

// Count is one count or link field as a record writes it in place:
// CountDigits digits with leading zeros.
func Count(n int64) string { return string(appendCount(make([]byte, 0, CountDigits), n)) }
