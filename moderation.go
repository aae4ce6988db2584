package voting

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// Moderation: who voted ([Store.Voters], [Store.CommentVoters]), a
// user's votes ([WithVoteLog], [Store.VotesBy]), taking them back
// ([Store.ReverseVotes]), suspending a user ([Store.Suspend]) and the
// vote events ([WithVoteEvents]). The scripts keep them at the vote's
// marked hook points (lib/moderation.lua); doc.go, "Moderation", is the
// model, and docs/OPERATIONS.md, "Moderation", the whole of it. The
// reads (VotesBy, Voters, CommentVoters, Suspended, VoteEvents) run on
// the read pool where the store has one ([WithReadPool]), as every read
// does.

// UserVote is one standing vote of a user ([Store.VotesBy]): on the
// article ID, or on the comment ID where Comment is set, cast at At (the
// store's clock, to the second).
type UserVote struct {
	ID      string    `json:"id"`
	Comment bool      `json:"comment,omitempty"`
	Vote    VoteType  `json:"vote"`
	At      time.Time `json:"at"`
}

// Voter is one standing voter of an article or comment ([Store.Voters]).
type Voter struct {
	User string   `json:"user"`
	Vote VoteType `json:"vote"`
}

// The scripts of moderation.
var (
	//go:embed lua/votes_by.lua
	votesByLua string
	//go:embed lua/voters.lua
	votersLua string
	//go:embed lua/comment_voters.lua
	commentVotersLua string

	votesByScript       = newScript("votes_by", votesByLua)
	votersScript        = newScript("voters", votersLua)
	commentVotersScript = newScript("comment_voters", commentVotersLua)
)

// errNoVoteLog is the error of a call that reads or takes back a user's
// vote log on a store without one.
var errNoVoteLog = fmt.Errorf("%w: the store keeps no vote log (WithVoteLog)", ErrNotAllowed)

// VotesBy returns a page of user's standing votes, on articles and on
// comments, newest first (in the order Redis took them, whatever the
// clocks of the processes that cast them, which give At), from the
// store's vote log ([WithVoteLog]),
// and the cursor of the next page: cursor "" starts, and a returned ""
// means the end. limit is 1 to [MaxModerationPage]; a page may hold
// fewer, the log's entries whose article or comment is gone left out,
// and so may a page of a log of many changed votes, whose lines taken
// back a call passes over (it reads about 40 bytes of the log for each
// vote of limit). A vote the user changes moves to the front, with its
// new time. The cursor is a place in the log, so a walk lists each vote
// once, and a vote cast during it comes in no later page. Each call is
// one script of bounded work. A store without WithVoteLog gets
// an error wrapping [ErrNotAllowed]; a cursor that no call returned, a
// user name Vote refuses or a limit out of range gets
// [ErrInvalidArgument].
func (s *Store) VotesBy(ctx context.Context, user, cursor string, limit int) ([]UserVote, string, error) {
	if s.hooked(ctx) {
		return observePage(ctx, s, Call{Op: "VotesBy"}, func(ctx context.Context) ([]UserVote, string, error) {
			return s.VotesBy(ctx, user, cursor, limit)
		})
	}
	const op = "votes by"
	if !s.voteLog {
		return nil, "", opErr(op, errNoVoteLog)
	}
	if err := checkName("user", user); err != nil {
		return nil, "", opErr(op, err)
	}
	if err := checkLimit(limit); err != nil {
		return nil, "", opErr(op, err)
	}
	if cursor != "" && !layout.IsID(cursor) {
		return nil, "", opErr(op, fmt.Errorf("%w: cursor %q", ErrInvalidArgument, cursor))
	}
	k := s.keys
	rest, err := s.call(ctx, op, votesByScript, "cursor "+cursor, []interface{}{k.userVotesKey(user),
		cursor, limit, k.article, k.comment})
	if err != nil {
		return nil, "", err
	}
	list, next, err := parseVotesBy(rest)
	if err != nil {
		return nil, "", opErr(op, err)
	}
	return list, next, nil
}

// parseVotesBy reads votes_by.lua's reply: the next cursor ("" for
// none), then the lines of the votes (layout.LogEntry).
func parseVotesBy(rest []interface{}) ([]UserVote, string, error) {
	f, err := redis.Strings(rest, nil)
	if err != nil || len(f) == 0 {
		return nil, "", fmt.Errorf("votes by reply of %d fields: %v", len(rest), err)
	}
	list := make([]UserVote, 0, len(f)-1)
	for _, line := range f[1:] {
		e, ok := layout.ParseLogLine(line)
		if !ok || e.Vote == 0 {
			return nil, "", fmt.Errorf("vote log line %q", line)
		}
		v := UserVote{ID: e.ID, Comment: e.Comment, Vote: Downvote, At: time.Unix(e.At, 0).UTC()}
		if e.Vote == 1 {
			v.Vote = Upvote
		}
		list = append(list, v)
	}
	return list, f[0], nil
}

// Voters returns a page of the standing voters of the article id while
// its voter record is kept (its voting window), and the cursor of the
// next page: cursor "" starts, and a returned "" means the end. The
// poster's own upvote, which Post records, is a voter, and so is a
// shadowed user ([Shadow]), whose vote counts nowhere. Each call is one
// script that reads about limit voters (1 to [MaxModerationPage]) of
// the record: a small record is read whole. A walk lists each voter
// whose vote stands throughout it exactly once, with the vote it has
// when read, and lists no voter twice: a vote taken back keeps its field
// in the record ("0", which no page lists) until the record expires, so
// the record never shrinks under the walk, where Redis's HSCAN could
// return a field twice. A page may so hold fewer voters than limit, or
// none, before the end. A voter who votes during the walk may be listed
// or not. An unknown article gets [ErrNotFound], one whose voter record
// is gone [ErrVotingClosed]; a limit out of range or a cursor that no
// call returned [ErrInvalidArgument].
func (s *Store) Voters(ctx context.Context, id, cursor string, limit int) ([]Voter, string, error) {
	if s.hooked(ctx) {
		return observePage(ctx, s, Call{Op: "Voters"}, func(ctx context.Context) ([]Voter, string, error) {
			return s.Voters(ctx, id, cursor, limit)
		})
	}
	const op = "voters"
	scan, err := checkVoters(op, id, cursor, limit, notFound)
	if err != nil {
		return nil, "", err
	}
	rest, err := s.call(ctx, op, votersScript, id, []interface{}{s.keys.votedKey(id), scan, limit, s.keys.articleKey(id)})
	if err != nil {
		return nil, "", err
	}
	return parseVoters(op, rest)
}

// CommentVoters returns a page of the standing voters of the comment id,
// as [Store.Voters] does of an article's, while the comment's voter
// record is kept (its voting window): the poster's implied upvote, first
// on the walk's last page (a small record's only one), is a voter where
// the poster has not changed it. A poster's vote, once cast, keeps its
// field as any voter's does, so the walk lists the poster once too. An
// unknown or deleted comment gets [ErrNotFound], one whose voter record
// is gone [ErrVotingClosed]; a limit out of range or a cursor that no
// call returned [ErrInvalidArgument].
func (s *Store) CommentVoters(ctx context.Context, id, cursor string, limit int) ([]Voter, string, error) {
	if s.hooked(ctx) {
		return observePage(ctx, s, Call{Op: "CommentVoters"}, func(ctx context.Context) ([]Voter, string, error) {
			return s.CommentVoters(ctx, id, cursor, limit)
		})
	}
	const op = "comment voters"
	scan, err := checkVoters(op, id, cursor, limit, commentNotFound)
	if err != nil {
		return nil, "", err
	}
	k := s.keys
	reply, err := s.eval(ctx, commentVotersScript, []interface{}{k.commentKey(id), id, scan, limit, k.cvoted})
	status, rest, err := decode(reply, err)
	if err != nil {
		return nil, "", opErr(op, err)
	}
	switch status {
	case statusOK:
		return parseVoters(op, rest)
	case statusNotFound:
		return nil, "", commentNotFound(op, id)
	}
	return nil, "", statusErr(op, status, id)
}

// checkVoters is the check of Voters and CommentVoters, op theirs,
// before Redis is touched: the limit, then the id, whose malformed form
// gets missing(op, id), then the cursor, whose HSCAN cursor it returns.
func checkVoters(op, id, cursor string, limit int, missing func(op, id string) error) (string, error) {
	if err := checkLimit(limit); err != nil {
		return "", opErr(op, err)
	}
	if !canonicalID(id) {
		return "", missing(op, id)
	}
	return scanCursor(op, cursor)
}

// scanCursor returns the HSCAN cursor of a Voters cursor: "0" for "".
func scanCursor(op, cursor string) (string, error) {
	if cursor == "" {
		return "0", nil
	}
	if n, err := strconv.ParseUint(cursor, 10, 64); err != nil || n == 0 {
		return "", opErr(op, fmt.Errorf("%w: cursor %q", ErrInvalidArgument, cursor))
	}
	return cursor, nil
}

// parseVoters reads voters.lua's and comment_voters.lua's reply: the
// next HSCAN cursor ("0" at the end), then user and vote pairs, each a
// vote up or down: the scripts skip a vote taken back ("0").
func parseVoters(op string, rest []interface{}) ([]Voter, string, error) {
	f, err := redis.Strings(rest, nil)
	if err != nil || len(f)%2 != 1 {
		return nil, "", opErr(op, fmt.Errorf("voters reply of %d fields: %v", len(rest), err))
	}
	list := make([]Voter, 0, len(f)/2)
	for i := 1; i < len(f); i += 2 {
		v := Voter{User: f[i]}
		vote, ok := storedVote(f[i+1]) // a shadowed voter's too (Shadow)
		if !ok || vote == NoVote {
			return nil, "", opErr(op, fmt.Errorf("%w: %q holds %q", errCorrupt, f[i], f[i+1]))
		}
		v.Vote = vote
		list = append(list, v)
	}
	next := f[0]
	if next == "0" {
		next = ""
	}
	return list, next, nil
}

//go:embed lua/reverse.lua
var reverseLua string

var reverseScript = newScript("reverse", reverseLua)

// ReverseVotes takes back every standing vote user cast, on open and
// closed articles and comments, as if it had never been cast, and
// returns how many it took back. It needs the vote log ([WithVoteLog]):
// without it, an error wrapping [ErrNotAllowed].
//
// Each vote taken back changes what the vote changed: the item's counts,
// score or points and its place in every ordering (the front pages, its
// groups and their cached pages, TopSince, its parent's orders of
// comments), the poster's karma and the voter's vote costs
// ([WithKarma], [WithVoteCost]), and the voter's upvoted page
// ([WithUserPages]). A closed article's frozen score changes too. A
// vote on an item whose voting is open is cancelled as [CancelVote]
// would, without the vote rules; one on a closed item is taken off its
// frozen counts. Post's and Comment's own upvote is not a cast vote
// (docs/OPERATIONS.md, "Moderation"): ReverseVotes leaves it, but takes back to none
// a vote the poster cast on their own item afterwards.
//
// It works in bounded steps, one script each of at most
// [ReverseStep] votes, fewer on articles in many groups and orders,
// walking the log from its newest vote to its oldest; another call may
// run between two steps, and a vote the user casts meanwhile is taken
// back too, by a walk over the votes cast since, until a walk finds
// none: then the log is removed. Interrupted (ctx, a dropped
// connection), it returns what it took back and the error; a call again
// resumes, passing over the votes taken back (marked so in the log), and
// once it has returned nil a second call takes back nothing more. A user that keeps voting should
// be suspended first ([Store.Suspend]).
func (s *Store) ReverseVotes(ctx context.Context, user string) (int, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "ReverseVotes"}, func(ctx context.Context) (int, error) { return s.ReverseVotes(ctx, user) })
	}
	return s.reverseVotes(ctx, user, nil)
}

// ReverseStep is the most votes one step of [Store.ReverseVotes] takes
// back: a script of a few milliseconds at most on redis-server.
const ReverseStep = reverseStep

// reverseVotes is ReverseVotes, calling progress (where not nil) with
// the total after each step.
func (s *Store) reverseVotes(ctx context.Context, user string, progress func(total int)) (int, error) {
	const op = "reverse votes"
	if !s.voteLog {
		return 0, opErr(op, errNoVoteLog)
	}
	if err := checkName("user", user); err != nil {
		return 0, opErr(op, err)
	}
	total := 0
	var late error
	walk := "" // where the walk of the log is (reverse.lua)
	for {
		if err := ctx.Err(); err != nil {
			return total, opErr(op, err)
		}
		var taken int
		t := s.now()
		stepLate, err := s.evalScan(ctx, op, reverseScript, s.appendVoteRules(s.reverseArgs(user, t.Unix(), walk), t), &taken, &walk)
		if err != nil {
			return total, err
		}
		if stepLate != nil {
			late = stepLate
		}
		total += taken
		if progress != nil {
			progress(total)
		}
		if walk == "" {
			return total, replicationErr(op, late)
		}
	}
}

// reverseArgs lays out reverse.lua's arguments before the vote rules
// (appendVoteRules).
func (s *Store) reverseArgs(user string, now int64, walk string) []interface{} {
	k := s.keys
	upvoted := ""
	if s.userPages {
		upvoted = k.upvoted
	}
	args := make([]interface{}, 0, 13+1+len(s.rules.vote))
	return append(args, k.userVotesKey(user), user, now, s.reverseStep, reverseWork, walk,
		k.orderingKey("score"), k.article, k.voted, s.votePrefixes[3], upvoted, k.comment, k.cvoted, k.kids)
}

// Suspension is how a suspended user's calls are taken ([Store.Suspend]).
type Suspension int8

const (
	// Refuse refuses the user's votes, posts and comments with an error
	// wrapping [ErrNotAllowed], whose [RetryAfter] is the time left; a
	// refused call changes nothing. A vote that would change nothing (the
	// user's vote already) is answered as ever: the check sits where a
	// vote first writes.
	Refuse Suspension = iota + 1
	// Shadow accepts the user's votes, which the user sees as cast (the
	// result of the vote, VoteOf, VotesOf and the reads for a user), and
	// which count nowhere: no count, score, ordering, karma, page, vote
	// log or event has them. A vote the user cast before, changed while
	// shadowed, is taken back. The user's posts and comments are taken.
	Shadow
)

// String returns "refuse" or "shadow".
func (m Suspension) String() string {
	switch m {
	case Refuse:
		return "refuse"
	case Shadow:
		return "shadow"
	case 0:
		return "none"
	}
	return fmt.Sprintf("Suspension(%d)", int8(m))
}

// The scripts of suspensions.
var (
	//go:embed lua/suspend.lua
	suspendLua string
	//go:embed lua/suspended.lua
	suspendedLua string

	suspendScript   = newScript("suspend", suspendLua)
	suspendedScript = newScript("suspended", suspendedLua)
)

// Suspend suspends user until the time until, on the store's clock, in
// the mode mode ([Refuse] or [Shadow]), replacing a suspension the user
// has; it ends by itself at until, to the second. Every vote, post and
// comment decides the voter's suspension in its own script, before its
// first write. A mode other than Refuse and Shadow, a time until not
// after the store's now or not after 1970, or a user name Vote refuses
// gets [ErrInvalidArgument].
//
// A store that has never suspended anyone, or whose suspensions have all
// ended, pays nothing measurable on a vote: while any is on record, the
// store's record carries the latest end of them, which the vote reads
// with the GET that checks the record (BENCHMARKS.md).
func (s *Store) Suspend(ctx context.Context, user string, mode Suspension, until time.Time) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "Suspend"}, func(ctx context.Context) error { return s.Suspend(ctx, user, mode, until) })
	}
	const op = "suspend"
	if err := s.text.name("user", user); err != nil {
		return opErr(op, err)
	}
	code := map[Suspension]string{Refuse: "r", Shadow: "s"}[mode]
	if code == "" {
		return opErr(op, fmt.Errorf("%w: suspension mode %v", ErrInvalidArgument, mode))
	}
	if !until.After(s.now()) {
		return opErr(op, fmt.Errorf("%w: until %v is not after now", ErrInvalidArgument, until))
	}
	if ms := until.UnixMilli(); ms <= 0 || ms > layout.MaxExact {
		// The end is kept as a whole number of ms after 1970, which
		// the scripts read exactly (layout.SuspensionValue).
		return opErr(op, fmt.Errorf("%w: until %v is not between 1970 and %v", ErrInvalidArgument, until, time.UnixMilli(layout.MaxExact).UTC()))
	}
	_, err := s.suspend(ctx, op, user, code, until.UnixMilli())
	return err
}

// Unsuspend ends user's suspension, if any. Votes the user cast shadowed
// ([Shadow]) stay as they are: seen by the user, counted nowhere, until
// the user changes them. A user name Vote refuses gets
// [ErrInvalidArgument].
func (s *Store) Unsuspend(ctx context.Context, user string) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "Unsuspend"}, func(ctx context.Context) error { return s.Unsuspend(ctx, user) })
	}
	const op = "unsuspend"
	if err := s.text.name("user", user); err != nil {
		return opErr(op, err)
	}
	_, err := s.suspend(ctx, op, user, "", 0)
	return err
}

// suspend runs suspend.lua: mode "r", "s", or "" to end the suspension.
func (s *Store) suspend(ctx context.Context, op, user, mode string, until int64) (bool, error) {
	k := s.keys
	var was string
	late, err := s.evalScan(ctx, op, suspendScript, []interface{}{k.suspended, user, mode, until,
		s.now().UnixMilli(), k.rules, s.rules.want}, &was)
	if err != nil {
		return false, err
	}
	return was == "1", replicationErr(op, late)
}

// Suspended returns user's suspension and its end, on the store's clock,
// to the millisecond; 0 and the zero time where the user is not
// suspended (never, or no more). A user name Vote refuses gets
// [ErrInvalidArgument].
func (s *Store) Suspended(ctx context.Context, user string) (Suspension, time.Time, error) {
	if s.hooked(ctx) {
		r, err := observe(ctx, s, Call{Op: "Suspended"}, func(ctx context.Context) (suspension, error) {
			mode, until, err := s.Suspended(ctx, user)
			return suspension{mode, until}, err
		})
		return r.mode, r.until, err
	}
	const op = "suspended"
	if err := checkName("user", user); err != nil {
		return 0, time.Time{}, opErr(op, err)
	}
	t := s.now()
	rest, err := s.call(ctx, op, suspendedScript, "", []interface{}{s.keys.suspended, user, t.Unix()})
	if err != nil {
		return 0, time.Time{}, err
	}
	if len(rest) == 0 {
		return 0, time.Time{}, nil
	}
	var code string
	var left int64
	if err := scan(statusOK, rest, &code, &left); err != nil {
		return 0, time.Time{}, opErr(op, err)
	}
	mode := map[string]Suspension{"r": Refuse, "s": Shadow}[code]
	if mode == 0 {
		return 0, time.Time{}, opErr(op, fmt.Errorf("suspension mode %q", code))
	}
	// left is from the store's now to the second (the script's clock).
	// In ms, not a Duration, which overflows beyond ~292 years (an end
	// in 9999, a ban for good).
	return mode, time.UnixMilli(t.Unix()*1000 + left).UTC(), nil
}

// suspension is the two results of Suspended, as one result of its hooks.
type suspension struct {
	mode  Suspension
	until time.Time
}

// VoteEvent is one entry of the store's vote events ([WithVoteEvents]):
// its stream entry's ID, its Kind ("vote", "reversed", "suspend" or
// "unsuspend"), the User it is about, and At, the store's clock at the
// change, to the second for a vote. A vote's and a reversal's Target is
// the article's id, or the comment's where Comment is set, From the vote
// it counted before and To the vote it counts after ([NoVote] for none;
// a reversal's To is always NoVote). A suspension's Target is its mode,
// "refuse" or "shadow"; an unsuspension's is "".
type VoteEvent struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	User    string    `json:"user"`
	Target  string    `json:"target"`
	Comment bool      `json:"comment,omitempty"`
	From    VoteType  `json:"from"`
	To      VoteType  `json:"to"`
	At      time.Time `json:"at"`
}

//go:embed lua/events.lua
var eventsLua string

var eventsScript = newScript("events", eventsLua)

// VoteEvents returns up to count (1 to [MaxModerationPage]) of the
// store's vote events after the entry after ("" for the oldest kept), in
// order, and the ID to read on from: the last returned, or after where
// none was. Each call is one script. A store without [WithVoteEvents]
// gets an error wrapping [ErrNotAllowed]; an after that is no stream
// entry ID, or a count out of range, [ErrInvalidArgument]. An entry the
// stream's cap dropped is not read.
func (s *Store) VoteEvents(ctx context.Context, after string, count int) ([]VoteEvent, string, error) {
	if s.hooked(ctx) {
		return observePage(ctx, s, Call{Op: "VoteEvents"}, func(ctx context.Context) ([]VoteEvent, string, error) {
			return s.VoteEvents(ctx, after, count)
		})
	}
	const op = "vote events"
	if !s.events {
		return nil, "", opErr(op, fmt.Errorf("%w: the store keeps no vote events (WithVoteEvents)", ErrNotAllowed))
	}
	if err := checkLimit(count); err != nil {
		return nil, "", opErr(op, err)
	}
	if after != "" {
		ms, seq, ok := streamID(after)
		if !ok {
			return nil, "", opErr(op, fmt.Errorf("%w: %q is no stream entry ID", ErrInvalidArgument, after))
		}
		if ms == math.MaxUint64 && seq == math.MaxUint64 {
			return nil, after, nil // the greatest ID: none can follow, and XRANGE refuses to start after it
		}
	}
	rest, err := s.call(ctx, op, eventsScript, "", []interface{}{s.keys.events, after, count})
	if err != nil {
		return nil, "", err
	}
	list, err := parseEvents(rest)
	if err != nil {
		return nil, "", opErr(op, err)
	}
	next := after
	if len(list) > 0 {
		next = list[len(list)-1].ID
	}
	return list, next, nil
}

// streamID parses id as a stream entry ID, "<ms>-<seq>"; ok is false
// for anything else.
func streamID(id string) (ms, seq uint64, ok bool) {
	a, b, ok := strings.Cut(id, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, ok && err1 == nil && err2 == nil
}

// parseEvents reads events.lua's reply: eight fields an entry.
func parseEvents(rest []interface{}) ([]VoteEvent, error) {
	f, err := redis.Strings(rest, nil)
	if err != nil || len(f)%8 != 0 {
		return nil, fmt.Errorf("events reply of %d fields: %v", len(rest), err)
	}
	list := make([]VoteEvent, 0, len(f)/8)
	vote := func(s string) (VoteType, error) {
		switch s {
		case "1":
			return Upvote, nil
		case "-1":
			return Downvote, nil
		case "0":
			return NoVote, nil
		}
		return 0, fmt.Errorf("event vote %q", s)
	}
	for i := 0; i < len(f); i += 8 {
		e := VoteEvent{ID: f[i], Kind: f[i+1], User: f[i+2], Target: f[i+3], Comment: f[i+4] == "1"}
		var err1, err2 error
		e.From, err1 = vote(f[i+5])
		e.To, err2 = vote(f[i+6])
		ms, err3 := strconv.ParseInt(f[i+7], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("event %s: %v %v %v", f[i], err1, err2, err3)
		}
		e.At = time.UnixMilli(ms).UTC()
		list = append(list, e)
	}
	return list, nil
}
