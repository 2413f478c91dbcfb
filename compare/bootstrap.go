package compare

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/perfwh/perfwh/ingest"
)

// Bootstrap defaults.
const (
	DefaultResamples  = 2000
	DefaultConfidence = 0.95
	DefaultSeed       = 1
)

// Interval is a confidence interval of a difference B − A.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// BootstrapMeanDiff returns the percentile bootstrap confidence interval,
// at level (0.95 for 95%), of mean(b) − mean(a): each of resamples rounds
// draws len(a) values from a and len(b) values from b with replacement,
// independently, and takes the difference of their means; the interval's
// ends are the nearest-rank (1−level)/2 and (1+level)/2 quantiles of those
// differences. The generator is PCG seeded with seed, so equal inputs give
// equal intervals. a and b must not be empty.
func BootstrapMeanDiff(a, b []float64, resamples int, level float64, seed uint64) Interval {
	return bootstrap(a, b, resamples, level, rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)))
}

// pointSeed derives the generator of one workload point from the report's
// seed and the point's key, so a point's interval does not depend on which
// other points the runs have.
func pointSeed(seed uint64, key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func bootstrap(a, b []float64, resamples int, level float64, rng *rand.Rand) Interval {
	if resamples < 1 {
		resamples = DefaultResamples
	}
	diffs := make([]float64, resamples)
	for i := range diffs {
		diffs[i] = resampledMean(b, rng) - resampledMean(a, rng)
	}
	slices.Sort(diffs)
	alpha := 1 - level
	return Interval{
		Low:  diffs[ingest.NearestRank(alpha/2, resamples)],
		High: diffs[ingest.NearestRank(1-alpha/2, resamples)],
	}
}

func resampledMean(xs []float64, rng *rand.Rand) float64 {
	var sum float64
	for range xs {
		sum += xs[rng.IntN(len(xs))]
	}
	return sum / float64(len(xs))
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
