package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perfwh/perfwh/collectors/sysinfo"
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/records"
	"github.com/perfwh/perfwh/internal/canonjson"
	"github.com/perfwh/perfwh/warehouse"
)

// Version is the derivation version recorded in every row (ingest_version).
// Bump it when a derived value changes meaning or computation, so old
// evidence can be re-derived and rows of different versions told apart.
const Version = 1

// DefaultWindow is the telemetry slice length.
const DefaultWindow = 10 * time.Second

// Bundle is a run's verified evidence, read once.
type Bundle struct {
	Pointer  evidence.RunPointer
	Manifest *evidence.Manifest
	Files    map[string][]byte // by bundle path: spec, environment, samples, telemetry
	Bytes    int64             // all blobs
	StoreURI string
	ManURI   string
}

// Deriver turns a bundle into warehouse rows.
type Deriver struct {
	Window time.Duration // telemetry slice length (DefaultWindow)
	Now    time.Time     // ingested_at
}

// derivedFiles are the roles whose content derivation reads.
var derivedRoles = map[string]bool{
	evidence.RoleSpec: true, evidence.RoleEnvironment: true,
	evidence.RoleSamples: true, evidence.RoleTelemetry: true,
}

// Derive computes every row of the run. It fails (and the run is
// quarantined) when a file cannot be decoded.
func (d Deriver) Derive(b *Bundle) (*warehouse.Batch, error) {
	if d.Window <= 0 {
		d.Window = DefaultWindow
	}
	now := d.Now.UTC().Truncate(time.Second)
	m := b.Manifest
	var env sysinfo.Environment
	if err := decodeJSON(b, "environment.json", &env); err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := decodeJSON(b, "spec.json", &spec); err != nil {
		return nil, err
	}
	runID, wsd, amd := m.RunID, m.WorkloadSpecDigest.String(), b.Pointer.ManifestDigest.String()
	id := func(row ...any) []any { return append([]any{runID, wsd, amd}, row...) }
	tail := []any{int64(Version), now}
	batch := &warehouse.Batch{RunID: runID}

	sw := map[string]any{
		"perfwh_version": m.Producer.Version, "perfwh_revision": m.Producer.Revision, "go_version": m.Producer.GoVersion,
		"driver": m.Benchmark.Driver, "driver_version": m.Benchmark.DriverVersion,
		"os": strings.TrimSpace(env.OS.Platform + " " + env.OS.PlatformVersion), "kernel_version": env.OS.KernelVersion,
		"gpu_driver_version": gpuDriver(env), "cuda_version": m.Metadata["cuda_version"],
		"image_digest": m.Metadata["image_digest"], "server_version": m.Metadata["server_version"],
	}
	swd := contentDigest(sw)
	batch.Add("software_version_dim", swd, sw["perfwh_version"], sw["perfwh_revision"], sw["go_version"], sw["driver"],
		sw["driver_version"], sw["os"], sw["kernel_version"], sw["gpu_driver_version"], sw["cuda_version"],
		sw["image_digest"], sw["server_version"])

	gpuModel, gpuMem := "", int64(0)
	if len(env.GPUs) > 0 {
		gpuModel, gpuMem = env.GPUs[0].Name, int64(env.GPUs[0].MemoryTotalBytes)
	}
	hw := map[string]any{
		"cpu_model": env.CPU.ModelName, "sockets": int64(env.CPU.Sockets), "physical_cores": int64(env.CPU.PhysicalCores),
		"logical_cores": int64(env.CPU.LogicalCores), "numa_nodes": int64(env.CPU.NUMANodes),
		"memory_bytes": int64(env.Memory.TotalBytes), "gpu_model": gpuModel, "gpu_count": int64(len(env.GPUs)),
		"gpu_memory_bytes": gpuMem, "virtualization": env.Virtualization.System,
		"nvlink_topology": m.Metadata["nvlink_topology"], "pcie_layout": m.Metadata["pcie_layout"],
	}
	hwd := contentDigest(hw)
	batch.Add("hardware_topology_dim", hwd, hw["cpu_model"], hw["sockets"], hw["physical_cores"], hw["logical_cores"],
		hw["numa_nodes"], hw["memory_bytes"], hw["gpu_model"], hw["gpu_count"], hw["gpu_memory_bytes"],
		hw["virtualization"], hw["nvlink_topology"], hw["pcie_layout"])

	scheduler := metaOr(m, "scheduler", "local")
	cl := map[string]any{
		"cluster": metaOr(m, "cluster", "local"), "region": m.Metadata["region"], "zone": m.Metadata["zone"],
		"node_pool": m.Metadata["node_pool"], "scheduler": scheduler, "queue": m.Metadata["queue"],
		"resource_flavor": m.Metadata["resource_flavor"], "tenant_mode": m.Metadata["tenant_mode"],
	}
	cld := contentDigest(cl)
	batch.Add("cluster_region_dim", cld, cl["cluster"], cl["region"], cl["zone"], cl["node_pool"], cl["scheduler"],
		cl["queue"], cl["resource_flavor"], cl["tenant_mode"])

	if err := addWorkload(batch, b, wsd, spec); err != nil {
		return nil, err
	}

	failed := int64(0)
	for _, t := range m.Trials {
		if t.Status != evidence.TrialOK {
			failed++
		}
	}
	batch.Add("benchmark_run_fact", id(m.BenchmarkCaseID.String(), m.Benchmark.Name, m.Benchmark.Version,
		m.Benchmark.Driver, m.Benchmark.DriverVersion, string(m.Status), int64(len(m.Trials)),
		int64(len(m.Trials))-failed, failed, m.StartedAt.UTC().Truncate(time.Second), m.EndedAt.UTC().Truncate(time.Second),
		m.EndedAt.Sub(m.StartedAt).Seconds(), m.Producer.Version, m.Producer.Revision, swd, hwd, cld,
		scheduler, m.Metadata["scheduler_run_id"], env.Hostname, metaOr(m, "mode", "exploratory"), int64(Version), now)...)
	batch.Add("artifact_lineage_dim", runID, amd, b.ManURI, b.StoreURI, int64(len(m.Files)), b.Bytes, "unsigned")
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		batch.Add("run_metadata", append(id(k, m.Metadata[k]), tail...)...)
	}

	if err := d.addOutcomes(batch, b, id, tail); err != nil {
		return nil, err
	}
	if err := d.addTelemetry(batch, b, id, tail, env.Hostname); err != nil {
		return nil, err
	}
	return batch, nil
}

func metaOr(m *evidence.Manifest, key, def string) string {
	if v := m.Metadata[key]; v != "" {
		return v
	}
	return def
}

func gpuDriver(env sysinfo.Environment) string {
	if len(env.GPUs) > 0 {
		return env.GPUs[0].DriverVersion
	}
	return ""
}

// contentDigest names a dimension row by the digest of its content.
func contentDigest(v map[string]any) string {
	b, err := canonjson.Marshal(v)
	if err != nil {
		panic(err) // plain strings and integers
	}
	return evidence.Sum(b).String()
}

func decodeJSON(b *Bundle, path string, v any) error {
	data, ok := b.Files[path]
	if !ok {
		return fmt.Errorf("bundle has no %s", path)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

func addWorkload(batch *warehouse.Batch, b *Bundle, wsd string, spec map[string]any) error {
	wl, _ := spec["workload"].(map[string]any)
	var axes []string
	for k, v := range wl {
		if _, ok := v.([]any); ok {
			axes = append(axes, k)
		}
	}
	sort.Strings(axes)
	str := func(k string) string {
		if v, ok := wl[k].(string); ok {
			return v
		}
		return ""
	}
	num := func(k string) (int64, error) {
		n, ok := spec[k].(json.Number)
		if !ok {
			return 0, fmt.Errorf("spec.json: %s is not a number", k)
		}
		return n.Int64()
	}
	dur := func(k string) (float64, error) {
		s, _ := spec[k].(string)
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("spec.json: %s: %w", k, err)
		}
		return d.Seconds(), nil
	}
	reps, err1 := num("repetitions")
	ops, err2 := num("operations")
	seed, err3 := num("seed")
	warm, err4 := dur("warmup")
	measure, err5 := dur("duration")
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			return err
		}
	}
	driver, _ := spec["driver"].(string)
	batch.Add("workload_dim", wsd, driver, string(b.Files["spec.json"]), reps, warm, measure, ops, seed,
		strings.Join(axes, ","), str("model"), str("precision"), str("protocol"), str("deployment_model"),
		str("prompt_distribution"), str("output_distribution"), str("batching_policy"))
	return nil
}

func readParquet[T any](b *Bundle, path string) ([]T, error) {
	data, ok := b.Files[path]
	if !ok {
		return nil, nil
	}
	rows, err := records.Read[T](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// readSamples decodes the columns of a samples file that outcomes need;
// a trial without a samples file has no samples.
func readSamples(b *Bundle, path string) (*records.OpColumns, error) {
	data, ok := b.Files[path]
	if !ok {
		return &records.OpColumns{}, nil
	}
	c, err := records.ReadOpColumns(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// pointAgg pools the measured samples of one workload point and operation.
type pointAgg struct {
	point     int
	params    string
	op        string
	trials    int
	latencies []float64 // ms, ok samples
	errors    int64
	samples   int64
	bytes     int64
	measureS  float64
	perTrial  []float64 // ops/s of each trial
}

// addOutcomes derives storage_outcome_fact rows: per workload point and
// operation, pooled over the ok trials' measurement phases.
func (d Deriver) addOutcomes(batch *warehouse.Batch, b *Bundle, id func(...any) []any, tail []any) error {
	m := b.Manifest
	aggs := map[string]*pointAgg{}
	var order []string
	for _, t := range m.Trials {
		if t.Status != evidence.TrialOK || t.Measure == nil {
			continue
		}
		cols, err := readSamples(b, "trials/"+t.ID+"/samples.parquet")
		if err != nil {
			return err
		}
		params, err := canonjson.Marshal(t.Params)
		if err != nil {
			return fmt.Errorf("trial %s params: %w", t.ID, err)
		}
		measureS := time.Duration(t.Measure.EndOffsetNs - t.Measure.StartOffsetNs).Seconds()
		perOp := map[string]int64{}
		byOp := map[string]*pointAgg{} // this trial's aggregates, by op
		for i := range cols.Len() {
			if cols.Phase[i] != records.PhaseMeasure {
				continue
			}
			op := cols.Op[i]
			a := byOp[op]
			if a == nil {
				key := fmt.Sprintf("%d\x00%s", t.Point, op)
				if a = aggs[key]; a == nil {
					a = &pointAgg{point: t.Point, params: string(params), op: op}
					aggs[key] = a
					order = append(order, key)
				}
				byOp[op] = a
			}
			a.samples++
			perOp[op]++
			a.bytes += cols.Bytes[i]
			if cols.OK[i] {
				a.latencies = append(a.latencies, float64(cols.LatencyNs[i])/1e6)
			} else {
				a.errors++
			}
		}
		for op, n := range perOp {
			a := aggs[fmt.Sprintf("%d\x00%s", t.Point, op)]
			a.trials++
			a.measureS += measureS
			if measureS > 0 {
				a.perTrial = append(a.perTrial, float64(n)/measureS)
			}
		}
	}
	sort.Strings(order)
	for _, key := range order {
		a := aggs[key]
		st := Latencies(a.latencies)
		row := id(int64(a.point), a.params, a.op, b.Manifest.Benchmark.Driver, int64(a.trials), a.samples, a.errors,
			ratio(float64(a.errors), float64(a.samples)), a.measureS, ratio(float64(a.samples), a.measureS))
		if cv, ok := CV(a.perTrial); ok {
			row = append(row, ptr(cv))
		} else {
			row = append(row, (*float64)(nil))
		}
		row = append(row, ratio(float64(a.bytes)/1e6, a.measureS))
		row = append(row, latencyCols(st)...)
		row = append(row, (*float64)(nil), (*float64)(nil)) // recall_at_k, ingest_rows_per_s: not measured by these drivers
		batch.Add("storage_outcome_fact", append(row, tail...)...)
	}
	return nil
}

// latencyCols renders percentiles, mean and stddev (NULL without samples).
func latencyCols(st LatencyStats) []any {
	out := make([]any, 0, len(Quantiles)+2)
	for _, q := range Quantiles {
		if st.N == 0 {
			out = append(out, (*float64)(nil))
		} else {
			out = append(out, ptr(st.Percentile[q.Suffix]))
		}
	}
	if st.N == 0 {
		return append(out, (*float64)(nil), (*float64)(nil))
	}
	return append(out, ptr(st.Mean), ptr(st.Stddev))
}

func ptr(f float64) *float64 { return &f }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

type sliceKey struct {
	window                    int64
	collector, metric, device string
}

type sliceAgg struct {
	n                   int64
	min, max, sum, last float64
	lastOffset          int64
}

// addTelemetry rolls each ok trial's telemetry into windows aligned to
// its measurement window: window i covers [start + i·W, start + (i+1)·W).
func (d Deriver) addTelemetry(batch *warehouse.Batch, b *Bundle, id func(...any) []any, tail []any, node string) error {
	w := int64(d.Window)
	for _, t := range b.Manifest.Trials {
		if t.Measure == nil {
			continue
		}
		pts, err := readParquet[records.TelemetryPoint](b, "trials/"+t.ID+"/telemetry.parquet")
		if err != nil {
			return err
		}
		start, end := t.Measure.StartOffsetNs, t.Measure.EndOffsetNs
		aggs := map[sliceKey]*sliceAgg{}
		for _, p := range pts {
			if p.OffsetNs < start || p.OffsetNs > end || math.IsNaN(p.Value) {
				continue
			}
			k := sliceKey{(p.OffsetNs - start) / w, p.Collector, p.Metric, p.Device}
			if p.OffsetNs == end && k.window > 0 && (end-start)%w == 0 {
				k.window-- // a point exactly at the end belongs to the last window
			}
			a := aggs[k]
			if a == nil {
				a = &sliceAgg{min: p.Value, max: p.Value, lastOffset: math.MinInt64}
				aggs[k] = a
			}
			a.n++
			a.sum += p.Value
			a.min, a.max = math.Min(a.min, p.Value), math.Max(a.max, p.Value)
			if p.OffsetNs >= a.lastOffset {
				a.last, a.lastOffset = p.Value, p.OffsetNs
			}
		}
		keys := make([]sliceKey, 0, len(aggs))
		for k := range aggs {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.window != b.window {
				return a.window < b.window
			}
			if a.collector != b.collector {
				return a.collector < b.collector
			}
			if a.metric != b.metric {
				return a.metric < b.metric
			}
			return a.device < b.device
		})
		for _, k := range keys {
			a := aggs[k]
			ws := k.window * w
			length := min(w, end-start-ws)
			wallStart := t.StartedAt.Add(time.Duration(start + ws)).UTC().Truncate(time.Second)
			batch.Add("telemetry_slice_fact", append(id(t.ID, int64(t.Point), int64(t.Repetition), k.window, wallStart, ws,
				time.Duration(length).Seconds(), node, k.collector, k.metric, k.device, a.n, a.min, a.max,
				a.sum/float64(a.n), a.last), tail...)...)
		}
	}
	return nil
}
