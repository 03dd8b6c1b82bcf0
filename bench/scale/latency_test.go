package scale

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestMarks(t *testing.T) {
	for n, want := range map[int][]int{
		1000: {10, 100, 500, 1000},
		2000: {10, 100, 500, 1000, 2000},
		100:  {10, 100},
		20:   {10, 20},
		5:    {5},
		0:    nil,
	} {
		if got := Marks(n); !slices.Equal(got, want) {
			t.Errorf("Marks(%d) = %v, want %v", n, got, want)
		}
	}
}

// sweep returns calls at 0..n-1 ports whose latency is f(ports) ms.
func sweep(n int, f func(int) float64) []Call {
	calls := make([]Call, n)
	for i := range calls {
		calls[i] = Call{Ports: i, Took: time.Duration(f(i) * float64(time.Millisecond))}
	}
	return calls
}

func TestWindowMedian(t *testing.T) {
	linear := sweep(1000, func(p int) float64 { return float64(p) })
	// 11 calls nearest 100: 95..105, median 100.
	if v, n := WindowMedian(linear, 100, 11); n != 11 || v != 100 {
		t.Errorf("at 100: %v over %d calls, want 100 over 11", v, n)
	}
	// At the end of an add sweep (0..999), the window is the last 11
	// calls: 989..999, median 994.
	if v, n := WindowMedian(linear, 1000, 11); n != 11 || v != 994 {
		t.Errorf("at 1000: %v over %d calls, want 994 over 11", v, n)
	}
	// An even width takes the smaller count on a tie: 8..11, median 9.5.
	if v, _ := WindowMedian(linear, 10, 4); v != 9.5 {
		t.Errorf("width 4 at 10: %v, want 9.5", v)
	}
	// One outlier in the window does not move the median.
	spiky := sweep(200, func(p int) float64 {
		if p == 100 {
			return 5000
		}
		return 20
	})
	if v, _ := WindowMedian(spiky, 100, 11); v != 20 {
		t.Errorf("a single slow call moved the median to %v", v)
	}
	if v, n := WindowMedian(nil, 10, 11); n != 0 || !math.IsNaN(v) {
		t.Errorf("no calls: %v, %d", v, n)
	}
	if v, n := WindowMedian(linear[:3], 10, 11); n != 3 || v != 1 {
		t.Errorf("fewer calls than the width: %v over %d, want 1 over 3", v, n)
	}
}

func TestReached(t *testing.T) {
	marks := Marks(1000)
	add := sweep(600, func(int) float64 { return 1 }) // stopped at 600 ports
	if got := reached(add, marks, true); !slices.Equal(got, []int{10, 100, 500}) {
		t.Errorf("add sweep to 600: reached %v", got)
	}
	var del []Call
	for p := 1000; p >= 400; p-- { // stopped with 400 ports left
		del = append(del, Call{Ports: p})
	}
	if got := reached(del, marks, false); !slices.Equal(got, []int{500, 1000}) {
		t.Errorf("del sweep 1000 down to 400: reached %v", got)
	}
	if got := reached(nil, marks, false); got != nil {
		t.Errorf("no calls: reached %v", got)
	}
}

func TestSmoothAndPoints(t *testing.T) {
	calls := sweep(100, func(p int) float64 { return 2 * float64(p) })
	pts := Points(calls)
	if len(pts) != 100 || pts[7].X != 7 || pts[7].Y != 14 {
		t.Errorf("points: %d, [7] = %+v", len(pts), pts[7])
	}
	sm := Smooth(calls, []int{10, 100})
	if len(sm) != 2 || sm[0].X != 10 || sm[0].Y != 20 || sm[1].X != 100 || sm[1].Y != 2*94 {
		t.Errorf("smooth = %+v", sm)
	}
	if got := totalSeconds(calls); math.Abs(got-2*4950/1000.0) > 1e-9 {
		t.Errorf("total = %v s", got)
	}
}

func TestCurveXs(t *testing.T) {
	if got := CurveXs(1000, Marks(1000)); len(got) != 21 || got[0] != 10 || got[1] != 50 || got[len(got)-1] != 1000 || !slices.IsSorted(got) {
		t.Errorf("CurveXs(1000) = %v", got)
	}
	if got := CurveXs(5, Marks(5)); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("CurveXs(5) = %v", got)
	}
}
