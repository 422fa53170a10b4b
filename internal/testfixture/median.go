package testfixture

import (
	"slices"
	"time"
)

// MedianMS returns the median of ds in milliseconds, the p50 a benchmark
// reports; ds must not be empty.
func MedianMS(ds []time.Duration) float64 {
	s := slices.Sorted(slices.Values(ds))
	return float64(s[len(s)/2].Microseconds()) / 1000
}
