package compare

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

// runData is what the warehouse holds about one run.
type runData struct {
	runID    string
	fact     map[string]any            // benchmark_run_fact
	dims     map[string]map[string]any // dimension table → its row for the run
	metadata map[string]string         // run_metadata
	storage  []pointRow                // storage_outcome_fact, by point and op
	serving  []pointRow                // serving_outcome_fact, by point
}

// pointRow is one outcome row.
type pointRow struct {
	point  int64
	params string // canonical JSON, as ingest wrote it
	op     string // "" for serving
	vals   map[string]any
}

// dimTables are the dimensions a run fact points at, by their key column
// (the same name in benchmark_run_fact).
var dimTables = []struct{ table, key string }{
	{"software_version_dim", "software_version_digest"},
	{"hardware_topology_dim", "hardware_topology_digest"},
	{"cluster_region_dim", "cluster_region_digest"},
	{"workload_dim", "workload_spec_digest"},
}

// from names table so a query sees its current rows: ClickHouse's
// ReplacingMergeTree needs FINAL to collapse rows that share a key but are
// not merged yet (warehousetest.From, which non-test code should not import).
func from(w warehouse.Warehouse, table string) string {
	if w.Dialect() == warehouse.ClickHouse {
		return table + " FINAL"
	}
	return table
}

// load reads both runs. The SQL is portable to DuckDB and ClickHouse 18.16:
// one table per statement (the dimensions are joined to the run facts here,
// by digest, rather than with SQL joins, which 18.16 restricts), explicit
// columns, IN lists of bound parameters.
func load(ctx context.Context, w warehouse.Warehouse, a, b string) ([2]*runData, error) {
	var out [2]*runData
	facts, err := selectRows(ctx, w, "benchmark_run_fact", "run_id", []string{a, b}, "run_id")
	if err != nil {
		return out, err
	}
	byRun := map[string]map[string]any{}
	for _, f := range facts {
		byRun[f["run_id"].(string)] = f
	}
	for i, id := range []string{a, b} {
		f, ok := byRun[id]
		if !ok {
			return out, &RunRefError{Ref: id, Msg: fmt.Sprintf("run %s has no benchmark_run_fact row in the warehouse; run `perfwh ingest` first", id)}
		}
		out[i] = &runData{runID: id, fact: f, dims: map[string]map[string]any{}, metadata: map[string]string{}}
	}
	for _, d := range dimTables {
		keys := []string{str(out[0].fact[d.key]), str(out[1].fact[d.key])}
		rows, err := selectRows(ctx, w, d.table, d.key, keys, d.key)
		if err != nil {
			return out, err
		}
		for _, row := range rows {
			for _, r := range out {
				if str(r.fact[d.key]) == str(row[d.key]) {
					r.dims[d.table] = row
				}
			}
		}
	}
	meta, err := selectRows(ctx, w, "run_metadata", "run_id", []string{a, b}, "run_id, key")
	if err != nil {
		return out, err
	}
	for _, m := range meta {
		for _, r := range out {
			if r.runID == m["run_id"] {
				r.metadata[str(m["key"])] = str(m["value"])
			}
		}
	}
	for _, t := range []struct {
		table string
		dest  func(*runData) *[]pointRow
		order string
	}{
		{"storage_outcome_fact", func(r *runData) *[]pointRow { return &r.storage }, "run_id, point, op"},
		{"serving_outcome_fact", func(r *runData) *[]pointRow { return &r.serving }, "run_id, point"},
	} {
		rows, err := selectRows(ctx, w, t.table, "run_id", []string{a, b}, t.order)
		if err != nil {
			return out, err
		}
		for _, row := range rows {
			p := pointRow{point: i64(row["point"]), params: str(row["params"]), op: str(row["op"]), vals: row}
			for _, r := range out {
				if r.runID == row["run_id"] {
					*t.dest(r) = append(*t.dest(r), p)
				}
			}
		}
	}
	return out, nil
}

// selectRows returns every column of table's rows whose col is one of
// values, as maps by column name.
func selectRows(ctx context.Context, w warehouse.Warehouse, table, col string, values []string, orderBy string) ([]map[string]any, error) {
	t, ok := warehouse.Lookup(table)
	if !ok {
		return nil, fmt.Errorf("compare: no table %s in the schema", table)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ")
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	q := "SELECT " + strings.Join(t.ColumnNames(), ", ") + " FROM " + from(w, table) +
		" WHERE " + col + " IN (" + marks + ") ORDER BY " + orderBy
	res, err := w.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	out := make([]map[string]any, len(res.Rows))
	for i, r := range res.Rows {
		m := make(map[string]any, len(r))
		for j, c := range res.Columns {
			m[c] = r[j]
		}
		out[i] = m
	}
	return out, nil
}

func (r *runData) info() RunInfo {
	started, _ := r.fact["started_at"].(time.Time)
	return RunInfo{
		RunID: r.runID, Benchmark: str(r.fact["benchmark_name"]), StartedAt: started,
		DurationS: f64(r.fact["duration_s"]), ManifestDigest: r.manifestDigest(),
		WorkloadSpecDigest: str(r.fact["workload_spec_digest"]),
	}
}

func (r *runData) manifestDigest() string { return str(r.fact["artifact_manifest_digest"]) }

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func i64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func f64(v any) float64 {
	if p := num(v); p != nil {
		return *p
	}
	return 0
}

// num returns a numeric column value, nil for NULL.
func num(v any) *float64 {
	switch x := v.(type) {
	case float64:
		return &x
	case int64:
		f := float64(x)
		return &f
	case *float64:
		return x
	}
	return nil
}
