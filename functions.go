package voting

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// The store's scripts run as one Redis Functions library where the server
// has Functions (Redis 7), and as EVALSHA scripts elsewhere (miniredis,
// Redis 6, a user that may not run FUNCTION LOAD or FCALL).
//
// A script sent with EVALSHA re-runs its whole chunk on every call:
// the helpers of lua/lib/ are created again each time, which costs more
// than most calls' own work. A library is run once, when FUNCTION LOAD
// loads it, and each FCALL calls a function it registered; the helpers
// are created once per server. So both forms are generated here, in Go,
// from the sources as they are (lua/lib/*.lua, read as one text in the
// order of scripts.go libFiles, and lua/<name>.lua):
//
//   - the library is the helpers followed by each script's body wrapped as a
//     function of (KEYS, ARGV), which the body reads as it reads them in
//     a script; read scripts are flagged no-writes, so FCALL_RO runs them
//     and a replica may, and those that only remove or renew a TTL
//     allow-oom, so a full Redis runs them as it runs them as scripts;
//   - each EVALSHA script is its body after only the helpers it uses,
//     found by name in that text (libParts, trimLib), so it re-creates no
//     more than those.
//
// The library is named after its content, voting_<hash>, as are its
// functions, so stores of two versions of this package that keep the same
// key layout (doc.go) can share a server during a rolling deploy, each
// calling its own code.
//
// The library is loaded when a call finds it missing: on a new server,
// after FUNCTION FLUSH, or after a restart without persistence, as an
// EVALSHA that gets NOSCRIPT falls back to EVAL. Functions persist in
// RDB and AOF and replicate to replicas. On a cluster the connection is
// bound to the store's slot (getConn), so the library reaches the node
// that holds the store's keys. A full Redis refuses FUNCTION LOAD: the
// calls then run as scripts, and those that free memory run there
// flagged allow-oom (refusedFull).

// functionLibrary is the store's scripts as one Functions library.
type functionLibrary struct {
	name   string // voting_<hash of the content>
	source string // what FUNCTION LOAD takes
}

// functionName returns the name of script name's function in a library
// called lib.
func functionName(lib, name string) string { return lib + "_" + name }

// newLibrary returns the library of scripts, whose sources are bodies
// (without the helpers of lua/lib/).
func newLibrary(scripts []script) functionLibrary {
	var body strings.Builder
	body.WriteString(libLua)
	for _, sc := range scripts {
		flags := "{}"
		if f := sc.flag(); f != "" {
			flags = "{'" + f + "'}"
		}
		// The marker stands for the library's name, which is the hash of
		// all of this.
		body.WriteString("\nredis.register_function{function_name = '" + functionName("\x00", sc.name) +
			"', flags = " + flags + ", callback = function(KEYS, ARGV)\n")
		body.WriteString(sc.body)
		body.WriteString("\nend}\n")
	}
	sum := sha1.Sum([]byte(body.String()))
	name := "voting_" + hex.EncodeToString(sum[:8])
	return functionLibrary{name: name, source: "#!lua name=" + name + "\n" + strings.ReplaceAll(body.String(), "\x00", name)}
}

// flag returns the flag of sc's function in the library, "" for none:
// no-writes for a script that writes nothing, which FCALL_RO runs and so
// a replica may; allow-oom for one that only removes or renews a TTL
// (scriptSpec.allowOOM), which a full Redis runs as it runs it as a script.
func (sc script) flag() string {
	switch {
	case sc.readOnly:
		return "no-writes"
	case sc.allowOOM:
		return "allow-oom"
	}
	return ""
}

// fenced appends to dst sc's keys, the store's fence key, then sc's
// arguments: what every script is sent with. A script reads only its
// own keys; the fence is for Redis Cluster, which checks the keys a
// script declares before it runs it. The fence is never written, so
// while the store's hash slot moves (MIGRATING on its source node,
// IMPORTING on its target) the script declares a key the node lacks, and
// the node refuses it whole, with TRYAGAIN or with an ASK to the target
// that refuses it so (ErrTryAgain): no script of the store runs on a
// slot that is moving, so none meets a key that has moved away or has
// yet to arrive.
//
// The fence's name is the key of the store's record and the store's
// identity (keys.go fence), which every script checks before its own
// code (lib/base.lua identity).
func (s *Store) fenced(dst []interface{}, sc script, keysAndArgs []interface{}) []interface{} {
	dst = append(dst, keysAndArgs[:sc.keyCount]...)
	dst = append(dst, s.fence)
	return append(dst, keysAndArgs[sc.keyCount:]...)
}

// callArgs returns the arguments of an FCALL of sc with keysAndArgs:
// its function, its number of keys, then keysAndArgs fenced. With room,
// the caller gives keysAndArgs up and it has callRoom elements of
// capacity to spare: the call is laid out in place, without a copy.
func (s *Store) callArgs(sc script, keysAndArgs []interface{}, room bool) []interface{} {
	n, k := len(keysAndArgs), sc.keyCount
	if !room || cap(keysAndArgs)-n < callRoom {
		args := make([]interface{}, 0, callRoom+n)
		args = append(args, *sc.function, sc.declared())
		return s.fenced(args, sc, keysAndArgs)
	}
	args := keysAndArgs[:n+callRoom]
	copy(args[callRoom+k:], keysAndArgs[k:n])
	copy(args[2:], keysAndArgs[:k])
	args[0], args[1], args[2+k] = *sc.function, sc.declared(), s.fence
	return args
}

// exec runs sc on c under ctx: as FCALL of its function, FCALL_RO when
// it writes nothing, where the server has Functions, loading the library
// when it is missing; as a script (runScript) where it has not. replica
// says c is the read pool's. A store with waits runs the scripts that
// write with execWait instead (eval).
//
// args is the call laid out (callArgs), which exec leaves as it is.
func (s *Store) exec(ctx context.Context, c redis.Conn, sc script, replica bool, args []interface{}) (interface{}, error) {
	keysAndArgs := args[2:]
	if s.funcs.off.Load() {
		return runScript(ctx, c, sc, replica, keysAndArgs)
	}
	cmd := "FCALL"
	if sc.readOnly {
		cmd = "FCALL_RO"
	}
	reply, err := do(ctx, c, cmd, args)
	switch {
	case isRefusal(err):
		s.funcs.off.Store(true)
		return runScript(ctx, c, sc, replica, keysAndArgs)
	case !isNoFunction(err):
		return reply, err
	case replica:
		// A replica cannot load the library (READONLY): it gets it from
		// its primary, which loads it at the first call that runs there.
		return runScript(ctx, c, sc, replica, keysAndArgs)
	}
	// The library is missing: load it and call again, in one round trip.
	// Another client may load it first ("already exists"); a load that
	// fails otherwise, or a flush between the two, leaves the call to the
	// script.
	var loadErr error
	if c.Send("FUNCTION", "LOAD", scriptLib.source) != nil {
		// A connection that cannot pipeline (redisc's RetryConn refuses
		// Send, having sent nothing) loads the library in a round trip of
		// its own; a broken one fails the load as it failed Send.
		_, loadErr = do(ctx, c, "FUNCTION", []interface{}{"LOAD", scriptLib.source})
		reply, err = do(ctx, c, cmd, args)
	} else {
		if err := c.Send(cmd, args...); err != nil {
			return nil, contextError(ctx, err)
		}
		if err := c.Flush(); err != nil {
			return nil, contextError(ctx, err)
		}
		_, loadErr = receive(ctx, c)
		reply, err = receive(ctx, c)
	}
	if loadErr != nil && !isRedisError(loadErr) {
		return nil, contextError(ctx, loadErr)
	}
	if isRefusal(loadErr) || isRefusal(err) {
		s.funcs.off.Store(true)
	}
	if isNoFunction(err) || isRefusal(err) {
		return runScript(ctx, c, sc, replica, keysAndArgs)
	}
	return reply, contextError(ctx, err)
}

// runScript runs sc on c as a script, as redigo's Script.Do does: EVALSHA,
// and EVAL after NOSCRIPT. On a connection of the read pool (replica) it
// sends their forms that a replica runs, EVALSHA_RO and EVAL_RO (Redis
// 7.0 or later): a server without them gets errNeedsRedis7. keysAndArgs
// is fenced.
func runScript(ctx context.Context, c redis.Conn, sc script, replica bool, keysAndArgs []interface{}) (interface{}, error) {
	evalsha, eval := "EVALSHA", "EVAL"
	if replica {
		evalsha, eval = "EVALSHA_RO", "EVAL_RO"
	}
	args := make([]interface{}, 0, 2+len(keysAndArgs))
	args = append(args, sc.Hash(), sc.declared())
	args = append(args, keysAndArgs...)
	reply, err := do(ctx, c, evalsha, args)
	if e, ok := err.(redis.Error); ok && strings.HasPrefix(string(e), "NOSCRIPT ") {
		args[0] = sc.source
		reply, err = do(ctx, c, eval, args)
	}
	if e, ok := err.(redis.Error); ok && replica && strings.HasPrefix(string(e), "ERR unknown command") {
		return nil, fmt.Errorf("%w: %v", errNeedsRedis7, e)
	}
	if sc.refusedFull(err) {
		args[0] = sc.allowOOMSource()
		if oomReply, oomErr := do(ctx, c, eval, args); !isCompileError(oomErr) {
			return oomReply, oomErr
		}
	}
	return reply, err
}

// A script sent without flags runs on a full Redis until its first
// command that may grow memory, which Redis refuses (OOM) where the
// script has written nothing yet: Delete's first write is a removal,
// DeleteComment's may be a count's HINCRBY. The script then left nothing,
// and a script flagged allow-oom (Redis 7's "#!lua flags=allow-oom"
// first line, as the library's function is flagged) runs as a whole:
// so a call that frees memory runs on a full Redis whose library is
// missing or of another version, where FUNCTION LOAD is refused. Redis
// before 7 does not compile that line, and keeps the OOM error.

// refusedFull reports whether err is Redis's refusal, on a full Redis,
// of sc sent without flags, where sc is one that runs there
// (scriptSpec.allowOOM).
func (sc script) refusedFull(err error) bool {
	e, ok := err.(redis.Error)
	return ok && sc.allowOOM && strings.HasPrefix(string(e), "OOM ")
}

// allowOOMSource is sc's source flagged allow-oom, for EVAL.
func (sc script) allowOOMSource() string { return "#!lua flags=allow-oom\n" + sc.source }

// isCompileError reports whether err is a server's refusal of a
// script's source: Redis before 7 of a flags line.
func isCompileError(err error) bool {
	e, ok := err.(redis.Error)
	return ok && strings.Contains(string(e), "compiling script")
}

// A store with waits (WithWaitReplicas, WithWaitAOF; durable.go) runs
// the scripts that write as exec does, with its waits pipelined after
// them on the same connection, in the same round trip (execWait).

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
	if sc.refusedFull(err) {
		args[0] = sc.allowOOMSource()
		if oomReply, oomErr := s.roundTrip(ctx, c, false, "EVAL", args); !isCompileError(oomErr) {
			return oomReply, oomErr
		}
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

// isNoFunction reports whether err says the function called is not on
// the server.
func isNoFunction(err error) bool {
	e, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(e), "ERR Function not found")
}

// isRefusal reports whether err says the server will not run Functions
// for this store: it has no FCALL or FUNCTION (miniredis, Redis before
// 7), or the user may not run them (ACL).
func isRefusal(err error) bool {
	e, ok := err.(redis.Error)
	if !ok {
		return false
	}
	msg := strings.ToLower(string(e))
	switch {
	case strings.HasPrefix(msg, "err unknown command"), strings.HasPrefix(msg, "err unknown subcommand"):
		return true
	case strings.HasPrefix(msg, "noperm"):
		return strings.Contains(msg, "'fcall") || strings.Contains(msg, "'function")
	}
	return false
}

// scriptLib is the library of the scripts of registry.
var scriptLib functionLibrary

func init() {
	scriptLib = newLibrary(registry)
	for _, sc := range registry {
		*sc.function = functionName(scriptLib.name, sc.name)
	}
}

// errNeedsRedis7 is the error of a read pool whose server has no
// EVALSHA_RO: a server before Redis 7.0.
var errNeedsRedis7 = errors.New("read pool: EVALSHA_RO and EVAL_RO need Redis 7.0 or later")
