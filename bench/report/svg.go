package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Colours by setup kind, so a reader tells kernel, Open vSwitch and gvs
// apart at a glance.
var kindColour = map[string]string{"kernel": "#7f7f7f", "ovs": "#1f77b4", "gvs": "#d62728", "server": "#2ca02c"}

// WriteSVG draws a horizontal bar chart of figure f: one bar per measured
// setup (the median) with a whisker for the range, labelled with its value.
func (s *Section) WriteSVG(w io.Writer, f Figure) error {
	type bar struct {
		name, kind     string
		med, low, high float64
	}
	var bars []bar
	maxVal := 0.0
	for _, si := range s.Setups {
		v, ok := s.Value(f.ID, si.Name)
		if !ok {
			continue
		}
		bars = append(bars, bar{si.Name, si.Kind, v.Median, v.Min, v.Max})
		maxVal = math.Max(maxVal, v.Max)
	}
	const (
		labelW, chartW, valueW = 170, 420, 110
		rowH, top, bottom      = 26, 50, 20
	)
	width := labelW + chartW + valueW
	height := top + rowH*len(bars) + bottom
	if maxVal <= 0 {
		maxVal = 1
	}
	scale := func(v float64) float64 { return labelW + chartW*math.Max(0, v)/maxVal }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	better := "lower is better"
	if f.Higher {
		better = "higher is better"
	}
	fmt.Fprintf(&b, `<text x="8" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(f.Test+": "+f.Label))
	fmt.Fprintf(&b, `<text x="8" y="38" fill="#555">%s, %s; bar = median, whisker = min-max</text>`+"\n", html.EscapeString(f.Unit), better)
	for i, br := range bars {
		y := top + i*rowH
		colour := kindColour[br.kind]
		if colour == "" {
			colour = "#9467bd"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-6, y+16, html.EscapeString(br.name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", labelW, y+4, scale(br.med)-labelW, rowH-8, colour)
		if br.high > br.low {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black"/>`+"\n", scale(br.low), scale(br.high), y+rowH/2, y+rowH/2)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", labelW+chartW+6, y+16, html.EscapeString(FormatValue(br.med, f)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
