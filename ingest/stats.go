package ingest

import (
	"math"
	"slices"
)

// Quantiles are the percentile levels derived for every latency family.
var Quantiles = []struct {
	Suffix string
	Q      float64
}{{"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999}}

// LatencyStats are exact statistics of a set of latencies.
type LatencyStats struct {
	N          int
	Percentile map[string]float64 // by Quantiles suffix
	Mean       float64
	Stddev     float64 // population
}

// Latencies computes exact statistics of xs (which it sorts in place).
// Percentiles use the nearest-rank definition: the q-th percentile is the
// smallest value with at least ⌈q·n⌉ values at or below it, i.e. the
// element at 1-based rank ⌈q·n⌉ of the sorted values. It is an observed
// value, never an interpolation. Mean and standard deviation use Welford's
// algorithm, in sorted order so the result does not depend on input order.
func Latencies(xs []float64) LatencyStats {
	s := LatencyStats{N: len(xs), Percentile: map[string]float64{}}
	if len(xs) == 0 {
		return s
	}
	slices.Sort(xs)
	for _, q := range Quantiles {
		s.Percentile[q.Suffix] = xs[NearestRank(q.Q, len(xs))]
	}
	var mean, m2 float64
	for i, x := range xs {
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	s.Mean, s.Stddev = mean, math.Sqrt(m2/float64(len(xs)))
	return s
}

// NearestRank returns the 0-based index of the q-quantile of n sorted
// values: ⌈q·n⌉ - 1, at least 0.
func NearestRank(q float64, n int) int {
	// A tiny tolerance keeps q·n that is an integer in exact arithmetic
	// (0.9·1000) from rounding up past it in floating point.
	r := int(math.Ceil(q*float64(n)-1e-9)) - 1
	return max(0, min(r, n-1))
}

// CV is the coefficient of variation (sample standard deviation / mean) of
// xs, and false when it is undefined (fewer than two values, zero mean).
func CV(xs []float64) (float64, bool) {
	if len(xs) < 2 {
		return 0, false
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0, false
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / mean, true
}
