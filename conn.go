package voting

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Pool hands out Redis connections. *redis.Pool satisfies it, and so does
// *redisc.Cluster (github.com/mna/redisc), whose connections the store
// binds to its keys (see [Binder]). Where the pool also has GetContext, as
// *redis.Pool does, the store waits for a connection under the call's
// context.
type Pool interface {
	Get() redis.Conn
}

// ContextPool is a Pool that can wait for a connection under a context.
// The store uses GetContext whenever the pool has it.
type ContextPool interface {
	Pool
	GetContext(ctx context.Context) (redis.Conn, error)
}

// Binder is a connection that must be bound to a key before use, as the
// connections of cluster-aware pools (mna/redisc) are: they route a
// command by its first argument, which for EVALSHA is not a key. The store
// binds such a connection to one of its own keys before each call; every
// key of a store is in one hash slot, so that routes every script.
type Binder interface {
	Bind(keys ...string) error
}

var (
	_ ContextPool = (*redis.Pool)(nil)
	_ Pool        = (*redis.Pool)(nil)
)

// getConn takes a connection from the pool, bound to key's slot where the
// connection is a [Binder].
func getConn(ctx context.Context, pool Pool, key string) (redis.Conn, error) {
	// A pool may hand out an idle connection under a done context, and a
	// fast server answer before the context is looked at: a call with a
	// done context is not sent at all.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var c redis.Conn
	if p, ok := pool.(ContextPool); ok {
		var err error
		if c, err = p.GetContext(ctx); err != nil {
			return nil, contextError(ctx, err)
		}
	} else {
		c = pool.Get()
		if err := c.Err(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if b, ok := c.(Binder); ok {
		if err := b.Bind(key); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// do sends one command on c under ctx, which redigo watches only where
// it can be done.
func do(ctx context.Context, c redis.Conn, cmd string, args []interface{}) (interface{}, error) {
	if cc, ok := c.(redis.ConnWithContext); ok && ctx.Done() != nil {
		reply, err := cc.DoContext(ctx, cmd, args...)
		return reply, contextError(ctx, err)
	}
	// A context that can never be done (context.Background) needs no
	// watching, which costs redigo a goroutine per call. A connection
	// without context support still honours a context that is already done.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.Do(cmd, args...)
}

// receive reads one pipelined reply, under ctx where the connection
// supports it.
func receive(ctx context.Context, c redis.Conn) (interface{}, error) {
	if _, ok := c.(redis.ConnWithContext); ok && ctx.Done() != nil {
		return redis.ReceiveContext(c, ctx)
	}
	return c.Receive()
}

// isRedisError reports whether err is an error reply of the server.
func isRedisError(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}

// contextError returns err, from a call that failed once ctx was done or
// past its deadline, as an error that also wraps the context's: redigo may
// report a passed deadline as a read or dial timeout, and the caller must
// be able to tell with errors.Is(err, context.DeadlineExceeded).
func contextError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	cause := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cause == nil && !time.Now().Before(dl) {
		cause = context.DeadlineExceeded // the context's timer has yet to fire
	}
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}
