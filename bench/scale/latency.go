package scale

import (
	"cmp"
	"slices"
	"time"

	"gvs/bench/measure"
	"gvs/bench/report"
)

// WindowWidth is how many calls around a reported port count make up
// its median.
const WindowWidth = 11

// Call is one ovs-vsctl call of a one-at-a-time sweep.
type Call struct {
	Ports int           // test ports on the bridge before the call
	Took  time.Duration // until ovs-vsctl returned (cur_cfg caught up)
}

// standardMarks are the port counts per-change latency is reported at.
var standardMarks = []int{10, 100, 500, 1000}

// Marks returns the standard port counts up to n, and n itself when it is
// not one of them (so the largest sweep point is always reported).
func Marks(n int) []int {
	var out []int
	for _, m := range standardMarks {
		if m <= n {
			out = append(out, m)
		}
	}
	if n > 0 && !slices.Contains(out, n) {
		out = append(out, n)
	}
	return out
}

// WindowMedian returns the median latency, in milliseconds, of the width
// calls whose port counts are nearest to at (on a tie, the smaller count
// first), and how many calls that was (fewer than width only when there
// are fewer calls).
func WindowMedian(calls []Call, at, width int) (float64, int) {
	if len(calls) == 0 || width <= 0 {
		return measure.Summarize(nil).Median, 0
	}
	sorted := slices.Clone(calls)
	slices.SortStableFunc(sorted, func(a, b Call) int {
		da, db := abs(a.Ports-at), abs(b.Ports-at)
		if da != db {
			return cmp.Compare(da, db)
		}
		return cmp.Compare(a.Ports, b.Ports)
	})
	sorted = sorted[:min(width, len(sorted))]
	ms := make([]float64, len(sorted))
	for i, c := range sorted {
		ms[i] = float64(c.Took) / float64(time.Millisecond)
	}
	return measure.Summarize(ms).Median, len(ms)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Points turns calls into a curve's raw points (ports, ms).
func Points(calls []Call) []report.Point {
	out := make([]report.Point, len(calls))
	for i, c := range calls {
		out[i] = report.Point{X: float64(c.Ports), Y: float64(c.Took) / float64(time.Millisecond)}
	}
	return out
}

// Smooth returns the window medians at marks, as points.
func Smooth(calls []Call, marks []int) []report.Point {
	var out []report.Point
	for _, m := range marks {
		if v, n := WindowMedian(calls, m, WindowWidth); n > 0 {
			out = append(out, report.Point{X: float64(m), Y: v})
		}
	}
	return out
}

// curveSteps is how many window medians, evenly spaced, a curve's line
// has besides the marks.
const curveSteps = 20

// CurveXs returns the port counts a curve's line is drawn through: n/20,
// 2n/20, ..., n and the marks, sorted, without repeats.
func CurveXs(n int, marks []int) []int {
	xs := slices.Clone(marks)
	step := max(1, n/curveSteps)
	for x := step; x <= n; x += step {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}
