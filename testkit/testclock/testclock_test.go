package testclock

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	start := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	c := New(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %v, want %v", got, start)
	}
	c.Add(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Add: %v, want %v", got, want)
	}
	c.Add(-time.Hour)
	if got, want := c.Now(), start.Add(90*time.Second-time.Hour); !got.Equal(want) {
		t.Errorf("after a negative Add: %v, want %v", got, want)
	}
	later := start.AddDate(0, 0, 7)
	c.Set(later)
	if got := c.Now(); !got.Equal(later) {
		t.Errorf("after Set: %v, want %v", got, later)
	}
}

// Concurrent Adds all count; run with -race, readers and writers do not
// race.
func TestClockConcurrent(t *testing.T) {
	start := time.Unix(0, 0)
	c := New(start)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				c.Add(time.Second)
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(800*time.Second); !got.Equal(want) {
		t.Errorf("after 800 concurrent Adds of 1s: %v, want %v", got, want)
	}
}
