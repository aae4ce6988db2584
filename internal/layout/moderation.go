package layout

import (
	"math"
	"strconv"
	"strings"
)

// Moderation's values (lua/lib/moderation.lua): a vote log's entry, a
// suspension, and a comment vote's field in its article's comment voter
// record.

// LogEntry is one entry of a user's vote log (WithVoteLog), a zset at
// UVotes + user: its member is "a<id>" for an article, "c<cid>" for a
// comment, its score twice the time of the vote (Unix s, the store's
// clock), plus 1 for an upvote, so that the newest comes first and one
// number holds both. The store sends the score with each vote
// (voting.Store.logScore).
type LogEntry struct {
	Comment bool
	ID      string
	Vote    int   // 1 or -1
	At      int64 // Unix seconds
}

// Member is the entry's member in the log.
func (e LogEntry) Member() string {
	if e.Comment {
		return "c" + e.ID
	}
	return "a" + e.ID
}

// Score is the entry's score in the log.
func (e LogEntry) Score() int64 {
	if e.Vote == 1 {
		return 2*e.At + 1
	}
	return 2 * e.At
}

// ParseLogEntry parses a vote log's member m and its score; ok is false
// for what the store never logs.
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
