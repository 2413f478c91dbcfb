package ingest

import (
	"math"
	"testing"
)

func TestNearestRank(t *testing.T) {
	f := func(q float64, n, want int) {
		t.Helper()
		if got := NearestRank(q, n); got != want {
			t.Fatalf("NearestRank(%v, %d) = %d; want %d", q, n, got, want)
		}
	}
	f(0.5, 1, 0)
	f(0.5, 2, 0)
	f(0.5, 3, 1)
	f(0.9, 10, 8)
	f(0.9, 1000, 899)
	f(0.99, 100, 98)
	f(0.999, 1000, 998)
	f(0.999, 10, 9)
	f(0.99, 1, 0)
}

func TestLatencies(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	s := Latencies(xs)
	if s.N != 10 || s.Percentile["p50"] != 5 || s.Percentile["p90"] != 9 || s.Percentile["p99"] != 10 || s.Percentile["p999"] != 10 {
		t.Fatalf("stats %+v", s)
	}
	if s.Mean != 5.5 || math.Abs(s.Stddev-math.Sqrt(8.25)) > 1e-12 {
		t.Fatalf("mean %v stddev %v", s.Mean, s.Stddev)
	}
	if e := Latencies(nil); e.N != 0 || len(e.Percentile) != 0 {
		t.Fatalf("empty: %+v", e)
	}
	if cv, ok := CV([]float64{10, 12}); !ok || math.Abs(cv-math.Sqrt(2)/11) > 1e-12 {
		t.Fatalf("CV = %v %v", cv, ok)
	}
	if _, ok := CV([]float64{3}); ok {
		t.Fatal("CV of one value defined")
	}
}
