package goredis_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/votekit/voting"
	"github.com/votekit/voting/goredis"
	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/storetest"
)

// TestReshard moves the slots of stores to other masters of a 3-master
// cluster while calls run through a go-redis ClusterClient, which follows
// MOVED and ASK and retries TRYAGAIN itself: no acknowledged write is
// lost, no invariant breaks, every move completes and every error is
// ErrTryAgain or the network's (testkit/storetest Reshard).
func TestReshard(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster of its own: not under -short")
	}
	c := redistest.StartCluster(t, 3)
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { rdb.Close() })
	storetest.Reshard(t, c, func(testing.TB) voting.Pool { return goredis.NewPool(rdb) })
}
