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
//	go run ./examples/newsapi [-addr localhost:8080] [-redis ADDR|URL] [-prefix newsapi]
//
// By default it keeps its data in an embedded miniredis, which goes away
// with the process. With -redis (host:port or a redis:// URL) it uses that
// server, under the key prefix given by -prefix.
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
	flag.Parse()
	logger := log.New(os.Stderr, "newsapi: ", 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, logger, *addr, *redisAddr, *prefix, func(url string) {
		logger.Printf("serving on %s", url)
	})
	if err != nil {
		logger.Fatal(err)
	}
}

// serve serves the API on addr until ctx is done, then shuts down
// gracefully. It calls ready with the server's URL once it listens.
func serve(ctx context.Context, logger *log.Logger, addr, redisAddr, prefix string, ready func(url string)) error {
	pool, where, closeRedis, err := dial(ctx, redisAddr)
	if err != nil {
		return err
	}
	defer closeRedis()
	defer pool.Close()
	store, err := voting.New(pool, voting.WithKeyPrefix(prefix))
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
// the embedded server.
func dial(ctx context.Context, addr string) (pool *redis.Pool, where string, stop func(), err error) {
	stop = func() {}
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, "", nil, err
		}
		addr, where, stop = mr.Addr(), "an embedded miniredis", mr.Close
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
