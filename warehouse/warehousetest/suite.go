package warehousetest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/perfwh/perfwh/warehouse"
)

// Run runs the conformance suite. open must return a fresh, empty,
// never-migrated warehouse for each subtest and close it with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) warehouse.Warehouse) {
	tests := []struct {
		name string
		f    func(t *testing.T, w warehouse.Warehouse)
	}{
		{"StatusBeforeMigrate", testStatusBeforeMigrate},
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"WriteRun", testWriteRun},
		{"RewriteReplaces", testRewriteReplaces},
		{"ConcurrentWrites", testConcurrentWrites},
		{"InvalidBatchLeavesRowsIntact", testInvalidBatch},
		{"CancelledWriteLeavesRowsIntact", testCancelledWrite},
		{"Ledger", testLedger},
		{"QuarantineReplacesRun", testQuarantineReplacesRun},
		{"DimensionsShared", testDimensionsShared},
		{"QueryTypes", testQueryTypes},
		{"CanonicalResults", testCanonicalResults},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, open(t)) })
	}
}

func migrated(t *testing.T, w warehouse.Warehouse) {
	t.Helper()
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
}

func write(t *testing.T, w warehouse.Warehouse, b *warehouse.Batch) {
	t.Helper()
	if err := w.WriteRun(t.Context(), b); err != nil {
		t.Fatalf("WriteRun %s: %v", b.RunID, err)
	}
}

func testStatusBeforeMigrate(t *testing.T, w warehouse.Warehouse) {
	st, err := w.Status(t.Context())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.SchemaVersion != 0 || len(st.Tables) != 0 {
		t.Fatalf("never migrated: got version %d and %d tables; want 0 and none", st.SchemaVersion, len(st.Tables))
	}
	if st.Dialect != w.Dialect() || st.Latest != warehouse.SchemaVersion || st.ServerVersion == "" || st.Location == "" {
		t.Fatalf("got status %+v; want dialect %s, latest %d, a server version and a location", st, w.Dialect(), warehouse.SchemaVersion)
	}
}

func testMigrateIsIdempotent(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	migrated(t, w)
	st, err := w.Status(t.Context())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.SchemaVersion != warehouse.SchemaVersion {
		t.Fatalf("got schema version %d; want %d", st.SchemaVersion, warehouse.SchemaVersion)
	}
	checkCounts(t, w, st, nil)
	led, err := w.Ledger(t.Context())
	if err != nil || len(led) != 0 {
		t.Fatalf("Ledger of an empty warehouse: got %v, %v; want no entries", led, err)
	}
}

// checkCounts checks that Status lists every table in schema order, and
// that each table holds the rows of the given batches (the last batch of a
// run counts) plus one schema_migrations row per migration — both through
// Status and through CountSQL.
func checkCounts(t *testing.T, w warehouse.Warehouse, st warehouse.Status, batches []*warehouse.Batch) {
	t.Helper()
	want := expectedCounts(batches)
	if len(st.Tables) != len(warehouse.Tables) {
		t.Fatalf("Status lists %d tables; want %d", len(st.Tables), len(warehouse.Tables))
	}
	for i, tb := range warehouse.Tables {
		got := st.Tables[i]
		if got.Name != tb.Name || got.Rows != want[tb.Name] {
			t.Errorf("Status table %d: got %s with %d rows; want %s with %d", i, got.Name, got.Rows, tb.Name, want[tb.Name])
		}
		r, err := w.Query(t.Context(), CountSQL(w, tb.Name))
		if err != nil {
			t.Fatalf("count %s: %v", tb.Name, err)
		}
		if len(r.Rows) != 1 || r.Rows[0][0] != want[tb.Name] {
			t.Errorf("%s: got %v; want [[int64 %d]]", CountSQL(w, tb.Name), r.Rows, want[tb.Name])
		}
	}
}

// expectedCounts is the row count of every table after writing batches in
// order: a run's last batch replaces its earlier ones; dimension rows are
// counted once per key.
func expectedCounts(batches []*warehouse.Batch) map[string]int64 {
	last := map[string]*warehouse.Batch{}
	var order []string
	for _, b := range batches {
		if _, ok := last[b.RunID]; !ok {
			order = append(order, b.RunID)
		}
		last[b.RunID] = b
	}
	n := map[string]int64{"schema_migrations": int64(len(warehouse.Migrations))}
	dimKeys := map[string]map[string]bool{}
	for _, id := range order {
		b := last[id]
		for name, rows := range b.Rows {
			tb, _ := warehouse.Lookup(name)
			if tb.Kind != warehouse.Dim || tb.Key[0] == "run_id" {
				n[name] += int64(len(rows))
				continue
			}
			if dimKeys[name] == nil {
				dimKeys[name] = map[string]bool{}
			}
			for _, r := range expectRows(tb, rows) {
				dimKeys[name][FormatValue(r[0])] = true // dimensions are keyed by their first column
			}
			n[name] = int64(len(dimKeys[name]))
		}
		if b.Ledger != nil {
			n["ingest_ledger"]++
		}
	}
	return n
}

func testWriteRun(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	b := SyntheticBatch("run-a", 1)
	write(t, w, b)
	checkRun(t, w, b)
	checkTables(t, w, b)
}

func testRewriteReplaces(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	b := SyntheticBatch("run-a", 1)
	write(t, w, b)
	write(t, w, SyntheticBatch("run-a", 1))
	checkRun(t, w, b)
	fewer := CloneBatch(b)
	for _, name := range []string{"storage_outcome_fact", "telemetry_slice_fact"} {
		fewer.Rows[name] = fewer.Rows[name][1:]
	}
	delete(fewer.Rows, "training_outcome_fact")
	fewer.Ledger.Rows = int64(fewer.Count())
	write(t, w, fewer)
	checkRun(t, w, fewer)
	checkTables(t, w, fewer)
}

func testConcurrentWrites(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	a, b := SyntheticBatch("run-a", 1), SyntheticBatch("run-b", 1)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for _, x := range []*warehouse.Batch{a, a, b, a, b, b} {
		wg.Go(func() { errs <- w.WriteRun(t.Context(), x) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent WriteRun: %v", err)
		}
	}
	checkRun(t, w, a)
	checkRun(t, w, b)
	st, err := w.Status(t.Context())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	checkCounts(t, w, st, []*warehouse.Batch{a, b})
}

func testInvalidBatch(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	good := SyntheticBatch("run-a", 1)
	write(t, w, good)
	for _, tc := range []struct {
		name, table string // table: what the error must name
		mutate      func(b *warehouse.Batch)
	}{
		{"short row", "telemetry_slice_fact", func(b *warehouse.Batch) {
			r := b.Rows["telemetry_slice_fact"]
			r[len(r)-1] = r[len(r)-1][:len(r[len(r)-1])-1]
		}},
		{"long row", "storage_outcome_fact", func(b *warehouse.Batch) {
			b.Rows["storage_outcome_fact"][2] = append(b.Rows["storage_outcome_fact"][2], "extra")
		}},
		{"wrong type", "benchmark_run_fact", func(b *warehouse.Batch) {
			b.Rows["benchmark_run_fact"][0][column("benchmark_run_fact", "trials_total")] = "four"
		}},
		{"null in not null", "run_metadata", func(b *warehouse.Batch) { b.Rows["run_metadata"][1][column("run_metadata", "value")] = nil }},
		{"unknown table", "no_such_table", func(b *warehouse.Batch) { b.Add("no_such_table", "x") }},
		{"row of another run", "serving_outcome_fact", func(b *warehouse.Batch) {
			b.Rows["serving_outcome_fact"][1][column("serving_outcome_fact", "run_id")] = "run-z"
		}},
		{"duplicate key", "run_metadata", func(b *warehouse.Batch) {
			b.Rows["run_metadata"] = append(b.Rows["run_metadata"], b.Rows["run_metadata"][0])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The bad batch would also drop a table and change a value:
			// none of it may land.
			bad := CloneBatch(good)
			delete(bad.Rows, "training_outcome_fact")
			bad.Rows["workload_dim"][0][column("workload_dim", "driver")] = "changed"
			tc.mutate(bad)
			err := w.WriteRun(t.Context(), bad)
			if err == nil {
				t.Fatalf("WriteRun of a batch with a %s succeeded; want an error", tc.name)
			}
			if !strings.Contains(err.Error(), tc.table) {
				t.Errorf("error %q does not name table %s", err, tc.table)
			}
			checkRun(t, w, good)
			checkTables(t, w, good)
		})
	}
}

func testCancelledWrite(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	good := SyntheticBatch("run-a", 1)
	write(t, w, good)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.WriteRun(ctx, SyntheticBatch("run-a", 7)); err == nil {
		t.Fatal("WriteRun with a cancelled context succeeded; want an error")
	}
	checkRun(t, w, good)
	checkTables(t, w, good)
}

func testLedger(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	a := SyntheticBatch("run-a", 1)
	q := &warehouse.Batch{RunID: "run-q", Ledger: &warehouse.LedgerEntry{RunID: "run-q", Status: warehouse.Quarantined,
		Reason: "manifest digest mismatch", IngestVersion: 1, IngestedAt: Base.Add(1500500 * 1e6)}} // sub-second: stored to the second
	write(t, w, a)
	write(t, w, q)
	got, err := w.Ledger(t.Context())
	if err != nil {
		t.Fatalf("Ledger: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("Ledger: got %d entries; want 2: %+v", len(got), got)
	}
	for _, want := range []*warehouse.LedgerEntry{a.Ledger, q.Ledger} {
		e := *want
		e.IngestedAt = e.IngestedAt.UTC().Truncate(1e9)
		g := got[e.RunID]
		if g != e || g.IngestedAt.Location().String() != "UTC" {
			t.Errorf("Ledger[%s]: got %+v; want %+v (UTC)", e.RunID, g, e)
		}
	}
}

func testQuarantineReplacesRun(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	a, b := SyntheticBatch("run-a", 1), SyntheticBatch("run-b", 2)
	write(t, w, a)
	write(t, w, b)
	q := &warehouse.Batch{RunID: "run-a", Ledger: &warehouse.LedgerEntry{RunID: "run-a", Status: warehouse.Quarantined,
		Reason: "evidence failed verification", IngestVersion: 2, IngestedAt: Base}}
	write(t, w, q)
	checkRun(t, w, q)
	checkRun(t, w, b)
	st, err := w.Status(t.Context())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	// Dimensions are shared, not owned by a run: run-a's stay.
	want := expectedCounts([]*warehouse.Batch{a, b})
	for _, ts := range st.Tables {
		tb, _ := warehouse.Lookup(ts.Name)
		if tb.Kind == warehouse.Dim && tb.Key[0] != "run_id" && ts.Rows != want[ts.Name] {
			t.Errorf("%s: got %d rows after quarantining run-a; want %d", ts.Name, ts.Rows, want[ts.Name])
		}
	}
}

func testDimensionsShared(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	a, b, c := SyntheticBatch("run-a", 1), SyntheticBatch("run-b", 1), SyntheticBatch("run-c", 2)
	write(t, w, a)
	write(t, w, b)
	st, err := w.Status(t.Context())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	checkCounts(t, w, st, []*warehouse.Batch{a, b})
	write(t, w, c)
	write(t, w, a)
	if st, err = w.Status(t.Context()); err != nil {
		t.Fatalf("Status: %v", err)
	}
	checkCounts(t, w, st, []*warehouse.Batch{a, b, c})
	for _, x := range []*warehouse.Batch{a, b, c} {
		checkRun(t, w, x)
	}
}

func testCanonicalResults(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	for _, b := range CanonicalBatches() {
		write(t, w, b)
	}
	first := CanonicalResults(t, w)
	CompareResults(t, first, CanonicalResults(t, w))
	checkGolden(t, w, first)
}
