// Package goredis runs a [voting.Store] on a go-redis client
// (github.com/redis/go-redis/v9), so that a service built on go-redis
// needs no second connection pool for voting, and its go-redis hooks see
// the store's calls.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	store, err := voting.New(goredis.NewPool(rdb), voting.WithKeyPrefix("news"))
//
// Any [redis.UniversalClient] works: *redis.Client, *redis.ClusterClient,
// *redis.Ring, and the failover clients. The store's core stays on
// redigo's interfaces; the pool hands it connections that speak them over
// the client: replies come as redigo's types, Redis errors as
// redigo's [redigo.Error] (so a server that lost its scripts heals itself
// on NOSCRIPT), and a pipeline of Sends goes out as one go-redis pipeline,
// in one round trip.
//
// # Cluster
//
// On a *redis.ClusterClient every script and function (EVAL, EVALSHA,
// EVAL_RO, EVALSHA_RO, FCALL, FCALL_RO) is routed by its first key, and a
// store's keys share one hash slot, so every call of a store reaches the
// node of its slot, and follows it when the slot moves. FUNCTION and SCRIPT
// commands, which have no key, go to the node of the key the store binds
// its connection to ([voting.Binder]), the node of its slot. Nothing needs
// setting up.
//
// # Contexts
//
// A call honours its context: it returns the context's error as soon as
// the context is done, whether or not go-redis has stopped waiting. A call
// so cut short may still run in Redis, as with redigo. go-redis itself
// watches a context's deadline only with the client's
// ContextTimeoutEnabled option; without it, it waits for its ReadTimeout
// in the background, holding one of its connections.
//
// # Retries
//
// go-redis checks an idle connection before it hands it out, and retries
// a command whose connection failed (the client's MaxRetries, 3 by
// default). The store itself sends a call again where its connection
// was closed and the call can run twice, and sends Post and Comment
// after a PING, never twice: they return [voting.ErrUnknownOutcome]
// where they may have run (docs/OPERATIONS.md, "Failures").
// go-redis's retries send any command again, the script of a Post that
// may have run included: a retried Vote or VoteBatch counts once, but a
// retried Post posts a second article unless the store has
// [voting.WithUniqueLinks] and the article a link, and a retried Delete
// may report [voting.ErrNotFound] for the article it deleted. Set
// MaxRetries to -1 to leave retries to the store: a restart still costs
// no call.
//
// # Tracing
//
// Each call of the store is one script, so go-redis hooks see one command
// for it (and a PING before a Post or a Comment): redisotel (github.com/redis/go-redis/extra/redisotel/v9) shows
// one span per call, named after FCALL or FCALL_RO on redis-server 7 (the
// call that finds the store's library missing shows a failed span and a
// pipeline span of FUNCTION LOAD and the call), after EVALSHA on a server
// without Functions (or EVAL after a NOSCRIPT, which shows as a failed
// EVALSHA span and an EVAL span), and a VoteBatch as one pipeline span. The calls that take more than one round trip (see
// [voting.Store]) show one span per step.
package goredis

import (
	"context"
	"errors"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"

	"github.com/votekit/voting"
)

// pool hands out connections over one go-redis client.
type pool struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // rdb, if it is one
	ring    *redis.Ring          // rdb, if it is one
}

var _ voting.ContextPool = (*pool)(nil)

var errNilClient = errors.New("goredis: nil client")

// NewPool returns a pool of connections over client, for [voting.New].
// Its connections are handles, not network connections: they take one of
// client's for each round trip, and closing them closes nothing of
// client's. The pool also has GetContext, so the store gets a connection
// under a call's context. A nil client gives a pool whose connections
// fail with an error.
func NewPool(client redis.UniversalClient) voting.Pool {
	p := &pool{rdb: client}
	p.cluster, _ = client.(*redis.ClusterClient)
	p.ring, _ = client.(*redis.Ring)
	return p
}

// Get returns a connection over the client. Its Err is not nil for a nil
// client.
func (p *pool) Get() redigo.Conn {
	if p.rdb == nil {
		return &conn{p: p, err: errNilClient}
	}
	return &conn{p: p}
}

// GetContext returns a connection over the client, or ctx's error if it
// is done.
func (p *pool) GetContext(ctx context.Context) (redigo.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.rdb == nil {
		return nil, errNilClient
	}
	return &conn{p: p}, nil
}

// processor runs a command: a client, or a node of one.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// client returns what runs rc: the client, or for a command without a key
// on a connection bound to key, the node of key on a cluster or a ring.
func (p *pool) client(ctx context.Context, rc *redis.Cmd, key string) processor {
	if key == "" || (p.cluster == nil && p.ring == nil) || !keyless(rc) {
		return p.rdb
	}
	if node := p.node(ctx, key); node != nil {
		return node
	}
	return p.rdb
}

// pipeline returns a pipeline for cmds: the client's, or, where one of
// them has no key (FUNCTION LOAD before the call it loads the library
// for) on a connection bound to key, that of key's node, where the store
// means them all to run: its keyed commands are all in key's slot.
func (p *pool) pipeline(ctx context.Context, cmds []*redis.Cmd, key string) redis.Pipeliner {
	if key != "" && (p.cluster != nil || p.ring != nil) {
		some := false
		for _, rc := range cmds {
			some = some || keyless(rc)
		}
		if some {
			if node := p.node(ctx, key); node != nil {
				return node.Pipeline()
			}
		}
	}
	return p.rdb.Pipeline()
}

// node returns the client of key's node on a cluster or a ring; nil if it
// cannot tell, when the command goes where the client sends it.
func (p *pool) node(ctx context.Context, key string) *redis.Client {
	var node *redis.Client
	var err error
	if p.cluster != nil {
		node, err = p.cluster.MasterForKey(ctx, key)
	} else {
		node, err = p.ring.GetShardClientForKey(key)
	}
	if err != nil {
		return nil
	}
	return node
}
