package lineage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/buildinfo"
	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
)

// PublishOptions configure Publish.
type PublishOptions struct {
	Repo         *evidence.Repository
	Warehouse    warehouse.Warehouse
	WarehouseURL string // recorded as where the rows were read
	Query        *sql.Query
	Params       map[string]string // --param name=value
	By           string            // who publishes
	Gates        GateConfig
	AllowUnsafe  bool  // publish, marked unsafe, even when a gate fails
	Level        Level // evidence check before publishing (default LevelManifest)
	Now          func() time.Time
}

// InputError is bad input: an unknown or ill-typed parameter.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// UntraceableError refuses a result some row of which cannot be traced to
// runs the warehouse and the store know.
type UntraceableError struct {
	Query  string
	Reason string
}

func (e *UntraceableError) Error() string {
	return fmt.Sprintf("not publication-safe: query %s cannot be traced to runs: %s", e.Query, e.Reason)
}

// UnsafeError refuses a publication whose gates failed.
type UnsafeError struct{ Gates GateReport }

func (e *UnsafeError) Error() string {
	var parts []string
	for _, v := range e.Gates.Failed() {
		first := ""
		if len(v.Failures) > 0 {
			first = ": " + v.Failures[0]
			if len(v.Failures) > 1 {
				first += fmt.Sprintf(" (and %d more)", len(v.Failures)-1)
			}
		}
		parts = append(parts, "gate "+v.Gate+" failed"+first)
	}
	return "not publication-safe: " + strings.Join(parts, "; ") + " (publish with --allow-unsafe to record it marked unsafe)"
}

// Publish runs a registered query, traces every row to runs, checks their
// evidence and the gates, and stores the publication write-once. Nothing
// is stored when it returns an error.
func Publish(ctx context.Context, o PublishOptions) (*Publication, evidence.Digest, error) {
	var none evidence.Digest
	q, w := o.Query, o.Warehouse
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Level == "" {
		o.Level = LevelManifest
	}
	if strings.TrimSpace(o.By) == "" {
		return nil, none, &InputError{errors.New("who publishes is unknown: set --by or $USER")}
	}
	vals, err := q.Bind(o.Params)
	if err != nil {
		return nil, none, &InputError{err}
	}
	stmt, err := q.Render(w.Dialect(), vals)
	if err != nil {
		return nil, none, err
	}
	res, err := w.Query(ctx, stmt)
	if err != nil {
		return nil, none, fmt.Errorf("run query %s: %w", q.Name, err)
	}
	if len(res.Rows) == 0 {
		return nil, none, fmt.Errorf("query %s returned no rows: nothing to publish", q.Name)
	}
	runsStmt, err := q.RenderRuns(w.Dialect(), vals)
	if err != nil {
		return nil, none, err
	}
	rowRuns, err := trace(ctx, w, q, res, runsStmt)
	if err != nil {
		return nil, none, err
	}
	var ids []any
	for _, rr := range rowRuns {
		for _, id := range rr {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	ids = slices.Compact(ids)
	known, err := rowsByKey(ctx, w, "benchmark_run_fact", "run_id", ids)
	if err != nil {
		return nil, none, err
	}
	runs := make([]PublishedRun, 0, len(ids))
	refs := make([]RunRef, 0, len(ids))
	for _, id := range ids {
		row, ok := known[id]
		if !ok {
			return nil, none, &UntraceableError{q.Name, fmt.Sprintf("run %s is in the result but not in the warehouse's benchmark_run_fact", id)}
		}
		d, err := evidence.ParseDigest(row["artifact_manifest_digest"].(string))
		if err != nil {
			return nil, none, &UntraceableError{q.Name, fmt.Sprintf("run %s: artifact_manifest_digest: %v", id, err)}
		}
		runs = append(runs, PublishedRun{RunID: id.(string), ManifestDigest: d,
			WorkloadSpecDigest: row["workload_spec_digest"].(string), Benchmark: row["benchmark_name"].(string)})
		refs = append(refs, RunRef{RunID: id.(string), ManifestDigest: d})
	}
	checked, probs := (&Checker{Repo: o.Repo, Level: o.Level}).Check(ctx, refs)
	sortProblems(probs)
	ev := map[string]*RunEvidence{}
	for _, r := range checked {
		ev[r.RunID] = r
	}
	gates, err := evaluateGates(ctx, w, o.Gates, gateInput{columns: res.Columns, rows: res.Rows, rowRuns: rowRuns, evidence: ev, problems: probs})
	if err != nil {
		return nil, none, err
	}
	if !gates.Safe && !o.AllowUnsafe {
		return nil, none, &UnsafeError{gates}
	}
	types, rows, err := columnTypes(res.Columns, res.Rows)
	if err != nil {
		return nil, none, fmt.Errorf("query %s: %w", q.Name, err)
	}
	pub := &Publication{
		Format: PublicationFormat, FormatVersion: PublicationFormatVersion,
		PublishedAt: o.Now().UTC(), PublishedBy: o.By,
		Producer:  evidence.Producer{Name: "perfwh", Version: buildinfo.Version(), Revision: buildinfo.Revision(), GoVersion: buildinfo.GoVersion()},
		Query:     PublishedQuery{Name: q.Name, Description: q.Description, Owner: q.Owner, Source: q.Source, Digest: q.Digest, Text: q.Text},
		Params:    vals,
		Warehouse: PublishedSource{Dialect: w.Dialect(), Location: o.WarehouseURL, SQL: stmt, RunsSQL: runsStmt},
		Store:     o.Repo.Backend().URI(""),
		Columns:   res.Columns, ColumnTypes: types, Rows: rows, RowRuns: rowRuns, Runs: runs,
		Gates: gates, Unsafe: !gates.Safe,
	}
	d, err := Put(ctx, o.Repo.Backend(), pub)
	if err != nil {
		return nil, none, err
	}
	return pub, d, nil
}

// trace returns the run ids of each result row: the value of the trace
// column, or the runs of the run-set statement whose key columns equal the
// row's.
func trace(ctx context.Context, w warehouse.Warehouse, q *sql.Query, res *warehouse.Result, runsStmt string) ([][]string, error) {
	out := make([][]string, len(res.Rows))
	if q.Trace.Column != "" {
		j := slices.Index(res.Columns, q.Trace.Column)
		if j < 0 {
			return nil, &UntraceableError{q.Name, fmt.Sprintf("its result has no %s column and it declares no run set (header \"-- runs: by COLUMN, ...\" with a \"-- @runs\" statement)", q.Trace.Column)}
		}
		for i, row := range res.Rows {
			id, _ := row[j].(string)
			if id == "" {
				return nil, &UntraceableError{q.Name, fmt.Sprintf("row %d has no run id in column %s", i+1, q.Trace.Column)}
			}
			out[i] = []string{id}
		}
		return out, nil
	}
	rs, err := w.Query(ctx, runsStmt)
	if err != nil {
		return nil, fmt.Errorf("run the run-set statement of query %s: %w", q.Name, err)
	}
	keyIdx := func(cols []string, what string) ([]int, error) {
		idx := make([]int, len(q.Trace.Key))
		for k, c := range q.Trace.Key {
			if idx[k] = slices.Index(cols, c); idx[k] < 0 {
				return nil, &UntraceableError{q.Name, fmt.Sprintf("the %s has no key column %s", what, c)}
			}
		}
		return idx, nil
	}
	ri, err := keyIdx(rs.Columns, "run-set statement's result")
	if err != nil {
		return nil, err
	}
	runCol := slices.Index(rs.Columns, "run_id")
	if runCol < 0 {
		return nil, &UntraceableError{q.Name, "the run-set statement's result has no run_id column"}
	}
	qi, err := keyIdx(res.Columns, "result")
	if err != nil {
		return nil, err
	}
	keyOf := func(row []any, idx []int) string {
		parts := make([]string, len(idx))
		for k, j := range idx {
			parts[k] = fmt.Sprintf("%T:%v", row[j], row[j])
		}
		return strings.Join(parts, "\x00")
	}
	set := map[string][]string{}
	for _, row := range rs.Rows {
		if id, _ := row[runCol].(string); id != "" {
			k := keyOf(row, ri)
			set[k] = append(set[k], id)
		}
	}
	for i, row := range res.Rows {
		ids := set[keyOf(row, qi)]
		if len(ids) == 0 {
			desc := make([]string, len(qi))
			for k, j := range qi {
				desc[k] = fmt.Sprintf("%s=%v", q.Trace.Key[k], row[j])
			}
			return nil, &UntraceableError{q.Name, fmt.Sprintf("row %d (%s) matches no run of its run set", i+1, strings.Join(desc, " "))}
		}
		slices.Sort(ids)
		out[i] = slices.Compact(ids)
	}
	return out, nil
}
