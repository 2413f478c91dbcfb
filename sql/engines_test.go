package sql_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/internal/testwh"
	perfsql "github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

func loaded(t *testing.T, w warehouse.Warehouse) {
	t.Helper()
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, b := range warehousetest.CanonicalBatches() {
		if err := w.WriteRun(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
}

// cases binds each shipped query's parameters so that it returns rows of
// the canonical batches (and one empty result).
var cases = []struct {
	query  string
	params map[string]string
	rows   int
}{
	{"storage_outcomes_by_point", nil, 18},
	{"storage_outcomes_by_point", map[string]string{"run_id": "run-b", "op": "read"}, 3},
	{"storage_outcomes_by_point", map[string]string{"benchmark": "no such"}, 0},
	{"serving_percentiles_by_point", nil, 6},
	{"serving_percentiles_by_point", map[string]string{"run_id": "run-c", "model": "tiny"}, 2},
	{"runs", nil, 3},
	{"runs", map[string]string{"benchmark": "synthetic", "limit": "2"}, 2},
	{"storage_run_comparison", map[string]string{"run_a": "run-a", "run_b": "run-c"}, 6},
	{"storage_point_trend", map[string]string{"benchmark": "synthetic"}, 6},
	{"telemetry_summary", map[string]string{"metric": "cpu_util_pct"}, 6},
}

// Every shipped query runs on DuckDB and on ClickHouse 18.16 and gives the
// same rows (floats within 1e-9 relative: aggregates may sum in another
// order), and so does its run-set statement.
func TestShippedQueriesOnBothEngines(t *testing.T) {
	reg, err := perfsql.Load()
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]warehouse.Warehouse{"duckdb": testwh.DuckDB(t), "clickhouse": testwh.ClickHouse(t)}
	for _, w := range engines {
		loaded(t, w)
	}
	covered := map[string]bool{}
	for _, c := range cases {
		q, ok := reg.Get(c.query)
		if !ok {
			t.Fatalf("no query %s", c.query)
		}
		covered[c.query] = true
		t.Run(fmt.Sprintf("%s%v", c.query, c.params), func(t *testing.T) {
			vals, err := q.Bind(c.params)
			if err != nil {
				t.Fatal(err)
			}
			results := map[string][2]*warehouse.Result{}
			for name, w := range engines {
				var pair [2]*warehouse.Result
				for i, render := range []func(string, map[string]any) (string, error){q.Render, q.RenderRuns} {
					stmt, err := render(w.Dialect(), vals)
					if err != nil {
						t.Fatal(err)
					}
					if stmt == "" {
						continue
					}
					if pair[i], err = w.Query(t.Context(), stmt); err != nil {
						t.Fatalf("%s: %v\n%s", name, err, stmt)
					}
				}
				results[name] = pair
			}
			d, ch := results["duckdb"], results["clickhouse"]
			if len(d[0].Rows) != c.rows {
				t.Errorf("duckdb: %d rows; want %d", len(d[0].Rows), c.rows)
			}
			for i := range d {
				if d[i] == nil {
					continue
				}
				if diff := compareResults(d[i], ch[i]); diff != "" {
					t.Errorf("statement %d: engines differ: %s", i, diff)
				}
			}
			if q.Trace.Column != "" && !contains(d[0].Columns, q.Trace.Column) {
				t.Errorf("result lacks its trace column %s: %v", q.Trace.Column, d[0].Columns)
			}
		})
	}
	for _, q := range reg.List() {
		if !covered[q.Name] {
			t.Errorf("shipped query %s has no case in this test", q.Name)
		}
	}
}

// Hostile strings reach both engines as the exact value: quoting is an
// identity, not an injection point.
func TestParameterQuotingRoundTrips(t *testing.T) {
	q, err := perfsql.Parse("echo.sql", []byte("-- name: echo\n-- description: d\n-- owner: o\n"+
		"-- param: s String\n-- param: n Int64\n-- param: f Float64\n"+
		"SELECT {{param s}} AS s, 1-{{param n}} AS n, {{param f}} AS f"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := []string{"", "plain", "it's", `back\slash`, `\'`, `''`, "new\nline -- comment", "é ü 漢字 🙂",
		"'; DROP TABLE x; --", `\\\'\\`, "tab\tcr\r", "$$", "{{param s}}", "/* c */"}
	for name, w := range map[string]warehouse.Warehouse{"duckdb": testwh.DuckDB(t), "clickhouse": testwh.ClickHouse(t)} {
		for _, s := range hostile {
			vals, err := q.Bind(map[string]string{"s": s, "n": "-5", "f": "-0.5"})
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := q.Render(w.Dialect(), vals)
			if err != nil {
				t.Fatal(err)
			}
			r, err := w.Query(t.Context(), stmt)
			if err != nil {
				t.Errorf("%s: %q: %v\n%s", name, s, err, stmt)
				continue
			}
			if len(r.Rows) != 1 || r.Rows[0][0] != s || r.Rows[0][1] != int64(6) || r.Rows[0][2] != -0.5 {
				t.Errorf("%s: %q came back as %#v", name, s, r.Rows)
			}
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func compareResults(a, b *warehouse.Result) string {
	if strings.Join(a.Columns, ",") != strings.Join(b.Columns, ",") {
		return fmt.Sprintf("columns %v and %v", a.Columns, b.Columns)
	}
	if len(a.Rows) != len(b.Rows) {
		return fmt.Sprintf("%d and %d rows", len(a.Rows), len(b.Rows))
	}
	for i := range a.Rows {
		for j := range a.Rows[i] {
			x, y := a.Rows[i][j], b.Rows[i][j]
			fx, okx := x.(float64)
			fy, oky := y.(float64)
			if okx && oky {
				if math.Abs(fx-fy) > 1e-9*math.Max(math.Abs(fx), math.Abs(fy)) {
					return fmt.Sprintf("row %d %s: %v and %v", i, a.Columns[j], fx, fy)
				}
				continue
			}
			if warehousetest.FormatValue(x) != warehousetest.FormatValue(y) {
				return fmt.Sprintf("row %d %s: %s and %s", i, a.Columns[j], warehousetest.FormatValue(x), warehousetest.FormatValue(y))
			}
		}
	}
	return ""
}
