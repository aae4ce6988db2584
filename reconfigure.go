package voting

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/layout"
)

// A store's identity in Redis: what a store records (Identity, Recorded),
// the check that tells a service at start (CheckIdentity), and the one
// operation that changes it (Reconfigure). The identity's type, its text
// and the refusal of a store of another one are identity.go's.

// Identity returns the store's own identity: what it records in an empty
// store, and what it needs to find recorded to write.
func (s *Store) Identity() Identity {
	return Identity{Layout: s.shared.Layout, Options: append([]string(nil), s.shared.Options...)}
}

// Recorded returns the identity recorded in Redis for the store's
// prefix, read on the primary, and whether there is one: none for an
// empty store (Post records one with its first write), and none for a
// store whose data was written before layouts were recorded (Count tells
// the two apart). Text at the record's key that is not an identity
// (written by hand) gets an error.
func (s *Store) Recorded(ctx context.Context) (Identity, bool, error) {
	if s.hooked(ctx) {
		var found bool
		id, err := observe(ctx, s, Call{Op: "Recorded"}, func(ctx context.Context) (id Identity, err error) {
			id, found, err = s.Recorded(ctx)
			return id, err
		})
		return id, found, err
	}
	const op = "recorded"
	text, err := retryDropped(ctx, s.pool, func() (string, error) {
		c, err := s.conn(ctx, s.pool)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return redis.String(do(ctx, c, "GET", []interface{}{s.keys.record}))
	})
	if errors.Is(err, redis.ErrNil) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, opErr(op, err)
	}
	text = recordIdentity(text)
	id, ok := parseIdentity(text)
	if !ok {
		return Identity{}, false, opErr(op, fmt.Errorf("key %s holds %q, not a store's identity", s.keys.record, text))
	}
	return id, true, nil
}

// CheckIdentity compares the identity recorded for the store's prefix
// ([Store.Recorded]) with the store's own ([Store.Identity]) as a write
// does, reading the record and the id counter's type on the primary in
// one round trip. It returns nil where they are equal, and for an empty
// store (no record, no id), whose first Post records the store's
// identity. Otherwise every write of this store would fail, and it
// returns an error wrapping [ErrIncompatible] that names the difference
// ("karma off here, 1,-1 in the store") and, where only shared options
// differ, how to end it: the votectl command that records this store's
// options, and the flags of the store's options.
//
// New does not talk to Redis, and a store whose options differ from the
// record reads as usual: a service calls CheckIdentity once after New,
// and refuses to start on its error.
func (s *Store) CheckIdentity(ctx context.Context) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "CheckIdentity"}, s.CheckIdentity)
	}
	const op = "check identity"
	c, err := s.conn(ctx, s.pool)
	if err != nil {
		return opErr(op, err)
	}
	defer c.Close()
	var replies []interface{}
	// The rules record only names the numbers in the error: a foreign
	// value there is the scripts' to refuse.
	cmds := [][]interface{}{{"GET", s.keys.record}, {"TYPE", s.keys.seq}, {"GET", s.keys.rules}}
	if err := c.Send("GET", s.keys.record); err != nil {
		// A connection that cannot pipeline (redisc's RetryConn refuses
		// Send, having sent nothing) sends the commands one by one.
		for _, cmd := range cmds {
			r, err := do(ctx, c, cmd[0].(string), cmd[1:])
			if err != nil && !errors.Is(err, redis.ErrNil) && !(cmd[0] == "GET" && cmd[1] == s.keys.rules) {
				return opErr(op, scriptError(err))
			}
			replies = append(replies, r)
		}
	} else {
		for _, cmd := range cmds[1:] {
			if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
				return opErr(op, contextError(ctx, err))
			}
		}
		if err := c.Flush(); err != nil {
			return opErr(op, contextError(ctx, err))
		}
		if replies, err = redis.Values(do(ctx, c, "", nil)); err != nil {
			return opErr(op, scriptError(err))
		}
	}
	if len(replies) != len(cmds) {
		return opErr(op, fmt.Errorf("%d replies for %d commands", len(replies), len(cmds)))
	}
	record, err := redis.Bytes(replies[0], nil)
	if errors.Is(err, redis.ErrNil) {
		record, err = nil, nil
	}
	if err != nil {
		return opErr(op, fmt.Errorf("key %s: %w", s.keys.record, scriptError(err)))
	}
	seqType, err := redis.String(replies[1], nil)
	if err != nil {
		return opErr(op, fmt.Errorf("key %s: %w", s.keys.seq, scriptError(err)))
	}
	here := s.shared.String()
	if record != nil {
		record = []byte(recordIdentity(string(record)))
	}
	if string(record) == here || record == nil && seqType == "none" {
		return nil
	}
	rules, _ := redis.String(replies[2], nil)
	return opErr(op, &identityError{prefix: s.keys.prefix, recorded: string(record), here: here,
		recordedRules: rules, hereRules: s.rules.want.(string)})
}

func (s *Store) reconfigureArgs(phase string) []interface{} {
	k := s.keys
	step := backfillStep
	switch phase {
	case "comments":
		step = moveStep
	case "movelogs":
		step = logMoveStep
	}
	return []interface{}{k.seq, k.orderingKey("time"), k.backfill, phase, k.article, k.link, step,
		k.cseq, k.moving, k.comment, k.body, k.kids, k.rules, s.rules.want}
}

// dropVoteLogs removes the vote logs (WithVoteLog) in steps of
// reconfigure.lua's phase 'logs', a SCAN over their keys, which it
// refuses while the recorded identity keeps the log: a log kept before
// the log was turned off would hold the votes changed since as they
// were (VotesBy would list them, ReverseVotes take back the wrong ones).
// It removes the journals of this layout and any sorted set left of
// layout 6 (layout.UserVotes6), which a move of them cut short by the
// log turned off leaves.
func (s *Store) dropVoteLogs(ctx context.Context, op string) error {
	for _, family := range []string{layout.UserVotes, layout.UserVotes6} {
		cursor := "0"
		pattern := layout.FamilyPattern(s.keys.prefix, family)
		for {
			var next string
			late, err := s.evalScan(ctx, op, reconfigureScript, append(s.reconfigureArgs("logs"), "", cursor, pattern), &next)
			if err != nil {
				return err
			}
			if late != nil {
				return replicationErr(op, late)
			}
			if next == "0" {
				break
			}
			cursor = next
		}
	}
	return nil
}

// moveVoteLogs moves the vote logs of a store of layout 6, sorted sets,
// into the journals of this layout, in steps of reconfigure.lua's phase
// 'movelogs' (logMoveStep entries each), while the record carries the
// mark of the move (logsMovingMark), which the last step takes off.
func (s *Store) moveVoteLogs(ctx context.Context, op string) error {
	k := s.keys
	cursor := "0"
	pattern := layout.FamilyPattern(k.prefix, layout.UserVotes6)
	for {
		var done int64
		late, err := s.evalScan(ctx, op, reconfigureScript, append(s.reconfigureArgs("movelogs"), "", cursor, pattern, k.voted, k.cvoted),
			&cursor, &done)
		if err != nil {
			return err
		}
		if late != nil {
			return replicationErr(op, late)
		}
		if done == 1 {
			return nil
		}
	}
}

// Reconfigure records the store's identity ([Store.Identity]: its
// layout and shared options) as the identity of its prefix in Redis, in
// place of the one recorded, and brings the existing data in line, in
// steps of one short script each (docs/OPERATIONS.md, "Changing shared
// options", says what each option does to existing data). From its first step on, the
// processes with the options recorded before get [ErrIncompatible] on
// every write, and this store's options write: restart them with these
// options (docs/OPERATIONS.md gives the rolling deploy).
//
// The recorded layout must be this package's ([LayoutVersion]), or 3 to
// 6, which it migrates to this one: a store of layout 3 by recording the
// identity (it has no comments, and nothing else moves), one of layout 4
// by moving its comments too, by id, 100 a step (each record and its
// body become one string, and each parent's Best and Top orderings one
// sorted set), one of layout 6 with [WithVoteLog], kept on, by moving
// each user's vote log, a sorted set, into a journal, about 128 entries
// a step (a SCAN of their keys, each log's oldest entries first; each
// logged vote's voter record then carries the offset of its line). From
// the record on, until the last comment moved, calls about comments, and
// Delete and Prune of articles with comments, get an error wrapping
// ErrIncompatible; until the last log moved, [Store.VotesBy] and
// [Store.ReverseVotes] do, and a vote of a user whose log is not moved
// yet is kept in it as layout 6 kept it, for the move to carry; the
// other calls, votes included, work throughout. Any other layout gets an
// error wrapping ErrIncompatible, and nothing changes. A store
// with data and no record (written before layouts were recorded) is
// adopted where its newest article is a record of this layout.
//
// With [WithUniqueLinks] turned on, it indexes the links of the live
// articles, oldest first, 200 a step: where two live articles share a
// link, the oldest keeps it. With [WithVoteLog] turned off, or on again,
// it removes the users' vote logs, those of layout 6 left included, a
// SCAN of about 200 keys a step (on again, before it records the
// option). It can be interrupted and called again: it
// goes on where it stopped. It returns the identity recorded before (a
// zero Identity for none).
func (s *Store) Reconfigure(ctx context.Context) (Identity, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Reconfigure"}, s.Reconfigure)
	}
	const op = "reconfigure"
	var before, backfill string
	var moving, logsFirst, logsMoving int64
	for logs := "keep"; ; logs = "dropped" {
		late, err := s.evalScan(ctx, op, reconfigureScript, append(s.reconfigureArgs("record"), logs),
			&before, &backfill, &moving, &logsFirst, &logsMoving)
		if err != nil {
			return Identity{}, err
		}
		if late != nil {
			return Identity{}, replicationErr(op, late)
		}
		if logsFirst == 0 {
			break
		}
		// The log turned on: the logs kept while it was on before go
		// first, while the recorded identity keeps none and no process
		// writes one; then the identity is recorded.
		if err := s.dropVoteLogs(ctx, op); err != nil {
			return Identity{}, err
		}
	}
	was, _ := parseIdentity(before)
	if !s.voteLog && slices.Contains(was.Options, layout.OptionVoteLog) {
		// Turned off: its logs go, which no process writes now.
		if err := s.dropVoteLogs(ctx, op); err != nil {
			return was, err
		}
	}
	if moving == 1 {
		if err := s.reconfigureSteps(ctx, op, "comments"); err != nil {
			return was, err
		}
	}
	// After the comments: a log's entry of a comment reads its record,
	// which must be of this layout.
	if logsMoving == 1 {
		if err := s.moveVoteLogs(ctx, op); err != nil {
			return was, err
		}
	}
	if backfill != "" {
		return was, s.reconfigureSteps(ctx, op, "links")
	}
	return was, nil
}

// reconfigureSteps runs the steps of one phase of Reconfigure to its end.
func (s *Store) reconfigureSteps(ctx context.Context, op, phase string) error {
	for {
		var done int64
		late, err := s.evalScan(ctx, op, reconfigureScript, s.reconfigureArgs(phase), &done)
		if err != nil {
			return err
		}
		if late != nil {
			return replicationErr(op, late)
		}
		if done == 1 {
			return nil
		}
	}
}
