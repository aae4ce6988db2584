package voting

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// VoteOf returns user's vote on the article: [NoVote] if the user has not
// voted, has cancelled, or the article's voting closed and its voter
// records expired. An unknown article gets [ErrNotFound]. A voter record
// holding anything but a vote (written by hand) gets an error that wraps
// none of the sentinels, never an invalid VoteType.
func (s *Store) VoteOf(ctx context.Context, user, id string) (VoteType, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "VoteOf"}, func(ctx context.Context) (VoteType, error) { return s.VoteOf(ctx, user, id) })
	}
	const op = "vote of"
	if err := checkName("user", user); err != nil {
		return NoVote, opErr(op, err)
	}
	if !canonicalID(id) {
		return NoVote, notFound(op, id)
	}
	votes, status, err := s.votesOf(ctx, op, user, []string{id}, true)
	if err != nil {
		return NoVote, err
	}
	if status[0] != statusOK {
		return NoVote, statusErr(op, status[0], id)
	}
	return votes[0], nil
}

// VotesOf returns user's vote on each of ids, in one round trip, so a page
// can show its arrows: votes[i] is the vote on ids[i], [NoVote] where there is
// none, no such article exists, or the voter record holds something other
// than a vote (written by hand). At most [MaxBatch] ids. It runs no
// script: it reads the store's record and an HGET an id in one pipeline,
// which costs Redis about 60% of what a script would (votes.go), and it
// refuses a store of another layout as the scripts do. Unlike them it is
// not one atomic read: a vote cast while it runs may show on one article
// and not yet on another.
func (s *Store) VotesOf(ctx context.Context, user string, ids []string) ([]VoteType, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "VotesOf", Count: len(ids)}, func(ctx context.Context) ([]VoteType, error) { return s.VotesOf(ctx, user, ids) })
	}
	return votesByID(ctx, "votes of", user, ids, s.readVotes)
}

// votesByID is the body of VotesOf and CommentVotesOf, op theirs: it
// checks user and ids (at most [MaxBatch]), and read gets user's votes
// on the canonical ids, in their order; the others are NoVote, and
// where there are none read is not called.
func votesByID(ctx context.Context, op, user string, ids []string, read func(ctx context.Context, op, user string, ids []string) ([]VoteType, error)) ([]VoteType, error) {
	if err := checkName("user", user); err != nil {
		return nil, opErr(op, err)
	}
	if err := checkBatch(len(ids), "ids"); err != nil {
		return nil, opErr(op, err)
	}
	if !slices.ContainsFunc(ids, func(id string) bool { return !canonicalID(id) }) && len(ids) > 0 {
		return read(ctx, op, user, ids)
	}
	asked, at := canonicalIDs(ids) // the ids that may exist, and their indexes in ids
	if len(asked) == 0 {
		return make([]VoteType, len(ids)), nil
	}
	got, err := read(ctx, op, user, asked)
	if err != nil {
		return nil, err
	}
	return spreadVotes(len(ids), at, got), nil
}

// spreadVotes returns n votes, got[j] at at[j], NoVote elsewhere.
func spreadVotes(n int, at []int, got []VoteType) []VoteType {
	votes := make([]VoteType, n)
	for j, i := range at {
		votes[i] = got[j]
	}
	return votes
}

// votesOf reads user's votes on ids, and with exists tells the ids of
// no article (statusNotFound) from those whose voting closed.
func (s *Store) votesOf(ctx context.Context, op, user string, ids []string, exists bool) ([]VoteType, []int64, error) {
	reply, err := s.evalRoom(ctx, votesScript, s.votesArgs(user, ids, exists), true)
	return votesReply(op, reply, err, len(ids))
}

// votesArgs lays out votes.lua's arguments. KEYS[1]: the score ordering
// (the store's slot). ARGV[1..3]: the user, the prefixes of articles and
// voter records; ARGV[4]: exists, "1" to tell an article that does not
// exist from one whose voting closed; ARGV[5..]: the ids.
func (s *Store) votesArgs(user string, ids []string, exists bool) []interface{} {
	args := withRoom(5 + len(ids))
	// The score key and the prefixes of articles and voter records, boxed
	// once (votePrefixes).
	args = append(args, s.votePrefixes[0], user, s.votePrefixes[1], s.votePrefixes[2], flagArg(exists))
	return appendStrings(args, ids)
}

// VotesOf reads without a script. A script costs Redis a fixed price on
// every call (its arguments made into Lua tables, the identity check's
// GET through Lua), and each redis.call in it costs about what a plain
// command costs; VotesOf's work is one HGET an id, so as a script
// (votes.lua) it cost Redis 0.63 of the instructions of the page of 25
// it decorates, and as plain commands it costs 0.36 (BENCHMARKS.md,
// "Client allocations"). So it sends a pipeline on one connection, in
// one round trip: the store's record, the type of its id counter, and
// one HGET an id. What the script guarded stays guarded:
//
//   - the store's identity: readVotes refuses what lib/base.lua identity
//     refuses a read (checkRead), from the record and the id counter's
//     type, before it reads a vote;
//   - a moving slot: the pipeline writes nothing, and while the store's
//     slot moves a node refuses each command whose key it lacks (ASK), so
//     the call reads no key that has moved away or has yet to arrive; a
//     refused command fails the call with ErrTryAgain. It needs no fence;
//   - a foreign value at a voter record: HGET's WRONGTYPE fails the call,
//     as it failed the script.
//
// It is not one atomic read: another client's vote may land between two
// of its commands (Redis runs the commands of one read from a connection
// back to back, so that is rare, not excluded). Each vote it returns was
// the user's vote at a moment of the call, which is all a page's arrows
// need. A connection that cannot pipeline (redisc's RetryConn) runs
// votes.lua instead, also in one round trip.

// readVotes returns user's votes on ids, all canonical, at least one:
// NoVote where there is none, no such article exists, or the voter
// record holds something other than a vote. It runs on the read pool
// where the store has one (WithReadPool).
func (s *Store) readVotes(ctx context.Context, op, user string, ids []string) ([]VoteType, error) {
	pool, replica := s.pool, false
	if s.readPool != nil {
		pool, replica = s.readPool, true
	}
	return retryDropped(ctx, pool, func() ([]VoteType, error) { return s.readVotesOn(ctx, pool, replica, op, user, ids) })
}

// readVotesOn is readVotes on a connection of pool (replica: the read
// pool's).
func (s *Store) readVotesOn(ctx context.Context, pool Pool, replica bool, op, user string, ids []string) ([]VoteType, error) {
	c, err := s.conn(ctx, pool)
	if err != nil {
		return nil, opErr(op, err)
	}
	defer c.Close()
	if err := c.Send("GET", s.keys.record); err != nil {
		// A connection that cannot pipeline (redisc's RetryConn refuses
		// Send, having sent nothing) runs the script; a broken one fails
		// it as it failed Send.
		reply, err := s.exec(ctx, c, votesScript, replica, s.callArgs(votesScript, s.votesArgs(user, ids, false), true))
		votes, _, err := votesReply(op, reply, err, len(ids))
		return votes, err
	}
	if err := s.sendVotes(c, user, ids); err != nil {
		return nil, opErr(op, contextError(ctx, err))
	}
	// Flush is the round trip; Do("") then reads every reply.
	if err := c.Flush(); err != nil {
		return nil, opErr(op, contextError(ctx, err))
	}
	replies, err := redis.Values(do(ctx, c, "", nil))
	if err != nil {
		return nil, opErr(op, scriptError(err))
	}
	votes, err := s.parseReadVotes(replies, len(ids))
	if err != nil {
		return nil, opErr(op, err)
	}
	return votes, nil
}

// sendVotes sends, after the record's GET, the type of the id counter
// and user's HGET of each id's voter record. The keys are cut from one
// string, and the arguments laid out in one slice.
func (s *Store) sendVotes(c redis.Conn, user string, ids []string) error {
	if err := c.Send("TYPE", s.keys.seq); err != nil {
		return err
	}
	prefix := s.keys.voted
	n := 0
	for _, id := range ids {
		n += len(prefix) + len(id)
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		b.WriteString(prefix)
		b.WriteString(id)
	}
	keys := b.String()
	args := make([]interface{}, 2*len(ids))
	u := interface{}(user)
	for i, id := range ids {
		k := len(prefix) + len(id)
		args[2*i], args[2*i+1] = keys[:k], u
		keys = keys[k:]
		if err := c.Send("HGET", args[2*i:2*i+2]...); err != nil {
			return err
		}
	}
	return nil
}

// parseReadVotes reads readVotes's replies: the record, the id
// counter's type, then a vote per id. An error reply fails the call, as
// it failed the script: the record's or the counter's first, then the
// identity's check, then the votes'.
func (s *Store) parseReadVotes(replies []interface{}, n int) ([]VoteType, error) {
	if len(replies) != 2+n {
		return nil, fmt.Errorf("%d replies for %d ids", len(replies), n)
	}
	record, err := redis.Bytes(replies[0], nil)
	if err == redis.ErrNil {
		record, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", s.keys.record, scriptError(err))
	}
	seqType, err := redis.String(replies[1], nil)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", s.keys.seq, scriptError(err))
	}
	if err := checkRead(record, seqType, s.identity()); err != nil {
		return nil, err
	}
	votes := make([]VoteType, n)
	for i, r := range replies[2:] {
		switch v := r.(type) {
		case nil:
		case []byte:
			votes[i], _ = storedVote(string(v)) // a shadow vote as its voter sees it
		case redis.Error:
			return nil, scriptError(v)
		default:
			return nil, fmt.Errorf("vote reply %T", r)
		}
	}
	return votes, nil
}

// identity returns the store's identity as it records it: the part of
// its fence after the record's key (keys.go fence).
func (s *Store) identity() string { return s.fence.(string)[len(s.keys.record)+1:] }

// votesReply reads votes.lua's reply about n ids.
func votesReply(op string, reply interface{}, err error, n int) ([]VoteType, []int64, error) {
	status, rest, err := decode(reply, err)
	if err == nil && status != statusOK {
		err = fmt.Errorf("reply status %d", status)
	}
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	votes, each, err := parseVotes(rest, n)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	return votes, each, nil
}
