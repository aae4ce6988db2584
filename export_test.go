package voting

import (
	"testing"

	"github.com/gomodule/redigo/redis"
)

// ForEachPoolBackend runs fn as a subtest on each of forEachBackend's
// backends, with what testkit/storetest needs of one, for
// storetest_test.go (package voting_test: storetest imports this package).
// pool returns a pool whose round trips trips counts (each Do, and each
// Flush of a pipeline); on a cluster, to the node of key's slot, and do
// runs a command on a side connection there; conns counts the
// connections that pool holds, and the idle ones.
func ForEachPoolBackend(t *testing.T, fn func(t *testing.T, name string,
	pool func(t testing.TB, key string) Pool,
	do func(t testing.TB, key, cmd string, args ...interface{}) (interface{}, error),
	trips func() int64,
	conns func(key string) (open, idle int))) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		h := &hooks{}
		poolOf := func(key string) *redis.Pool {
			if b.node != nil {
				return b.node(key)
			}
			return b.pool
		}
		fn(t, b.name,
			func(t testing.TB, key string) Pool { return &hookPool{hooks: h, pool: poolOf(key)} },
			func(t testing.TB, key, cmd string, args ...interface{}) (interface{}, error) {
				c := poolOf(key).Get()
				defer c.Close()
				return c.Do(cmd, args...)
			},
			h.trips.Load,
			func(key string) (int, int) { p := poolOf(key); return p.ActiveCount(), p.IdleCount() })
	})
}

// ErrorConn returns a connection that fails every command with err, for
// the examples' stand-in pools.
func ErrorConn(err error) redis.Conn { return errorConn{err} }
