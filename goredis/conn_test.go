package goredis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
)

var ctx = context.Background()

// conn returns a connection of b's pool, bound to key, closed when t ends.
func (b *backend) conn(t testing.TB, key string) redigo.Conn {
	t.Helper()
	c, err := NewPool(b.client).(voting.ContextPool).GetContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.(voting.Binder).Bind(key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestConnReplies reads replies of each kind through redigo's helpers:
// bulk and simple strings, integers, nils, arrays, and the RESP3 types
// go-redis reads (doubles, maps, booleans) as RESP2 sends them.
func TestConnReplies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		c := b.conn(t, "{r}")
		if _, err := c.Do("DEL", "{r}s", "{r}n", "{r}l", "{r}z", "{r}h"); err != nil { // from a run before
			t.Fatal(err)
		}
		if s, err := redigo.String(c.Do("SET", "{r}s", "hello")); err != nil || s != "OK" {
			t.Errorf("SET = %q, %v", s, err)
		}
		if v, err := c.Do("GET", "{r}s"); err != nil || string(v.([]byte)) != "hello" {
			t.Errorf("GET = %#v, %v; want []byte", v, err)
		}
		if v, err := c.Do("GET", "{r}missing"); v != nil || err != nil {
			t.Errorf("GET of a missing key = %#v, %v; want nil, nil", v, err)
		}
		if _, err := redigo.String(c.Do("GET", "{r}missing")); err != redigo.ErrNil {
			t.Errorf("redis.String of a nil = %v, want ErrNil", err)
		}
		if n, err := redigo.Int64(c.Do("INCRBY", "{r}n", 41)); err != nil || n != 41 {
			t.Errorf("INCRBY = %d, %v", n, err)
		}
		if n, err := redigo.Int64(c.Do("GET", "{r}n")); err != nil || n != 41 {
			t.Errorf("redis.Int64 of a bulk string = %d, %v", n, err)
		}
		c.Do("RPUSH", "{r}l", "a", "b")
		if l, err := redigo.Strings(c.Do("LRANGE", "{r}l", 0, -1)); err != nil || strings.Join(l, ",") != "a,b" {
			t.Errorf("LRANGE = %q, %v", l, err)
		}
		c.Do("ZADD", "{r}z", 1.5, "m")
		if f, err := redigo.Float64(c.Do("ZSCORE", "{r}z", "m")); err != nil || f != 1.5 {
			t.Errorf("ZSCORE = %v, %v", f, err)
		}
		c.Do("HSET", "{r}h", "f", "v", "g", "w")
		if m, err := redigo.StringMap(c.Do("HGETALL", "{r}h")); err != nil || m["f"] != "v" || m["g"] != "w" || len(m) != 2 {
			t.Errorf("HGETALL = %v, %v", m, err)
		}
		if ok, err := redigo.Bool(c.Do("EXISTS", "{r}h")); err != nil || !ok {
			t.Errorf("EXISTS = %v, %v", ok, err)
		}
		v, err := redigo.Values(c.Do("EVAL", "return {1, 'two', {3}, redis.error_reply('FOUR four')}", 1, "{r}x"))
		if err != nil || len(v) != 4 {
			t.Fatalf("EVAL of a table = %#v, %v", v, err)
		}
		if v[0] != int64(1) || string(v[1].([]byte)) != "two" || v[2].([]interface{})[0] != int64(3) {
			t.Errorf("EVAL of a table = %#v", v)
		}
		if e, ok := v[3].(redigo.Error); !ok || string(e) != "FOUR four" {
			t.Errorf("an error in a table = %#v, want redis.Error", v[3])
		}
	})
}

// TestConnErrors: a Redis error comes back as redigo's redis.Error, so
// redigo's Script, which the store uses, falls back from NOSCRIPT to EVAL.
func TestConnErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		c := b.conn(t, "{e}")
		c.Do("SET", "{e}s", "x")
		_, err := c.Do("INCR", "{e}s")
		if e, ok := err.(redigo.Error); !ok || !strings.Contains(string(e), "not an integer") {
			t.Errorf("INCR of a string: %#v, want redis.Error", err)
		}
		_, err = c.Do("EVALSHA", strings.Repeat("0", 40), 1, "{e}s")
		if e, ok := err.(redigo.Error); !ok || !strings.HasPrefix(string(e), "NOSCRIPT") {
			t.Errorf("EVALSHA of an unknown script: %#v, want a NOSCRIPT redis.Error", err)
		}
		sc := redigo.NewScript(1, "return redis.call('GET', KEYS[1])")
		if _, err := c.Do("SCRIPT", "FLUSH"); err != nil {
			t.Fatal(err)
		}
		before := b.h.noscripts.Load()
		if s, err := redigo.String(sc.DoContext(ctx, c, "{e}s")); err != nil || s != "x" {
			t.Errorf("Script after SCRIPT FLUSH = %q, %v", s, err)
		}
		if b.h.noscripts.Load() == before {
			t.Error("the script ran without a NOSCRIPT first")
		}
	})
}

// TestConnPipeline: commands sent go as one go-redis pipeline, in one
// round trip, each with its own reply or error; Do after Sends returns the
// last reply and the first error, as redigo's does; Do("") returns every
// reply; Close runs what was sent.
func TestConnPipeline(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		c := b.conn(t, "{p}")
		c.Do("DEL", "{p}n", "{p}s")
		before := b.h.trips.Load()
		for _, args := range [][]interface{}{{1, "{p}n", 2}, {1, "{p}s", "x"}, {1, "{p}n", 3}} {
			script := "return redis.call('INCRBY', KEYS[1], ARGV[1])"
			if args[1] == "{p}s" {
				script = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[1])"
			}
			if err := c.Send("EVAL", append([]interface{}{script}, args...)...); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		if n, err := redigo.Int(c.Receive()); err != nil || n != 2 {
			t.Errorf("first reply = %d, %v", n, err)
		}
		if _, err := c.Receive(); !errors.As(err, new(redigo.Error)) {
			t.Errorf("second reply: %#v, want redis.Error", err)
		}
		if n, err := redigo.Int(redigo.ReceiveContext(c, ctx)); err != nil || n != 5 {
			t.Errorf("third reply = %d, %v", n, err)
		}
		if n := b.h.trips.Load() - before; n != 1 {
			t.Errorf("a pipeline of 3 scripts: %d round trips, want 1", n)
		}
		if _, err := c.Receive(); err != errNoPending {
			t.Errorf("Receive with nothing sent: %v, want %v", err, errNoPending)
		}

		c.Send("INCR", "{p}s")
		c.Send("INCR", "{p}n")
		if n, err := c.Do("INCR", "{p}n"); n != int64(7) || !errors.As(err, new(redigo.Error)) {
			t.Errorf("Do after Sends = %#v, %v; want 7 and the first error", n, err)
		}
		c.Send("INCR", "{p}n")
		c.Send("GET", "{p}missing")
		if v, err := redigo.Values(c.Do("")); err != nil || len(v) != 2 || v[0] != int64(8) || v[1] != nil {
			t.Errorf("Do(\"\") = %#v, %v", v, err)
		}
		c.Send("INCR", "{p}n")
		c.Flush()
		c.Close()
		if n, err := redigo.Int(b.conn(t, "{p}").Do("GET", "{p}n")); err != nil || n != 9 {
			t.Errorf("after Close with a command sent: %d, %v; want it run", n, err)
		}
		if _, err := c.Do("PING"); err != errClosed {
			t.Errorf("Do after Close: %v", err)
		}
	})
}

// TestConnContext: a done context sends nothing; a deadline that passes
// while the server is paused returns at once with
// context.DeadlineExceeded, from Do and from a pipeline's Receive, and
// leaves the connection broken; the pool's next connection works once
// the server does.
func TestConnContext(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		c := b.conn(t, "{c}")
		done, cancel := context.WithCancel(ctx)
		cancel()
		before := b.h.trips.Load()
		if _, err := redigo.DoContext(c, done, "EVAL", "return 1", 1, "{c}"); !errors.Is(err, context.Canceled) {
			t.Errorf("Do with a canceled context: %v", err)
		}
		c.Send("EVAL", "return 1", 1, "{c}")
		if _, err := redigo.ReceiveContext(c, done); !errors.Is(err, context.Canceled) {
			t.Errorf("Receive with a canceled context: %v", err)
		}
		if n := b.h.trips.Load() - before; n != 0 {
			t.Errorf("%d round trips with a canceled context", n)
		}
		if b.mr != nil {
			return // miniredis cannot pause
		}
		const pause, deadline = 500 * time.Millisecond, 100 * time.Millisecond
		if err := b.side("{c}").Do(ctx, "CLIENT", "PAUSE", pause.Milliseconds(), "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		paused := time.Now()
		for _, pipelined := range []bool{false, true} {
			c := b.conn(t, "{c}")
			dl, cancel := context.WithTimeout(ctx, deadline)
			start := time.Now()
			var err error
			if pipelined {
				c.Send("EVAL", "return 1", 1, "{c}")
				c.Flush()
				_, err = redigo.ReceiveContext(c, dl)
			} else {
				_, err = redigo.DoContext(c, dl, "EVAL", "return 1", 1, "{c}")
			}
			cancel()
			if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > deadline+100*time.Millisecond {
				t.Errorf("pipelined %v: %v after %v, want context.DeadlineExceeded after %v", pipelined, err, took, deadline)
			}
			if c.Err() == nil {
				t.Errorf("pipelined %v: the connection is not broken", pipelined)
			}
		}
		time.Sleep(time.Until(paused.Add(pause + 50*time.Millisecond)))
		if n, err := redigo.Int(b.conn(t, "{c}").Do("EVAL", "return 1", 1, "{c}")); err != nil || n != 1 {
			t.Errorf("after the pause: %d, %v", n, err)
		}
	})
}

// lib is a library of functions for the routing test.
const lib = `#!lua name=goredistest
redis.register_function('gt_set', function(keys, args) return redis.call('SET', keys[1], args[1]) end)
redis.register_function{function_name='gt_get', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}
`

// TestConnClusterRouting: on a ClusterClient, FUNCTION LOAD and SCRIPT
// LOAD go to the node of the bound key and to no other; EVAL, EVALSHA,
// EVAL_RO, EVALSHA_RO, FCALL and FCALL_RO go to the node of their first
// key, on each of the three nodes, alone and in pipelines, without a
// redirect (which newClusterBackend counts).
func TestConnClusterRouting(t *testing.T) {
	b := newClusterBackend(t)
	cluster, _ := redistest.SharedCluster(t)
	byNode := map[string]string{} // a key on each node
	for i := 0; len(byNode) < len(cluster.Nodes); i++ {
		key := "{route" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "}"
		n, err := cluster.NodeOfKey(key)
		if err != nil {
			t.Fatal(err)
		}
		if byNode[n.Addr] == "" {
			byNode[n.Addr] = key
		}
	}
	for _, key := range byNode {
		b.side(key).Do(ctx, "FUNCTION", "FLUSH")
	}
	loaded := func() int {
		n := 0
		for _, key := range byNode {
			list, err := b.side(key).Do(ctx, "FUNCTION", "LIST", "LIBRARYNAME", "goredistest").Slice()
			if err != nil {
				t.Fatal(err)
			}
			n += len(list)
		}
		return n
	}
	get := "return redis.call('GET', KEYS[1])"
	sha := redigo.NewScript(1, get).Hash()
	for node, key := range byNode {
		c := b.conn(t, key)
		before := loaded()
		if name, err := redigo.String(c.Do("FUNCTION", "LOAD", "REPLACE", lib)); err != nil || name != "goredistest" {
			t.Fatalf("FUNCTION LOAD on %s = %q, %v", node, name, err)
		}
		if has, err := b.side(key).Do(ctx, "FUNCTION", "LIST", "LIBRARYNAME", "goredistest").Slice(); err != nil || len(has) != 1 || loaded() != before+1 {
			t.Fatalf("FUNCTION LOAD bound to %s did not load there alone: %v, %v", key, has, err)
		}
		b.side(key).Do(ctx, "SCRIPT", "FLUSH")
		if got, err := redigo.String(c.Do("SCRIPT", "LOAD", get)); err != nil || got != sha {
			t.Fatalf("SCRIPT LOAD = %q, %v", got, err)
		}
		if ok, err := b.side(key).Do(ctx, "SCRIPT", "EXISTS", sha).BoolSlice(); err != nil || !ok[0] {
			t.Fatalf("SCRIPT LOAD bound to %s did not load there: %v, %v", key, ok, err)
		}
		cmds := [][]interface{}{
			{"FCALL", "gt_set", 1, key, "v"},
			{"EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", 1, key, "v"},
			{"EVALSHA", sha, 1, key},
			{"FCALL_RO", "gt_get", 1, key},
			{"EVAL_RO", get, 1, key},
			{"EVALSHA_RO", sha, 1, key},
		}
		for _, cmd := range cmds {
			if _, err := redigo.String(c.Do(cmd[0].(string), cmd[1:]...)); err != nil {
				t.Errorf("%s on %s: %v", cmd[0], node, err)
			}
		}
		for _, cmd := range cmds {
			c.Send(cmd[0].(string), cmd[1:]...)
		}
		c.Flush()
		for _, cmd := range cmds {
			if _, err := redigo.String(c.Receive()); err != nil {
				t.Errorf("pipelined %s on %s: %v", cmd[0], node, err)
			}
		}
	}
	for _, key := range byNode {
		b.side(key).Do(ctx, "FUNCTION", "FLUSH")
	}
}
