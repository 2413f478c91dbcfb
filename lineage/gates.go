package lineage

import (
	"context"
	"fmt"
	"slices"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
)

// GateConfig sets the publication gates' thresholds.
type GateConfig struct {
	// MinSamples is the fewest measured operations (serving: requests) a
	// workload point may have, pooled over repetitions, warmup excluded.
	MinSamples int64 `json:"min_samples"`
	// MinRepetitions is the fewest ok repetitions a workload point may have.
	MinRepetitions int64 `json:"min_repetitions"`
	// MaxCV is the largest coefficient of variation of throughput across
	// repetitions (storage_outcome_fact.ops_per_s_cv) a stable point may
	// have; 0 turns the gate off.
	MaxCV float64 `json:"max_cv"`
	// RequireWarmup requires every trial to have had a warmup phase.
	RequireWarmup bool `json:"require_warmup"`
}

// DefaultGates are the thresholds publish and lineage use unless told.
var DefaultGates = GateConfig{MinSamples: 1000, MinRepetitions: 2, MaxCV: 0.10, RequireWarmup: true}

// Gate names.
const (
	GateEvidence       = "evidence"
	GateMinSamples     = "min_samples"
	GateMinRepetitions = "min_repetitions"
	GateWarmup         = "warmup_excluded"
	GateStable         = "stable"
)

// Gate statuses.
const (
	Pass          = "pass"
	Fail          = "fail"
	NotApplicable = "not_applicable"
)

// Verdict is one gate's result.
type Verdict struct {
	Gate     string   `json:"gate"`
	Status   string   `json:"status"`
	Detail   string   `json:"detail"`
	Failures []string `json:"failures,omitempty"`
}

// GateReport is every gate's verdict under a configuration.
type GateReport struct {
	Config   GateConfig `json:"config"`
	Verdicts []Verdict  `json:"verdicts"`
	Safe     bool       `json:"safe"` // no gate failed
}

// Failed returns the gates that failed.
func (g GateReport) Failed() []Verdict {
	var out []Verdict
	for _, v := range g.Verdicts {
		if v.Status == Fail {
			out = append(out, v)
		}
	}
	return out
}

// outcome is one workload point's outcome row, as the gates need it.
type outcome struct {
	table              string
	runID              string
	point              int64
	params, op, model  string
	repetitions, count int64 // count: samples or requests
	cv                 *float64
	hasCV              bool
}

func (o outcome) String() string {
	s := fmt.Sprintf("run %s point %d", o.runID, o.point)
	if o.op != "" {
		s += " " + o.op
	}
	if o.model != "" {
		s += " " + o.model
	}
	return s
}

// rowFilters are result columns that narrow a row to some of its runs'
// workload points.
var rowFilters = []string{"point", "params", "op", "model"}

// gateInput is what the gates judge: result rows, the runs each came
// from, and those runs' checked evidence.
type gateInput struct {
	columns  []string
	rows     [][]any
	rowRuns  [][]string
	evidence map[string]*RunEvidence
	problems []Problem // evidence problems
}

// evaluateGates judges the outcome rows the result rows depend on: for
// each row, the outcome rows of its runs that agree with it on point,
// params, op and model where the row has those columns.
func evaluateGates(ctx context.Context, w warehouse.Warehouse, cfg GateConfig, in gateInput) (GateReport, error) {
	var ids []string
	for _, rr := range in.rowRuns {
		ids = append(ids, rr...)
	}
	slices.Sort(ids)
	outs, err := loadOutcomes(ctx, w, slices.Compact(ids))
	if err != nil {
		return GateReport{}, err
	}
	byRun := map[string][]int{}
	for i, o := range outs {
		byRun[o.runID] = append(byRun[o.runID], i)
	}
	selected := map[int]bool{}
	var empty []string
	for i, row := range in.rows {
		for _, run := range in.rowRuns[i] {
			n := 0
			for _, k := range byRun[run] {
				if agrees(outs[k], in.columns, row) {
					selected[k] = true
					n++
				}
			}
			if n == 0 {
				empty = append(empty, fmt.Sprintf("row %d: run %s has no measured workload point for it", i+1, run))
			}
		}
	}
	sel := make([]outcome, 0, len(selected))
	for k := range outs {
		if selected[k] {
			sel = append(sel, outs[k])
		}
	}
	rep := GateReport{Config: cfg}
	rep.Verdicts = append(rep.Verdicts, evidenceGate(in.problems))
	samples := threshold(GateMinSamples, sel, cfg.MinSamples, func(o outcome) (int64, string) { return o.count, "samples" })
	if len(empty) > 0 {
		samples.Status = Fail
		samples.Failures = append(empty, samples.Failures...)
	}
	rep.Verdicts = append(rep.Verdicts, samples,
		threshold(GateMinRepetitions, sel, cfg.MinRepetitions, func(o outcome) (int64, string) { return o.repetitions, "repetitions" }),
		warmupGate(sel, outs, in.evidence, cfg.RequireWarmup), stableGate(sel, cfg.MaxCV))
	rep.Safe = len(rep.Failed()) == 0
	for i := range rep.Verdicts {
		rep.Verdicts[i].Failures = capList(rep.Verdicts[i].Failures, 20)
	}
	return rep, nil
}

func agrees(o outcome, cols []string, row []any) bool {
	for _, f := range rowFilters {
		j := slices.Index(cols, f)
		if j < 0 || row[j] == nil {
			continue
		}
		var ok bool
		switch f {
		case "point":
			p, isInt := row[j].(int64)
			ok = !isInt || p == o.point
		case "params":
			ok = row[j] == o.params
		case "op":
			ok = o.table != "storage_outcome_fact" || row[j] == o.op
		case "model":
			ok = o.table != "serving_outcome_fact" || row[j] == o.model
		}
		if !ok {
			return false
		}
	}
	return true
}

func evidenceGate(probs []Problem) Verdict {
	v := Verdict{Gate: GateEvidence, Status: Pass, Detail: "requires every run pointer, manifest and blob present and verified"}
	if len(probs) > 0 {
		v.Status, v.Detail = Fail, fmt.Sprintf("%d broken link(s) in the evidence", len(probs))
		for _, p := range probs {
			v.Failures = append(v.Failures, p.String())
		}
	}
	return v
}

func threshold(gate string, sel []outcome, min int64, get func(outcome) (int64, string)) Verdict {
	v := Verdict{Gate: gate, Status: Pass}
	_, what := get(outcome{})
	v.Detail = fmt.Sprintf("requires at least %d %s per workload point", min, what)
	if len(sel) == 0 {
		v.Status, v.Detail = NotApplicable, "no measured workload points"
		return v
	}
	for _, o := range sel {
		if n, _ := get(o); n < min {
			v.Failures = append(v.Failures, fmt.Sprintf("%s: %d %s < %d", o, n, what, min))
		}
	}
	if len(v.Failures) > 0 {
		v.Status = Fail
	}
	return v
}

func stableGate(sel []outcome, maxCV float64) Verdict {
	v := Verdict{Gate: GateStable, Status: Pass, Detail: fmt.Sprintf("requires a coefficient of variation of throughput across repetitions of at most %.3g", maxCV)}
	if maxCV <= 0 {
		v.Status, v.Detail = NotApplicable, "turned off (max CV 0)"
		return v
	}
	n := 0
	for _, o := range sel {
		if !o.hasCV {
			continue
		}
		n++
		switch {
		case o.cv == nil:
			v.Failures = append(v.Failures, fmt.Sprintf("%s: spread unknown (%d repetition)", o, o.repetitions))
		case *o.cv > maxCV:
			v.Failures = append(v.Failures, fmt.Sprintf("%s: unstable, CV %.3g > %.3g", o, *o.cv, maxCV))
		}
	}
	if n == 0 {
		v.Status, v.Detail = NotApplicable, "no workload point measures a spread across repetitions"
	} else if len(v.Failures) > 0 {
		v.Status = Fail
	}
	return v
}

// warmupGate checks, in each run's manifest, that every ok trial of the
// selected points had a warmup phase (when required) and that the pooled
// sample count equals the trials' measured operations: no warmup sample
// was counted.
func warmupGate(sel, all []outcome, ev map[string]*RunEvidence, require bool) Verdict {
	v := Verdict{Gate: GateWarmup, Status: Pass, Detail: "requires samples from the measurement phases only"}
	if require {
		v.Detail = "requires a warmup phase in every trial and samples from the measurement phases only"
	}
	type key struct {
		run   string
		point int64
	}
	var keys []key
	seen := map[key]bool{}
	for _, o := range sel {
		if k := (key{o.runID, o.point}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	// Samples of every operation of a selected point, selected or not.
	counted := map[key]int64{}
	for _, o := range all {
		k := key{o.runID, o.point}
		switch {
		case !seen[k]:
		case o.table == "storage_outcome_fact" && counted[k] >= 0:
			counted[k] += o.count
		default:
			counted[k] = -1 // serving: requests are not operations; check the windows only
		}
	}
	for _, k := range keys {
		r := ev[k.run]
		if r == nil || r.manifest == nil {
			v.Failures = append(v.Failures, fmt.Sprintf("run %s: manifest unavailable", k.run))
			continue
		}
		var measured int64
		for _, t := range r.manifest.Trials {
			if int64(t.Point) != k.point || t.Status != evidence.TrialOK || t.Measure == nil {
				continue
			}
			measured += t.Measure.Operations
			if require && (t.Warmup == nil || t.Warmup.EndOffsetNs <= t.Warmup.StartOffsetNs) {
				v.Failures = append(v.Failures, fmt.Sprintf("run %s point %d trial %s: no warmup phase", k.run, k.point, t.ID))
			}
		}
		if n := counted[k]; n >= 0 && n != measured {
			v.Failures = append(v.Failures, fmt.Sprintf("run %s point %d: %d samples counted, the measurement phases recorded %d", k.run, k.point, n, measured))
		}
	}
	if len(keys) == 0 {
		v.Status, v.Detail = NotApplicable, "no measured workload points"
	} else if len(v.Failures) > 0 {
		v.Status = Fail
	}
	return v
}

func capList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
}

// loadOutcomes reads the storage and serving outcome rows of runs.
func loadOutcomes(ctx context.Context, w warehouse.Warehouse, runs []string) ([]outcome, error) {
	var out []outcome
	const chunk = 1000
	for start := 0; start < len(runs); start += chunk {
		part := runs[start:min(start+chunk, len(runs))]
		args := make([]any, len(part))
		for i, r := range part {
			args[i] = r
		}
		in, err := inList(w.Dialect(), args)
		if err != nil {
			return nil, err
		}
		res, err := w.Query(ctx, "SELECT run_id, point, params, op, repetitions, samples, ops_per_s_cv FROM "+
			sql.From(w.Dialect(), "storage_outcome_fact")+" WHERE run_id IN "+in+" ORDER BY run_id, point, op")
		if err != nil {
			return nil, fmt.Errorf("read storage outcomes: %w", err)
		}
		for _, r := range res.Rows {
			o := outcome{table: "storage_outcome_fact", runID: r[0].(string), point: r[1].(int64), params: r[2].(string),
				op: r[3].(string), repetitions: r[4].(int64), count: r[5].(int64), hasCV: true}
			if f, ok := r[6].(float64); ok {
				o.cv = &f
			}
			out = append(out, o)
		}
		res, err = w.Query(ctx, "SELECT run_id, point, params, model, repetitions, requests FROM "+
			sql.From(w.Dialect(), "serving_outcome_fact")+" WHERE run_id IN "+in+" ORDER BY run_id, point")
		if err != nil {
			return nil, fmt.Errorf("read serving outcomes: %w", err)
		}
		for _, r := range res.Rows {
			out = append(out, outcome{table: "serving_outcome_fact", runID: r[0].(string), point: r[1].(int64), params: r[2].(string),
				model: r[3].(string), repetitions: r[4].(int64), count: r[5].(int64)})
		}
	}
	return out, nil
}
