package voting

import (
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
// eval tests one length.
//
// The options are options.go's (WithWaitReplicas, WithWaitAOF); their
// values and their checks are here (durabilityConfig), with the waits a
// store sends, how their replies are judged and the error of one that
// fell short; the sending, pipelined after a script or a batch, is
// functions.go's (execWait, sendWaits, receiveWaits).

// durabilityConfig holds WithWaitReplicas's and WithWaitAOF's values.
type durabilityConfig struct {
	waitReplicas, waitAOF bool
	replicas              int
	replicasTimeout       time.Duration
	aofLocal, aofReplicas int
	aofTimeout            time.Duration
}

// validate checks c's values as New does: an error wrapping
// [ErrInvalidArgument] names the first out of its bounds.
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
		return fmt.Errorf("%w: local and replica AOFs to wait for are both 0", ErrInvalidArgument)
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
		timeoutMs := c.replicasTimeout.Milliseconds()
		w = append(w, waitCmd{name: "WAIT", args: []interface{}{c.replicas, timeoutMs},
			replicas: int64(c.replicas), timeout: time.Duration(timeoutMs) * time.Millisecond})
	}
	if c.waitAOF {
		timeoutMs := c.aofTimeout.Milliseconds()
		w = append(w, waitCmd{name: "WAITAOF", args: []interface{}{c.aofLocal, c.aofReplicas, timeoutMs},
			local: int64(c.aofLocal), replicas: int64(c.aofReplicas), timeout: time.Duration(timeoutMs) * time.Millisecond})
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
