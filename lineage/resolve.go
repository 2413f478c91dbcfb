package lineage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
)

// Options configure Resolve.
type Options struct {
	Repo      *evidence.Repository
	Warehouse warehouse.Warehouse
	Registry  *sql.Registry // the registered queries now, to detect a changed query
	Level     Level         // default LevelManifest
	Gates     GateConfig    // for warehouse cells; a publication carries its own
	Workers   int           // see Checker
}

// Number is the value a lineage starts from.
type Number struct {
	Column string `json:"column"`
	Value  any    `json:"value"`
	Table  string `json:"table,omitempty"` // a warehouse cell
	Row    int    `json:"row,omitempty"`   // a publication row (1-based)
}

// PublicationInfo is the publication link of a lineage.
type PublicationInfo struct {
	ID          evidence.Digest `json:"id"`
	URI         string          `json:"uri"`
	Verified    bool            `json:"verified"`
	PublishedAt time.Time       `json:"published_at"`
	PublishedBy string          `json:"published_by"`
	Unsafe      bool            `json:"unsafe"`
	Params      map[string]any  `json:"params"`
	Warehouse   PublishedSource `json:"warehouse"`
	Store       string          `json:"store"`
	Rows        int             `json:"rows"`
}

// QueryInfo is the query link: the query as published, and whether the
// registered query of that name is still the same.
type QueryInfo struct {
	PublishedQuery
	// Registered is the digest of the query registered under the name now
	// (zero when none is).
	Registered       evidence.Digest `json:"registered_digest"`
	RegisteredSource string          `json:"registered_source,omitempty"`
	Changed          bool            `json:"changed"`
}

// RowInfo is one result row in a lineage.
type RowInfo struct {
	Row    int            `json:"row"`
	Values map[string]any `json:"values"`
	RunIDs []string       `json:"run_ids"`
}

// Summary counts what a lineage checked.
type Summary struct {
	Runs      int   `json:"runs"`
	Manifests int   `json:"manifests"`
	Blobs     int   `json:"blobs"` // distinct blobs
	Bytes     int64 `json:"bytes"` // of distinct blobs
	Problems  int   `json:"problems"`
	// ElapsedMS is how long the walk took, checks included.
	ElapsedMS float64 `json:"elapsed_ms"`
}

// Report is a resolved lineage. OK is true only when every link resolved
// and verified and no gate failed; otherwise Problems names each broken
// link.
type Report struct {
	Ref         string           `json:"ref"`
	Verify      Level            `json:"verify"`
	OK          bool             `json:"ok"`
	Number      *Number          `json:"number,omitempty"`
	Publication *PublicationInfo `json:"publication,omitempty"`
	Query       *QueryInfo       `json:"query,omitempty"`
	Gates       *GateReport      `json:"gates,omitempty"`
	Rows        []RowInfo        `json:"rows"`
	Runs        []*RunEvidence   `json:"runs"`
	// Dimensions holds the dimension rows the runs use, by table and key
	// (each run's dimensions.run row names its keys).
	Dimensions map[string]map[string]map[string]any `json:"dimensions"`
	Problems   []Problem                            `json:"problems"`
	Summary    Summary                              `json:"summary"`
}

// Resolve walks ref — "pub:ID[/ROW[/COLUMN]]" or a Selector — back to its
// raw evidence. The error is non-nil when ref is invalid (*InputError,
// *NoMatchError, *AmbiguousError), names no publication (wrapping
// evidence.ErrNotFound), or the store or warehouse fails; broken links are
// Problems in the report.
func Resolve(ctx context.Context, ref string, o Options) (rep *Report, err error) {
	start := time.Now()
	if o.Level == "" {
		o.Level = LevelManifest
	}
	defer func() {
		if rep != nil {
			rep.Summary.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
		}
	}()
	rep = &Report{Ref: ref, Verify: o.Level, Rows: []RowInfo{}, Runs: []*RunEvidence{}, Problems: []Problem{}}
	pr, isPub, perr := ParsePubRef(ref)
	if perr != nil {
		return nil, &InputError{perr}
	}
	var refs []RunRef
	var cell *Cell
	if isPub {
		refs, err = resolvePublication(ctx, rep, pr, o)
	} else {
		cell, refs, err = resolveCell(ctx, rep, ref, o)
	}
	if err != nil || refs == nil {
		finish(rep)
		return rep, err
	}
	// The warehouse's rows are read while the store is checked.
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.RunID
	}
	var dims *dimRows
	var derr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		dims, derr = fetchDimensions(ctx, o.Warehouse, ids)
	}()
	runs, probs := (&Checker{Repo: o.Repo, Level: o.Level, Workers: o.Workers}).Check(ctx, refs)
	<-done
	if derr != nil {
		return nil, derr
	}
	rep.Runs = runs
	rep.Problems = append(rep.Problems, probs...)
	rep.Problems = append(rep.Problems, applyDimensions(dims, runs)...)
	rep.Dimensions = sharedDimensions(runs)
	if cell != nil {
		ev := map[string]*RunEvidence{runs[0].RunID: runs[0]}
		g, err := evaluateGates(ctx, o.Warehouse, o.Gates, gateInput{columns: cell.Columns, rows: [][]any{cell.Row},
			rowRuns: [][]string{{runs[0].RunID}}, evidence: ev, problems: probs})
		if err != nil {
			return nil, err
		}
		rep.Gates = &g
		for _, v := range g.Failed() {
			if v.Gate != GateEvidence { // its failures are already problems
				rep.Problems = append(rep.Problems, gateProblem(v, ""))
			}
		}
	}
	finish(rep)
	return rep, nil
}

func finish(rep *Report) {
	sortProblems(rep.Problems)
	rep.OK = len(rep.Problems) == 0
	seen := map[evidence.Digest]bool{}
	rep.Summary = Summary{Runs: len(rep.Runs), Problems: len(rep.Problems)}
	for _, r := range rep.Runs {
		if r.Manifest.Verified {
			rep.Summary.Manifests++
		}
		for _, b := range r.Blobs {
			if !seen[b.Digest] {
				seen[b.Digest] = true
				rep.Summary.Blobs++
				rep.Summary.Bytes += b.Size
			}
		}
	}
}

func gateProblem(v Verdict, prefix string) Problem {
	msg := prefix + "failed"
	if len(v.Failures) > 0 {
		msg += ": " + v.Failures[0]
		if len(v.Failures) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(v.Failures)-1)
		}
	} else if v.Detail != "" {
		msg += ": " + v.Detail
	}
	return Problem{Link: "gate", Object: v.Gate, Message: msg}
}

// resolvePublication fills the publication, query, gate and row links and
// returns the runs to check; nil runs (and a nil error) when the
// publication itself is broken.
func resolvePublication(ctx context.Context, rep *Report, pr PubRef, o Options) ([]RunRef, error) {
	be := o.Repo.Backend()
	d, err := ResolveID(ctx, be, pr.ID)
	if err != nil {
		if errors.Is(err, evidence.ErrNotFound) {
			return nil, err
		}
		return nil, &InputError{err}
	}
	uri := be.URI(ObjectName(d))
	p, err := Get(ctx, be, d)
	if err != nil {
		var mm *evidence.DigestMismatchError
		msg := "unreadable: " + err.Error()
		if errors.As(err, &mm) {
			msg = "corrupt: content hashes to " + mm.Got.String()
		}
		rep.Problems = append(rep.Problems, Problem{Link: "publication", Object: d.String(), URI: uri, Message: msg})
		return nil, nil
	}
	rep.Publication = &PublicationInfo{ID: d, URI: uri, Verified: true, PublishedAt: p.PublishedAt, PublishedBy: p.PublishedBy,
		Unsafe: p.Unsafe, Params: p.Params, Warehouse: p.Warehouse, Store: p.Store, Rows: len(p.Rows)}
	rep.Query = checkQuery(rep, p, o.Registry)
	rep.Gates = &p.Gates
	for _, v := range p.Gates.Failed() {
		rep.Problems = append(rep.Problems, gateProblem(v, "publication is marked unsafe: gate "))
	}
	if p.Unsafe && len(p.Gates.Failed()) == 0 {
		rep.Problems = append(rep.Problems, Problem{Link: "gate", Object: "publication", Message: "publication is marked unsafe"})
	}
	rows := make([]int, 0, len(p.Rows))
	switch {
	case pr.Row > len(p.Rows):
		return nil, &InputError{fmt.Errorf("publication %s has %d rows, not %d", d.Short(), len(p.Rows), pr.Row)}
	case pr.Row > 0:
		rows = append(rows, pr.Row-1)
	default:
		for i := range p.Rows {
			rows = append(rows, i)
		}
	}
	if pr.Column != "" {
		j := p.Column(pr.Column)
		if j < 0 {
			return nil, &InputError{fmt.Errorf("publication %s has no column %s (columns: %s)", d.Short(), pr.Column, strings.Join(p.Columns, ", "))}
		}
		rep.Number = &Number{Column: pr.Column, Row: pr.Row, Value: p.Rows[pr.Row-1][j]}
	}
	var refs []RunRef
	seen := map[string]bool{}
	for _, i := range rows {
		rep.Rows = append(rep.Rows, RowInfo{Row: i + 1, Values: rowMap(p.Columns, p.Rows[i]), RunIDs: p.RowRuns[i]})
		if len(p.RowRuns[i]) == 0 {
			rep.Problems = append(rep.Problems, Problem{Link: "row", Object: fmt.Sprint(i + 1), Message: "names no run"})
		}
		for _, id := range p.RowRuns[i] {
			if seen[id] {
				continue
			}
			seen[id] = true
			run, ok := p.Run(id)
			if !ok {
				rep.Problems = append(rep.Problems, Problem{Link: "row", Object: fmt.Sprint(i + 1), RunID: id,
					Message: "names run " + id + ", which the publication does not list"})
				continue
			}
			refs = append(refs, RunRef{RunID: id, ManifestDigest: run.ManifestDigest})
		}
	}
	slices.SortFunc(refs, func(a, b RunRef) int { return strings.Compare(a.RunID, b.RunID) })
	if refs == nil {
		refs = []RunRef{}
	}
	return refs, nil
}

// checkQuery compares the published query with its own digest and with the
// query registered under its name now.
func checkQuery(rep *Report, p *Publication, reg *sql.Registry) *QueryInfo {
	qi := &QueryInfo{PublishedQuery: p.Query}
	bad := func(msg string) {
		rep.Problems = append(rep.Problems, Problem{Link: "query", Object: p.Query.Name, Message: msg})
	}
	if q, err := queryOf(p); err != nil {
		bad("published text does not parse: " + err.Error())
	} else if q.Digest != p.Query.Digest {
		bad(fmt.Sprintf("published text hashes to %s, the publication records %s", q.Digest, p.Query.Digest))
	}
	if reg == nil {
		return qi
	}
	cur, ok := reg.Get(p.Query.Name)
	switch {
	case !ok:
		bad("is no longer registered")
	case cur.Digest != p.Query.Digest:
		qi.Registered, qi.RegisteredSource, qi.Changed = cur.Digest, cur.Source, true
		bad(fmt.Sprintf("registered text changed since publication: published %s, registered now %s (%s)", p.Query.Digest, cur.Digest, cur.Source))
	default:
		qi.Registered, qi.RegisteredSource = cur.Digest, cur.Source
	}
	return qi
}

func resolveCell(ctx context.Context, rep *Report, ref string, o Options) (*Cell, []RunRef, error) {
	sel, err := ParseSelector(ref)
	if err != nil {
		return nil, nil, &InputError{err}
	}
	cell, err := FindCell(ctx, o.Warehouse, sel)
	if err != nil {
		return nil, nil, err
	}
	row := cell.RowMap()
	rep.Number = &Number{Table: cell.Table.Name, Column: sel.Column, Value: row[sel.Column]}
	runID, _ := row["run_id"].(string)
	rep.Rows = append(rep.Rows, RowInfo{Row: 1, Values: row, RunIDs: []string{runID}})
	rr := RunRef{RunID: runID}
	if s, _ := row["artifact_manifest_digest"].(string); s != "" {
		d, err := evidence.ParseDigest(s)
		if err != nil {
			rep.Problems = append(rep.Problems, Problem{Link: "row", Object: cell.Table.Name, RunID: runID, Message: "artifact_manifest_digest: " + err.Error()})
		}
		rr.ManifestDigest = d
	}
	return cell, []RunRef{rr}, nil
}
