package warehousetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

// Base is the time synthetic rows start from.
var Base = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// SyntheticBatch returns a small deterministic batch for runID: one row of
// benchmark_run_fact, artifact_lineage_dim and each dimension, 6 rows of
// storage_outcome_fact (NULLs in some nullable columns), 2 of
// serving_outcome_fact and training_outcome_fact, 12 of
// telemetry_slice_fact, 3 of run_metadata, and an ingested ledger entry.
// The same (runID, seed) gives the same batch; the dimension rows depend on
// seed only, so two runs with one seed share their dimension keys.
func SyntheticBatch(runID string, seed int) *warehouse.Batch {
	return SyntheticBatchN(runID, seed, 6, 12)
}

// SyntheticBatchN is SyntheticBatch with storage and telemetry row counts
// of one's choice (benchmarks write a million).
func SyntheticBatchN(runID string, seed, storageRows, telemetryRows int) *warehouse.Batch {
	h := fnv.New64a()
	h.Write([]byte(runID))
	g := gen{rng: rand.New(rand.NewPCG(uint64(seed), h.Sum64())), seed: seed}
	dg := gen{rng: rand.New(rand.NewPCG(uint64(seed), 0)), seed: seed}

	wsd := digest(fmt.Sprint("workload ", seed))
	amd := digest("manifest " + runID + fmt.Sprint(seed))
	swd, hwd, cld := digest(fmt.Sprint("software ", seed)), digest(fmt.Sprint("hardware ", seed)), digest(fmt.Sprint("cluster ", seed))
	started := Base.Add(time.Duration(g.rng.IntN(86400)) * time.Second)
	ingested := started.Add(time.Hour)
	id := map[string]any{"run_id": runID, "workload_spec_digest": wsd, "artifact_manifest_digest": amd,
		"ingest_version": int64(1), "ingested_at": ingested}
	b := &warehouse.Batch{RunID: runID}

	b.Add("workload_dim", dg.row("workload_dim", 0, map[string]any{"workload_spec_digest": wsd, "driver": "fileio",
		"spec_json": fmt.Sprintf(`{"driver":"fileio","seed":%d,"note":"quotes ' and \" and é"}`, seed)})...)
	b.Add("software_version_dim", dg.row("software_version_dim", 0, map[string]any{"software_version_digest": swd})...)
	b.Add("hardware_topology_dim", dg.row("hardware_topology_dim", 0, map[string]any{"hardware_topology_digest": hwd,
		"memory_bytes": int64(1) << 40})...)
	b.Add("cluster_region_dim", dg.row("cluster_region_dim", 0, map[string]any{"cluster_region_digest": cld, "cluster": "local"})...)

	b.Add("benchmark_run_fact", g.row("benchmark_run_fact", 0, with(id, map[string]any{
		"benchmark_name": "synthetic", "driver": "fileio", "status": "complete",
		"trials_total": int64(4), "trials_ok": int64(3), "trials_failed": int64(1),
		"started_at": started, "ended_at": started.Add(90 * time.Second), "duration_s": 90.0,
		"software_version_digest": swd, "hardware_topology_digest": hwd, "cluster_region_digest": cld,
		"scheduler_path": "local", "scheduler_run_id": "", "mode": "exploratory",
	}))...)
	b.Add("artifact_lineage_dim", g.row("artifact_lineage_dim", 0, map[string]any{"run_id": runID,
		"artifact_manifest_digest": amd, "manifest_uri": "file:///store/manifests/" + amd, "signing_state": "unsigned"})...)
	for i := range storageRows {
		b.Add("storage_outcome_fact", g.row("storage_outcome_fact", i, with(id, map[string]any{
			"point": int64(i / 2), "op": []string{"read", "write"}[i%2], "driver": "fileio",
			"params": fmt.Sprintf(`{"block_size":%d}`, 4096<<(i/2%8)),
		}))...)
	}
	for i := range 2 {
		b.Add("serving_outcome_fact", g.row("serving_outcome_fact", i, with(id, map[string]any{
			"point": int64(i), "model": "tiny", "saturated": uint8(i % 2),
		}))...)
		b.Add("training_outcome_fact", g.row("training_outcome_fact", i, with(id, map[string]any{
			"point": int64(0), "phase": "train", "scale_point": int64(1 << i),
		}))...)
	}
	series := [][3]string{{"host", "cpu_util_pct", ""}, {"host", "mem_used_bytes", ""}, {"nvml", "gpu_util_pct", "0"}, {"nvml", "gpu_util_pct", "1"}}
	const windows = 60
	for i := range telemetryRows {
		s, w, trial := series[i%len(series)], i/len(series)%windows, i/(len(series)*windows)
		if telemetryRows <= 12 { // the small batch: 2 trials × 3 windows × 2 series
			s, w, trial = series[i%2], i/2%3, i/6
		}
		b.Add("telemetry_slice_fact", g.row("telemetry_slice_fact", i, with(id, map[string]any{
			"trial_id": fmt.Sprintf("t%04d", trial), "point": int64(trial % 3), "repetition": int64(trial / 3),
			"window_index": int64(w), "window_start": started.Add(time.Duration(w) * time.Second),
			"window_start_offset_ns": int64(w) * 1e9, "window_s": 1.0, "node_name": `node-1 'a\b'`,
			"collector": s[0], "metric": s[1], "device": s[2],
		}))...)
	}
	for i, kv := range [][2]string{{"cluster", "local"}, {"mode", "exploratory"}, {"owner", fmt.Sprint("team-", seed)}} {
		b.Add("run_metadata", g.row("run_metadata", i, with(id, map[string]any{"key": kv[0], "value": kv[1]}))...)
	}
	b.Ledger = &warehouse.LedgerEntry{RunID: runID, ManifestDigest: amd, Status: warehouse.Ingested,
		IngestVersion: 1, IngestedAt: ingested, Rows: int64(b.Count())}
	return b
}

// gen fills the columns a synthetic row does not set explicitly, from a
// seeded generator, so the batch follows schema changes.
type gen struct {
	rng  *rand.Rand
	seed int
}

// row returns the row of table with set's values and generated ones for
// the other columns; it panics on a column the table lacks.
func (g gen) row(table string, i int, set map[string]any) []any {
	t, ok := warehouse.Lookup(table)
	if !ok {
		panic("warehousetest: no table " + table)
	}
	for name := range set {
		if _, ok := t.Column(name); !ok {
			panic("warehousetest: table " + table + " has no column " + name)
		}
	}
	out := make([]any, len(t.Columns))
	for c, col := range t.Columns {
		if v, ok := set[col.Name]; ok {
			out[c] = v
			continue
		}
		switch col.Type {
		case warehouse.String:
			out[c] = fmt.Sprintf("%s-%d", col.Name, g.seed)
		case warehouse.Int64:
			out[c] = int64(g.rng.IntN(1_000_000))
		case warehouse.Float64:
			out[c] = g.num()
		case warehouse.NFloat64:
			if (i+c)%3 == 0 {
				out[c] = (*float64)(nil)
			} else {
				f := g.num()
				out[c] = &f
			}
		case warehouse.DateTime:
			out[c] = Base.Add(time.Duration(g.rng.IntN(86400)) * time.Second)
		case warehouse.Date:
			out[c] = Base.Truncate(24 * time.Hour)
		case warehouse.Bool:
			out[c] = uint8(g.rng.IntN(2))
		default:
			panic("warehousetest: unknown column type " + string(col.Type))
		}
	}
	return out
}

// num is a float with three decimals, readable in golden files.
func (g gen) num() float64 { return math.Round(g.rng.Float64()*1e6) / 1e3 }

func with(base, more map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(more))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// CloneBatch returns a deep copy of b's row slices (values are shared; they
// are immutable), for tests that mutate a batch.
func CloneBatch(b *warehouse.Batch) *warehouse.Batch {
	c := &warehouse.Batch{RunID: b.RunID, Rows: map[string][][]any{}}
	for t, rows := range b.Rows {
		for _, r := range rows {
			c.Rows[t] = append(c.Rows[t], append([]any(nil), r...))
		}
	}
	if b.Ledger != nil {
		e := *b.Ledger
		c.Ledger = &e
	}
	return c
}
