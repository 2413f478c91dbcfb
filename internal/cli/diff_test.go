package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/compare"
	"github.com/perfwh/perfwh/ingest"
	"github.com/perfwh/perfwh/internal/testenv"
)

const diffCase = `name: diff-test
driver: fileio
workload:
  mode: [read, randread]
  file_size: 1MiB
  block_size: 4KiB
repetitions: 3
warmup_operations: 16
operations: 512
metadata:
  cluster: lab-a
`

func TestRunsDiffDuckDB(t *testing.T) { testRunsDiff(t) }

func TestRunsDiffClickHouse(t *testing.T) {
	_, u := testenv.ClickHouseDatabase(t)
	testRunsDiff(t, "--warehouse", u)
}

// testRunsDiff runs real fileio runs — A, B with a changed parameter and
// metadata, C identical to A, D with one repetition — ingests them and
// diffs them; whArgs select the warehouse.
func testRunsDiff(t *testing.T, whArgs ...string) {
	home := t.TempDir()
	cs := writeCase(t, diffCase)
	cmd := func(args ...string) (string, string, int) {
		t.Helper()
		return perfwh(t, home, append(append([]string{}, whArgs...), args...)...)
	}
	run := func(sets ...string) string {
		t.Helper()
		args := []string{"run", cs, "-o", "json"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		out, stderr, code := cmd(args...)
		if code != 0 {
			t.Fatalf("run %v: exit %d\n%s\n%s", sets, code, out, stderr)
		}
		var doc struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.RunID
	}
	a := run()
	b := run("workload.block_size=16KiB", "metadata.cluster=lab-b")
	c := run()
	d := run("repetitions=1")

	if _, stderr, code := cmd("runs", "diff", a, b); code != ExitUsage ||
		!strings.Contains(stderr, "not ingested") || !strings.Contains(stderr, "perfwh ingest") {
		t.Fatalf("diff before ingest: exit %d, %s", code, stderr)
	}
	if out, stderr, code := cmd("ingest"); code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, stderr)
	}

	diff := func(x, y string, more ...string) (*compare.Report, string) {
		t.Helper()
		out, stderr, code := cmd(append([]string{"runs", "diff", x, y, "-o", "json"}, more...)...)
		if code != 0 {
			t.Fatalf("diff %s %s: exit %d\n%s", x, y, code, stderr)
		}
		var r compare.Report
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&r); err != nil || dec.More() {
			t.Fatalf("diff output is not one JSON document (%v):\n%s", err, out)
		}
		return &r, out
	}
	dims := func(r *compare.Report) map[string]compare.Dimension {
		m := map[string]compare.Dimension{}
		for _, d := range r.Dimensions {
			m[d.Section+"."+d.Name] = d
		}
		return m
	}

	// A changed parameter and metadata: the differing workload spec field,
	// the cluster, and outcome deltas for both points, matched by mode.
	r, out1 := diff(a[:13], b)
	dm := dims(r)
	if d := dm["workload.workload.block_size"]; !d.Differs || d.A != 4096.0 || d.B != 16384.0 {
		t.Errorf("block_size dimension %+v", d)
	}
	for _, k := range []string{"workload.workload_spec_digest", "metadata.cluster", "cluster.cluster", "run.benchmark_case_id"} {
		if !dm[k].Differs {
			t.Errorf("%s does not differ: %+v", k, dm[k])
		}
	}
	for _, k := range []string{"workload.workload.mode", "workload.repetitions", "software.software_version_digest",
		"hardware.hardware_topology_digest", "run.driver_version", "run.ingest_version"} {
		if d, ok := dm[k]; !ok || d.Differs {
			t.Errorf("%s: present %v, %+v; want present and equal", k, ok, d)
		}
	}
	if len(r.RunWideChanges) != 1 || r.RunWideChanges[0].Param != "block_size" {
		t.Errorf("run-wide changes %+v", r.RunWideChanges)
	}
	if len(r.Outcomes) != 2 {
		t.Fatalf("%d outcomes; want 2", len(r.Outcomes))
	}
	cvs := outcomeCVs(t, cmd, a)
	for _, o := range r.Outcomes {
		if o.In != compare.InBoth || o.Kind != "storage" || o.Op != "read" || o.Axes["mode"] == nil {
			t.Fatalf("outcome %+v", o)
		}
		ops := o.Metrics[0]
		if ops.Name != "ops_per_s" || ops.A == nil || ops.B == nil || math.Abs(*ops.Delta-(*ops.B-*ops.A)) > 1e-6*math.Abs(*ops.A) ||
			math.Abs(*ops.Relative - (*ops.B-*ops.A) / *ops.A) > 1e-9 {
			t.Errorf("ops_per_s %+v", ops)
		}
		ci := o.Throughput
		if ci == nil || ci.Interval == nil || len(ci.A) != 3 || len(ci.B) != 3 || ci.Interval.Low > ci.Interval.High {
			t.Fatalf("throughput CI %+v", ci)
		}
		// The per-repetition values read from the evidence are those ingest
		// derived ops_per_s_cv from.
		cv, _ := ingest.CV(ci.A)
		if want := cvs[o.Axes["mode"].(string)]; math.Abs(cv-want) > 1e-9*want {
			t.Errorf("mode %v: CV of the repetitions %g; warehouse ops_per_s_cv %g", o.Axes["mode"], cv, want)
		}
	}
	// Deterministic for a seed (with three repetitions a side there are
	// few distinct resampled means, so another seed may well give the same
	// interval: compare.TestBootstrapIsDeterministicForASeed covers that).
	if _, out2 := diff(a, b); out2 != out1 {
		t.Errorf("two diffs with the default seed differ")
	}
	if r2, _ := diff(a, b, "--seed", "7", "--resamples", "500", "--confidence", "0.9"); r2.Bootstrap.Seed != 7 ||
		r2.Bootstrap.Resamples != 500 || r2.Bootstrap.Confidence != 0.9 || r2.Outcomes[0].Throughput.Interval == nil {
		t.Errorf("bootstrap options not applied: %+v", r2.Bootstrap)
	}
	for _, bad := range [][]string{{"--resamples", "5"}, {"--confidence", "95"}} {
		if _, _, code := cmd(append([]string{"runs", "diff", a, b}, bad...)...); code != ExitUsage {
			t.Errorf("diff %v: exit %d; want 2", bad, code)
		}
	}

	table, stderr, code := cmd("runs", "diff", a, b)
	for _, want := range []string{"*  workload  workload.block_size", "4KiB", "16KiB", "*  metadata  cluster", "lab-a",
		"block_size 4KiB → 16KiB", "mode=randread", "ops_per_s", "latency_p999_ms", "95% CI"} {
		if code != 0 || !strings.Contains(table, want) {
			t.Fatalf("table (exit %d) lacks %q:\n%s\n%s", code, want, table, stderr)
		}
	}

	// Identical runs of the same case: no dimension differs.
	r, _ = diff(a, c)
	for _, d := range r.Dimensions {
		if d.Differs {
			t.Errorf("identical runs differ in %s.%s: %v vs %v", d.Section, d.Name, d.A, d.B)
		}
	}
	if len(r.RunWideChanges) != 0 || len(r.Outcomes) != 2 || r.Outcomes[0].In != compare.InBoth {
		t.Errorf("identical runs: run-wide %+v, outcomes %d", r.RunWideChanges, len(r.Outcomes))
	}

	// One repetition: no interval, and the table says n/a.
	r, _ = diff(a, d)
	if !dims(r)["workload.repetitions"].Differs {
		t.Error("repetitions do not differ")
	}
	for _, o := range r.Outcomes {
		if o.Throughput == nil || o.Throughput.Interval != nil || !strings.Contains(o.Throughput.Reason, "at least 2 repetitions") {
			t.Errorf("one repetition: %+v", o.Throughput)
		}
	}
	if table, _, _ := cmd("runs", "diff", a, d); !strings.Contains(table, "n/a") {
		t.Errorf("table without n/a:\n%s", table)
	}

	// A run in the store but not in the warehouse.
	e := run()
	if _, stderr, code := cmd("runs", "diff", a, e); code != ExitUsage ||
		!strings.Contains(stderr, "run "+e+" is in the store but not ingested") || !strings.Contains(stderr, "`perfwh ingest`") {
		t.Fatalf("diff with a run not ingested: exit %d, %s", code, stderr)
	}

	for _, bad := range [][]string{{a, "zzzz"}, {"../x", a}, {a}, {a[:2], b}} {
		out, stderr, code := cmd(append([]string{"runs", "diff", "-o", "json"}, bad...)...)
		if code != ExitUsage || !strings.Contains(out, `"exit_code": 2`) {
			t.Errorf("diff %q: exit %d\n%s\n%s", bad, code, out, stderr)
		}
	}
}

// outcomeCVs reads ops_per_s_cv of run's points from the warehouse, by mode.
func outcomeCVs(t *testing.T, cmd func(...string) (string, string, int), run string) map[string]float64 {
	t.Helper()
	out, stderr, code := cmd("sql", "-o", "json", "SELECT params, ops_per_s_cv FROM storage_outcome_fact WHERE run_id = '"+run+"'")
	if code != 0 {
		t.Fatalf("sql: exit %d\n%s", code, stderr)
	}
	var res struct {
		Rows []struct {
			Params string  `json:"params"`
			CV     float64 `json:"ops_per_s_cv"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, r := range res.Rows {
		var p map[string]any
		if err := json.Unmarshal([]byte(r.Params), &p); err != nil {
			t.Fatal(err)
		}
		m[p["mode"].(string)] = r.CV
	}
	return m
}
