package warehousetest

import (
	_ "embed"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

var update = flag.Bool("warehousetest.update", false, "rewrite warehouse/warehousetest/testdata/canonical.golden from this engine's results")

//go:embed testdata/canonical.golden
var golden string

// From returns how a query names table so that it sees the table's current
// rows: ClickHouse's ReplacingMergeTree needs FINAL to collapse rows with
// equal keys that have not been merged yet.
func From(w warehouse.Warehouse, table string) string {
	if w.Dialect() == warehouse.ClickHouse {
		return table + " FINAL"
	}
	return table
}

// CountSQL returns the statement that counts the current rows of table.
func CountSQL(w warehouse.Warehouse, table string) string {
	return "SELECT count(*) AS n FROM " + From(w, table)
}

// CanonicalQueries returns the fixed query set, by name, in w's dialect.
// The SQL is portable to DuckDB 1.4 and ClickHouse 18.16: explicit
// columns, aliases for every computed column, ORDER BY on whole keys, no
// joins, window functions, WITH or JSON functions, and only exact
// aggregates (count, sum of integers, min, max), so equal data gives equal
// results bit for bit. ingested_at is left out: it differs between two
// ingests of the same evidence.
func CanonicalQueries(w warehouse.Warehouse) map[string]string {
	f := func(t string) string { return From(w, t) }
	q := map[string]string{
		"benchmark_runs": `SELECT run_id, workload_spec_digest, artifact_manifest_digest, benchmark_case_id, benchmark_name,
			driver, status, trials_total, trials_ok, trials_failed, started_at, ended_at, duration_s,
			software_version_digest, hardware_topology_digest, cluster_region_digest, scheduler_path, mode, ingest_version
			FROM ` + f("benchmark_run_fact") + ` ORDER BY run_id`,
		"storage_outcomes": `SELECT run_id, point, op, params, repetitions, samples, errors, error_rate, ops_per_s, ops_per_s_cv,
			mb_per_s, latency_p50_ms, latency_p99_ms, latency_p999_ms, latency_mean_ms, recall_at_k, ingest_rows_per_s
			FROM ` + f("storage_outcome_fact") + ` ORDER BY run_id, point, op`,
		"storage_by_op": `SELECT op, count(*) AS point_rows, sum(samples) AS samples, sum(errors) AS errors,
			min(latency_p50_ms) AS min_p50_ms, max(latency_p99_ms) AS max_p99_ms, count(ops_per_s_cv) AS with_cv
			FROM ` + f("storage_outcome_fact") + ` GROUP BY op ORDER BY op`,
		"serving_outcomes": `SELECT run_id, point, model, concurrency, request_rate, requests, errors, saturated,
			ttft_p50_ms, itl_p99_ms, e2e_p99_ms, goodput_rate, cost_per_request
			FROM ` + f("serving_outcome_fact") + ` ORDER BY run_id, point`,
		"training_outcomes": `SELECT run_id, point, phase, scale_point, steps, step_time_p50_ms, tokens_per_s, mfu, failures
			FROM ` + f("training_outcome_fact") + ` ORDER BY run_id, point, phase, scale_point`,
		"telemetry_by_series": `SELECT run_id, collector, metric, device, count(*) AS windows, sum(samples) AS samples,
			min(min_value) AS min_value, max(max_value) AS max_value, min(window_start) AS first_window,
			max(window_start_offset_ns) AS last_offset_ns
			FROM ` + f("telemetry_slice_fact") + ` GROUP BY run_id, collector, metric, device ORDER BY run_id, collector, metric, device`,
		"run_metadata": `SELECT run_id, key, value FROM ` + f("run_metadata") + ` ORDER BY run_id, key`,
		"ingest_ledger": `SELECT run_id, artifact_manifest_digest, status, reason, ingest_version, rows
			FROM ` + f("ingest_ledger") + ` ORDER BY run_id`,
	}
	for _, t := range warehouse.Tables {
		switch {
		case t.Kind == warehouse.Dim:
			q[t.Name] = "SELECT " + strings.Join(t.ColumnNames(), ", ") + " FROM " + f(t.Name) + " ORDER BY " + strings.Join(t.Key, ", ")
			fallthrough
		case t.Kind == warehouse.Fact:
			q["count_"+t.Name] = CountSQL(w, t.Name)
		}
	}
	return q
}

// CanonicalResults runs CanonicalQueries on w, whatever it holds, so that
// a test can compare two engines (CompareResults) after writing the same
// evidence to both.
func CanonicalResults(t testing.TB, w warehouse.Warehouse) map[string]*warehouse.Result {
	t.Helper()
	out := map[string]*warehouse.Result{}
	for name, q := range CanonicalQueries(w) {
		r, err := w.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("canonical query %s on %s: %v\n%s", name, w.Dialect(), err, q)
		}
		out[name] = r
	}
	return out
}

// CompareResults fails t with a readable diff for every query whose
// results differ between want and got.
func CompareResults(t testing.TB, want, got map[string]*warehouse.Result) {
	t.Helper()
	if w, g := FormatResults(want), FormatResults(got); w != g {
		t.Errorf("canonical results differ:\n%s", diffLines(w, g))
	}
}

// FormatResults renders results as text, one query after another by name,
// each value with its Go type ("int64:3", "string:\"x\"", "nil"): two
// engines agree exactly when their texts are equal.
func FormatResults(rs map[string]*warehouse.Result) string {
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		r := rs[n]
		fmt.Fprintf(&b, "== %s\n%s\n", n, strings.Join(r.Columns, " | "))
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				vals[i] = FormatValue(v)
			}
			b.WriteString(strings.Join(vals, " | ") + "\n")
		}
	}
	return b.String()
}

// FormatValue renders one normalised value with its type.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case int64:
		return "int64:" + strconv.FormatInt(x, 10)
	case float64:
		if math.IsNaN(x) {
			return "float64:NaN"
		}
		return "float64:" + strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return "string:" + strconv.Quote(x)
	case time.Time:
		if x.Location() != time.UTC {
			return "time(not UTC):" + x.Format(time.RFC3339Nano)
		}
		return "time:" + x.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%T(not normalised):%v", v, v)
}

// checkGolden compares results with testdata/canonical.golden, or rewrites
// it with -warehousetest.update.
func checkGolden(t *testing.T, w warehouse.Warehouse, got map[string]*warehouse.Result) {
	t.Helper()
	text := "# Canonical query results over CanonicalBatches, written by warehousetest.Run -warehousetest.update.\n" +
		"# Every engine must produce exactly this.\n" + FormatResults(got)
	if *update {
		_, src, _, ok := runtime.Caller(0)
		if !ok {
			t.Fatal("cannot locate warehousetest's source to update the golden file")
		}
		path := filepath.Join(filepath.Dir(src), "testdata", "canonical.golden")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s from %s", path, w.Dialect())
		return
	}
	if text != golden {
		t.Errorf("%s: canonical results differ from testdata/canonical.golden (rerun with -warehousetest.update only if the change is intended):\n%s",
			w.Dialect(), diffLines(golden, text))
	}
}

// diffLines lists the lines only in want (-) or only in got (+), in order;
// enough to read a few differing values.
func diffLines(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range wl {
		inW[l]++
	}
	for _, l := range gl {
		inG[l]++
	}
	var b strings.Builder
	for _, l := range wl {
		if inG[l] == 0 {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range gl {
		if inW[l] == 0 {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(same lines, different order or count)"
	}
	return b.String()
}

// CanonicalBatches are what the canonical subtest writes: two runs sharing
// their dimensions and one run with its own, one of them written twice.
func CanonicalBatches() []*warehouse.Batch {
	return []*warehouse.Batch{
		SyntheticBatch("run-a", 1),
		SyntheticBatch("run-b", 1),
		SyntheticBatch("run-c", 2),
		SyntheticBatch("run-a", 1),
	}
}
