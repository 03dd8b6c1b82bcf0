package ofproto

import (
	"runtime/debug"
	"sync"
	"time"
)

// A bulk table change (ovs-ofctl add-flows or a bundle of many flows, a
// controller's resync) leaves the Go heap up to twice the size of what
// the tables keep: the pacer lets garbage (decoded messages, staged
// bundles, replaced rules) accumulate up to the next collection, and the
// runtime gives freed pages back to the kernel only slowly. memTrim waits
// until such a change has settled and then returns what is free to the
// operating system at once (runtime/debug.FreeOSMemory: one collection),
// as a C daemon's allocator would have after the frees. Small changes
// never trigger it.
type memTrim struct {
	churn func() uint64 // the pipeline's Churn
	// free returns the memory (nil: debug.FreeOSMemory); settle and
	// bulk override trimSettle and trimChurn (tests).
	free   func()
	settle time.Duration
	bulk   uint64

	mu      sync.Mutex // a leaf
	timer   *time.Timer
	trimmed uint64 // churn at the last trim
	closed  bool
}

const (
	// trimChurn is how many rules must have changed since the last trim.
	trimChurn = 10000
	// trimSettle is how long the tables must stay unchanged first.
	trimSettle = 300 * time.Millisecond
)

// changed notes a committed change (the pipeline's Changed hook: called
// with the pipeline's lock held; it never blocks).
func (m *memTrim) changed() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	settle := m.settle
	if settle == 0 {
		settle = trimSettle
	}
	if m.timer == nil {
		m.timer = time.AfterFunc(settle, m.fire)
		return
	}
	m.timer.Reset(settle)
}

func (m *memTrim) fire() {
	m.mu.Lock()
	churn := m.churn()
	threshold := m.bulk
	if threshold == 0 {
		threshold = trimChurn
	}
	bulk := !m.closed && churn-m.trimmed >= threshold
	if bulk {
		m.trimmed = churn
	}
	free := m.free
	m.mu.Unlock()
	if !bulk {
		return
	}
	if free == nil {
		free = debug.FreeOSMemory
	}
	free()
}

// close stops the timer for good.
func (m *memTrim) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.timer != nil {
		m.timer.Stop()
	}
}
