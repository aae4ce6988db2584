// Command newsapi is a small HTTP JSON service on the voting library,
// on net/http (method and path patterns), with OpenTelemetry metrics.
// README.md beside it shows every route with curl.
//
// The routes marked W write: they act as the user of the request's
// bearer token (Authorization: Bearer TOKEN), and reads need no token.
//
//	POST   /articles                       W {"title":"...","link":"..."} -> 201
//	GET    /articles?order=score&page=1    order: score, time (or new), old, score-asc, time-asc, top, hot, best, controversial
//	GET    /articles/{id}                  the article and its groups
//	PUT    /articles/{id}/vote             W {"vote":"up"}; "down", or "cancel" to take it back
//	POST   /votes                          W [{"id":"1","vote":"up"}, ...] -> a result per ballot
//	PUT    /articles/{id}/groups/{group}   W -> 204; the article's poster or a moderator
//	DELETE /articles/{id}/groups/{group}   W -> 204; the article's poster or a moderator
//	GET    /groups/{group}?order=score&page=1
//	GET    /top?since=24h&page=1           since: a Go duration (90m, 24h) or days (7d); 24h by default
//	DELETE /articles/{id}                  W -> 204; its poster or a moderator
//	GET    /users/{name}                   with -karma or -user-pages; else 404 feature_off
//	GET    /users?page=1                   users by karma: with -karma; else 404 feature_off
//	PATCH  /articles/{id}                  W {"title":"...","link":"..."}: its poster, with -edit-window; else 404 feature_off
//	POST   /articles/{id}/comments         W {"body":"...","parent":"1"} -> 201; parent "" or absent: on the article
//	GET    /articles/{id}/comments?order=best&limit=200   the thread, best-first; order: best, top, new, old, hot, controversial
//	GET    /comments/{id}/replies?order=best&limit=200    the replies under a comment, as a thread
//	PUT    /comments/{id}/vote             W {"vote":"up"}; the score is upvotes minus downvotes
//	PATCH  /comments/{id}                  W {"body":"..."}: its poster, with -edit-window; else 404 feature_off
//	DELETE /comments/{id}                  W -> 204; its poster or a moderator; one with replies stays as {"deleted": true} without poster or body
//	GET    /metrics                        Prometheus text
//
// A moderator's token (role moderator) only, 403 forbidden for anyone
// else, the user themselves included (moderation.go):
//
//	GET    /users/{name}/votes?cursor=&limit=50     the user's standing votes, newest first: with -vote-log
//	GET    /articles/{id}/voters?cursor=&limit=50   the article's standing voters; /comments/{id}/voters a comment's
//	POST   /users/{name}/reverse-votes              W takes back every vote of the user: with -vote-log -> {"reversed": n}
//	PUT    /users/{name}/suspension                 W {"mode":"refuse"|"shadow","for":"72h"} (or "until": RFC 3339)
//	DELETE /users/{name}/suspension                 W -> 204; GET reads it
//
// # Authentication
//
// A token (token.go) is a JSON Web Token signed with HMAC-SHA256, whose
// claims name the user ("sub"), their role ("role": user or moderator)
// and when it expires ("exp", Unix seconds). A write without a token, or
// with one malformed, wrongly signed or expired, gets 401
// {"code": "unauthorized"} and a WWW-Authenticate: Bearer header. A body
// need not name the acting user; one that does ("user", "poster") must
// name the token's: anyone else gets 403 {"code": "forbidden"}, and so
// does a user acting on another's article or comment, unless a
// moderator. The secret that signs tokens comes from -secret-file PATH
// or NEWSAPI_SECRET, at least 32 bytes; without one the service does not
// start, unless -insecure-dev, which uses a fixed, public secret for
// trials on one's own machine and says so in the log. The secret never
// appears in the log or in a reply.
//
//	go run . token -user alice [-role moderator] [-ttl 24h] [-secret-file PATH | -insecure-dev]
//
// prints a token, with the secret as the service reads it.
//
// A page of /articles or /groups/{group} reads
// {"order": "score", "page": 1, "pages": 4, "total": 87, "articles": [...]}
// (and "group"), with the order as the request named it: total is the number of articles listed, pages the
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
// ...} as PUT /articles/{id}/vote gives, or {"code": "not_found",
// "error": "...", "status": 404} with the status and error body that
// route would fail with ("retry_after" included).
//
// A thread reads {"article": "1", "order": "best", "limit": 200,
// "comments": [...]} ("comment" for replies), the comments in display
// order, each followed by its replies, each with its "depth" (0 at the
// top) and "more", its live replies the thread left out (voting.MaxThread
// comments at most, voting.MaxThreadDepth levels). GET /users/{name}
// with -user-pages lists the user's latest comments too.
//
// Errors come as {"code": "not_found", "error": "article not found:
// \"9\""}: a stable code a client may switch on, and a message for a
// person (errors.go lists the codes). 404 for an unknown article or path,
// and for the routes of a feature the service runs without
// (feature_off, naming the flag: GET /users needs -karma); 409 once its
// voting has closed; 400 for bad input; 401 for a write without a valid
// token; 403 forbidden for a user acting as another, or on another's
// item; 403 not_allowed with the reason for a call a rule forbids; 429 with "retry_after" (seconds) and a Retry-After
// header over a rate limit; 413 for a body over 64 KiB (512 KiB for POST
// /votes) or more than voting.MaxBatch ballots; 503 when Redis refuses a
// call for a passing reason, or does not answer within -timeout (code
// timeout, logged); 500 (logged, with no details) for a Redis failure.
//
// A link is an http or https URL of at most 2,048 bytes, or empty; a
// title is valid UTF-8 without control characters. The store keeps the
// bytes it is given: these are the service's rules, checked at its edge.
//
// Usage:
//
//	(cd examples/newsapi && go run . (-secret-file PATH | -insecure-dev) [-addr localhost:8080] [-redis ADDR|URL] [-prefix newsapi] [-window 168h] [-unique-links] [-timeout 3s])
//
// -timeout is the most a request waits for Redis (3s by default): a
// stalled Redis gets the client a 503 {"code": "timeout"} then, and the
// log a line. The server also limits the time to read a request's
// headers (5s) and the whole request (10s), to write a reply (-timeout
// and 5s) and to keep an idle connection (1m).
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
// server, under the key prefix given by -prefix. A store there that
// records other shared options than the flags give (-karma, -vote-limit,
// -user-pages, ...; voting.Store.CheckIdentity) keeps the service from
// starting: it logs the difference and the votectl command that records
// the flags' options, and exits with status 1.
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
	"io"
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
	if len(os.Args) > 1 && os.Args[1] == "token" {
		os.Exit(tokenCommand(os.Args[2:], os.Getenv, time.Now(), os.Stdout, os.Stderr))
	}
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "localhost:8080", "serve HTTP on `host:port`")
	flag.StringVar(&cfg.redis, "redis", "", "use the Redis at `addr` (host:port or redis:// URL) instead of an embedded miniredis")
	flag.StringVar(&cfg.prefix, "prefix", "newsapi", "key `prefix` of the store in Redis")
	flag.DurationVar(&cfg.window, "window", voting.DefaultVoteWindow, "vote window: how long after posting an article takes votes (at least 1s)")
	flag.BoolVar(&cfg.uniqueLinks, "unique-links", false, "refuse a link a live article has already: POST /articles gets 409 and that article")
	flag.BoolVar(&cfg.userPages, "user-pages", false, "keep each user's submitted and upvoted pages: GET /users/{name} shows their first pages")
	flag.BoolVar(&cfg.voteLog, "vote-log", false, "keep each user's standing votes: GET /users/{name}/votes and POST /users/{name}/reverse-votes, for moderators")
	flag.DurationVar(&cfg.timeout, "timeout", defaultTimeout, "the most a request waits for Redis: then it gets 503 timeout, logged (at least 1ms)")
	cfg.rules.register(flag.CommandLine)
	cfg.secret.register(flag.CommandLine)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: newsapi [flags]          serve the API\n"+
			"       newsapi token -user NAME [-role user|moderator] [-ttl 24h] [-secret-file PATH | -insecure-dev]\n"+
			"                                      print a token (with %s, or either flag)\n\nflags:\n", secretEnv)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "newsapi: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	cfg.secret.env = secret(os.Getenv(secretEnv))
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
	voteLog     bool          // -vote-log
	timeout     time.Duration // -timeout
	rules       ruleFlags     // -karma, -vote-limit, ... (rules.go)
	secret      secretFlags   // -secret-file, NEWSAPI_SECRET, -insecure-dev (secret.go)
}

// defaultTimeout is the most a request waits for Redis by default: a
// healthy Redis answers a call in well under a millisecond.
const defaultTimeout = 3 * time.Second

// The server's own timeouts: for a client to send a request's headers,
// its whole request, and between two requests on a connection. A reply
// may take the request's -timeout and writeSlack more to write.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeSlack        = 5 * time.Second
	idleTimeout       = time.Minute
)

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
	if c.voteLog {
		opts = append(opts, voting.WithVoteLog())
	}
	return append(opts, c.rules.options()...)
}

// serve serves the API on cfg.addr until ctx is done, then shuts down
// gracefully. It calls ready with the server's URL once it listens.
func serve(ctx context.Context, logger *log.Logger, cfg config, ready func(url string)) (err error) {
	if cfg.timeout < time.Millisecond {
		return fmt.Errorf("-timeout %v is under one millisecond", cfg.timeout)
	}
	key, err := cfg.secret.key()
	if err != nil {
		return err
	}
	if cfg.secret.insecureDev {
		logger.Print(devWarning)
	}
	pool, where, closeRedis, err := dial(ctx, cfg.redis, cfg.timeout)
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
	if err := store.CheckIdentity(ctx); err != nil {
		// Its writes would fail: the store records other shared options.
		return fmt.Errorf("not starting: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := newServer(cfg, metrics.handler((&api{store: store, pageSize: pageSize, log: logger, userPages: cfg.userPages, voteLog: cfg.voteLog,
		karma: cfg.rules.karma != nil, rules: cfg.rules, timeout: cfg.timeout, key: key}).routes()), logger)
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

// newServer returns the service's HTTP server of h, with its timeouts:
// a reply may take the request's -timeout, and writeSlack to write.
func newServer(cfg config, h http.Handler, logger *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      cfg.timeout + writeSlack,
		IdleTimeout:       idleTimeout,
		ErrorLog:          logger,
	}
}

// dial returns a pool on the Redis at addr, or on an embedded miniredis
// if addr is empty, with a description of it and a function that stops
// the embedded server. The embedded server's clock follows the wall
// clock. It checks the server with a PING, which must answer within
// timeout.
func dial(ctx context.Context, addr string, timeout time.Duration) (pool *redis.Pool, where string, stop func(), err error) {
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
	// The store takes another connection where Redis closed one (a
	// restart, its timeout): the pool needs no TestOnBorrow.
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
	ping, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pool.GetContext(ping)
	if err == nil {
		_, err = redis.DoContext(conn, ping, "PING")
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

// defaultTTL is how long a token of the token command lasts by default.
const defaultTTL = 24 * time.Hour

// tokenCommand runs "newsapi token": it prints a token for -user, with
// -role, that expires -ttl after now, signed with the secret of
// -secret-file, NEWSAPI_SECRET (read with getenv) or -insecure-dev, as
// the service reads it. It returns the process's exit status: 2 for bad
// usage, 1 for any other failure.
func tokenCommand(args []string, getenv func(string) string, now time.Time, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("newsapi token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sf   secretFlags
		user = fs.String("user", "", "the token's user `name` (required): the user every write request with it acts as")
		name = fs.String("role", string(roleUser), "the token's `role`: user, or moderator, who may also delete others' articles and comments and change their groups")
		ttl  = fs.Duration("ttl", defaultTTL, "how long the token lasts (e.g. 1h, 720h)")
	)
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: newsapi token -user NAME [-role user|moderator] [-ttl 24h] [-secret-file PATH | -insecure-dev]\n"+
			"prints a token for Authorization: Bearer TOKEN; the secret comes from -secret-file, %s or -insecure-dev, as the service's\n", secretEnv)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	fail := func(status int, format string, args ...any) int {
		fmt.Fprintf(stderr, "newsapi token: "+format+"\n", args...)
		return status
	}
	if fs.NArg() > 0 {
		return fail(2, "unexpected argument %q", fs.Arg(0))
	}
	if *user == "" {
		return fail(2, "-user is required")
	}
	r, err := parseRole(*name)
	if err != nil {
		return fail(2, "-role: %v", err)
	}
	if *ttl <= 0 {
		return fail(2, "-ttl %v is not positive", *ttl)
	}
	sf.env = secret(getenv(secretEnv))
	key, err := sf.key()
	if err != nil {
		return fail(1, "%v", err)
	}
	if sf.insecureDev {
		fmt.Fprintln(stderr, "newsapi token: "+devWarning)
	}
	exp := now.Add(*ttl).Unix()
	token, err := sign(key, claims{Sub: *user, Role: r, Exp: &exp})
	if err != nil {
		return fail(2, "-user: %v", err)
	}
	fmt.Fprintln(stdout, token)
	return 0
}
