package fileio

import (
	"slices"
	"time"
)

// summarize builds the phase summary from the workers' results. Latency
// percentiles cover reads and writes (fsyncs have their own), exact, by
// nearest rank (see percentile).
func summarize(ws []*worker, chunks []chunk, elapsed time.Duration) map[string]any {
	var ops, bytes, errs int64
	for _, w := range ws {
		ops += w.ops
		bytes += w.bytes
		errs += w.errs
	}
	lat := make([]int64, 0, ops)
	var fsyncLat []int64
	for _, ch := range chunks {
		for _, s := range ch.samples {
			if s.op == opFsync {
				fsyncLat = append(fsyncLat, s.latency)
			} else {
				lat = append(lat, s.latency)
			}
		}
	}
	nfsync := len(fsyncLat)
	slices.Sort(lat)
	slices.Sort(fsyncLat)
	secs := elapsed.Seconds()
	rate := func(v int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(v) / secs
	}
	m := map[string]any{
		"ops":                 ops,
		"bytes":               bytes,
		"errors":              errs,
		"fsyncs":              int64(nfsync),
		"duration_s":          secs,
		"throughput_mb_per_s": rate(bytes) / 1e6, // MB = 10^6 bytes, as fio's "MB/s"
		"iops":                rate(ops),
		"latency_p50_us":      micros(percentile(lat, 500)),
		"latency_p90_us":      micros(percentile(lat, 900)),
		"latency_p99_us":      micros(percentile(lat, 990)),
		"latency_p999_us":     micros(percentile(lat, 999)),
	}
	if nfsync > 0 {
		m["fsync_latency_p50_us"] = micros(percentile(fsyncLat, 500))
		m["fsync_latency_p99_us"] = micros(percentile(fsyncLat, 990))
	}
	return m
}

// percentile returns the nearest-rank percentile of sorted values: the
// smallest value v such that at least permille/1000 of the values are <= v,
// that is sorted[ceil(permille*n/1000)-1]. It is 0 for no values. Integer
// arithmetic keeps p99.9 of 1000 values at rank 999 exactly.
func percentile(sorted []int64, permille int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (permille*n + 999) / 1000
	return sorted[max(rank, 1)-1]
}

func micros(ns int64) float64 { return float64(ns) / 1e3 }
