package voting_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/storetest"
)

// newRedisc returns a redisc cluster over c's masters, closed when t ends.
func newRedisc(t testing.TB, c *redistest.Cluster) *redisc.Cluster {
	t.Helper()
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	rc := &redisc.Cluster{
		StartupNodes: addrs,
		DialOptions:  []redis.DialOption{redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(5 * time.Second)},
		CreatePool: func(addr string, opts ...redis.DialOption) (*redis.Pool, error) {
			return &redis.Pool{MaxIdle: 16, IdleTimeout: time.Minute, DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", addr, opts...)
			}}, nil
		},
	}
	if err := rc.Refresh(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// retryPool hands out redisc connections wrapped by redisc.RetryConn,
// which follows MOVED and ASK and retries TRYAGAIN, still bound by the
// store (voting.Binder): the way to use RetryConn with a Store.
type retryPool struct{ c *redisc.Cluster }

func (p retryPool) Get() redis.Conn {
	c := p.c.Get()
	rc, err := redisc.RetryConn(c, 4, 20*time.Millisecond)
	if err != nil {
		return c // not a *redisc.Conn: cannot happen with Cluster.Get
	}
	return retryConn{Conn: rc, bound: c}
}

type retryConn struct {
	redis.Conn            // the RetryConn
	bound      redis.Conn // the *redisc.Conn it wraps
}

func (c retryConn) Bind(keys ...string) error { return redisc.BindConn(c.bound, keys...) }

// TestReshard moves the slots of stores to other masters of a 3-master
// cluster while calls run, through redisc as it is and through its
// RetryConn: no acknowledged write is lost, no invariant breaks, every
// move completes and every error is ErrTryAgain or the network's
// (testkit/storetest Reshard).
func TestReshard(t *testing.T) {
	t.Parallel() // on a server of its own
	if testing.Short() {
		t.Skip("a cluster of its own: not under -short")
	}
	c := redistest.StartCluster(t, 3)
	rc := newRedisc(t, c)
	t.Run("redisc", func(t *testing.T) {
		storetest.Reshard(t, c, func(testing.TB) voting.Pool { return rc })
	})
	t.Run("redisc-RetryConn", func(t *testing.T) {
		storetest.Reshard(t, c, func(testing.TB) voting.Pool { return retryPool{rc} })
	})
}
