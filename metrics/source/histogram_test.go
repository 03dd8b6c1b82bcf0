package source

import (
	"sync"
	"testing"
	"time"
)

func TestHistogramConcurrentObserve(t *testing.T) {
	h := NewHistogram([]float64{0.001, 0.01, 0.1})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h.Observe(time.Duration(g*1000+i) * 20 * time.Microsecond)
			}
		}()
		_ = h.Snapshot() // readers never block writers
	}
	wg.Wait()
	s := h.Snapshot()
	if s.Count != 4000 {
		t.Fatalf("count %d", s.Count)
	}
	// Durations are 0..79.98 ms in 20 µs steps: 50 at or below 1 ms
	// (0..980 µs), 500 at or below 10 ms, all 4000 at or below 100 ms.
	if s.Buckets[0.001] != 51 || s.Buckets[0.01] != 501 || s.Buckets[0.1] != 4000 {
		t.Errorf("buckets %v", s.Buckets)
	}
	want := 0.0
	for i := range 4000 {
		want += float64(i) * 20e-6
	}
	if d := s.Sum - want; d > 1e-6 || d < -1e-6 {
		t.Errorf("sum %v, want %v", s.Sum, want)
	}
}

func TestReconcilerRecordPass(t *testing.T) {
	r := NewReconciler()
	if s := r.Snapshot(); s.Runs != 0 || !s.LastSuccess.IsZero() {
		t.Fatalf("fresh %+v", s)
	}
	r.RecordPass(time.Millisecond, nil)
	r.RecordPass(2*time.Second, errTest{})
	s := r.Snapshot()
	if s.Runs != 2 || s.Errors != 1 || s.Duration.Count != 2 || s.LastSuccess.IsZero() || s.Duration.Buckets[0.001] != 1 {
		t.Errorf("%+v", s)
	}
}

type errTest struct{}

func (errTest) Error() string { return "test" }
