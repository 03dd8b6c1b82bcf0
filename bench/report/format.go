package report

import (
	"fmt"
	"math"
	"strings"
)

// FormatValue renders v with the precision its unit needs.
func FormatValue(v float64, f Figure) string {
	if math.IsNaN(v) {
		return "-"
	}
	var s string
	switch {
	case f.Percent:
		s = fmt.Sprintf("%.2f", v)
	case math.Abs(v) >= 1000:
		s = fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	return s
}

// FormatWithUnit renders v followed by its unit.
func FormatWithUnit(v float64, f Figure) string {
	if f.Unit == "" || math.IsNaN(v) {
		return FormatValue(v, f)
	}
	if f.Unit == "%" {
		return FormatValue(v, f) + "%"
	}
	return FormatValue(v, f) + " " + f.Unit
}

// Cell renders a series summary: "median (min-max)" when spread, else
// the compact "median ±half-range%", with a star per busy sample (at most
// three); "-" when absent.
func (s *Section) Cell(f Figure, setup string, spread bool) string {
	v, ok := s.Value(f.ID, setup)
	if !ok {
		if si, ok := s.Setup(setup); ok && si.Status != StatusMeasured {
			return si.Status
		}
		for _, ser := range s.Series {
			if ser.Figure == f.ID && ser.Setup == setup && len(ser.Errors) > 0 {
				return "error"
			}
		}
		return "-"
	}
	out := FormatValue(v.Median, f)
	switch {
	case v.N < 2:
	case spread:
		out += fmt.Sprintf(" (%s-%s)", FormatValue(v.Min, f), FormatValue(v.Max, f))
	case v.Median != 0:
		out += fmt.Sprintf(" ±%.0f%%", 50*(v.Max-v.Min)/math.Abs(v.Median))
	default:
		out += fmt.Sprintf(" ±%s", FormatValue((v.Max-v.Min)/2, f))
	}
	if b := s.Busy(f.ID, setup); b > 0 {
		out += strings.Repeat("*", min(b, 3))
	}
	return out
}

// Heading is a figure's row label: "UDP 8 KB at 1 Gbit/s: loss (%)".
func (f Figure) Heading() string {
	return fmt.Sprintf("%s: %s (%s)", f.Test, f.Label, f.Unit)
}
