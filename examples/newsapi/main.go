// Command newsapi is a small HTTP JSON service on the voting library,
// on net/http (method and path patterns), with OpenTelemetry metrics.
//
//	POST   /articles                       {"poster":"alice","title":"...","link":"..."} -> 201
//	GET    /articles?order=score&page=1    order: score, time, score-asc, time-asc, top, hot, best, controversial
//	GET    /articles/{id}                  the article and its groups
//	PUT    /articles/{id}/vote             {"user":"bob","vote":"up"}; "down", or "none" to cancel
//	POST   /votes                          [{"user":"bob","id":"1","vote":"up"}, ...] -> a result per ballot
//	PUT    /articles/{id}/groups/{group}   -> 204
//	DELETE /articles/{id}/groups/{group}   -> 204
//	GET    /groups/{group}?order=score&page=1
//	GET    /top?since=24h&page=1           since: a Go duration (90m, 24h) or days (7d); 24h by default
//	DELETE /articles/{id}                  -> 204
//
// A page of /articles or /groups/{group} reads
// {"order": "score-desc", "page": 1, "pages": 4, "total": 87, "articles": [...]}
// (and "group"): total is the number of articles listed, pages the
// number of pages of 25 they fill. A page of /top reads {"since": "24h",
// "page": 1, "articles": [...]}, without totals; it lists the top
// voting.MaxTopSince articles of the period. The store keeps top, hot,
// best, controversial and /top for the articles posted with them
// enabled: the articles an older newsapi wrote under the same -prefix
// list by score and time only.
//
// POST /votes takes up to voting.MaxBatch ballots and applies them in
// order in one round trip. It answers 200 with a result per ballot, in
// order: {"previous": "none", "score": ..., "upvotes": ..., "downvotes":
// ...} as PUT /articles/{id}/vote gives, or {"error": "...", "status":
// 404} with the status and message that route would fail with.
//
// Errors come as {"error": "..."}: 404 for an unknown article, 409 once
// its voting has closed, 400 for bad input, 413 for a body over 64 KiB
// (512 KiB for POST /votes) or more than voting.MaxBatch ballots, 500
// (logged, with no details) for a Redis failure.
//
// Usage:
//
//	(cd examples/newsapi && go run . [-addr localhost:8080] [-redis ADDR|URL] [-prefix newsapi] [-window 168h] [-unique-links])
//
// It is a module of its own, which needs Go 1.26 (votingotel's, as
// OpenTelemetry's), so that the voting module keeps its dependencies.
//
// GET /metrics gives, in Prometheus's text format, the store's metrics
// (votingotel.Metrics: voting_call_duration_seconds and
// voting_call_round_trips_total, by operation) and the duration of the
// requests the service served (http_server_request_duration_seconds, by
// method, route and status code), through OpenTelemetry's Prometheus
// exporter.
//
// By default it keeps its data in an embedded miniredis, which goes away
// with the process. With -redis (host:port or a redis:// URL) it uses that
// server, under the key prefix given by -prefix.
//
// -window is the vote window: how long after posting an article takes
// votes (a Go duration of at least 1s; a week by default). With
// -window 1m, a vote a minute after posting gets the 409.
//
// With -unique-links, posting a link that a live article has already
// posts nothing: POST /articles gets 409 with the error and that article,
// {"error": "...", "article": {...}}, and its Location. Deleting the
// article frees its link.
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
	"github.com/votekit/voting/votingotel"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "localhost:8080", "serve HTTP on `host:port`")
	flag.StringVar(&cfg.redis, "redis", "", "use the Redis at `addr` (host:port or redis:// URL) instead of an embedded miniredis")
	flag.StringVar(&cfg.prefix, "prefix", "newsapi", "key `prefix` of the store in Redis")
	flag.DurationVar(&cfg.window, "window", voting.DefaultVoteWindow, "vote window: how long after posting an article takes votes (at least 1s)")
	flag.BoolVar(&cfg.uniqueLinks, "unique-links", false, "refuse a link a live article has already: POST /articles gets 409 and that article")
	flag.BoolVar(&cfg.userPages, "user-pages", false, "keep each user's submitted and upvoted pages: GET /users/{name} shows their first pages")
	cfg.rules.register(flag.CommandLine)
	flag.Parse()
	logger := log.New(os.Stderr, "newsapi: ", 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := serve(ctx, logger, cfg, func(url string) {
		logger.Printf("serving on %s", url)
	})
	if err != nil {
		logger.Fatal(err)
	}
}

// config is the service's settings, from its flags.
type config struct {
	addr        string        // -addr
	redis       string        // -redis; empty for an embedded miniredis
	prefix      string        // -prefix
	window      time.Duration // -window
	uniqueLinks bool          // -unique-links
	userPages   bool          // -user-pages
	rules       ruleFlags     // -karma, -vote-limit, ... (rules.go)
}

// orders are the orders the service offers besides score and time: all
// of them.
var orders = []voting.Order{voting.Top, voting.Hot, voting.Best, voting.Controversial}

// storeOptions returns the options of the service's store, with pages of
// pageSize articles.
func (c config) storeOptions(pageSize int) []voting.Option {
	opts := []voting.Option{
		voting.WithKeyPrefix(c.prefix),
		voting.WithVoteWindow(c.window),
		voting.WithPageSize(pageSize),
		voting.WithOrders(orders...),
	}
	if c.uniqueLinks {
		opts = append(opts, voting.WithUniqueLinks())
	}
	if c.userPages {
		opts = append(opts, voting.WithUserPages())
	}
	return append(opts, c.rules.options()...)
}

// serve serves the API on cfg.addr until ctx is done, then shuts down
// gracefully. It calls ready with the server's URL once it listens.
func serve(ctx context.Context, logger *log.Logger, cfg config, ready func(url string)) (err error) {
	pool, where, closeRedis, err := dial(ctx, cfg.redis)
	if err != nil {
		return err
	}
	defer closeRedis()
	defer pool.Close()
	const pageSize = voting.DefaultPageSize
	metrics, err := newTelemetry()
	if err != nil {
		return err
	}
	defer func() {
		if serr := metrics.shutdown(context.Background()); err == nil {
			err = serr
		}
	}()
	opts := append(cfg.storeOptions(pageSize), votingotel.Metrics(votingotel.WithMeterProvider(metrics.provider)))
	store, err := voting.New(pool, opts...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: metrics.handler((&api{store: store, pageSize: pageSize, log: logger, userPages: cfg.userPages,
			karma: cfg.rules.karma != nil}).routes()),
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
