package voting

import "context"

// The path every call of the store takes, below its operations: a
// public method checks its input (validate.go) and lays out its script's
// arguments (scripts.go, keys.go), then calls eval, call or readRows,
// which run the script on one pooled connection (conn.go), as a function
// of the store's library or as a script (functions.go), with the store's
// waits after it where it has them (durable.go), and decode its reply
// (reply.go) into a result or the operation's error (errors.go). Nothing
// here calls back up into the operations. VoteBatch alone pipelines its
// scripts on one connection of its own (batch.go).

// eval runs one script on one pooled connection, bound to the store's
// slot: the one way the store talks to Redis, but for VoteBatch, which
// pipelines several scripts on one connection. Calls whose work grows
// with the data run eval once a step. A script that writes nothing runs on
// the read pool where the store has one (WithReadPool). With the store's
// waits (WithWaitReplicas, WithWaitAOF) a script that writes runs with
// its waits after it (execWait) and may return its reply with a
// *waitError, which its caller takes out (unreplicated) before it reads
// the reply.
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
	c, err := getConn(ctx, pool, s.keys.seq)
	if err != nil {
		return nil, err
	}
	c = s.counted(ctx, c)
	defer c.Close()
	if len(s.waits) > 0 && waitAfter[sc.name] {
		return s.execWait(ctx, c, sc, keysAndArgs)
	}
	return s.exec(ctx, c, sc, replica, keysAndArgs, room)
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
	late := unreplicated(&err)
	status, rest, err := decode(reply, err)
	if err != nil {
		return nil, opErr(op, err)
	}
	if status != statusOK {
		return nil, statusErr(op, status, id)
	}
	return rest, replicationErr(op, late)
}

// readRows runs a read script whose reply is {OK, rows...}.
func (s *Store) readRows(ctx context.Context, op string, sc script, args []interface{}) ([]Article, error) {
	rest, err := s.call(ctx, op, sc, "", args)
	if err != nil {
		return nil, err
	}
	list, err := parseArticles(rest)
	if err != nil {
		return nil, opErr(op, err)
	}
	return list, nil
}
