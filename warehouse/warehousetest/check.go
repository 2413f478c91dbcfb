package warehousetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

// keyedByRun reports whether t's rows belong to one run (facts,
// artifact_lineage_dim, ingest_ledger).
func keyedByRun(t warehouse.Table) bool {
	return t.Kind == warehouse.Fact || (len(t.Key) > 0 && t.Key[0] == "run_id")
}

// Normalize returns a batch value as Query returns it: *float64 as float64
// or nil, uint8 as int64, times in UTC truncated to the second.
func Normalize(v any) any {
	switch x := v.(type) {
	case *float64:
		if x == nil {
			return nil
		}
		return *x
	case uint8:
		return int64(x)
	case time.Time:
		return x.UTC().Truncate(time.Second)
	}
	return v
}

// expectRows returns rows normalised and sorted by t's key, as a query
// ordered by the key returns them.
func expectRows(t warehouse.Table, rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, v := range r {
			out[i][j] = Normalize(v)
		}
	}
	idx := keyIndex(t)
	slices.SortStableFunc(out, func(a, b []any) int {
		for _, i := range idx {
			if c := compare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

func keyIndex(t warehouse.Table) []int {
	idx := make([]int, len(t.Key))
	for k, name := range t.Key {
		idx[k] = slices.Index(t.ColumnNames(), name)
	}
	return idx
}

func compare(a, b any) int {
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	case time.Time:
		return x.Compare(b.(time.Time))
	}
	return 0
}

// checkRun checks that every table keyed by run holds exactly b's rows for
// b.RunID, value for value and type for type.
func checkRun(t *testing.T, w warehouse.Warehouse, b *warehouse.Batch) {
	t.Helper()
	for _, tb := range warehouse.Tables {
		if !keyedByRun(tb) {
			continue
		}
		want := b.Rows[tb.Name]
		if tb.Name == "ingest_ledger" {
			want = nil
			if b.Ledger != nil {
				want = [][]any{b.Ledger.Row()}
			}
		}
		q := "SELECT " + strings.Join(tb.ColumnNames(), ", ") + " FROM " + From(w, tb.Name) +
			" WHERE run_id = ? ORDER BY " + strings.Join(tb.Key, ", ")
		checkQuery(t, w, tb, q, []any{b.RunID}, expectRows(tb, want))
	}
}

// checkTables checks that the dimension rows of b are stored as written.
func checkTables(t *testing.T, w warehouse.Warehouse, b *warehouse.Batch) {
	t.Helper()
	for _, tb := range warehouse.Tables {
		if tb.Kind != warehouse.Dim || keyedByRun(tb) {
			continue
		}
		for _, row := range expectRows(tb, b.Rows[tb.Name]) {
			var conds []string
			var args []any
			for k, i := range keyIndex(tb) {
				conds = append(conds, tb.Key[k]+" = ?")
				args = append(args, row[i])
			}
			q := "SELECT " + strings.Join(tb.ColumnNames(), ", ") + " FROM " + From(w, tb.Name) + " WHERE " + strings.Join(conds, " AND ")
			checkQuery(t, w, tb, q, args, [][]any{row})
		}
	}
}

func checkQuery(t *testing.T, w warehouse.Warehouse, tb warehouse.Table, q string, args []any, want [][]any) {
	t.Helper()
	r, err := w.Query(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if !slices.Equal(r.Columns, tb.ColumnNames()) {
		t.Fatalf("%s: got columns %v; want %v", q, r.Columns, tb.ColumnNames())
	}
	got := FormatResults(map[string]*warehouse.Result{tb.Name: r})
	exp := FormatResults(map[string]*warehouse.Result{tb.Name: {Columns: tb.ColumnNames(), Rows: want}})
	if got != exp {
		t.Errorf("%s %v: rows differ from the batch's:\n%s", q, args, diffLines(exp, got))
	}
}

// column returns the index of column name in table, for tests that edit
// rows; it panics on a name the schema lacks.
func column(table, name string) int {
	tb, _ := warehouse.Lookup(table)
	i := slices.Index(tb.ColumnNames(), name)
	if i < 0 {
		panic("warehousetest: no column " + table + "." + name)
	}
	return i
}

func testQueryTypes(t *testing.T, w warehouse.Warehouse) {
	migrated(t, w)
	b := SyntheticBatch("run-a", 1)
	write(t, w, b)
	r, err := w.Query(t.Context(), `SELECT count(*) AS n, sum(trials_total) AS total, max(duration_s) AS longest,
		max(started_at) AS latest, min(benchmark_name) AS name FROM `+From(w, "benchmark_run_fact")+` WHERE run_id = ?`, "run-a")
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	run := b.Rows["benchmark_run_fact"][0]
	want := &warehouse.Result{Columns: []string{"n", "total", "longest", "latest", "name"}, Rows: [][]any{{
		int64(1), run[column("benchmark_run_fact", "trials_total")], run[column("benchmark_run_fact", "duration_s")],
		run[column("benchmark_run_fact", "started_at")], "synthetic",
	}}}
	if g, e := FormatResults(map[string]*warehouse.Result{"q": r}), FormatResults(map[string]*warehouse.Result{"q": want}); g != e {
		t.Errorf("aggregates: got\n%s\nwant\n%s", g, e)
	}
	r, err = w.Query(t.Context(), `SELECT run_id FROM `+From(w, "benchmark_run_fact")+` WHERE run_id = ?`, "run-none")
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	if len(r.Rows) != 0 || len(r.Columns) != 1 || r.Columns[0] != "run_id" {
		t.Errorf("empty result: got %+v; want columns [run_id] and no rows", r)
	}
	if _, err := w.Query(t.Context(), `SELECT no_such_column FROM `+From(w, "benchmark_run_fact")); err == nil {
		t.Error("Query of a missing column succeeded; want an error")
	}
}
