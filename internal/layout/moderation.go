package layout

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// Moderation's values (lua/lib/moderation.lua): a vote log's entry, a
// suspension, and a comment vote's field in its article's comment voter
// record.

// LogEntry is one entry of a user's vote log (WithVoteLog), a string at
// UserVotes + user: a journal of one line an entry, oldest first, which
// a vote appends (APPEND),
//
//	<sign><kind><id> <at>\n
//
// sign '+' for an upvote, '-' for a downvote, LogDead for an entry taken
// back (the vote changed, cancelled or reversed); kind 'a' for an
// article, 'c' for a comment; id the item's; at the time of the vote
// (Unix s, the store's clock) in base 36, as strconv writes it, which
// takes 6 characters, not 10, for the years around now: a line is the
// log's memory, whatever its length in votes. "+a12 vf7lds\n" (at
// 1900000000) is an upvote on
// article 12. A logged vote's value in its voter record (VoteValue)
// carries the offset of its line's first byte, "1@4096", so that the
// vote that changes it marks the line dead in place (SETRANGE): the log
// costs about 20 bytes a vote at any length, where a sorted set costs
// 105 beyond 128 entries (BENCHMARKS.md, "Moderation"). The store sends
// each vote the line's tail (LogTail); lib/moderation.lua writes the rest.
//
// Layout 6 kept the log in a sorted set at UserVotes6 + user, of members
// Member at scores Score, which Reconfigure moves into the journal.
type LogEntry struct {
	Comment bool
	ID      string
	Vote    int   // 1 or -1; 0 for a line taken back (LogDead)
	At      int64 // Unix seconds
}

// LogDead is the sign of a line taken back.
const LogDead = 'x'

// LogTail is the end of a log line of a vote at at: " <at>\n", at in
// base 36.
func LogTail(at int64) string { return " " + strconv.FormatInt(at, 36) + "\n" }

// Line is the entry's line in the journal.
func (e LogEntry) Line() string {
	sign := string(rune(LogDead))
	switch e.Vote {
	case 1:
		sign = "+"
	case -1:
		sign = "-"
	}
	return sign + e.Member() + LogTail(e.At)
}

// ParseLogLine parses one line of a journal, its newline left off; ok
// is false for what the store never writes.
func ParseLogLine(line string) (e LogEntry, ok bool) {
	item, at, found := strings.Cut(line, " ")
	if !found || len(item) < 3 || (item[1] != 'a' && item[1] != 'c') || !IsID(item[2:]) {
		return LogEntry{}, false
	}
	n, err := strconv.ParseInt(at, 36, 64)
	if err != nil || strconv.FormatInt(n, 36) != at || n > MaxExact || n < -MaxExact {
		return LogEntry{}, false
	}
	e = LogEntry{Comment: item[1] == 'c', ID: item[2:], At: n}
	switch item[0] {
	case '+':
		e.Vote = 1
	case '-':
		e.Vote = -1
	case LogDead:
	default:
		return LogEntry{}, false
	}
	return e, true
}

// LogLines calls f with each line of the journal part b, which starts
// at the journal's offset start, oldest first: its entry, the offset of
// its first byte, and ok false for a line the store never writes. It
// returns the bytes after the last newline, which are no whole line.
func LogLines(b []byte, start int64, f func(e LogEntry, off int64, ok bool)) (rest []byte) {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return b
		}
		e, ok := ParseLogLine(string(b[:i]))
		f(e, start, ok)
		b, start = b[i+1:], start+int64(i)+1
	}
}

// Member is the entry's item: "a<id>" for an article, "c<cid>" for a
// comment (its line's kind and id, and its member in layout 6's log).
func (e LogEntry) Member() string {
	if e.Comment {
		return "c" + e.ID
	}
	return "a" + e.ID
}

// Score is the entry's score in layout 6's log: twice the time of the
// vote, plus 1 for an upvote, so that the newest came first.
func (e LogEntry) Score() int64 {
	if e.Vote == 1 {
		return 2*e.At + 1
	}
	return 2 * e.At
}

// ParseLogEntry parses an entry of layout 6's log, its member m and its
// score; ok is false for what the store never logged.
func ParseLogEntry(m string, score float64) (e LogEntry, ok bool) {
	if len(m) < 2 || (m[0] != 'a' && m[0] != 'c') || !IsID(m[1:]) ||
		score != math.Trunc(score) || math.Abs(score) > MaxExact {
		return LogEntry{}, false
	}
	s := int64(score)
	e = LogEntry{Comment: m[0] == 'c', ID: m[1:], At: s >> 1, Vote: -1} // >> 1: floor, for a negative time too
	if s&1 == 1 {
		e.Vote = 1
	}
	return e, true
}

// The suspensions' hash, at Suspended, holds user -> "<mode> <until>":
// mode SuspendRefuse or SuspendShadow, until the end in Unix ms on the
// store's clock.
const (
	SuspendRefuse = "r"
	SuspendShadow = "s"
)

// SuspensionValue is a suspension's value in the suspensions' hash.
func SuspensionValue(mode string, untilMs int64) string {
	return mode + " " + strconv.FormatInt(untilMs, 10)
}

// ParseSuspension parses a suspension's value: its mode (SuspendRefuse
// or SuspendShadow) and its end in Unix ms; ok is false for any other
// value.
func ParseSuspension(v string) (mode string, untilMs int64, ok bool) {
	mode, ends, found := strings.Cut(v, " ")
	n, err := strconv.ParseInt(ends, 10, 64)
	if !found || (mode != SuspendRefuse && mode != SuspendShadow) || err != nil || n < 0 ||
		strconv.FormatInt(n, 10) != ends {
		return "", 0, false
	}
	return mode, n, true
}

// CVoteField is user's field for their vote on comment cid in the
// comment voter record of the comment's article (CVoted + article id).
func CVoteField(cid, user string) string { return cid + ":" + user }
