package voting

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

// The path every call of the store takes, below its operations: a
// public method runs through the store's hooks where it has some
// (observe, below; the types are hook.go's), checks its input
// (validate.go) and lays out its script's arguments (its builder,
// beside it; keys.go), then calls eval, call, read or readRows, which run the
// script on one pooled connection (conn.go), as a function of the
// store's library or as a script (functions.go), with the store's waits
// after it where it has them (functions.go execWait, durable.go), and
// decode its reply (reply.go's contract, its parser beside it) into a result or the operation's error
// (errors.go). Nothing here calls back up into the operations but
// observe, which runs the method's body it is given. VoteBatch alone
// pipelines its scripts on one connection of its own (batch.go).

// eval runs one script on one pooled connection, bound to the store's
// slot: the one way the store talks to Redis, but for VoteBatch, which
// pipelines several scripts on one connection. Calls whose work grows
// with the data run eval once a step. A script that writes nothing runs on
// the read pool where the store has one (WithReadPool). With the store's
// waits (WithWaitReplicas, WithWaitAOF) a script that writes runs with
// its waits after it (execWait) and may return its reply with a
// *waitError, which its caller takes out (unreplicated) before it reads
// the reply. A script that runs twice without doing twice is sent again
// on another connection while the one it had was dropped (conn.go
// dropped); one that must not (script.once) is sent on a connection that
// has just answered (liveConn) and returns an error wrapping
// ErrUnknownOutcome where it may have run.
func (s *Store) eval(ctx context.Context, sc script, keysAndArgs []interface{}) (interface{}, error) {
	return s.evalRoom(ctx, sc, keysAndArgs, false)
}

// evalRoom is eval of arguments that may have room for the call
// (withRoom): with room, the caller gives keysAndArgs up.
func (s *Store) evalRoom(ctx context.Context, sc script, keysAndArgs []interface{}, room bool) (interface{}, error) {
	pool, replica := s.pool, false
	if sc.readOnly && s.readPool != nil {
		pool, replica = s.readPool, true
	}
	wait := len(s.waits) > 0 && sc.wait
	var args []interface{}
	if !wait {
		args = s.callArgs(sc, keysAndArgs, room) // once, for every try
	}
	if sc.once {
		c, err := s.liveConn(ctx, pool)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		reply, err := s.run(ctx, c, sc, replica, wait, keysAndArgs, args)
		return reply, unknownOutcome(err)
	}
	last := false
	for tries := 1; ; tries++ {
		c, err := s.conn(ctx, pool)
		if err != nil {
			return nil, err
		}
		reply, err := s.run(ctx, c, sc, replica, wait, keysAndArgs, args)
		c.Close()
		if !dropped(ctx, err) || last {
			return reply, err
		}
		last = !idleLeft(pool, tries)
	}
}

// liveConn takes a connection from pool, as getConn does, that has just
// answered a PING: one the server had closed fails it, having run
// nothing, and liveConn takes another (idleLeft). It is the connection of
// the calls that must not run twice (script.once), at the cost of the
// PING's round trip.
func (s *Store) liveConn(ctx context.Context, pool Pool) (redis.Conn, error) {
	last := false
	for tries := 1; ; tries++ {
		c, err := s.conn(ctx, pool)
		if err != nil {
			return nil, err
		}
		// An error reply (an ACL without PING, LOADING) is an answer too:
		// the call meets what the server has to say.
		if _, err = do(ctx, c, "PING", nil); err == nil || isRedisError(err) {
			return c, nil
		}
		c.Close()
		if !dropped(ctx, err) || last {
			return nil, err
		}
		last = !idleLeft(pool, tries)
	}
}

// run runs sc on c: with the store's waits after it (execWait, of
// keysAndArgs), or without (exec, of args, the call laid out).
func (s *Store) run(ctx context.Context, c redis.Conn, sc script, replica, wait bool, keysAndArgs, args []interface{}) (interface{}, error) {
	if wait {
		return s.execWait(ctx, c, sc, keysAndArgs)
	}
	return s.exec(ctx, c, sc, replica, args)
}

// call runs a script about the article id ("" for none) and returns the
// rest of its reply; a status other than statusOK is op's error
// (statusErr). A script that wrote and whose wait fell short returns
// the rest with an error wrapping ErrNotReplicated.
func (s *Store) call(ctx context.Context, op string, sc script, id string, args []interface{}) ([]interface{}, error) {
	reply, err := s.eval(ctx, sc, args)
	return s.rest(op, id, reply, err)
}

// rest is call's reading of a script's reply.
func (s *Store) rest(op, id string, reply interface{}, err error) ([]interface{}, error) {
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return nil, err
	}
	if status != statusOK {
		return nil, statusErr(op, status, id)
	}
	return rest, replicationErr(op, late)
}

// decodeWrite decodes the reply of a script that may write, and its
// error, under op: the status and the rest of the reply (decode), and
// apart, as late, a wait for the replicas that fell short
// (unreplicated), which the caller returns (replicationErr) with what
// the script wrote.
func decodeWrite(op string, reply interface{}, err error) (status int64, rest []interface{}, late, _ error) {
	late = unreplicated(&err)
	status, rest, err = decode(reply, err)
	if err != nil {
		return 0, nil, nil, opErr(op, err)
	}
	return status, rest, late, nil
}

// evalScan runs a script whose reply is {OK, values...} and scans the
// values into dst (scan): a step of a call whose work grows with the
// data, or a count. It returns op's error; or, where the script wrote and
// its wait fell short, the wait's error as late, which the caller
// returns (replicationErr) once it stops.
func (s *Store) evalScan(ctx context.Context, op string, sc script, args []interface{}, dst ...interface{}) (late, err error) {
	reply, err := s.eval(ctx, sc, args)
	late = unreplicated(&err)
	status, rest, err := decode(reply, err)
	if err == nil {
		err = scan(status, rest, dst...)
	}
	if err != nil {
		return nil, opErr(op, err)
	}
	return late, nil
}

// readRows runs a read script whose reply is {OK, rows...}.
func (s *Store) readRows(ctx context.Context, op string, sc script, args []interface{}) ([]Article, error) {
	return s.read(ctx, op, sc, args, false, parseArticles)
}

// readRowsFor runs a read script of article rows for user, whose reply
// then carries user's votes (parseRowsFor); user "" is readRows, with no
// votes.
func (s *Store) readRowsFor(ctx context.Context, op string, sc script, args []interface{}, user string) ([]Article, []VoteType, error) {
	rest, err := s.call(ctx, op, sc, "", args)
	if err != nil {
		return nil, nil, err
	}
	list, votes, err := parseRowsFor(rest, user)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	return list, votes, nil
}

// read runs a read script whose reply is {OK, ...} and returns the rest
// as parse reads it. With room, the caller gives args, laid out withRoom,
// up (evalRoom).
func (s *Store) read(ctx context.Context, op string, sc script, args []interface{}, room bool,
	parse func(rest []interface{}) ([]Article, error)) ([]Article, error) {
	reply, err := s.evalRoom(ctx, sc, args, room)
	rest, err := s.rest(op, "", reply, err)
	if err != nil {
		return nil, err
	}
	list, err := parse(rest)
	if err != nil {
		return nil, opErr(op, err)
	}
	return list, nil
}

// Hooks (WithHook, hook.go): a method of a store with hooks runs its body
// through observe, and each connection it takes counts its round trips
// into the call (counted).

// hooked reports whether the call that has ctx is to run through the
// store's hooks: the store has some, and the call is not already inside
// them, which a method's body is when observe runs it again (with the
// call's state in ctx).
func (s *Store) hooked(ctx context.Context) bool {
	if s.hooks == nil {
		return false
	}
	st, _ := ctx.Value(callKey{}).(*callState)
	return st == nil || st.store != s
}

// callKey is the context key of a call's state, which the context of a
// call running inside the hooks carries.
type callKey struct{}

// callState is the state of one call running inside the store's hooks.
type callState struct {
	store *Store
	call  Call
}

// observe runs a call of the method call.Op, whose body run is, through
// the store's hooks, and returns its results. A method with hooks calls
// it with a run that calls the method again, under the context observe
// gives run, which carries the call's state: the method then runs its
// body (hooked is false), counting its round trips (counted).
func observe[T any](ctx context.Context, s *Store, call Call, run func(ctx context.Context) (T, error)) (T, error) {
	st := &callState{store: s, call: call}
	var result T
	// next(i) runs hook i, whose next is next(i+1); past the last, the
	// call.
	var next func(i int) func(ctx context.Context) error
	next = func(i int) func(ctx context.Context) error {
		if i == len(s.hooks) {
			return func(ctx context.Context) error {
				var err error
				result, err = run(context.WithValue(ctx, callKey{}, st))
				return err
			}
		}
		return func(ctx context.Context) error { return s.hooks[i].Call(ctx, &st.call, next(i+1)) }
	}
	err := next(0)(ctx)
	return result, err
}

// observeErr is observe for a method whose only result is an error.
func observeErr(ctx context.Context, s *Store, call Call, run func(ctx context.Context) error) error {
	_, err := observe(ctx, s, call, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, run(ctx)
	})
	return err
}

// view is the two results of ArticlesFor and the other reads for a
// user (GroupArticlesFor, ThreadFor...), as one result of their hooks.
type view[T any] struct {
	list  []T
	votes []VoteType
}

// observeView is observe for a read for a user, whose results are a
// list and the user's vote on each.
func observeView[T any](ctx context.Context, s *Store, call Call, run func(ctx context.Context) ([]T, []VoteType, error)) ([]T, []VoteType, error) {
	r, err := observe(ctx, s, call, func(ctx context.Context) (view[T], error) {
		list, votes, err := run(ctx)
		return view[T]{list, votes}, err
	})
	return r.list, r.votes, err
}

// cursorPage is the two results of a paged read (VotesBy, Voters...),
// as one result of their hooks.
type cursorPage[T any] struct {
	list []T
	next string
}

// observePage is observe for a paged read, whose results are a list and
// the cursor of the next page.
func observePage[T any](ctx context.Context, s *Store, call Call, run func(ctx context.Context) ([]T, string, error)) ([]T, string, error) {
	r, err := observe(ctx, s, call, func(ctx context.Context) (cursorPage[T], error) {
		list, next, err := run(ctx)
		return cursorPage[T]{list, next}, err
	})
	return r.list, r.next, err
}

// readByID is the body of a batch read by id (ArticlesByID,
// CommentsByID): at most [MaxBatch] ids, of which read, under op, gets
// the canonical ones, in their order; none of them gets an empty list
// without a round trip.
func readByID[T any](ctx context.Context, op string, ids []string, read func(ctx context.Context, op string, ids []string) ([]T, error)) ([]T, error) {
	if err := checkBatch(len(ids), "ids"); err != nil {
		return nil, opErr(op, err)
	}
	valid, _ := canonicalIDs(ids)
	if len(valid) == 0 {
		return []T{}, nil
	}
	return read(ctx, op, valid)
}

// conn takes a connection from pool for the store's slot (getConn),
// counted into the call ctx carries (counted): every connection the
// store uses.
func (s *Store) conn(ctx context.Context, pool Pool) (redis.Conn, error) {
	c, err := getConn(ctx, pool, s.keys.seq)
	if err != nil {
		return nil, err
	}
	return s.counted(ctx, c), nil
}

// counted returns c, counting its round trips into the call ctx
// carries, where the call runs inside the store's hooks; c itself
// otherwise. The store calls it on each connection it takes from a
// pool.
func (s *Store) counted(ctx context.Context, c redis.Conn) redis.Conn {
	if s.hooks == nil {
		return c
	}
	st, _ := ctx.Value(callKey{}).(*callState)
	if st == nil {
		return c
	}
	cc := countConn{Conn: c, trips: &st.call.RoundTrips}
	if withCtx, ok := c.(redis.ConnWithContext); ok {
		return &countConnContext{countConn: cc, withCtx: withCtx}
	}
	return &cc
}

// countConn is a connection that counts its round trips: each Do, and
// each Flush of a pipeline, as the store sends them.
type countConn struct {
	redis.Conn
	trips *int
}

func (c *countConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if cmd != "" { // "" only flushes and reads what is pending
		*c.trips++
	}
	return c.Conn.Do(cmd, args...)
}

func (c *countConn) Flush() error {
	*c.trips++
	return c.Conn.Flush()
}

// countConnContext is a countConn whose connection supports contexts,
// which it keeps supporting, so the store takes the same path through it.
type countConnContext struct {
	countConn
	withCtx redis.ConnWithContext
}

func (c *countConnContext) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	if cmd != "" {
		*c.trips++
	}
	return c.withCtx.DoContext(ctx, cmd, args...)
}

func (c *countConnContext) ReceiveContext(ctx context.Context) (interface{}, error) {
	return c.withCtx.ReceiveContext(ctx)
}
