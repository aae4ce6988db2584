package voting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
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

// A connection the server has closed (a restart, a failover, CLIENT
// KILL, the server's timeout, a proxy dropping idle connections) stays in
// a pool until a call takes it: the call's request is written, and the
// read finds the connection closed (dropped). A call whose script can run
// twice without doing twice (all but Post's and Comment's: script.once)
// is then sent again on another connection (eval). A call whose script
// must not is sent only on a connection that has just answered a PING
// (liveConn): a dropped connection fails the PING, which repeats safely,
// and a connection dropped after it leaves the call's outcome unknown
// (ErrUnknownOutcome).

// dropped reports whether err, from a connection, says the connection is
// closed: the server or a proxy closed it (EOF, a reset, a broken pipe),
// or it was closed already. A timeout is not: the server may be busy
// with the call. Nor is an error after ctx is done, or a wait's after a
// call that ran (*waitError).
func dropped(ctx context.Context, err error) bool {
	if err == nil || isRedisError(err) || ctx.Err() != nil {
		return false
	}
	if _, ok := err.(*waitError); ok {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// idleLeft reports whether pool may still hold connections closed with
// the tries ones a call has found dropped (a restart closes them all):
// where it holds some idle (IdleCount, as *redis.Pool counts them), the
// next it hands out is one of those; where it holds none, the next is a
// new one, the call's last try. A pool that does not count them is taken
// to hold at most defaultIdle.
func idleLeft(pool Pool, tries int) bool {
	if p, ok := pool.(interface{ IdleCount() int }); ok {
		return p.IdleCount() > 0
	}
	return tries < defaultIdle
}

// defaultIdle is idleLeft's bound on the idle connections of a pool that
// does not count them: the MaxIdle of README's pool.
const defaultIdle = 16

// retryDropped returns what f returns, calling it again while its error
// says the connection it took from pool was dropped, as eval sends a
// script again: f is a call that can run twice without doing twice.
func retryDropped[T any](ctx context.Context, pool Pool, f func() (T, error)) (T, error) {
	last := false
	for tries := 1; ; tries++ {
		v, err := f()
		if !dropped(ctx, err) || last {
			return v, err
		}
		last = !idleLeft(pool, tries)
	}
}

// unknownOutcome returns err, the error of a call that must not run twice
// (script.once) sent on a live connection, wrapped in ErrUnknownOutcome
// where the call may have run: where it is not an error reply of the
// server, which refused or ran the call and said so, nor redisc's
// RetryConn's after refusals alone (spentOnRefusals).
func unknownOutcome(err error) error {
	if err == nil || isRedisError(err) || spentOnRefusals(err) {
		return err
	}
	var w *waitError
	if errors.As(err, &w) {
		return err // the call ran; its wait fell short
	}
	return fmt.Errorf("%w: %w", ErrUnknownOutcome, err)
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
