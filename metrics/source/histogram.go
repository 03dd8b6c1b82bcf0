package source

import (
	"math"
	"sync/atomic"
	"time"
)

// DefaultDurationBuckets are upper bounds in seconds for durations from
// 100 µs to 10 s, roughly ×2.5 apart: enough resolution for an OVSDB commit
// (tens of µs in memory, ms with fsync) and a reconciler pass alike.
var DefaultDurationBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// Histogram counts durations in fixed buckets with atomic adds only, so
// any goroutine may Observe without a lock and a reader never blocks a
// writer. A Snapshot taken while observations run may see a bucket count
// and the total count from slightly different instants (each is exact on
// its own); Prometheus tolerates that.
type Histogram struct {
	bounds []float64 // seconds, ascending
	counts []atomic.Uint64
	count  atomic.Uint64
	sumNs  atomic.Uint64
}

// NewHistogram returns a histogram with the given upper bounds in seconds
// (ascending); nil means DefaultDurationBuckets. An implicit +Inf bucket
// holds everything above the last bound.
func NewHistogram(bounds []float64) *Histogram {
	if bounds == nil {
		bounds = DefaultDurationBuckets
	}
	b := append([]float64(nil), bounds...)
	for i := 1; i < len(b); i++ {
		if !(b[i] > b[i-1]) {
			panic("source: histogram bounds must be strictly ascending")
		}
	}
	return &Histogram{bounds: b, counts: make([]atomic.Uint64, len(b))}
}

// Observe records one duration. Negative durations count as zero.
func (h *Histogram) Observe(d time.Duration) {
	if d < 0 {
		d = 0
	}
	secs := d.Seconds()
	for i, ub := range h.bounds {
		if secs <= ub {
			h.counts[i].Add(1)
			break
		}
	}
	h.sumNs.Add(uint64(d))
	h.count.Add(1)
}

// HistogramSnapshot is a histogram's state, in Prometheus's shape.
type HistogramSnapshot struct {
	Count uint64
	// Sum of the observations, in seconds.
	Sum float64
	// Buckets maps each upper bound (seconds) to the cumulative count of
	// observations at or below it; the +Inf bucket is Count.
	Buckets map[float64]uint64
}

// Snapshot returns the histogram's current state. The cumulative bucket
// counts never exceed Count.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Buckets: make(map[float64]uint64, len(h.bounds))}
	var cum uint64
	for i, ub := range h.bounds {
		cum += h.counts[i].Load()
		s.Buckets[ub] = cum
	}
	// Read the total after the buckets: an observation adds to its bucket
	// before the total, so the total read now covers every bucket read.
	s.Count = h.count.Load()
	if s.Count < cum {
		s.Count = cum
	}
	s.Sum = float64(h.sumNs.Load()) / 1e9
	return s
}

// Mean returns the mean observation in seconds, NaN when empty.
func (s HistogramSnapshot) Mean() float64 {
	if s.Count == 0 {
		return math.NaN()
	}
	return s.Sum / float64(s.Count)
}
