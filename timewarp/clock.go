package timewarp

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock is a monotonic clock that can be stopped and warped forward. The
// zero value is not usable: use New.
type Clock struct {
	// controlled is set by the first Stop or Warp; until then Now is
	// time.Now with no lock.
	controlled atomic.Bool
	real       func() time.Time

	mu      sync.Mutex
	stopped bool
	cache   time.Time // the real time when stopped
	warp    time.Duration
}

// New returns a clock that follows real (time.Now when nil).
func New(real func() time.Time) *Clock {
	if real == nil {
		real = time.Now
	}
	return &Clock{real: real}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	if !c.controlled.Load() {
		return c.real()
	}
	c.mu.Lock()
	stopped, cache, warp := c.stopped, c.cache, c.warp
	c.mu.Unlock()
	if !stopped {
		cache = c.real()
	}
	return cache.Add(warp)
}

// Stop stops the clock: from now on it moves only by Warp. Stopping a
// stopped clock keeps its time.
func (c *Clock) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.stopped, c.cache = true, c.real()
	}
	c.controlled.Store(true)
}

// Warp moves the clock forward by d.
func (c *Clock) Warp(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warp += d
	c.controlled.Store(true)
}

// Warped returns the sum of every warp.
func (c *Clock) Warped() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.warp
}
