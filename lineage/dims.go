package lineage

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
)

// Dimensions are the warehouse rows describing what a run used: its
// benchmark_run_fact row (benchmark, driver and driver version, ingest
// version, and the digests of its dimension rows), its ingest ledger row,
// and the software, hardware, cluster and workload dimension rows. Runs
// share dimension rows, so a Report's JSON lists each of those once, under
// "dimensions" by table and digest, rather than in every run.
type Dimensions struct {
	Run      map[string]any `json:"run"`
	Ingest   map[string]any `json:"ingest"`
	Software map[string]any `json:"-"`
	Hardware map[string]any `json:"-"`
	Cluster  map[string]any `json:"-"`
	Workload map[string]any `json:"-"`
}

// sharedDimensions returns the dimension rows runs use, by table and key.
func sharedDimensions(runs []*RunEvidence) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for _, l := range dimLinks {
		out[l.table] = map[string]map[string]any{}
	}
	for _, r := range runs {
		if r.Dimensions == nil {
			continue
		}
		for _, l := range dimLinks {
			if row := *l.field(r.Dimensions); row != nil {
				out[l.table][fmt.Sprint(row[l.key])] = row
			}
		}
	}
	return out
}

// dimLinks are the dimension tables a run row points to: the field of
// Dimensions, the table, and the key column (in both tables).
var dimLinks = []struct {
	field func(*Dimensions) *map[string]any
	table string
	key   string
}{
	{func(d *Dimensions) *map[string]any { return &d.Software }, "software_version_dim", "software_version_digest"},
	{func(d *Dimensions) *map[string]any { return &d.Hardware }, "hardware_topology_dim", "hardware_topology_digest"},
	{func(d *Dimensions) *map[string]any { return &d.Cluster }, "cluster_region_dim", "cluster_region_digest"},
	{func(d *Dimensions) *map[string]any { return &d.Workload }, "workload_dim", "workload_spec_digest"},
}

// dimRows are the warehouse rows of a set of runs, by key.
type dimRows struct {
	runs, ledger map[any]map[string]any
	dims         []map[any]map[string]any // by dimLinks index
}

// fetchDimensions reads the benchmark_run_fact and ingest_ledger rows of
// runs and the dimension rows they point to.
func fetchDimensions(ctx context.Context, w warehouse.Warehouse, runIDs []string) (*dimRows, error) {
	ids := make([]any, len(runIDs))
	for i, id := range runIDs {
		ids[i] = id
	}
	var d dimRows
	var err error
	if d.runs, err = rowsByKey(ctx, w, "benchmark_run_fact", "run_id", ids); err != nil {
		return nil, err
	}
	if d.ledger, err = rowsByKey(ctx, w, "ingest_ledger", "run_id", ids); err != nil {
		return nil, err
	}
	d.dims = make([]map[any]map[string]any, len(dimLinks))
	for k, l := range dimLinks {
		seen := map[any]bool{}
		var keys []any
		for _, row := range d.runs {
			if v := row[l.key]; !seen[v] {
				seen[v] = true
				keys = append(keys, v)
			}
		}
		if d.dims[k], err = rowsByKey(ctx, w, l.table, l.key, keys); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

// applyDimensions fills each run's Dimensions and returns the links that
// do not resolve: a run the warehouse does not know, rows derived from
// another manifest than the evidence's, a run not ingested, a missing
// dimension row.
func applyDimensions(d *dimRows, runs []*RunEvidence) []Problem {
	var probs []Problem
	bad := func(r *RunEvidence, object, msg string) {
		probs = append(probs, Problem{Link: "warehouse", Object: object, Message: msg, RunID: r.RunID})
	}
	for _, r := range runs {
		row, ok := d.runs[r.RunID]
		if !ok {
			bad(r, r.RunID, "run is not in the warehouse (no benchmark_run_fact row): run perfwh ingest")
			continue
		}
		dims := &Dimensions{Run: row, Ingest: d.ledger[r.RunID]}
		r.Dimensions = dims
		if amd, _ := row["artifact_manifest_digest"].(string); !r.Manifest.Digest.IsZero() && amd != r.Manifest.Digest.String() {
			bad(r, r.RunID, fmt.Sprintf("warehouse rows were derived from manifest %s, the run's evidence is %s", amd, r.Manifest.Digest))
		}
		if st, _ := dims.Ingest["status"].(string); st != warehouse.Ingested {
			msg := "run has no ingest ledger row"
			if st != "" {
				msg = fmt.Sprintf("ingest ledger says %s: %v", st, dims.Ingest["reason"])
			}
			bad(r, r.RunID, msg)
		}
		for k, l := range dimLinks {
			key := row[l.key]
			dim, ok := d.dims[k][key]
			if !ok {
				bad(r, fmt.Sprint(key), l.table+" row missing")
				continue
			}
			*l.field(dims) = dim
		}
	}
	return probs
}

// rowsByKey reads every column of table for rows whose key column is one
// of keys, as maps by key value.
func rowsByKey(ctx context.Context, w warehouse.Warehouse, table, key string, keys []any) (map[any]map[string]any, error) {
	out := map[any]map[string]any{}
	t, ok := warehouse.Lookup(table)
	if !ok {
		return nil, fmt.Errorf("no table %s in the schema", table)
	}
	const chunk = 1000
	for start := 0; start < len(keys); start += chunk {
		part := keys[start:min(start+chunk, len(keys))]
		in, err := inList(w.Dialect(), part)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		q := "SELECT " + strings.Join(t.ColumnNames(), ", ") + " FROM " + sql.From(w.Dialect(), table) + " WHERE " + key + " IN " + in
		res, err := w.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		k := 0
		for ; k < len(res.Columns) && res.Columns[k] != key; k++ {
		}
		for _, row := range res.Rows {
			out[row[k]] = rowMap(res.Columns, row)
		}
	}
	return out, nil
}

// inList renders values as an SQL list of literals, "(v, v, ...)":
// DuckDB binds a thousand literals several times faster than a thousand
// parameters, and sql.Quote renders each exactly.
func inList(dialect string, vals []any) (string, error) {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vals {
		lit, err := sql.Quote(dialect, v)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(lit)
	}
	b.WriteByte(')')
	return b.String(), nil
}

// rowMap returns a row as a map, NaN and infinities as nil (JSON has none).
func rowMap(cols []string, row []any) map[string]any {
	m := make(map[string]any, len(cols))
	for i, c := range cols {
		v := row[i]
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil
		}
		m[c] = v
	}
	return m
}
