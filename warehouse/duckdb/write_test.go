package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

func count(t *testing.T, w *Warehouse, table string) int64 {
	t.Helper()
	r, err := w.Query(t.Context(), "SELECT count(*) FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	return r.Rows[0][0].(int64)
}

// A write that fails after it has deleted the old rows and inserted some
// new ones (a crash, a full disk) leaves the previous write intact.
func TestFailedWriteRollsBack(t *testing.T) {
	w := openTemp(t).(*Warehouse)
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := warehousetest.SyntheticBatch("run-a", 1)
	if err := w.WriteRun(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	w.write = func(ctx context.Context, tx *sql.Tx, conn *sql.Conn, tb warehouse.Table, rows [][]any) error {
		if tb.Name == "telemetry_slice_fact" {
			return boom
		}
		return appendRows(ctx, tx, conn, tb, rows)
	}
	err := w.WriteRun(t.Context(), warehousetest.SyntheticBatchN("run-a", 1, 40, 40))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "telemetry_slice_fact") {
		t.Fatalf("got %v; want the injected error naming the table", err)
	}
	for name, rows := range old.Rows {
		if tb, _ := warehouse.Lookup(name); tb.Kind == warehouse.Fact {
			if got := count(t, w, name); got != int64(len(rows)) {
				t.Errorf("%s: %d rows after the failed rewrite; want the old %d", name, got, len(rows))
			}
		}
	}
	if got := count(t, w, "ingest_ledger"); got != 1 {
		t.Errorf("ingest_ledger: %d rows; want 1", got)
	}
}

func TestMigrateRefusesANewerSchema(t *testing.T) {
	w := openTemp(t).(*Warehouse)
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Query(t.Context(), `INSERT INTO schema_migrations (version, description, applied_at) VALUES (99, 'future', now()::TIMESTAMP)`); err != nil {
		t.Fatal(err)
	}
	err := w.Migrate(t.Context())
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Migrate of a version-99 warehouse: got %v; want a refusal", err)
	}
	st, err := w.Status(t.Context())
	if err != nil || st.SchemaVersion != 99 {
		t.Fatalf("Status: %+v, %v; want version 99", st, err)
	}
}

// Columns equal in every row go into the INSERT as literals; values that
// need quoting must survive that.
func TestConstantColumnsAsLiterals(t *testing.T) {
	w := openTemp(t).(*Warehouse)
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := warehousetest.SyntheticBatch("run-'q' \\ \"x\" é", 1)
	if err := w.WriteRun(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	r, err := w.Query(t.Context(), `SELECT DISTINCT run_id, node_name FROM telemetry_slice_fact`)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{b.RunID, `node-1 'a\b'`}
	if len(r.Rows) != 1 || r.Rows[0][0] != want[0] || r.Rows[0][1] != want[1] {
		t.Fatalf("got %v; want [%v]", r.Rows, want)
	}
	tb, _ := warehouse.Lookup("telemetry_slice_fact")
	for _, name := range []string{"run_id", "node_name", "ingested_at"} {
		i := slices.Index(tb.ColumnNames(), name)
		if _, ok := constantLiteral(tb.Columns[i].Type, b.Rows[tb.Name], i); !ok {
			t.Errorf("column %s is not sent as a literal", name)
		}
	}
}
