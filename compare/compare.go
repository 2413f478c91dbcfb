package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/warehouse"
)

// Options configure Diff.
type Options struct {
	Warehouse warehouse.Warehouse
	// Repo, when set, is the evidence store the per-repetition values
	// (for the confidence intervals) are derived from. Without it, or
	// when a run's evidence cannot be read, the intervals are not
	// available and Report.Warnings says why.
	Repo *evidence.Repository
	// Resamples, Confidence and Seed configure the bootstrap; zero values
	// mean DefaultResamples, DefaultConfidence and DefaultSeed.
	Resamples  int
	Confidence float64
	Seed       uint64
}

// Report is the difference between run A and run B: B relative to A.
type Report struct {
	A RunInfo `json:"a"`
	B RunInfo `json:"b"`
	// Dimensions lists every dimension of both runs side by side, in
	// section order (see Sections), marking those that differ.
	Dimensions          []Dimension `json:"dimensions"`
	DifferingDimensions int         `json:"differing_dimensions"`
	// RunWideChanges are the workload parameters that are constant within
	// each run but differ between them; points are matched without them.
	RunWideChanges []ParamChange `json:"run_wide_param_changes"`
	Outcomes       []Outcome     `json:"outcomes"`
	Bootstrap      Bootstrap     `json:"bootstrap"`
	Warnings       []string      `json:"warnings"`
}

// RunInfo identifies one side of the diff. These always differ between
// two runs and are not counted as dimensions.
type RunInfo struct {
	RunID              string    `json:"run_id"`
	Benchmark          string    `json:"benchmark"`
	StartedAt          time.Time `json:"started_at"`
	DurationS          float64   `json:"duration_s"`
	ManifestDigest     string    `json:"artifact_manifest_digest"`
	WorkloadSpecDigest string    `json:"workload_spec_digest"`
}

// Sections of Report.Dimensions, in order.
var Sections = []string{"run", "software", "hardware", "cluster", "workload", "metadata"}

// Dimension is one described property of both runs. A value missing in a
// run (a metadata key or spec field it does not have) is nil.
type Dimension struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	A       any    `json:"a"`
	B       any    `json:"b"`
	Differs bool   `json:"differs"`
}

// ParamChange is a workload parameter with its value in each run (nil
// where the run does not have it).
type ParamChange struct {
	Param string `json:"param"`
	A     any    `json:"a"`
	B     any    `json:"b"`
}

// Where an outcome was found.
const (
	InBoth  = "both"
	OnlyInA = "a"
	OnlyInB = "b"
)

// Outcome is one workload point (and operation) of either or both runs.
type Outcome struct {
	Kind string `json:"kind"` // storage or serving (the outcome table)
	Op   string `json:"op,omitempty"`
	In   string `json:"in"` // both, a or b
	// Axes are the point's values of the parameters that vary between
	// points of either run: what tells this point from the others.
	Axes         map[string]any `json:"axes"`
	PointA       *int64         `json:"point_a"`
	PointB       *int64         `json:"point_b"`
	ParamsA      any            `json:"params_a"`
	ParamsB      any            `json:"params_b"`
	RepetitionsA *int64         `json:"repetitions_a"`
	RepetitionsB *int64         `json:"repetitions_b"`
	Metrics      []Metric       `json:"metrics"`
	// Throughput compares per-repetition throughput; nil for a point
	// found in one run only.
	Throughput *RepetitionCI `json:"throughput_ci"`

	rawA, rawB   string         // params as stored: the key of the per-repetition values
	valsA, valsB map[string]any // the outcome rows
}

// Metric is one outcome column in both runs and its change.
type Metric struct {
	Name     string   `json:"name"`
	A        *float64 `json:"a"`
	B        *float64 `json:"b"`
	Delta    *float64 `json:"delta"`    // B − A
	Relative *float64 `json:"relative"` // (B − A) / A; nil when A is 0 or either is missing
}

// RepetitionCI is the bootstrap confidence interval of the difference in
// mean per-repetition values of Metric, B − A.
type RepetitionCI struct {
	Metric string    `json:"metric"`
	A      []float64 `json:"a_repetitions"`
	B      []float64 `json:"b_repetitions"`
	// MeanDiff is mean(B) − mean(A) of the repetitions (which may differ
	// slightly from the pooled Metric delta: the pooled value weights
	// repetitions by their measurement windows).
	MeanDiff *float64  `json:"mean_diff"`
	Interval *Interval `json:"interval"`         // nil when not available
	Reason   string    `json:"reason,omitempty"` // why Interval is nil
	// Caveat warns that the interval rests on few repetitions: with fewer
	// than FewRepetitions per run, resampling sees few distinct values and
	// the interval understates the uncertainty.
	Caveat string `json:"caveat,omitempty"`
}

// FewRepetitions is the number of repetitions per run below which an
// interval carries a caveat.
const FewRepetitions = 5

// Bootstrap describes how the intervals were computed.
type Bootstrap struct {
	Method     string  `json:"method"`
	Resamples  int     `json:"resamples"`
	Confidence float64 `json:"confidence"`
	Seed       uint64  `json:"seed"`
}

// Diff compares runs a and b (full run ids, both ingested; see Resolve).
func Diff(ctx context.Context, o Options, a, b string) (*Report, error) {
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = DefaultConfidence
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	runs, err := load(ctx, o.Warehouse, a, b)
	if err != nil {
		return nil, err
	}
	ra, rb := runs[0], runs[1]
	r := &Report{
		A: ra.info(), B: rb.info(),
		Bootstrap: Bootstrap{
			Method:    "percentile bootstrap of mean(B) − mean(A) of per-repetition ops_per_s (repetitions resampled with replacement within each run)",
			Resamples: o.Resamples, Confidence: o.Confidence, Seed: o.Seed,
		},
		Warnings: []string{},
	}
	r.Dimensions = dimensions(ra, rb)
	for _, d := range r.Dimensions {
		if d.Differs {
			r.DifferingDimensions++
		}
	}
	repsA, repsB := o.repetitions(ctx, r, ra), o.repetitions(ctx, r, rb)
	storage, wideS := matchOutcomes("storage", ra.storage, rb.storage, storageMetrics)
	serving, wideV := matchOutcomes("serving", ra.serving, rb.serving, servingMetrics)
	r.RunWideChanges = mergeChanges(wideS, wideV)
	for i := range storage {
		oc := &storage[i]
		if oc.In != InBoth {
			continue
		}
		oc.Throughput = o.interval(oc, repsA, repsB)
	}
	for i := range serving {
		if serving[i].In == InBoth {
			serving[i].Throughput = &RepetitionCI{Metric: "achieved_rate", A: []float64{}, B: []float64{},
				Reason: "per-repetition values are derived for storage outcomes only"}
		}
	}
	r.Outcomes = append(storage, serving...)
	if r.Outcomes == nil {
		r.Outcomes = []Outcome{}
	}
	return r, nil
}

// repetitions derives a run's per-repetition values from its evidence; on
// failure it records a warning and returns nil.
func (o Options) repetitions(ctx context.Context, r *Report, run *runData) *repValues {
	if o.Repo == nil {
		r.Warnings = appendOnce(r.Warnings, "no evidence store: confidence intervals not available")
		return nil
	}
	if len(run.storage) == 0 {
		return nil
	}
	v, err := repetitionValues(ctx, o.Repo, run.runID, run.manifestDigest())
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("run %s: per-repetition values not available: %v", run.runID, err))
		return nil
	}
	return v
}

func (o Options) interval(oc *Outcome, repsA, repsB *repValues) *RepetitionCI {
	ci := &RepetitionCI{Metric: "ops_per_s", A: []float64{}, B: []float64{}}
	if repsA == nil || repsB == nil {
		ci.Reason = "per-repetition values not available (see warnings)"
		return ci
	}
	ci.A = repsA.get(oc.rawA, oc.Op)
	ci.B = repsB.get(oc.rawB, oc.Op)
	for _, c := range []struct {
		side string
		vals []float64
		rows *int64
	}{{"A", ci.A, oc.RepetitionsA}, {"B", ci.B, oc.RepetitionsB}} {
		if c.rows != nil && int64(len(c.vals)) != *c.rows {
			ci.Reason = fmt.Sprintf("run %s: the evidence has %d repetitions of the point, the warehouse %d (re-ingest the run)",
				c.side, len(c.vals), *c.rows)
			return ci
		}
	}
	if len(ci.A) > 0 && len(ci.B) > 0 {
		ci.MeanDiff = ptr(mean(ci.B) - mean(ci.A))
	}
	if len(ci.A) < 2 || len(ci.B) < 2 {
		ci.Reason = fmt.Sprintf("needs at least 2 repetitions in each run (A has %d, B has %d)", len(ci.A), len(ci.B))
		return ci
	}
	iv := bootstrap(ci.A, ci.B, o.Resamples, o.Confidence, pointSeed(o.Seed, oc.Kind+"\x00"+oc.Op+"\x00"+canonical(oc.Axes)))
	ci.Interval = &iv
	if min(len(ci.A), len(ci.B)) < FewRepetitions {
		ci.Caveat = fmt.Sprintf("fewer than %d repetitions per run: the interval understates the uncertainty", FewRepetitions)
	}
	return ci
}

func appendOnce(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

func ptr(f float64) *float64 { return &f }
