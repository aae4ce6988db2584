package voting

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/layout"
)

// Vote records user's vote v on the article: [Upvote], [Downvote], or
// [CancelVote] to take it back. It replaces the user's previous vote, which
// the result reports; voting the same way again changes nothing, so a
// retried Vote is safe. It returns an error wrapping [ErrInvalidVote] for
// any other v, [NoVote] (the zero value) included, before Redis is touched;
// [ErrInvalidArgument] for a user name Post would refuse, [ErrNotFound] for
// an unknown article,
// and [ErrVotingClosed] once voting has closed: the store's clock passed the
// article's close, or its voter records expired. A voter record holding
// anything but a vote (written by hand) gets an error that wraps none of
// the sentinels, and the vote changes nothing. With [WithKarma] the vote
// moves the poster's karma (and, with [WithVoteCost], the voter's); with
// [WithMinKarma] a voter with too little karma gets [ErrNotAllowed], and
// with [WithVoteLimit] one over the limit gets [ErrRateLimited]
// ([RetryAfter]). A refused vote changes nothing. With
// [WithWaitReplicas], a vote applied but not known to be on the replicas
// returns its VoteResult and an error wrapping [ErrNotReplicated].
func (s *Store) Vote(ctx context.Context, user, id string, v VoteType) (VoteResult, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Vote"}, func(ctx context.Context) (VoteResult, error) { return s.Vote(ctx, user, id, v) })
	}
	const op = "vote"
	if err := s.text.vote(op, user, id, v, notFound); err != nil {
		return VoteResult{}, err
	}
	t := s.now()
	reply, err := s.evalRoom(ctx, voteScript, s.appendVoteRules(s.voteArgs(user, id, v, t.Unix()), t), true)
	return voteReply(op, id, reply, err, notFound)
}

// voteArgs lays out vote.lua's arguments before the vote rules
// (appendVoteRules). KEYS[1]: the score ordering. ARGV[1..4]: id, user,
// the vote (voteArg), now (Unix seconds); ARGV[5..7]: the prefixes of
// articles and voter records, and the rest, newline-separated
// (keys.go votePrefixes); ARGV[8], where the store has a vote log, user
// pages or rules: the vote's line in the voter's vote log (logLine);
// ARGV[9], where it has user pages or rules: the upvoted pages' prefix.
// A store with the log alone sends 8 arguments, which Lua's ARGV holds
// without growing its table.
// It is the hottest path: its key and prefixes were boxed once, in
// votePrefixes.
func (s *Store) voteArgs(user, id string, v VoteType, now int64) []interface{} {
	args := withRoom(7 + len(s.votePrefixes) + len(s.rules.vote) + 1) // and appendVoteRules's
	args = append(args, s.votePrefixes[0], id, user, voteArg(v), now)
	args = append(args, s.votePrefixes[1:]...)
	if s.votesCarryPages() {
		return append(args, s.logLine(false, id, v, now), s.upvotedArg)
	}
	if s.voteLog {
		args = append(args, s.logLine(false, id, v, now))
	}
	return args
}

// logLine is the line of a vote v on the comment (comment true) or
// article id at now (Unix seconds) in its voter's vote log
// (layout.LogEntry), which the vote scripts take rather than build it
// in Lua; "" for a store without the log, or a cancel, which writes no
// line.
func (s *Store) logLine(comment bool, id string, v VoteType, now int64) interface{} {
	if !s.voteLog || v == CancelVote {
		return ""
	}
	return layout.LogEntry{Comment: comment, ID: id, Vote: int(v), At: now}.Line()
}

// logTail is the tail of a vote's line at now (layout.LogTail), which
// vote_batch.lua completes with each ballot's vote and id; "" for a
// store without the log.
func (s *Store) logTail(now int64) interface{} {
	if !s.voteLog {
		return ""
	}
	return layout.LogTail(now)
}

// voteArg is a valid vote as a script's argument, boxed without an
// allocation: a constant's box is static, an int's of -1 is not.
func voteArg(v VoteType) interface{} {
	switch v {
	case Upvote:
		return 1
	case Downvote:
		return -1
	}
	return 0
}

// appendVoteRules appends the vote rules, at the time t, to the
// arguments of vote.lua (ARGV[10..]) and of comment_vote.lua (ARGV[9..]):
// now in ms, then the rules (lib/rules.lua readRules); nothing for a store
// without them.
func (s *Store) appendVoteRules(args []interface{}, t time.Time) []interface{} {
	if s.rules.vote == nil {
		return args
	}
	args = append(args, t.UnixMilli())
	return append(args, s.rules.vote...)
}

// ballot validates a vote and its user, a name the vote writes; ids are
// checked apart, as a malformed one is not found.
func (r textRules) ballot(user string, v VoteType) error {
	switch {
	case v == NoVote:
		return fmt.Errorf("%w: NoVote, the zero VoteType, is no ballot: send Upvote, Downvote, or CancelVote to take a vote back", ErrInvalidVote)
	case !v.IsBallot():
		return fmt.Errorf("%w: %v", ErrInvalidVote, v)
	}
	return r.name("user", user)
}

// vote is the check of Vote and VoteComment, op theirs, before Redis is
// touched: the ballot, then the id, whose malformed form gets
// missing(op, id).
func (r textRules) vote(op, user, id string, v VoteType, missing func(op, id string) error) error {
	if err := r.ballot(user, v); err != nil {
		return opErr(op, err)
	}
	if !canonicalID(id) {
		return missing(op, id)
	}
	return nil
}

// voteReply is the result of Vote and VoteComment, op theirs, from the
// reply of their script (and its error): an id not found gets
// missing(op, id), a vote applied but not known to be on the replicas
// its result and an error wrapping [ErrNotReplicated].
func voteReply(op, id string, reply interface{}, err error, missing func(op, id string) error) (VoteResult, error) {
	late := unreplicated(&err)
	status, r, err := parseVote(reply, err)
	if err != nil {
		return VoteResult{}, opErr(op, err)
	}
	switch status {
	case statusOK:
		return r, replicationErr(op, late)
	case statusNotFound:
		return VoteResult{}, missing(op, id)
	}
	return VoteResult{}, statusErr(op, status, id)
}

// parseVote parses one vote's reply: vote.lua's for a vote done, one
// string '<previous> <score> <up> <down>' (parseVoteDone), or {status};
// vote_batch.lua's for a vote done, {status, previous, score, up, down};
// for statusRateLimited, {status, ms}, whose error (parseRetry) it
// returns. It reads the fields one by one rather than with redis.Scan,
// whose pointer arguments would cost an allocation each on the hottest
// path.
func parseVote(reply interface{}, err error) (status int64, r VoteResult, _ error) {
	if b, ok := reply.([]byte); ok && err == nil {
		r, err := parseVoteDone(b)
		return statusOK, r, err
	}
	status, rest, err := decode(reply, err)
	if err == nil && status == statusRateLimited {
		return status, r, parseRetry(rest)
	}
	if err == nil && status == statusNotAllowed && len(rest) > 0 {
		return status, r, parseRefused(rest)
	}
	if err != nil || status != statusOK {
		return status, r, err
	}
	if len(rest) != 4 {
		return 0, r, fmt.Errorf("vote reply of %d fields, want 5", len(rest)+1)
	}
	prev, err := redis.Int64(rest[0], nil)
	if err == nil {
		r.Score, err = redis.Float64(rest[1], nil)
	}
	if err == nil {
		r.Upvotes, err = redis.Int64(rest[2], nil)
	}
	if err == nil {
		r.Downvotes, err = redis.Int64(rest[3], nil)
	}
	r.Previous, r.Points = VoteType(prev), r.Upvotes-r.Downvotes
	if err == nil && !r.Previous.held() {
		err = fmt.Errorf("vote reply: previous vote %d", prev)
	}
	return statusOK, r, err
}

// parseVoteDone parses vote.lua's reply to a vote done: previous,
// score, up and down, separated by one space, without an allocation.
func parseVoteDone(b []byte) (r VoteResult, _ error) {
	var f [4][]byte
	for i := range f {
		j := bytes.IndexByte(b, ' ')
		if i == len(f)-1 {
			j = len(b)
		}
		if j < 0 {
			return r, fmt.Errorf("vote reply %q", b)
		}
		f[i], b = b[:j], b[min(j+1, len(b)):]
	}
	prev, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err == nil {
		r.Score, err = strconv.ParseFloat(string(f[1]), 64)
	}
	if err == nil {
		r.Upvotes, err = strconv.ParseInt(string(f[2]), 10, 64)
	}
	if err == nil {
		r.Downvotes, err = strconv.ParseInt(string(f[3]), 10, 64)
	}
	r.Previous, r.Points = VoteType(prev), r.Upvotes-r.Downvotes
	if err == nil && !r.Previous.held() {
		err = fmt.Errorf("vote reply: previous vote %d", prev)
	}
	if err != nil {
		return VoteResult{}, fmt.Errorf("vote reply: %w", err)
	}
	return r, nil
}
