package voting_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// The examples' helpers, out of their way: each example runs on an
// embedded miniredis, with a fixed clock so its output is stable. A real
// service passes a pool to its Redis and leaves the clock alone.

var posted = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// examplePool returns a fresh miniredis, a pool to it and a function that
// closes both.
func examplePool() (*miniredis.Miniredis, *redis.Pool, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	pool := &redis.Pool{MaxIdle: 4, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	return mr, pool, func() { pool.Close(); mr.Close() }
}

// exampleStore returns a store on a fresh miniredis whose clock reads
// *now (posted if now is nil), and a function that closes both.
func exampleStore(now *time.Time, opts ...voting.Option) (*voting.Store, func()) {
	_, pool, done := examplePool()
	if now == nil {
		now = &posted
	}
	opts = append([]voting.Option{voting.WithClock(func() time.Time { return *now })}, opts...)
	store, err := voting.New(pool, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return store, done
}

// post posts an article of poster's, without a link, for each title, and
// returns them.
func post(store *voting.Store, poster string, titles ...string) []voting.Article {
	var list []voting.Article
	for _, title := range titles {
		a, err := store.Post(context.Background(), poster, title, "")
		if err != nil {
			log.Fatal(err)
		}
		list = append(list, a)
	}
	return list
}

// postEvery posts an article of poster's, without a link, for each
// title, moving the store's clock *now on by gap after each, and
// returns them.
func postEvery(store *voting.Store, now *time.Time, gap time.Duration, poster string, titles ...string) []voting.Article {
	var list []voting.Article
	for _, title := range titles {
		list = append(list, post(store, poster, title)...)
		*now = now.Add(gap)
	}
	return list
}

// vote casts user's vote v on each of ids.
func vote(store *voting.Store, user string, v voting.VoteType, ids ...string) {
	for _, id := range ids {
		if _, err := store.Vote(context.Background(), user, id, v); err != nil {
			log.Fatal(err)
		}
	}
}

// group adds the article id to groups.
func group(store *voting.Store, id string, groups ...string) {
	if err := store.AddToGroups(context.Background(), id, groups...); err != nil {
		log.Fatal(err)
	}
}

// readOnlyPool is the read pool of a store on a Redis Cluster: it makes
// each connection of the cluster read-only before the store binds it, as
// redisc.ReadOnlyConn does.
type readOnlyPool struct{ cluster voting.Pool }

func (p readOnlyPool) Get() redis.Conn {
	c := p.cluster.Get()
	rc, ok := c.(interface{ ReadOnly() error }) // a *redisc.Conn
	if !ok {
		c.Close()
		return voting.ErrorConn(errors.New("redisc: no ReadOnly method"))
	}
	if err := rc.ReadOnly(); err != nil {
		c.Close()
		return voting.ErrorConn(err)
	}
	return c
}

// clusterStandIn stands in for *redisc.Cluster, which is not a
// dependency of this module, in ExampleWithReadPool_cluster: it is never
// run.
type clusterStandIn struct{ StartupNodes []string }

func (c *clusterStandIn) Get() redis.Conn {
	return voting.ErrorConn(errors.New("clusterStandIn: a stand-in for redisc.Cluster"))
}
