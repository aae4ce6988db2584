package voting

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Durability a caller can choose (WithWaitReplicas, WithWaitAOF). A
// store with either sends, after each script that writes, WAIT or
// WAITAOF on the script's own connection, in the same round trip: Redis
// counts a connection's own writes, so the wait must follow them there,
// and the store returns connections to the pool, where a caller's WAIT
// would land on another. A store without them takes none of these paths:
// exec tests one length.

// WithWaitReplicas makes every call that writes wait until n replicas
// have acknowledged its writes, or until timeout: the store sends WAIT n
// timeout on the call's own connection, pipelined after the call's
// script, in the same round trip. A call that returns no error has its
// writes on the primary and on n replicas or more.
//
// A call whose wait falls short (fewer than n replicas acknowledged in
// time, the WAIT failed, or ctx ended while it waited) returns what it
// returns without the option, together with an error wrapping
// [ErrNotReplicated], which says how many acknowledged: Vote its
// VoteResult, Post its Article, Edit the edited article, VoteBatch its
// results, Prune its count. The write is applied on the primary and not
// known to be on n replicas; a failover may lose it. A call that Redis
// refused ([ErrNotFound], [ErrVotingClosed], ...) changed nothing and
// returns its error alone.
//
// Post, Vote, Edit, Delete, AddToGroups and RemoveFromGroups wait after
// their script; VoteBatch once, after its whole pipeline; Prune and Drop
// after each step, and stop at the first step not replicated, returning
// ErrNotReplicated (run them again to go on). Reads send no WAIT, nor do
// GroupArticles, Submitted and Upvoted, whose only writes are the
// group caches and the dropping of gone articles from users' pages: a
// failover that loses those costs a rebuild, never a wrong page.
//
// A call that changes nothing, such as a repeated vote, waits only for
// its connection's earlier writes (Redis keeps, per connection, the
// offset of its last write): the state it reports may rest on another
// call's write that the replicas lack. A retry of a call that got
// ErrNotReplicated so does not confirm it.
//
// The timeout is counted in whole milliseconds. n below 1 and timeouts
// under one millisecond (to WAIT, 0 is forever) are rejected. A context
// deadline still bounds the call; a pool's read timeout under timeout
// cuts the wait short with ErrNotReplicated. The WAIT goes in the
// script's round trip where the connection pipelines (Send, Flush,
// Receive), as redigo's, redisc's and the goredis adapter's do; on one
// that does not, such as redisc's RetryConn, in a round trip of its own
// on the same connection. Default off: no WAIT. See the package
// documentation, "Durability", for what this promises on a failover.
func WithWaitReplicas(n int, timeout time.Duration) Option {
	return func(c *config) {
		d := &c.durability
		d.replicas, d.replicasTimeout, d.waitReplicas = n, timeout, true
	}
}

// WithWaitAOF makes every call that writes wait until its writes are
// fsynced to the append-only file of the primary (local 1) and of
// replicas replicas, or until timeout: the store sends WAITAOF local
// replicas timeout (Redis 7.2 or later) after each script that writes,
// on the same calls, in the same round trip and with the same outcome as
// [WithWaitReplicas]: a call whose wait falls short returns its result
// and an error wrapping [ErrNotReplicated]. So does every write on a
// server without WAITAOF (before 7.2), and with local 1 on a primary
// without appendonly yes. With both options a call sends WAIT, then
// WAITAOF.
//
// local must be 0 or 1, replicas 0 or more, not both 0, and the timeout
// at least one millisecond (whole milliseconds); other values are
// rejected. Default off: no WAITAOF.
func WithWaitAOF(local, replicas int, timeout time.Duration) Option {
	return func(c *config) {
		d := &c.durability
		d.aofLocal, d.aofReplicas, d.aofTimeout, d.waitAOF = local, replicas, timeout, true
	}
}

// durabilityConfig holds WithWaitReplicas's and WithWaitAOF's values.
type durabilityConfig struct {
	waitReplicas, waitAOF bool
	replicas              int
	replicasTimeout       time.Duration
	aofLocal, aofReplicas int
	aofTimeout            time.Duration
}

func (c *durabilityConfig) validate() error {
	switch {
	case c.waitReplicas && c.replicas < 1:
		return fmt.Errorf("%w: replicas to wait for %d is below 1", ErrInvalidArgument, c.replicas)
	case c.waitReplicas && c.replicasTimeout < time.Millisecond:
		return fmt.Errorf("%w: replica wait timeout %v is under one millisecond", ErrInvalidArgument, c.replicasTimeout)
	case c.waitAOF && (c.aofLocal < 0 || c.aofLocal > 1):
		return fmt.Errorf("%w: local AOF to wait for %d is not 0 or 1", ErrInvalidArgument, c.aofLocal)
	case c.waitAOF && c.aofReplicas < 0:
		return fmt.Errorf("%w: replica AOFs to wait for %d is below 0", ErrInvalidArgument, c.aofReplicas)
	case c.waitAOF && c.aofLocal == 0 && c.aofReplicas == 0:
		return fmt.Errorf("%w: WithWaitAOF waits for no AOF", ErrInvalidArgument)
	case c.waitAOF && c.aofTimeout < time.Millisecond:
		return fmt.Errorf("%w: AOF wait timeout %v is under one millisecond", ErrInvalidArgument, c.aofTimeout)
	}
	return nil
}

// commands returns the waits the store sends after each script that
// writes, in order; nil for none.
func (c *durabilityConfig) commands() []waitCmd {
	var w []waitCmd
	if c.waitReplicas {
		ms := c.replicasTimeout.Milliseconds()
		w = append(w, waitCmd{name: "WAIT", args: []interface{}{c.replicas, ms},
			replicas: int64(c.replicas), timeout: time.Duration(ms) * time.Millisecond})
	}
	if c.waitAOF {
		ms := c.aofTimeout.Milliseconds()
		w = append(w, waitCmd{name: "WAITAOF", args: []interface{}{c.aofLocal, c.aofReplicas, ms},
			local: int64(c.aofLocal), replicas: int64(c.aofReplicas), timeout: time.Duration(ms) * time.Millisecond})
	}
	return w
}

// waitCmd is one command a store sends after each script that writes.
type waitCmd struct {
	name            string        // WAIT or WAITAOF
	args            []interface{} // boxed once
	local, replicas int64         // what it asks for (local: WAITAOF only)
	timeout         time.Duration
}

// check returns nil if reply, err (the command's reply) meets w, or the
// *waitError that says how it fell short.
func (w *waitCmd) check(reply interface{}, err error) error {
	if err != nil {
		return &waitError{w: w, err: err}
	}
	if w.name == "WAIT" {
		n, err := redis.Int64(reply, nil)
		switch {
		case err != nil:
			return &waitError{w: w, err: fmt.Errorf("reply: %w", err)}
		case n < w.replicas:
			return &waitError{w: w, gotReplicas: n}
		}
		return nil
	}
	got, err := redis.Int64s(reply, nil)
	switch {
	case err == nil && len(got) != 2:
		err = fmt.Errorf("reply of %d integers, want 2", len(got))
	case err == nil && (got[0] < w.local || got[1] < w.replicas):
		return &waitError{w: w, gotLocal: got[0], gotReplicas: got[1]}
	}
	if err != nil {
		return &waitError{w: w, err: fmt.Errorf("reply: %w", err)}
	}
	return nil
}

// waitError is the error of a wait that fell short: it wraps
// ErrNotReplicated and, where the wait failed, its cause.
type waitError struct {
	w                     *waitCmd
	gotLocal, gotReplicas int64 // what acknowledged, where err is nil
	err                   error // the failure of the wait, if it failed
}

func (e *waitError) Error() string {
	var b strings.Builder
	b.WriteString(ErrNotReplicated.Error())
	b.WriteString(": ")
	switch {
	case e.err != nil:
		fmt.Fprintf(&b, "%s: %v", e.w.name, e.err)
	case e.w.name == "WAIT":
		fmt.Fprintf(&b, "%d of %d replicas acknowledged within %v", e.gotReplicas, e.w.replicas, e.w.timeout)
	default:
		fmt.Fprintf(&b, "WAITAOF: %d of %d local and %d of %d replica AOFs fsynced within %v",
			e.gotLocal, e.w.local, e.gotReplicas, e.w.replicas, e.w.timeout)
	}
	return b.String()
}

func (e *waitError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrNotReplicated}
	}
	return []error{ErrNotReplicated, e.err}
}

// unreplicated takes a wait's error out of *err, which it leaves nil,
// and returns it; nil where *err is no wait's. The calls that write read
// their reply past it (eval, pipeline).
func unreplicated(err *error) error {
	if e, ok := (*err).(*waitError); ok {
		*err = nil
		return e
	}
	return nil
}

// replicationErr returns err, a wait's error or nil, as op's error.
func replicationErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return opErr(op, err)
}

// waitAfter names the scripts a store with waits waits after: all but
// those that write nothing, and those whose only writes are caches that
// a failover may lose at no cost (a group's cached pages and their TTL,
// and the dropping of gone articles and comments from users' pages).
var waitAfter = map[string]bool{}

func init() {
	for _, sc := range registry {
		switch sc.name {
		case "group_page", "group_renew", "user_page", "user_comments":
		default:
			waitAfter[sc.name] = !readOnlyScripts[sc.name]
		}
	}
}

// execWait runs sc on c as exec does, with the store's waits pipelined
// after it in the same round trip: FCALL, FUNCTION LOAD and FCALL where
// the library is missing, EVALSHA, or EVAL after NOSCRIPT. A script
// refused before it ran (no function, NOSCRIPT, Functions refused) is
// sent again the next way, with the waits again. It returns the
// script's reply and, when the script succeeded and a wait fell short, a
// *waitError.
func (s *Store) execWait(ctx context.Context, c redis.Conn, sc script, keysAndArgs []interface{}) (interface{}, error) {
	args := s.callArgs(sc, keysAndArgs, false)
	if !s.funcs.off.Load() {
		reply, err := s.roundTrip(ctx, c, false, "FCALL", args)
		if isNoFunction(err) {
			reply, err = s.roundTrip(ctx, c, true, "FCALL", args)
		}
		switch {
		case isRefusal(err):
			s.funcs.off.Store(true)
		case !isNoFunction(err):
			return reply, err
		}
	}
	args[0] = sc.Hash()
	reply, err := s.roundTrip(ctx, c, false, "EVALSHA", args)
	if e, ok := err.(redis.Error); ok && strings.HasPrefix(string(e), "NOSCRIPT ") {
		args[0] = sc.source
		reply, err = s.roundTrip(ctx, c, false, "EVAL", args)
	}
	return reply, err
}

// roundTrip sends on c, in one round trip, FUNCTION LOAD of the library
// where load is set, cmd with args, and the store's waits, and reads
// every reply. It returns cmd's reply and error; the load's error where
// it failed other than as a Redis error (turning the store to scripts
// where it was refused); or, where cmd succeeded and a wait fell short,
// cmd's reply and the first such wait's *waitError.
func (s *Store) roundTrip(ctx context.Context, c redis.Conn, load bool, cmd string, args []interface{}) (interface{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var sendErr error
	if load {
		sendErr = c.Send("FUNCTION", "LOAD", scriptLib.source)
	} else {
		sendErr = c.Send(cmd, args...)
	}
	if sendErr != nil {
		// A connection that cannot pipeline (redisc's RetryConn refuses
		// Send, having sent nothing) sends each command in a round trip
		// of its own; a broken one fails the first as it failed Send.
		return s.oneByOne(ctx, c, load, cmd, args)
	}
	if load {
		if err := c.Send(cmd, args...); err != nil {
			return nil, contextError(ctx, err)
		}
	}
	if err := s.sendWaits(c); err != nil {
		return nil, contextError(ctx, err)
	}
	if err := c.Flush(); err != nil {
		return nil, contextError(ctx, err)
	}
	var loadErr error
	if load {
		_, loadErr = receive(ctx, c)
	}
	reply, err := receive(ctx, c)
	waitErr := s.receiveWaits(ctx, c)
	switch {
	case loadErr != nil && !isRedisError(loadErr):
		return nil, contextError(ctx, loadErr)
	case isRefusal(loadErr):
		s.funcs.off.Store(true)
	}
	if err != nil {
		return nil, contextError(ctx, err)
	}
	return reply, waitErr
}

// oneByOne is roundTrip on a connection that cannot pipeline: each
// command a round trip.
func (s *Store) oneByOne(ctx context.Context, c redis.Conn, load bool, cmd string, args []interface{}) (interface{}, error) {
	if load {
		_, loadErr := do(ctx, c, "FUNCTION", []interface{}{"LOAD", scriptLib.source})
		switch {
		case loadErr != nil && !isRedisError(loadErr):
			return nil, loadErr
		case isRefusal(loadErr):
			s.funcs.off.Store(true)
		}
	}
	reply, err := do(ctx, c, cmd, args)
	if err != nil {
		return nil, err
	}
	return reply, s.doWaits(ctx, c)
}

// receiveWaits reads the replies of the store's waits, sent after a
// script or a pipeline on c, and returns the first that fell short as a
// *waitError, or nil.
func (s *Store) receiveWaits(ctx context.Context, c redis.Conn) error {
	var first error
	for i := range s.waits {
		reply, err := receive(ctx, c)
		if err := s.waits[i].check(reply, contextError(ctx, err)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// doWaits sends the store's waits on c one round trip each, on a
// connection that cannot pipeline (redisc's RetryConn), and checks them
// as receiveWaits does.
func (s *Store) doWaits(ctx context.Context, c redis.Conn) error {
	var first error
	for i := range s.waits {
		reply, err := do(ctx, c, s.waits[i].name, s.waits[i].args)
		if err := s.waits[i].check(reply, err); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sendWaits sends the store's waits on c, after a pipeline.
func (s *Store) sendWaits(c redis.Conn) error {
	for i := range s.waits {
		if err := c.Send(s.waits[i].name, s.waits[i].args...); err != nil {
			return err
		}
	}
	return nil
}
