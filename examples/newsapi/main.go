// Command newsapi is a small HTTP JSON service on the voting library,
// with net/http alone (Go 1.22 method and path patterns).
//
//	POST   /articles                       {"poster":"alice","title":"...","link":"..."} -> 201
//	GET    /articles?order=score&page=1    order: score, time, score-asc, time-asc
//	GET    /articles/{id}                  the article and its groups
//	PUT    /articles/{id}/vote             {"user":"bob","vote":"up"}; "down", or "none" to cancel
//	PUT    /articles/{id}/groups/{group}   -> 204
//	DELETE /articles/{id}/groups/{group}   -> 204
//	GET    /groups/{group}?order=score&page=1
//	DELETE /articles/{id}                  -> 204
//
// Errors come as {"error": "..."}: 404 for an unknown article, 409 once
// its voting has closed, 400 for bad input, 413 for a body over 64 KiB,
// 500 (logged, with no details) for a Redis failure.
//
// Usage:
//
//	go run ./examples/newsapi [-addr localhost:8080] [-redis ADDR|URL] [-prefix newsapi] [-window 168h]
//
// By default it keeps its data in an embedded miniredis, which goes away
// with the process. With -redis (host:port or a redis:// URL) it uses that
// server, under the key prefix given by -prefix.
//
// -window is the vote window: how long after posting an article takes
// votes (a Go duration of at least 1s; a week by default). With
// -window 1m, a vote a minute after posting gets the 409.
//
// The embedded miniredis counts its keys' TTLs down only when told to, so
// the service moves its clock forward with the wall clock every second:
// cached group pages and voter records expire as on a real server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

func main() {
	addr := flag.String("addr", "localhost:8080", "serve HTTP on `host:port`")
	redisAddr := flag.String("redis", "", "use the Redis at `addr` (host:port or redis:// URL) instead of an embedded miniredis")
	prefix := flag.String("prefix", "newsapi", "key `prefix` of the store in Redis")
	window := flag.Duration("window", voting.DefaultVoteWindow, "vote window: how long after posting an article takes votes (at least 1s)")
	flag.Parse()
	logger := log.New(os.Stderr, "newsapi: ", 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, logger, *addr, *redisAddr, *prefix, *window, func(url string) {
		logger.Printf("serving on %s", url)
	})
	if err != nil {
		logger.Fatal(err)
	}
}

// serve serves the API on addr until ctx is done, then shuts down
// gracefully. It calls ready with the server's URL once it listens.
// Articles take votes for window after they are posted.
func serve(ctx context.Context, logger *log.Logger, addr, redisAddr, prefix string, window time.Duration, ready func(url string)) error {
	pool, where, closeRedis, err := dial(ctx, redisAddr)
	if err != nil {
		return err
	}
	defer closeRedis()
	defer pool.Close()
	store, err := voting.New(pool, voting.WithKeyPrefix(prefix), voting.WithVoteWindow(window))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           (&api{store: store, log: logger}).routes(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          logger,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	ready(fmt.Sprintf("http://%s (data in %s)", ln.Addr(), where))
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// dial returns a pool on the Redis at addr, or on an embedded miniredis
// if addr is empty, with a description of it and a function that stops
// the embedded server. The embedded server's clock follows the wall
// clock.
func dial(ctx context.Context, addr string) (pool *redis.Pool, where string, stop func(), err error) {
	stop = func() {}
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, "", nil, err
		}
		stopClock := followClock(mr, time.Second, time.Now)
		addr, where = mr.Addr(), "an embedded miniredis"
		stop = func() {
			stopClock()
			mr.Close()
		}
	} else {
		where = "Redis at " + redact(addr)
	}
	pool = &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			if strings.Contains(addr, "://") {
				return redis.DialURLContext(ctx, addr)
			}
			return redis.DialContext(ctx, "tcp", addr)
		},
	}
	conn, err := pool.GetContext(ctx)
	if err == nil {
		_, err = redis.DoContext(conn, ctx, "PING")
		conn.Close()
	}
	if err != nil {
		pool.Close()
		stop()
		return nil, "", nil, fmt.Errorf("%s: %w", where, err)
	}
	return pool, where, stop, nil
}

// redact hides the password of a redis:// URL.
func redact(addr string) string {
	if i, j := strings.Index(addr, "://"), strings.LastIndex(addr, "@"); i >= 0 && j > i {
		return addr[:i+3] + "...@" + addr[j+1:]
	}
	return addr
}

// followClock makes the keys of mr expire in real time. A miniredis
// counts its keys' TTLs down only in FastForward: every interval this
// fast-forwards it by the time passed since the last tick, as read by
// now. The returned function stops it and waits until it has stopped.
func followClock(mr *miniredis.Miniredis, interval time.Duration, now func() time.Time) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		last := now()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if t := now(); t.After(last) {
					mr.FastForward(t.Sub(last))
					last = t
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
