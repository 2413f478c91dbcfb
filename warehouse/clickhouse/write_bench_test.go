package clickhouse

import (
	"testing"

	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

// BenchmarkPrepare measures WriteRun's client-side work before it sends
// anything (validation, column-wise conversion, the duplicate-key check)
// for 100k storage and telemetry rows; no server needed.
// bench/clickhouse-ingest measures the whole write against the server.
func BenchmarkPrepare(b *testing.B) {
	full := warehousetest.SyntheticBatchN("run-bench", 1, 20_000, 80_000)
	batch := &warehouse.Batch{RunID: full.RunID, Rows: map[string][][]any{}}
	for _, t := range []string{"storage_outcome_fact", "telemetry_slice_fact"} {
		batch.Rows[t] = full.Rows[t]
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := prepare(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch.Count())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
