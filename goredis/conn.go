package goredis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unsafe"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"

	"github.com/votekit/voting"
)

// conn is a redigo connection over a go-redis client. It holds no network
// connection of its own: each Do, and each pipeline of Sends, takes one
// of the client's for the length of its round trip.
type conn struct {
	p      *pool
	key    string       // the key Bind gave, for keyless commands on a cluster or ring
	queued []*redis.Cmd // sent, not yet run
	done   []reply      // run, not yet received
	err    error        // set once the connection is closed or broken
}

// reply is one command's reply, as redigo's Receive returns it.
type reply struct {
	v   interface{}
	err error
}

var (
	_ redigo.Conn            = (*conn)(nil)
	_ redigo.ConnWithContext = (*conn)(nil)
	_ voting.Binder          = (*conn)(nil)
)

var (
	errClosed    = errors.New("goredis: connection closed")
	errNoPending = errors.New("goredis: Receive with no command sent (the adapter has no pub/sub)")
)

// Bind sets the key whose node, on a *redis.ClusterClient or a
// *redis.Ring, runs the connection's commands that have no key (FUNCTION
// and SCRIPT). Commands with keys go to the node of their first key,
// bound or not. The store binds each connection to one of its own keys.
func (c *conn) Bind(keys ...string) error {
	if len(keys) > 0 {
		c.key = keys[0]
	}
	return nil
}

// Err returns the error that made the connection unusable, if any.
func (c *conn) Err() error { return c.err }

// Close runs the commands sent and not yet received, as a redigo pool's
// connection does, and makes the connection unusable.
func (c *conn) Close() error {
	if c.err != nil {
		return nil
	}
	if len(c.queued) > 0 {
		_ = c.exec(context.Background())
	}
	c.err, c.done = errClosed, nil
	return nil
}

// Do runs a command and returns its reply, without a context.
func (c *conn) Do(cmd string, args ...interface{}) (interface{}, error) {
	return c.DoContext(context.Background(), cmd, args...)
}

// DoContext runs a command under ctx and returns its reply. Commands sent
// before it go with it, in one pipeline, and their replies are dropped, as
// redigo does: the reply is the last one, the error the first Redis error.
// An empty cmd runs the commands sent and returns their replies.
func (c *conn) DoContext(ctx context.Context, cmd string, args ...interface{}) (interface{}, error) {
	if c.err != nil {
		return nil, c.err
	}
	if cmd == "" || len(c.queued) > 0 || len(c.done) > 0 {
		return c.doPending(ctx, cmd, args)
	}
	rc, p, key := newCmd(ctx, cmd, args), c.p, c.key
	var err error
	if ctx.Done() == nil { // the hot path: no closure to allocate
		err = p.client(ctx, rc, key).Process(ctx, rc)
	} else {
		err = c.run(ctx, func(ctx context.Context) error {
			return p.client(ctx, rc, key).Process(ctx, rc)
		})
	}
	if err != nil && !isRedisError(err) {
		return nil, err // not a reply: the connection, the context, the client
	}
	return result(rc)
}

// doPending is Do on a connection with commands sent before it.
func (c *conn) doPending(ctx context.Context, cmd string, args []interface{}) (interface{}, error) {
	if cmd != "" {
		c.queued = append(c.queued, newCmd(ctx, cmd, args))
	}
	if err := c.exec(ctx); err != nil {
		return nil, err
	}
	replies := c.done
	c.done = nil
	if cmd == "" {
		list := make([]interface{}, len(replies))
		for i, r := range replies {
			list[i] = r.v
			if r.err != nil {
				list[i] = r.err
			}
		}
		return list, nil
	}
	var first error
	for _, r := range replies {
		if e, ok := r.err.(redigo.Error); ok && first == nil {
			first = e
		} else if r.err != nil && !ok {
			return nil, r.err
		}
	}
	return replies[len(replies)-1].v, first
}

// Send queues a command for the next pipeline.
func (c *conn) Send(cmd string, args ...interface{}) error {
	if c.err != nil {
		return c.err
	}
	c.queued = append(c.queued, newCmd(context.Background(), cmd, args))
	return nil
}

// Flush ends a pipeline. It sends nothing yet: the commands sent go to
// Redis as one go-redis pipeline, in one round trip, at the next Receive
// (under its context), Do or Close.
func (c *conn) Flush() error { return c.err }

// Receive returns the next reply of the commands sent, without a context.
func (c *conn) Receive() (interface{}, error) {
	return c.ReceiveContext(context.Background())
}

// ReceiveContext returns the next reply of the commands sent, running
// them first, as one pipeline under ctx, if they have not run yet.
func (c *conn) ReceiveContext(ctx context.Context) (interface{}, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.done) == 0 && len(c.queued) > 0 {
		if err := c.exec(ctx); err != nil {
			return nil, err
		}
	}
	if len(c.done) == 0 {
		return nil, errNoPending
	}
	r := c.done[0]
	c.done = c.done[1:]
	return r.v, r.err
}

// exec runs the commands queued as one pipeline under ctx and appends
// their replies to done.
func (c *conn) exec(ctx context.Context) error {
	cmds := c.queued
	c.queued = nil
	if err := ctx.Err(); err != nil {
		c.err = err // the commands sent are lost
		return err
	}
	p, key := c.p, c.key
	err := c.run(ctx, func(ctx context.Context) error {
		pipe := p.pipeline(ctx, cmds, key)
		for _, rc := range cmds {
			_ = pipe.Process(ctx, rc)
		}
		_, err := pipe.Exec(ctx)
		return err
	})
	if c.err != nil {
		return err // the context is done, and the pipeline still runs
	}
	// Each command carries its own reply or error: a failed pipeline
	// sets its error on every command.
	for _, rc := range cmds {
		v, err := result(rc)
		c.done = append(c.done, reply{v, err})
	}
	return nil
}

// run runs f, under ctx. A context that can be done is watched: once it
// is, run returns its error at once, whether or not go-redis, which
// watches only deadlines and only with ContextTimeoutEnabled, has given
// up; the command may still run, as with redigo, and the connection is
// left broken.
func (c *conn) run(ctx context.Context, f func(ctx context.Context) error) error {
	if ctx.Done() == nil {
		return f(ctx)
	}
	if err := ctx.Err(); err != nil {
		c.err = err // what exec took from queued is lost
		return err
	}
	ch := make(chan error, 1)
	go func() { ch <- f(ctx) }()
	select {
	case err := <-ch:
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) && !isRedisError(err) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return err
	case <-ctx.Done():
		c.err = ctx.Err() // f still owns the commands
		return ctx.Err()
	}
}

// newCmd makes a go-redis command of a redigo one. Scripts and functions
// (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, FCALL, FCALL_RO) name their first
// key's position, so that a cluster routes them by it: go-redis would
// route FCALL and FCALL_RO by the function's name.
func newCmd(ctx context.Context, cmd string, args []interface{}) *redis.Cmd {
	all := make([]interface{}, 1+len(args))
	all[0] = cmd
	copy(all[1:], args)
	rc := redis.NewCmd(ctx, all...)
	if len(args) >= 3 && isScript(cmd) && numKeys(args[1]) > 0 {
		rc.SetFirstKeyPos(3)
	}
	return rc
}

// isScript reports whether cmd runs a script or a function, whose second
// argument is its number of keys.
func isScript(cmd string) bool {
	switch len(cmd) {
	case 4, 5, 7, 8, 10:
	default:
		return false
	}
	for _, name := range [...]string{"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"} {
		if strings.EqualFold(cmd, name) {
			return true
		}
	}
	return false
}

// numKeys reads a script's number of keys; -1 if it is not a number.
func numKeys(v interface{}) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case string:
		if k, err := strconv.ParseInt(n, 10, 64); err == nil {
			return k
		}
	case []byte:
		if k, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return k
		}
	}
	return -1
}

// keyless reports whether rc is a command without a key that the store
// means for the node of its own keys: FUNCTION (LOAD, FLUSH, ...) and
// SCRIPT (LOAD, FLUSH, EXISTS).
func keyless(rc *redis.Cmd) bool {
	name := rc.Name()
	return name == "function" || name == "script"
}

// result returns rc's reply converted to the types redigo returns.
func result(rc *redis.Cmd) (interface{}, error) {
	v, err := rc.Result()
	if err != nil {
		if err == redis.Nil {
			return nil, nil
		}
		var re redis.Error
		if errors.As(err, &re) {
			return nil, redigo.Error(re.Error())
		}
		return nil, err
	}
	return convert(v), nil
}

// isRedisError reports whether err is an error reply of Redis's.
func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// convert turns a go-redis reply into the one redigo returns over RESP2,
// which its helpers (redis.Int64, redis.Values, redis.Float64, ...) read:
// strings (simple or bulk) become []byte, arrays are converted element by
// element (an error element becomes a redigo.Error), and the RESP3 types
// that go-redis reads by default become what RESP2 sends in their place:
// a double a bulk string, a boolean 1 or 0, a big number its digits, a map
// an array of keys and values.
func convert(v interface{}) interface{} {
	switch v := v.(type) {
	case string:
		return bytes(v)
	case int64, nil:
		return v
	case []interface{}:
		var strs int
		for _, e := range v {
			if _, ok := e.(string); ok {
				strs++
			}
		}
		// The strings' []byte headers, boxed in one allocation, not one
		// each: a page of articles is some 400 strings.
		boxes := make([][]byte, 0, strs)
		for i, e := range v {
			if s, ok := e.(string); ok {
				boxes = append(boxes, bytes(s))
				v[i] = boxed(&boxes[len(boxes)-1])
			} else {
				v[i] = convert(e)
			}
		}
		return v
	case redis.Error:
		return redigo.Error(v.Error())
	case float64:
		switch {
		case math.IsInf(v, 1):
			return []byte("inf")
		case math.IsInf(v, -1):
			return []byte("-inf")
		}
		return []byte(strconv.FormatFloat(v, 'g', -1, 64))
	case bool:
		if v {
			return int64(1)
		}
		return int64(0)
	case *big.Int:
		return []byte(v.String())
	case map[interface{}]interface{}:
		list := make([]interface{}, 0, 2*len(v))
		for k, e := range v {
			list = append(list, convert(k), convert(e))
		}
		return list
	}
	return v
}

// bytes returns s's bytes without a copy: a page of articles is some 400
// strings. It is sound because go-redis read s into memory of its own for
// this reply only, and the command that held it is dropped once
// converted: nothing else reads s, so a caller that writes to the slice
// changes no string anyone sees.
func bytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// eface is the layout of an interface{} value: its type, and a pointer to
// its value, which for a slice the runtime never changes once boxed.
type eface struct {
	typ, data unsafe.Pointer
}

// bytesType is the type word of a []byte in an interface{}.
var bytesType = func() unsafe.Pointer {
	var v interface{} = []byte(nil)
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// boxed returns *b as an interface{} that points at b itself, as the
// runtime's conversion points at a copy of its own: b must not change
// afterwards.
func boxed(b *[]byte) interface{} {
	var v interface{}
	(*eface)(unsafe.Pointer(&v)).typ = bytesType
	(*eface)(unsafe.Pointer(&v)).data = unsafe.Pointer(b)
	return v
}
