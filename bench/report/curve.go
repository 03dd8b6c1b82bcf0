package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// Curve is one measured quantity as a function of another, one line per
// setup: per-change latency against the number of ports, for example.
type Curve struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"` // with its unit
	// Marks are the x values the figures are reported at, drawn as
	// vertical guides.
	Marks []float64 `json:"marks,omitempty"`
	Lines []Line    `json:"lines"`
}

// Line is one setup's points, in the order measured.
type Line struct {
	Setup  string  `json:"setup"`
	Kind   string  `json:"kind"`
	Points []Point `json:"points"`
	// Smooth are the window medians at the marks, drawn over the raw
	// points.
	Smooth []Point `json:"smooth,omitempty"`
}

// Point is one (x, y) sample.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// WriteCurveSVG draws c: raw points as small dots per setup, the window
// medians joined by a line, axes from zero with five ticks each, the marks
// as dashed guides and a legend.
func WriteCurveSVG(w io.Writer, c Curve) error {
	const (
		width, height            = 720, 400
		left, right, top, bottom = 70, 150, 50, 50
	)
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	maxX, maxY, clipped := curveRange(c)
	px := func(x float64) float64 { return left + plotW*x/maxX }
	py := func(y float64) float64 { return top + plotH*(1-y/maxY) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="8" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(c.Title))
	sub := "dots: every call; line: window medians; dashed: the reported points"
	if clipped > 0 {
		sub += fmt.Sprintf("; %d slow outlier(s) drawn on the top edge", clipped)
	}
	fmt.Fprintf(&b, `<text x="8" y="38" fill="#555">%s</text>`+"\n", sub)
	// Axes and ticks.
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left, py(0), px(maxX), py(0))
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>`+"\n", left, py(0), left, py(maxY))
	for i := 0; i <= 5; i++ {
		x, y := maxX*float64(i)/5, maxY*float64(i)/5
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), py(0)+16, axisNumber(x))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, py(y)+4, axisNumber(y))
		if i > 0 {
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(y), px(maxX), py(y))
		}
	}
	for _, m := range c.Marks {
		if m <= maxX {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#aaa" stroke-dasharray="4 3"/>`+"\n", px(m), py(0), px(m), py(maxY))
		}
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+plotW/2, height-10, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">%s</text>`+"\n", top+plotH/2, top+plotH/2, html.EscapeString(c.YLabel))
	for i, l := range c.Lines {
		colour := kindColour[l.Kind]
		if colour == "" {
			colour = "#9467bd"
		}
		for _, p := range l.Points {
			if !math.IsNaN(p.Y) {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.5" fill="%s" fill-opacity="0.45"/>`+"\n", px(p.X), py(math.Min(p.Y, maxY)), colour)
			}
		}
		var path []string
		for _, p := range l.Smooth {
			if !math.IsNaN(p.Y) {
				path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y)))
			}
		}
		if len(path) > 0 {
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(path, " "), colour)
		}
		ly := top + 10 + 20*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", width-right+10, ly, width-right+30, ly, colour)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", width-right+36, ly+4, html.EscapeString(l.Setup))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// curveRange returns the axes' ends: x up to the largest x, y up to the
// largest window median or the 98th percentile of the raw points,
// whichever is higher (a few slow calls would otherwise flatten
// everything else), each rounded up; and how many raw points lie above.
func curveRange(c Curve) (maxX, maxY float64, clipped int) {
	var ys []float64
	for _, l := range c.Lines {
		for _, p := range l.Points {
			if !math.IsNaN(p.X) && !math.IsNaN(p.Y) {
				maxX = math.Max(maxX, p.X)
				ys = append(ys, p.Y)
			}
		}
		for _, p := range l.Smooth {
			if !math.IsNaN(p.X) && !math.IsNaN(p.Y) {
				maxX, maxY = math.Max(maxX, p.X), math.Max(maxY, p.Y)
			}
		}
	}
	if len(ys) > 0 {
		slices.Sort(ys)
		maxY = math.Max(maxY, ys[min(len(ys)-1, len(ys)*98/100)])
	}
	maxX, maxY = niceCeil(maxX), niceCeil(maxY*1.1)
	for _, y := range ys {
		if y > maxY {
			clipped++
		}
	}
	return maxX, maxY, clipped
}

func axisNumber(v float64) string {
	switch {
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
	}
}
