package voting

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// VoteBatch applies up to [MaxBatch] ballots in order, in one round trip,
// for consumers of vote queues. Each ballot counts exactly as a Vote would,
// and gets what Vote would return, its error included ([ErrNotFound],
// [ErrVotingClosed], [ErrInvalidVote], [ErrInvalidArgument], and the
// store's rules' [ErrNotAllowed] and [ErrRateLimited]): two ballots of one
// user on one article leave the second in place. The error return is for
// the call as a whole (the pool, the connection, the context, too many
// ballots); a call that fails so may have applied any prefix of the
// ballots, and each is safe to retry.
//
// The ballots go to Redis as a pipeline of scripts of up to 25 ballots
// each (fewer with WithOrders), so no command runs long; each script is
// atomic, the batch as a whole is not. A connection that cannot pipeline
// (redisc's RetryConn) sends the scripts one round trip each.
//
// With [WithWaitReplicas] the batch waits once, after its pipeline, in
// the same round trip; when that wait falls short, VoteBatch returns its
// results and an error wrapping [ErrNotReplicated]: the ballots with a
// nil Err are applied on the primary, and not known to be on the
// replicas.
func (s *Store) VoteBatch(ctx context.Context, ballots []Ballot) ([]BallotResult, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "VoteBatch", Count: len(ballots)}, func(ctx context.Context) ([]BallotResult, error) { return s.VoteBatch(ctx, ballots) })
	}
	const op = "vote batch"
	results, valid, at, err := s.text.sortBallots(ballots)
	if err != nil {
		return nil, opErr(op, err)
	}
	if len(valid) == 0 {
		return results, nil
	}
	replies, err := retryDropped(ctx, s.pool, func() ([]interface{}, error) { return s.pipeline(ctx, valid) })
	late := unreplicated(&err)
	if err != nil {
		return nil, opErr(op, err)
	}
	applied := false
	for j, reply := range replies {
		i := at[j]
		if e, ok := reply.(redis.Error); ok { // this ballot's script error
			results[i].Err = opErr("vote", scriptError(e))
			continue
		}
		status, r, err := parseVote(reply, nil)
		switch {
		case (status == statusRateLimited || status == statusNotAllowed) && err != nil: // this ballot's retry-after, or suspension's
			results[i].Err = opErr("vote", err)
		case err != nil:
			return nil, opErr(op, err)
		case status != statusOK:
			results[i].Err = statusErr("vote", status, ballots[i].ID)
		default:
			results[i].VoteResult = r
			applied = true
		}
	}
	if !applied { // every ballot refused: nothing written to wait for
		late = nil
	}
	return results, replicationErr(op, late)
}

// sortBallots checks a batch's ballots before any is sent: the number of
// them (checkBatch), or else each one as Vote checks it. It returns the
// batch's results, with the error of each ballot refused, and the valid
// ballots with the index in ballots of each (at).
func (r textRules) sortBallots(ballots []Ballot) (results []BallotResult, valid []Ballot, at []int, err error) {
	if err := checkBatch(len(ballots), "ballots"); err != nil {
		return nil, nil, nil, err
	}
	results = make([]BallotResult, len(ballots))
	valid = make([]Ballot, 0, len(ballots))
	for i, b := range ballots {
		if err := r.ballot(b.User, b.Vote); err != nil {
			results[i].Err = opErr("vote", err)
		} else if !canonicalID(b.ID) {
			results[i].Err = notFound("vote", b.ID)
		} else {
			valid = append(valid, b)
			at = append(at, i)
		}
	}
	return results, valid, at, nil
}

// pipeline sends the ballots as vote_batch scripts of batchStep ballots
// on one connection, in one round trip (one a script on a connection
// that cannot pipeline, as redisc's RetryConn), and returns one vote
// reply per ballot. It sends EVAL, not EVALSHA or FCALL: a pipeline cannot fall
// back from NOSCRIPT, or load a missing library, without breaking the
// ballots' order. The script carries only the helpers of lua/lib/ it uses.
// The store's waits follow the scripts, once for the batch; when the
// replies are good and a wait fell short, it returns them with a
// *waitError.
func (s *Store) pipeline(ctx context.Context, ballots []Ballot) ([]interface{}, error) {
	c, err := s.conn(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := s.now()
	now, rules := t.Unix(), s.voteBatchRules(t)
	var scripts [][]interface{} // EVAL's arguments, a script each
	for i, step := 0, s.ballotsPerScript(); i < len(ballots); i += step {
		chunk := ballots[i:min(i+step, len(ballots))]
		head := []interface{}{voteBatchScript.source, voteBatchScript.declared()}
		scripts = append(scripts, s.fenced(head, voteBatchScript, s.voteBatchArgs(chunk, now, rules)))
	}
	pipelined := true
	for i, args := range scripts {
		if err := c.Send("EVAL", args...); err != nil {
			if i > 0 {
				return nil, err
			}
			// A connection that cannot pipeline (redisc's RetryConn
			// refuses Send, having sent nothing) sends the scripts one
			// round trip each; a broken one fails the first.
			pipelined = false
			break
		}
	}
	if pipelined {
		if err := s.sendWaits(c); err != nil {
			return nil, err
		}
		if err := c.Flush(); err != nil {
			return nil, contextError(ctx, err)
		}
	}
	replies := make([]interface{}, 0, len(ballots))
	var first error
	for _, args := range scripts {
		var status int64
		var rest []interface{}
		var err error
		if pipelined {
			status, rest, err = decode(receive(ctx, c))
		} else if first == nil {
			status, rest, err = decode(do(ctx, c, "EVAL", args))
		} else {
			break // the scripts after a failed one are not sent
		}
		if err == nil && status != statusOK {
			err = fmt.Errorf("reply status %d", status)
		}
		if err != nil {
			if first == nil {
				first = contextError(ctx, err)
			}
			continue // read every reply, so the connection goes back clean
		}
		replies = append(replies, rest...)
	}
	var waitErr error
	if pipelined {
		waitErr = s.receiveWaits(ctx, c)
	} else if first == nil {
		waitErr = s.doWaits(ctx, c)
	}
	if first != nil {
		return nil, first
	}
	if len(replies) != len(ballots) {
		return nil, fmt.Errorf("%d replies for %d ballots", len(replies), len(ballots))
	}
	return replies, waitErr
}

// voteBatchArgs lays out ballots, which are valid, for one vote_batch
// script; rules are the vote rules (Store.voteBatchRules). KEYS[1]: the
// score ordering. ARGV[1]: now (Unix seconds); ARGV[2..4]: as vote.lua's
// ARGV[5..7]; ARGV[5]: the upvoted pages' prefix, or ""; ARGV[6]: the
// tail of a vote's line in a vote log (logTail), or ""; ARGV[7..7+n]:
// rules; then id, user and vote for each ballot.
func (s *Store) voteBatchArgs(ballots []Ballot, now int64, rules []interface{}) []interface{} {
	args := make([]interface{}, 0, 4+len(s.votePrefixes)+len(rules)+3*len(ballots))
	args = append(args, s.votePrefixes[0], now)
	args = append(args, s.votePrefixes[1:]...)
	args = append(args, s.upvotedArg, s.logTail(now))
	args = append(args, rules...)
	for _, b := range ballots {
		args = append(args, b.ID, b.User, voteArg(b.Vote))
	}
	return args
}

// voteBatchRules returns vote_batch.lua's rule arguments at the time t:
// how many follow, then the rules as vote.lua takes them.
func (s *Store) voteBatchRules(t time.Time) []interface{} {
	if s.rules.vote == nil {
		return []interface{}{0}
	}
	return s.appendVoteRules([]interface{}{1 + len(s.rules.vote)}, t)
}

// ballotsPerScript is how many ballots one vote_batch script takes. Each
// optional order adds, to a vote on an article in groups, an update of
// every group's cached page in that ordering: 25 votes on articles in
// MaxArticleGroups cached groups cost ~2.6 ms of Redis CPU without
// optional orders, and ~15 ms with all four, 5 such votes ~3 ms.
func (s *Store) ballotsPerScript() int { return batchStep / (1 + len(s.enabled)) }
