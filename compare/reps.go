package compare

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/records"
	"github.com/perfwh/perfwh/internal/canonjson"
)

// repValues are a run's per-repetition throughputs (ops/s), by point
// parameters (canonical JSON, as in storage_outcome_fact.params) and
// operation, in trial order.
type repValues struct {
	byKey map[string][]float64
}

func (r *repValues) get(params, op string) []float64 {
	if v := r.byKey[params+"\x00"+op]; v != nil {
		return v
	}
	return []float64{}
}

// sampleRow is the part of a sample that the per-repetition throughput
// needs; only these columns are decoded.
type sampleRow struct {
	Phase string `parquet:"phase"`
	Op    string `parquet:"op"`
}

// repetitionValues derives per-repetition ops/s from the raw evidence of
// the run whose manifest is digest, exactly as ingest derives the values
// behind storage_outcome_fact.ops_per_s_cv: for each ok trial with a
// measurement window, the measured samples of each operation divided by
// the window's length. Every object read is verified against its digest.
func repetitionValues(ctx context.Context, repo *evidence.Repository, runID, digest string) (*repValues, error) {
	d, err := evidence.ParseDigest(digest)
	if err != nil {
		return nil, fmt.Errorf("manifest digest %q: %w", digest, err)
	}
	m, err := repo.ReadManifest(ctx, d)
	if err != nil {
		return nil, err
	}
	if m.RunID != runID {
		return nil, fmt.Errorf("manifest %s is for run %s", d, m.RunID)
	}
	files := map[string]evidence.File{}
	for _, f := range m.Files {
		files[f.Path] = f
	}
	out := &repValues{byKey: map[string][]float64{}}
	for _, t := range m.Trials {
		if t.Status != evidence.TrialOK || t.Measure == nil {
			continue
		}
		measureS := time.Duration(t.Measure.EndOffsetNs - t.Measure.StartOffsetNs).Seconds()
		if measureS <= 0 {
			continue
		}
		path := "trials/" + t.ID + "/samples.parquet"
		f, ok := files[path]
		if !ok {
			continue // a trial without samples has no outcome rows either
		}
		data, err := repo.ReadBlob(ctx, f.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rows, err := records.Read[sampleRow](bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		params, err := canonjson.Marshal(t.Params)
		if err != nil {
			return nil, fmt.Errorf("trial %s params: %w", t.ID, err)
		}
		perOp := map[string]int64{}
		var ops []string
		for _, r := range rows {
			if r.Phase != records.PhaseMeasure {
				continue
			}
			if perOp[r.Op] == 0 {
				ops = append(ops, r.Op)
			}
			perOp[r.Op]++
		}
		for _, op := range ops {
			k := string(params) + "\x00" + op
			out.byKey[k] = append(out.byKey[k], float64(perOp[op])/measureS)
		}
	}
	return out, nil
}
