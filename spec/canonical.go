package spec

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/canonjson"
)

// WorkloadSpec returns the frozen workload: the driver, its parameters
// (defaults applied, values normalised, a one-value sweep written as the
// value) and the trial shape. Documentation fields, target, collectors and
// resources are not part of it: the same load against two targets has the
// same workload_spec_digest.
func (c *Case) WorkloadSpec() map[string]any {
	wl := map[string]any{}
	for k, vs := range c.Workload {
		if len(vs) == 1 {
			wl[k] = vs[0]
		} else {
			wl[k] = vs
		}
	}
	return map[string]any{
		"driver":            c.Driver.Info().Name,
		"workload":          wl,
		"repetitions":       c.Repetitions,
		"warmup":            c.Warmup.String(),
		"warmup_operations": c.WarmupOperations,
		"duration":          c.Duration.String(),
		"operations":        c.Operations,
		"seed":              c.Seed,
	}
}

// WorkloadSpecJSON is the canonical JSON of WorkloadSpec; it is stored in
// every bundle (role "spec") and its sha256 is the workload_spec_digest.
func (c *Case) WorkloadSpecJSON() []byte {
	b, err := canonjson.Marshal(c.WorkloadSpec())
	if err != nil {
		panic(fmt.Sprintf("spec: canonical workload: %v", err)) // values are normalised scalars
	}
	return b
}

// WorkloadSpecDigest is the sha256 of WorkloadSpecJSON.
func (c *Case) WorkloadSpecDigest() evidence.Digest { return evidence.Sum(c.WorkloadSpecJSON()) }

// identity is what names a benchmark case: the workload plus what it runs
// against and how it is observed and limited.
func (c *Case) identity() map[string]any {
	return map[string]any{
		"name":                 c.Name,
		"version":              c.Version,
		"workload_spec_digest": c.WorkloadSpecDigest().String(),
		"target":               map[string]any(c.Target),
		"collectors":           c.Collectors,
		"resources": map[string]any{
			"cpus":       c.Resources.CPUs,
			"memory":     c.Resources.Memory,
			"gpus":       c.Resources.GPUs,
			"time_limit": c.Resources.TimeLimit.String(),
		},
	}
}

// CaseID is the benchmark_case_id: the sha256 of the canonical case
// identity (name, version, workload_spec_digest, target, collectors,
// resources). Description, owner, deprecation and metadata do not change it.
func (c *Case) CaseID() evidence.Digest {
	b, err := canonjson.Marshal(c.identity())
	if err != nil {
		panic(fmt.Sprintf("spec: canonical case: %v", err))
	}
	return evidence.Sum(b)
}

// EffectiveConfig is the whole resolved case as stored in the bundle (role
// "config"): every field after overrides and defaults, plus both digests.
func (c *Case) EffectiveConfig() map[string]any {
	id := c.identity()
	id["benchmark_case_id"] = c.CaseID().String()
	id["workload"] = c.WorkloadSpec()
	id["description"] = c.Description
	id["owner"] = c.Owner
	id["deprecated"] = c.Deprecated
	id["metadata"] = c.Metadata
	id["driver"] = map[string]any{"name": c.Driver.Info().Name, "version": c.Driver.Info().Version}
	id["sets"] = c.Sets
	return id
}

// Axes returns the swept parameter names, sorted.
func (c *Case) Axes() []string {
	var axes []string
	for k, vs := range c.Workload {
		if len(vs) > 1 {
			axes = append(axes, k)
		}
	}
	sort.Strings(axes)
	return axes
}

// trialSeed derives a reproducible per-trial seed.
func trialSeed(seed int64, point, rep int) int64 {
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(point))
	binary.LittleEndian.PutUint64(b[16:], uint64(rep))
	d := evidence.Sum(b[:])
	return int64(binary.LittleEndian.Uint64(d[:8]) >> 1)
}
