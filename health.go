package voting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Health is what [Store.Check] found of the store's deployment: a field
// per item, and the problems among them.
type Health struct {
	// Reachable says the primary answered; Version is its redis_version.
	Reachable bool   `json:"reachable"`
	Version   string `json:"version"`
	// Scripts says how the store's scripts run: "functions" (the
	// store's library is loaded), "functions, library not loaded yet"
	// (the first call loads it) or "scripts" (EVALSHA: no Functions, or
	// not allowed).
	Scripts string `json:"scripts"`
	// Config says whether CONFIG GET was allowed (a managed Redis or an
	// ACL may refuse it); the settings below are "" when it was not.
	Config               bool   `json:"config"`
	MaxmemoryPolicy      string `json:"maxmemory_policy"`
	LazyfreeLazyExpire   string `json:"lazyfree_lazy_expire"`
	LazyfreeLazyEviction string `json:"lazyfree_lazy_eviction"`
	// Recorded is the identity recorded for the prefix ("" for none),
	// Identity the store's own (Identity.String), and Compatible whether
	// the store may write: they are equal, or the store is empty.
	Recorded   string `json:"recorded"`
	Identity   string `json:"identity"`
	Compatible bool   `json:"compatible"`
	// Articles is the number of articles (Count), where Reachable.
	Articles int64 `json:"articles"`
	// Replicas are the primary's replicas, as its INFO replication lists
	// them ("ip=...,port=...,state=online,offset=...,lag=0").
	Replicas []string `json:"replicas"`
	// ReadPool, with WithReadPool, is the role of the read pool's server
	// and, for a replica, its link to its primary ("slave, link up");
	// "" without the option.
	ReadPool string `json:"read_pool"`
	// Problems lists what is wrong, a sentence each; Serious says one of
	// them loses data or fails the store's calls: Redis unreachable, an
	// allkeys-* maxmemory-policy, a store this one may not write.
	Problems []string `json:"problems"`
	Serious  bool     `json:"serious"`
}

func (h *Health) problem(serious bool, format string, args ...interface{}) {
	h.Problems = append(h.Problems, fmt.Sprintf(format, args...))
	h.Serious = h.Serious || serious
}

// lazyfreeGroup is the size of a group whose expiring cache stalls Redis
// about 20 ms unless it frees it lazily (docs/OPERATIONS.md, "Redis settings"): a
// store with fewer articles has no group that large.
const lazyfreeGroup = 100_000

// Check looks at the store's deployment, with a few commands on the
// primary (and one on the read pool, with WithReadPool), and returns
// what it found: whether Redis is reachable and its version, how the
// scripts run, the settings docs/OPERATIONS.md asks for ("Redis settings"), the
// recorded identity against the store's, and the replicas. It writes
// nothing. What is wrong is in Health.Problems, not in the error, which
// is only the context's when it is done. CONFIG GET refused (ACL,
// managed Redis) leaves Health.Config false, which is not a problem.
func (s *Store) Check(ctx context.Context) (Health, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Check"}, s.Check)
	}
	h := Health{Identity: s.shared.String(), Problems: []string{}} // [] in JSON, not null
	c, err := s.liveConn(ctx, s.pool)
	if err != nil {
		if ctx.Err() != nil {
			return h, opErr("check", ctx.Err())
		}
		h.problem(true, "Redis is not reachable: %v", err)
		return h, nil
	}
	defer c.Close()
	h.Reachable = true
	info := func(conn redis.Conn, section string) map[string]string {
		text, err := redis.String(do(ctx, conn, "INFO", []interface{}{section}))
		m := map[string]string{}
		if err != nil {
			if !isRedisError(err) { // refused or unknown (miniredis): not a problem
				h.problem(false, "INFO %s: %v", section, err)
			}
			return m
		}
		for _, line := range strings.Split(text, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				m[k] = v
			}
		}
		return m
	}
	h.Version = info(c, "server")["redis_version"]
	repl := info(c, "replication")
	if n, _ := strconv.Atoi(repl["connected_slaves"]); n > 0 {
		for i := 0; i < n; i++ {
			h.Replicas = append(h.Replicas, repl["slave"+strconv.Itoa(i)])
		}
	}
	s.checkScripts(ctx, c, &h)
	s.checkConfig(ctx, c, &h)
	s.checkRecord(ctx, c, &h)
	if s.readPool != nil {
		s.checkReadPool(ctx, &h, info)
	}
	if err := ctx.Err(); err != nil {
		return h, opErr("check", err)
	}
	return h, nil
}

func (s *Store) checkScripts(ctx context.Context, c redis.Conn, h *Health) {
	if s.funcs.off.Load() {
		h.Scripts = "scripts"
		return
	}
	list, err := redis.Values(do(ctx, c, "FUNCTION", []interface{}{"LIST", "LIBRARYNAME", scriptLib.name}))
	switch {
	case isRefusal(err):
		h.Scripts = "scripts"
	case err != nil:
		h.problem(false, "FUNCTION LIST: %v", err)
	case len(list) == 0:
		h.Scripts = "functions, library not loaded yet"
	default:
		h.Scripts = "functions"
	}
}

func (s *Store) checkConfig(ctx context.Context, c redis.Conn, h *Health) {
	m, err := redis.StringMap(do(ctx, c, "CONFIG", []interface{}{"GET", "lazyfree-lazy-*"}))
	if err == nil {
		h.LazyfreeLazyExpire, h.LazyfreeLazyEviction = m["lazyfree-lazy-expire"], m["lazyfree-lazy-eviction"]
		m, err = redis.StringMap(do(ctx, c, "CONFIG", []interface{}{"GET", "maxmemory-policy"}))
	}
	if err != nil {
		if ctx.Err() == nil && !isRedisError(err) {
			h.problem(false, "CONFIG GET: %v", err)
		}
		return // refused: Config stays false
	}
	h.Config = true
	h.MaxmemoryPolicy = m["maxmemory-policy"]
	if strings.HasPrefix(h.MaxmemoryPolicy, "allkeys-") {
		h.problem(true, "maxmemory-policy %s may evict any key: articles, orderings, the id counter (use noeviction or volatile-*)", h.MaxmemoryPolicy)
	}
	n, err := redis.Int64(do(ctx, c, "ZCARD", []interface{}{s.keys.orderingKey("time")}))
	if err != nil || n < lazyfreeGroup {
		return
	}
	if s.cacheTTL > 0 && h.LazyfreeLazyExpire == "no" {
		h.problem(false, "lazyfree-lazy-expire no: with %d articles a group cache may be large enough that its expiry stalls Redis for tens of ms (set it to yes)", n)
	}
	if strings.HasPrefix(h.MaxmemoryPolicy, "volatile-") && h.LazyfreeLazyEviction == "no" {
		h.problem(false, "lazyfree-lazy-eviction no under %s: evicting a large group cache stalls Redis (set it to yes)", h.MaxmemoryPolicy)
	}
}

func (s *Store) checkRecord(ctx context.Context, c redis.Conn, h *Health) {
	rec, err := redis.String(do(ctx, c, "GET", []interface{}{s.keys.record}))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		h.problem(true, "the store's record %s: %v", s.keys.record, err)
		return
	}
	raw, _, _ := strings.Cut(rec, "\n") // the identity and its marks
	rec = recordIdentity(rec)
	h.Recorded = rec
	n, err := redis.Int64(do(ctx, c, "ZCARD", []interface{}{s.keys.orderingKey("time")}))
	if err != nil {
		h.problem(false, "counting articles: %v", err)
	}
	h.Articles = n
	if rec == h.Identity {
		h.Compatible = true
		if moving, err := redis.String(do(ctx, c, "GET", []interface{}{s.keys.moving})); err == nil {
			h.problem(true, "Reconfigure has moved the comments of layout 4 up to id %s, not all: calls about comments refuse until it has (run it again)", moving)
		}
		if strings.HasSuffix(raw, logsMovingMark) {
			h.problem(true, "Reconfigure has not moved every vote log of layout 6: VotesBy and ReverseVotes refuse until it has (run it again)")
		}
		return
	}
	if rec == "" {
		seq, err := redis.Int64(do(ctx, c, "EXISTS", []interface{}{s.keys.seq}))
		if err == nil && seq == 0 {
			h.Compatible = true // empty: the first Post records it
			return
		}
	}
	h.problem(true, "incompatible store: %s", difference(rec, h.Identity, "", s.rules.want.(string)))
}

func (s *Store) checkReadPool(ctx context.Context, h *Health, info func(redis.Conn, string) map[string]string) {
	c, err := s.liveConn(ctx, s.readPool)
	if err != nil {
		h.ReadPool = "unreachable"
		h.problem(false, "the read pool is not reachable: %v", err)
		return
	}
	defer c.Close()
	m := info(c, "replication")
	h.ReadPool = m["role"]
	if m["role"] == "slave" {
		h.ReadPool += ", link " + m["master_link_status"]
		if m["master_link_status"] != "up" {
			h.problem(false, "the read pool's replica has its link to its primary %s: its reads are stale", m["master_link_status"])
		}
	}
}
