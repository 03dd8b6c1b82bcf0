package measure

import (
	"math"
	"slices"
)

// Summary describes repeated samples of one figure.
type Summary struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Summarize returns the median and range of samples; NaN samples (failed
// runs) are ignored. With no valid sample N is 0 and the values are NaN.
func Summarize(samples []float64) Summary {
	valid := make([]float64, 0, len(samples))
	for _, s := range samples {
		if !math.IsNaN(s) {
			valid = append(valid, s)
		}
	}
	if len(valid) == 0 {
		return Summary{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(valid)
	n := len(valid)
	median := valid[n/2]
	if n%2 == 0 {
		median = (valid[n/2-1] + valid[n/2]) / 2
	}
	return Summary{Median: median, Min: valid[0], Max: valid[n-1], N: n}
}

// Percentile returns the p-th percentile (0..100, nearest rank) of samples.
func Percentile(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(len(s)-1, rank))]
}
