// Package testwh opens fresh warehouses of each engine for tests outside
// the engines' own packages: an embedded DuckDB file in the test's temp
// directory, and a database of its own on the test ClickHouse server
// (internal/testenv; skipped locally, failing in CI when it is missing).
// Both are closed when the test ends.
package testwh

import (
	"path/filepath"
	"testing"

	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/clickhouse"
	"github.com/perfwh/perfwh/warehouse/duckdb"
)

// DuckDB opens a fresh DuckDB warehouse.
func DuckDB(t testing.TB) warehouse.Warehouse {
	t.Helper()
	w, err := duckdb.Open(t.Context(), filepath.Join(t.TempDir(), "warehouse.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// ClickHouse opens a warehouse on a fresh database of the test server.
func ClickHouse(t testing.TB) warehouse.Warehouse {
	t.Helper()
	_, u := testenv.ClickHouseDatabase(t)
	w, err := clickhouse.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// Engines maps each engine's name to its opener, for tests that run the
// same checks on both.
func Engines() map[string]func(testing.TB) warehouse.Warehouse {
	return map[string]func(testing.TB) warehouse.Warehouse{warehouse.DuckDB: DuckDB, warehouse.ClickHouse: ClickHouse}
}
