package compare

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/duckdb"
	"github.com/perfwh/perfwh/warehouse/engines"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

// engineTests runs f against a fresh, never-migrated warehouse of each
// engine: DuckDB always, ClickHouse when the test service is configured
// (and in CI, where it must be).
func engineTests(t *testing.T, f func(t *testing.T, w warehouse.Warehouse)) {
	t.Run("duckdb", func(t *testing.T) {
		w, err := duckdb.Open(t.Context(), filepath.Join(t.TempDir(), "w.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		f(t, w)
	})
	t.Run("clickhouse", func(t *testing.T) {
		_, u := testenv.ClickHouseDatabase(t)
		w, err := engines.Open(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		f(t, w)
	})
}

// setCol sets column col of every row of table in b to value(i).
func setCol(t *testing.T, b *warehouse.Batch, table, col string, value func(i int) any) {
	t.Helper()
	tb, _ := warehouse.Lookup(table)
	for c, name := range tb.ColumnNames() {
		if name == col {
			for i := range b.Rows[table] {
				b.Rows[table][i][c] = value(i)
			}
			return
		}
	}
	t.Fatalf("no column %s.%s", table, col)
}

func synthetic(t *testing.T, runID string, seed int) *warehouse.Batch {
	b := warehousetest.SyntheticBatch(runID, seed)
	// Serving points with JSON parameters, equal in every run.
	setCol(t, b, "serving_outcome_fact", "params", func(i int) any { return []string{`{"concurrency":1}`, `{"concurrency":8}`}[i] })
	return b
}

const (
	runA = "01aa0000-0000-7000-8000-00000000000a"
	runB = "01aa0001-0000-7000-8000-00000000000b"
	runC = "01ab0000-0000-7000-8000-00000000000c"
)

func TestResolve(t *testing.T) {
	engineTests(t, func(t *testing.T, w warehouse.Warehouse) {
		ctx := t.Context()
		refErr := func(ref, want string) {
			t.Helper()
			_, err := Resolve(ctx, w, nil, ref)
			var re *RunRefError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Resolve(%q) = %v; want a RunRefError saying %q", ref, err, want)
			}
		}
		refErr(runA, "holds no runs yet; run `perfwh ingest` first")
		if err := w.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for _, b := range []*warehouse.Batch{synthetic(t, runA, 1), synthetic(t, runB, 2)} {
			if err := w.WriteRun(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		q := &warehouse.LedgerEntry{RunID: runC, Status: warehouse.Quarantined, Reason: "blob missing", IngestVersion: 1, IngestedAt: warehousetest.Base}
		if err := w.WriteRun(ctx, &warehouse.Batch{RunID: runC, Ledger: q}); err != nil {
			t.Fatal(err)
		}
		if id, err := Resolve(ctx, w, nil, runB); err != nil || id != runB {
			t.Fatalf("Resolve(full id) = %q, %v", id, err)
		}
		if id, err := Resolve(ctx, w, nil, "01aa0000"); err != nil || id != runA {
			t.Fatalf("Resolve(unique prefix) = %q, %v", id, err)
		}
		refErr("01aa", "ambiguous")
		refErr("01ab", "quarantined by ingest (blob missing)")
		refErr("01ff", `no run "01ff" in the warehouse`)
		refErr("../etc", "is not a run id")
	})
}

func TestDiffSynthetic(t *testing.T) {
	engineTests(t, func(t *testing.T, w warehouse.Warehouse) {
		ctx := context.Background()
		if err := w.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for _, b := range []*warehouse.Batch{synthetic(t, runA, 1), synthetic(t, runB, 2), synthetic(t, runC, 1)} {
			if err := w.WriteRun(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Diff(ctx, Options{Warehouse: w}, runA, runB)
		if err != nil {
			t.Fatal(err)
		}
		if r.A.RunID != runA || r.B.RunID != runB || r.A.Benchmark != "synthetic" {
			t.Fatalf("runs %+v %+v", r.A, r.B)
		}
		differs := map[string]bool{}
		sections := map[string]bool{}
		for _, d := range r.Dimensions {
			differs[d.Section+"."+d.Name] = d.Differs
			sections[d.Section] = true
		}
		for _, s := range Sections {
			if !sections[s] {
				t.Errorf("no %s dimensions", s)
			}
		}
		// Seeds 1 and 2 give different dimension rows and owners.
		for _, k := range []string{"software.software_version_digest", "software.go_version", "hardware.cpu_model",
			"workload.workload_spec_digest", "workload.seed", "metadata.owner"} {
			if !differs[k] {
				t.Errorf("%s does not differ", k)
			}
		}
		for _, k := range []string{"run.benchmark_name", "metadata.cluster", "hardware.memory_bytes", "workload.driver"} {
			if v, ok := differs[k]; !ok || v {
				t.Errorf("%s: present %v, differs %v; want present and equal", k, ok, v)
			}
		}
		var storage, serving int
		for _, o := range r.Outcomes {
			if o.In != InBoth {
				t.Errorf("outcome %+v not matched", o)
				continue
			}
			switch o.Kind {
			case "storage":
				storage++
				if o.Throughput == nil || o.Throughput.Interval != nil || !strings.Contains(o.Throughput.Reason, "not available") {
					t.Errorf("storage CI without an evidence store: %+v", o.Throughput)
				}
			case "serving":
				serving++
				if o.Axes["concurrency"] == nil || len(o.Metrics) == 0 || o.Metrics[0].Name != "achieved_rate" {
					t.Errorf("serving outcome %+v", o)
				}
			}
			for _, m := range o.Metrics {
				if m.A != nil && m.B != nil && (m.Delta == nil || *m.Delta != *m.B-*m.A) {
					t.Errorf("%s %s: delta %v of %v → %v", o.Kind, m.Name, m.Delta, *m.A, *m.B)
				}
			}
		}
		if storage != 6 || serving != 2 {
			t.Fatalf("%d storage and %d serving outcomes matched; want 6 and 2", storage, serving)
		}
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no evidence store") {
			t.Fatalf("warnings %q", r.Warnings)
		}

		// Runs written with the same seed share every dimension row and
		// their metadata: only the run facts (random here) may differ.
		r, err = Diff(ctx, Options{Warehouse: w}, runA, runC)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Dimensions {
			if d.Differs && d.Section != "run" {
				t.Errorf("equal dimensions differ: %+v", d)
			}
		}
	})
}
