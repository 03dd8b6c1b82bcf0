package report

import (
	"fmt"
	"math"
)

// Comparison of one value with a reference.
type Comparison struct {
	Reference string  `json:"reference"` // setup name
	Ratio     float64 `json:"ratio"`     // value / reference (NaN for percent figures)
	DeltaPP   float64 `json:"delta_pp"`  // value - reference, for percent figures
	OK        bool    `json:"ok"`        // both values exist
}

// String renders a comparison compactly: "1.23x" or "+0.40pp".
func (c Comparison) String(f Figure) string {
	switch {
	case !c.OK:
		return "-"
	case f.Percent:
		return fmt.Sprintf("%+.2fpp", c.DeltaPP)
	case math.IsInf(c.Ratio, 0) || math.IsNaN(c.Ratio):
		return "-"
	default:
		return fmt.Sprintf("%.2fx", c.Ratio)
	}
}

// Compare compares setup's median of figure with ref's.
func (s *Section) Compare(figure Figure, setup, ref string) Comparison {
	c := Comparison{Reference: ref, Ratio: math.NaN(), DeltaPP: math.NaN()}
	v, ok1 := s.Value(figure.ID, setup)
	r, ok2 := s.Value(figure.ID, ref)
	if !ok1 || !ok2 {
		return c
	}
	c.OK = true
	if figure.Percent {
		c.DeltaPP = v.Median - r.Median
	} else if r.Median != 0 {
		c.Ratio = v.Median / r.Median
	}
	return c
}

// BestOf returns, among the setups of the given kind, the one whose median
// of figure is best (highest when Higher, else lowest).
func (s *Section) BestOf(figure Figure, kind string) (string, bool) {
	best, found := "", false
	var bestVal float64
	for _, si := range s.Setups {
		if si.Kind != kind {
			continue
		}
		v, ok := s.Value(figure.ID, si.Name)
		if !ok {
			continue
		}
		better := v.Median > bestVal
		if !figure.Higher {
			better = v.Median < bestVal
		}
		if !found || better {
			best, bestVal, found = si.Name, v.Median, true
		}
	}
	return best, found
}
