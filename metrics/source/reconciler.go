package source

import (
	"sync/atomic"
	"time"
)

// Reconciler is what the bridge reconciler publishes about its passes: it
// calls RecordPass after each one; the metrics collector reads Snapshot on
// scrape. The zero value is not ready: use NewReconciler. Safe for
// concurrent use; RecordPass takes no lock.
type Reconciler struct {
	runs, errors atomic.Uint64
	lastSuccess  atomic.Int64 // unix nanoseconds, 0: never
	duration     *Histogram
}

// NewReconciler returns counters with DefaultDurationBuckets.
func NewReconciler() *Reconciler {
	return &Reconciler{duration: NewHistogram(nil)}
}

// RecordPass records one reconciliation pass that took d and ended with
// err (nil: every change applied and written back). A pass that only
// partly succeeded (one port failed to open, the rest applied) is a
// success at this level: per-interface errors go to Interface.error.
func (r *Reconciler) RecordPass(d time.Duration, err error) {
	r.duration.Observe(d)
	if err != nil {
		r.errors.Add(1)
	} else {
		r.lastSuccess.Store(time.Now().UnixNano())
	}
	r.runs.Add(1)
}

// ReconcilerSnapshot is the state of the counters at one instant.
type ReconcilerSnapshot struct {
	Runs, Errors uint64
	// LastSuccess is when the last pass without error ended; zero: none.
	LastSuccess time.Time
	Duration    HistogramSnapshot
}

// Snapshot reads the counters.
func (r *Reconciler) Snapshot() ReconcilerSnapshot {
	s := ReconcilerSnapshot{
		Errors:   r.errors.Load(),
		Duration: r.duration.Snapshot(),
		Runs:     r.runs.Load(),
	}
	if ns := r.lastSuccess.Load(); ns != 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	return s
}
