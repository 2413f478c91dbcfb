package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

// insertRowsPerStmt is the rows of one prepared multi-row INSERT of
// insertRows: the fastest of 1, 10, 50 and 200 rows measured (about 1.8k,
// 4.0k, 1.9k and 0.3k rows/s: DuckDB binds large statements slowly).
const insertRowsPerStmt = 10

// insertRows is the alternative to appendRows that the benchmarks compare
// it with: prepared multi-row INSERTs with an explicit column list.
func insertRows(ctx context.Context, tx *sql.Tx, _ *sql.Conn, t warehouse.Table, rows [][]any) error {
	var stmt *sql.Stmt
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	args := make([]any, 0, insertRowsPerStmt*len(t.Columns))
	for start := 0; start < len(rows); start += insertRowsPerStmt {
		chunk := rows[start:min(start+insertRowsPerStmt, len(rows))]
		if stmt == nil || len(chunk) < insertRowsPerStmt {
			if stmt != nil {
				stmt.Close()
			}
			var err error
			if stmt, err = tx.PrepareContext(ctx, insertSQL(t, len(chunk))); err != nil {
				return err
			}
		}
		args = args[:0]
		for _, row := range chunk {
			for i, c := range t.Columns {
				args = append(args, dbValue(c.Type, row[i]))
			}
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("rows %d..%d: %w", start, start+len(chunk)-1, err)
		}
	}
	return nil
}

// The size of the benchmark's run: storage and telemetry rows.
const benchStorage, benchTelemetry = 200_000, 800_000

func benchmarkWriteRun(b *testing.B, write writeFunc, storage, telemetry int) {
	ctx := context.Background()
	w, err := Open(ctx, filepath.Join(b.TempDir(), "bench.duckdb"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	w.write = write
	if err := w.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	batch := warehousetest.SyntheticBatchN("run-bench", 1, storage, telemetry)
	rows := batch.Count()
	b.ReportAllocs()
	runtime.GC() // the batch's garbage is not the write's
	cpu := cpuTime()
	for b.Loop() {
		// The same run every time: after the first, each write also
		// deletes the previous copy, as a re-ingest does.
		if err := w.WriteRun(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows), "rows/op")
	// CPU seconds of the process (DuckDB's threads included): steadier
	// than wall time on a shared machine.
	if c := cpuTime() - cpu; c > 0 {
		b.ReportMetric(c.Seconds()/float64(b.N), "cpu-s/op")
	}
}

// BenchmarkWriteRun writes one run of about a million storage and
// telemetry rows through the production path (DuckDB's appender).
func BenchmarkWriteRun(b *testing.B) {
	benchmarkWriteRun(b, appendRows, benchStorage, benchTelemetry)
}

// BenchmarkWriteRunInsert is BenchmarkWriteRun with prepared multi-row
// INSERTs instead of the appender: the measurement behind appendRows.
func BenchmarkWriteRunInsert(b *testing.B) {
	benchmarkWriteRun(b, insertRows, benchStorage/100, benchTelemetry/100)
}
