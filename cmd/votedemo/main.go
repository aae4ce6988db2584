// Command votedemo replays the article-voting scenario of "Redis in
// Action" 1.3 on the voting library, with a simulated clock, and checks
// the book's claim: an article that collects 200 upvotes a day stays on
// the front page (the top 100 by score) for at least a day.
//
// Every simulated day it posts 1,000 articles over a handful of groups;
// 50 of them are interesting and collect at least 200 upvotes over their
// first 20 hours, the rest a few random up and down votes. At the end of
// each day it prints the top of the front page and of one group, with the
// first comments, best first, of the threads readers start on the top two
// articles (voting.Store.Thread), and at the end the time every
// interesting article spent in the top 100. It
// exits with status 1 if any of them stayed less than 24 hours, and 2 on
// a bad flag or a Redis error.
//
// Usage:
//
//	go run ./cmd/votedemo [-days 7] [-per-day 1000] [-seed 1] [-redis ADDR|URL] [-quiet]
//
// By default it runs on an embedded miniredis. With -redis (host:port or
// a redis:// URL) it runs on that server instead, under a key prefix of
// its own ("votedemo-" and a random suffix), and deletes its keys when it
// is done unless -keep is given.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting"
)

func main() {
	cfg := config{Group: defaultGroup}
	flag.IntVar(&cfg.Days, "days", 7, "simulated `days` of posting (at least 4)")
	flag.IntVar(&cfg.PerDay, "per-day", 1000, "articles posted a simulated day; one in 20 is interesting")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random `seed` of the traffic; a seed replays the same run")
	flag.IntVar(&cfg.Show, "show", 5, "`rows` in each daily table")
	flag.IntVar(&cfg.Top, "top", 100, "the claim is about the top `n` articles by score")
	flag.IntVar(&cfg.Workers, "workers", max(4, 2*runtime.GOMAXPROCS(0)), "votes cast at once")
	addr := flag.String("redis", "", "use the Redis at `addr` (host:port or redis:// URL) instead of an embedded miniredis")
	keep := flag.Bool("keep", false, "with -redis, keep the demo's keys instead of deleting them at the end")
	quiet := flag.Bool("quiet", false, "no progress report on stderr")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "votedemo: unexpected arguments: %s\n", strings.Join(flag.Args(), " "))
		flag.Usage()
		os.Exit(2)
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "votedemo:", err)
		os.Exit(2)
	}
	if !*quiet {
		cfg.Progress = os.Stderr
		cfg.Live = isTerminal(os.Stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ok, err := run(ctx, os.Stdout, cfg, *addr, *keep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "votedemo:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// run runs the simulation on an embedded miniredis, or on the Redis at
// addr under a fresh prefix, printing to out, and reports whether the
// claim held.
func run(ctx context.Context, out io.Writer, cfg config, addr string, keep bool) (bool, error) {
	prefix := "votedemo"
	var dial func(context.Context) (redis.Conn, error)
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return false, err
		}
		defer mr.Close()
		// The embedded server runs every script in a fresh Lua state: a
		// lot of short-lived garbage. A larger heap target makes the
		// collector run less often and the demo a third faster.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
		cfg.Backend = "an embedded miniredis"
		cfg.Elapse = mr.FastForward
		dial = func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", mr.Addr())
		}
	} else {
		var err error
		if prefix, err = freshPrefix(); err != nil {
			return false, err
		}
		cfg.Backend = fmt.Sprintf("Redis at %s (key prefix %q)", redact(addr), prefix)
		dial = func(ctx context.Context) (redis.Conn, error) {
			if strings.Contains(addr, "://") {
				return redis.DialURLContext(ctx, addr)
			}
			return redis.DialContext(ctx, "tcp", addr)
		}
	}
	pool := &redis.Pool{MaxIdle: cfg.Workers + 1, DialContext: dial}
	defer pool.Close()
	if err := ping(ctx, pool); err != nil {
		return false, err
	}
	if addr != "" && !keep {
		defer func() {
			// Clean up even after an interrupt, within a few seconds.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := deleteKeys(ctx, pool, prefix); err != nil {
				fmt.Fprintf(os.Stderr, "votedemo: deleting the keys under %q: %v\n", prefix, err)
			}
		}()
	}
	start := time.Now()
	r, err := simulate(ctx, pool, prefix, out, cfg)
	if err != nil {
		return false, err
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "votedemo: simulated %d days, %s articles, %s votes in %.1fs\n",
			cfg.Days, commas(r.Articles), commas(r.Votes), time.Since(start).Seconds())
	}
	return r.OK(), nil
}

func ping(ctx context.Context, pool *redis.Pool) error {
	conn, err := pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = redis.DoContext(conn, ctx, "PING")
	return err
}

// freshPrefix returns a key prefix no other run uses.
func freshPrefix() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "votedemo-" + hex.EncodeToString(b), nil
}

// deleteKeys deletes every key of the store with the given prefix, with
// the store's own Drop (bounded steps, the store's keys and no other).
func deleteKeys(ctx context.Context, pool *redis.Pool, prefix string) error {
	s, err := voting.New(pool, voting.WithKeyPrefix(prefix))
	if err != nil {
		return err
	}
	return s.Drop(ctx)
}

// redact hides the password of a redis:// URL.
func redact(addr string) string {
	if i, j := strings.Index(addr, "://"), strings.LastIndex(addr, "@"); i >= 0 && j > i {
		return addr[:i+3] + "...@" + addr[j+1:]
	}
	return addr
}

// isTerminal reports whether f is a terminal, where the progress line can
// be rewritten in place.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
