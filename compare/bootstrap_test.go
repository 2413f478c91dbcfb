package compare

import (
	"math/rand/v2"
	"testing"
)

func normal(rng *rand.Rand, n int, mean, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean + sd*rng.NormFloat64()
	}
	return out
}

func TestBootstrapIsDeterministicForASeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	a, b := normal(rng, 8, 1000, 50), normal(rng, 8, 1100, 50)
	x := BootstrapMeanDiff(a, b, 2000, 0.95, 42)
	y := BootstrapMeanDiff(a, b, 2000, 0.95, 42)
	if x != y {
		t.Fatalf("same seed: %v then %v", x, y)
	}
	if z := BootstrapMeanDiff(a, b, 2000, 0.95, 43); z == x {
		t.Fatalf("seeds 42 and 43 gave the same interval %v", x)
	}
	if !(x.Low < x.High) {
		t.Fatalf("interval %v is empty", x)
	}
	// A point's generator depends on the seed and its key only.
	p, q := bootstrap(a, b, 500, 0.9, pointSeed(1, "k")), bootstrap(a, b, 500, 0.9, pointSeed(1, "k"))
	if p != q {
		t.Fatalf("pointSeed not deterministic: %v %v", p, q)
	}
}

// The interval contains the true difference of the means on data drawn
// with known means, and does so in about the nominal share of data sets.
func TestBootstrapCoversTheTrueDifference(t *testing.T) {
	const trueDiff = 110.0 - 100.0
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := normal(rng, 30, 100, 5), normal(rng, 30, 110, 5)
	iv := BootstrapMeanDiff(a, b, DefaultResamples, 0.95, DefaultSeed)
	if iv.Low > trueDiff || iv.High < trueDiff {
		t.Fatalf("95%% interval %v does not contain the true difference %g", iv, trueDiff)
	}
	if w := iv.High - iv.Low; w < 1 || w > 8 {
		// sd of the difference of means is 5·√(2/30) ≈ 1.29: a 95% interval is about 5 wide
		t.Fatalf("interval %v has width %g; want about 5", iv, w)
	}

	const sets = 300
	covered := 0
	for i := range sets {
		a, b := normal(rng, 20, 100, 5), normal(rng, 20, 110, 5)
		iv := BootstrapMeanDiff(a, b, 1000, 0.95, uint64(i))
		if iv.Low <= trueDiff && trueDiff <= iv.High {
			covered++
		}
	}
	// Percentile intervals under-cover slightly at n=20 (about 93%).
	if share := float64(covered) / sets; share < 0.88 || share > 0.99 {
		t.Fatalf("coverage %.3f over %d data sets; want about 0.95", share, sets)
	}
}

func TestBootstrapOfConstantsIsAPoint(t *testing.T) {
	iv := BootstrapMeanDiff([]float64{5, 5, 5}, []float64{7, 7}, 200, 0.95, 1)
	if iv.Low != 2 || iv.High != 2 {
		t.Fatalf("interval %v; want [2, 2]", iv)
	}
}
