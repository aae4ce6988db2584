package voting

import (
	"fmt"
	"math"
	"time"
)

// Defaults of a Store. The weight and window are the book's: 200 votes a
// day keep an article on the front page (86,400 s / 200 = 432).
const (
	DefaultKeyPrefix     = "voting"
	DefaultVoteWeight    = 432.0
	DefaultVoteWindow    = 7 * 24 * time.Hour
	DefaultGroupCacheTTL = 60 * time.Second
	DefaultPageSize      = 25
	// MaxPageSize is the largest page size WithPageSize accepts.
	MaxPageSize = 1000
)

// An Option configures a Store in New. Values are checked by New, which
// returns ErrInvalidArgument for any that is out of range.
type Option func(*config)

type config struct {
	prefix   string
	weight   float64
	window   time.Duration
	cacheTTL time.Duration
	pageSize int
	now      func() time.Time
}

func defaultConfig() config {
	return config{
		prefix:   DefaultKeyPrefix,
		weight:   DefaultVoteWeight,
		window:   DefaultVoteWindow,
		cacheTTL: DefaultGroupCacheTTL,
		pageSize: DefaultPageSize,
		now:      time.Now,
	}
}

// WithKeyPrefix sets the prefix of every key, which becomes the store's
// Redis Cluster hash tag: every key is "{prefix}:...". Stores with
// different prefixes share nothing. Default "voting". A prefix must be
// non-empty printable UTF-8 of at most MaxPrefixLen bytes without "{" or "}".
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithVoteWeight sets the points one vote adds to (or takes from) an
// article's score. Default 432 (= 86400/200). Negative, NaN and infinite
// weights are rejected; 0 orders by post time alone.
func WithVoteWeight(points float64) Option {
	return func(c *config) { c.weight = points }
}

// WithVoteWindow sets how long after posting an article accepts votes;
// after it the score is frozen and the voter records expire. Default one
// week. It is counted in whole seconds (the fraction is dropped); windows
// under one second are rejected.
func WithVoteWindow(d time.Duration) Option {
	return func(c *config) { c.window = d }
}

// WithGroupCacheTTL sets how long a group's cached ordering lives before a
// read rebuilds it: group pages may show an order up to this old. Default
// 60s. It is counted in whole milliseconds; under one millisecond is
// rejected.
func WithGroupCacheTTL(d time.Duration) Option {
	return func(c *config) { c.cacheTTL = d }
}

// WithPageSize sets how many articles a page holds. Default 25; it must be
// from 1 to MaxPageSize.
func WithPageSize(n int) Option {
	return func(c *config) { c.pageSize = n }
}

// WithClock sets the clock that dates posts and decides whether voting is
// still open. Default time.Now. Redis's own clock is used only to expire
// keys, by TTLs computed from this clock, so a simulated clock works
// against a real server. A nil clock is rejected.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

func (c *config) validate() error {
	if err := checkPrefix(c.prefix); err != nil {
		return err
	}
	switch {
	case c.weight < 0 || math.IsNaN(c.weight) || math.IsInf(c.weight, 0):
		return fmt.Errorf("%w: vote weight %v is not a finite number >= 0", ErrInvalidArgument, c.weight)
	case c.window < time.Second:
		return fmt.Errorf("%w: vote window %v is under one second", ErrInvalidArgument, c.window)
	case c.cacheTTL < time.Millisecond:
		return fmt.Errorf("%w: group cache TTL %v is under one millisecond", ErrInvalidArgument, c.cacheTTL)
	case c.pageSize < 1 || c.pageSize > MaxPageSize:
		return fmt.Errorf("%w: page size %d is not in [1, %d]", ErrInvalidArgument, c.pageSize, MaxPageSize)
	case c.now == nil:
		return fmt.Errorf("%w: clock is nil", ErrInvalidArgument)
	}
	return nil
}
