// Package testclock provides a settable clock for tests: a Clock's Now
// is passed where a library takes a clock (voting.WithClock(c.Now)), and
// the test moves it with Add or Set. A Clock is safe for concurrent use.
package testclock

import (
	"sync"
	"time"
)

// Clock is a clock that stands still until it is moved.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock that reads t.
func New(t time.Time) *Clock {
	return &Clock{t: t}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d, backwards if d is negative.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
