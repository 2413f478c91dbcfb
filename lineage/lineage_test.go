package lineage

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/sql"
)

func TestPublishThenResolve(t *testing.T) {
	fx := newFixture(t, localStore{t.TempDir()}, 2)
	run := fx.runs[0]
	p, id := fx.publish(t, "storage_outcomes_by_point", map[string]string{"run_id": run.RunID})
	if p.Unsafe || !p.Gates.Safe || len(p.Rows) != 2 || len(p.Runs) != 1 || p.Runs[0].RunID != run.RunID ||
		p.Runs[0].ManifestDigest != run.ManifestDigest || p.PublishedBy != "tester" || p.Params["run_id"] != run.RunID {
		t.Fatalf("publication %+v", p)
	}
	if q, _ := fx.reg.Get("storage_outcomes_by_point"); p.Query.Digest != q.Digest || p.Query.Text != q.Text {
		t.Fatal("publication does not carry the query's text and digest")
	}
	// Stored write-once under its digest; it reads back equal.
	got, err := Get(t.Context(), fx.repo.Backend(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rows[0][2] != int64(1) || got.Rows[0][4] != "read" || got.Rows[0][9] != p.Rows[0][9] {
		t.Fatalf("row 1 read back as %#v; published %#v", got.Rows[0], p.Rows[0])
	}
	if _, id2 := fx.publish(t, "storage_outcomes_by_point", map[string]string{"run_id": run.RunID}); id2 == id {
		t.Fatal("republishing returned the same publication; want a new one")
	}

	for _, level := range []Level{LevelManifest, LevelDeep} {
		rep := fx.resolve(t, "pub:"+id.Hex()[:10], level)
		if !rep.OK || len(rep.Problems) != 0 {
			t.Fatalf("%s: lineage of an intact publication: %+v", level, rep.Problems)
		}
		if len(rep.Runs) != 1 || rep.Runs[0].RunID != run.RunID || rep.Runs[0].Manifest.Digest != run.ManifestDigest ||
			len(rep.Runs[0].Blobs) != len(run.Manifest.Files) || rep.Query.Changed {
			t.Fatalf("%s: report %+v", level, rep)
		}
		for _, b := range rep.Runs[0].Blobs {
			if !b.Verified || (level == LevelDeep) != (b.Check == "sha256") || b.URI == "" {
				t.Fatalf("%s: blob %+v", level, b)
			}
		}
		d := rep.Runs[0].Dimensions
		if d == nil || d.Run["driver_version"] == nil || d.Run["ingest_version"] != int64(1) || d.Software["go_version"] == nil ||
			d.Hardware["logical_cores"] == nil || d.Workload["driver"] != "fileio" || d.Ingest["status"] != "ingested" {
			t.Fatalf("%s: dimensions %+v", level, d)
		}
		if sw := rep.Dimensions["software_version_dim"][d.Run["software_version_digest"].(string)]; sw["go_version"] == nil {
			t.Fatalf("%s: the report does not list the run's software row: %v", level, rep.Dimensions)
		}
	}

	rep := fx.resolve(t, "pub:"+id.Hex()+"/2/latency_p99_ms", LevelManifest)
	if !rep.OK || rep.Number == nil || rep.Number.Value != p.Rows[1][14] || len(rep.Rows) != 1 || rep.Rows[0].Row != 2 {
		t.Fatalf("one cell: %+v", rep.Number)
	}
	var tree bytes.Buffer
	if err := WriteTree(&tree, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"number", "latency_p99_ms", "query", "storage_outcomes_by_point", run.RunID,
		run.ManifestDigest.String(), "trials/t0001/samples.parquet", "ok: every link resolves"} {
		if !strings.Contains(tree.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, tree.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("report does not encode as JSON: %v", err)
	}

	for _, bad := range []string{"pub:" + id.Hex() + "/3", "pub:" + id.Hex() + "/1/nope", "pub:zz"} {
		var ie *InputError
		if _, err := Resolve(t.Context(), bad, Options{Repo: fx.repo, Warehouse: fx.wh}); !errors.As(err, &ie) {
			t.Errorf("%s: got %v; want an input error", bad, err)
		}
	}
	if _, err := Resolve(t.Context(), "pub:abcdef12", Options{Repo: fx.repo, Warehouse: fx.wh}); !errors.Is(err, evidence.ErrNotFound) {
		t.Errorf("unknown publication: %v", err)
	}
	list, err := List(t.Context(), fx.repo.Backend())
	if err != nil || len(list) != 2 || list[0].Query != "storage_outcomes_by_point" || list[0].Runs != 1 {
		t.Fatalf("List: %+v, %v", list, err)
	}
}

// The team setup: S3 evidence, ClickHouse warehouse (rows read with FINAL).
func TestPublishThenResolveOnS3AndClickHouse(t *testing.T) {
	testenv.ClickHouseURL(t)
	fx := newFixtureOn(t, newS3Store(t), 2, true)
	p, id := fx.publish(t, "storage_point_trend", map[string]string{"benchmark": "lineage-test"})
	if len(p.Rows) != 2 || len(p.Runs) != 2 || p.Warehouse.Dialect != "clickhouse" || !strings.Contains(p.Warehouse.SQL, "FINAL") {
		t.Fatalf("publication %+v", p.Warehouse)
	}
	for _, level := range []Level{LevelManifest, LevelDeep} {
		rep := fx.resolve(t, "pub:"+id.Hex()+"/2/max_ops_per_s", level)
		if !rep.OK || len(rep.Runs) != 2 || rep.Runs[0].Dimensions == nil || !strings.HasPrefix(rep.Runs[0].Blobs[0].URI, "s3://") {
			t.Fatalf("%s: %v", level, rep.Problems)
		}
	}
	rep := fx.resolve(t, `storage_outcome_fact.latency_p99_ms{run_id="`+fx.runs[0].RunID+`",mode="write"}`, LevelManifest)
	if !rep.OK || rep.Number == nil {
		t.Fatalf("cell on ClickHouse: %v", rep.Problems)
	}
}

func TestSelectors(t *testing.T) {
	fx := newFixture(t, localStore{t.TempDir()}, 2)
	run := fx.runs[1]
	for _, ref := range []string{
		`storage_outcome_fact.ops_per_s{run_id="` + run.RunID + `",op="write"}`,
		`storage_outcome_fact.latency_p99_ms{run_id="` + run.RunID + `", mode="read"}`, // a params key
		`storage_outcome_fact.samples{run_id=~".*` + run.RunID[24:] + `",point="2"}`,
	} {
		rep := fx.resolve(t, ref, LevelManifest)
		if !rep.OK || rep.Number == nil || rep.Number.Table != "storage_outcome_fact" || len(rep.Runs) != 1 || rep.Runs[0].RunID != run.RunID {
			t.Fatalf("%s: %+v problems %v", ref, rep.Number, rep.Problems)
		}
		if rep.Gates == nil || !rep.Gates.Safe {
			t.Fatalf("%s: gates %+v", ref, rep.Gates)
		}
	}
	_, err := Resolve(t.Context(), `storage_outcome_fact.ops_per_s{op="read"}`, Options{Repo: fx.repo, Warehouse: fx.wh})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Matches != 2 || !strings.Contains(err.Error(), `run_id="`+run.RunID+`",point="1",op="read"`) {
		t.Fatalf("ambiguous selector: %v", err)
	}
	_, err = Resolve(t.Context(), `storage_outcome_fact.ops_per_s{run_id="`+run.RunID+`",op="rad"}`, Options{Repo: fx.repo, Warehouse: fx.wh})
	var nm *NoMatchError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), `op is one of "read", "write"`) {
		t.Fatalf("no-match selector: %v", err)
	}
	var ie *InputError
	for _, bad := range []string{`nope.x{a="b"}`, `storage_outcome_fact.nope`, `workload_dim.driver`, `benchmark_run_fact.status{mode2="x"}`} {
		if _, err := Resolve(t.Context(), bad, Options{Repo: fx.repo, Warehouse: fx.wh}); !errors.As(err, &ie) {
			t.Errorf("%s: got %v; want an input error", bad, err)
		}
	}
}

func TestGatesRefuseUnlessAllowed(t *testing.T) {
	fx := newFixture(t, localStore{t.TempDir()}, 1)
	o := fx.publishOptions(t, "storage_outcomes_by_point", nil)
	o.Gates = GateConfig{MinSamples: 5000, MinRepetitions: 3, MaxCV: 1e-9, RequireWarmup: true}
	_, _, err := Publish(t.Context(), o)
	var ue *UnsafeError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "not publication-safe: gate min_samples failed") {
		t.Fatalf("publish under failing gates: %v", err)
	}
	failed := map[string]bool{}
	for _, v := range ue.Gates.Failed() {
		failed[v.Gate] = true
	}
	if !failed[GateMinSamples] || !failed[GateMinRepetitions] || !failed[GateStable] || failed[GateWarmup] || failed[GateEvidence] {
		t.Fatalf("failed gates %v; want samples, repetitions, stable", failed)
	}
	if list, _ := List(t.Context(), fx.repo.Backend()); len(list) != 0 {
		t.Fatal("a refused publication was stored")
	}
	o.AllowUnsafe = true
	p, id, err := Publish(t.Context(), o)
	if err != nil || !p.Unsafe {
		t.Fatalf("--allow-unsafe: %v, unsafe=%v", err, p != nil && p.Unsafe)
	}
	rep := fx.resolve(t, "pub:"+id.Hex(), LevelManifest)
	if rep.OK || !hasProblem(rep, "gate", GateMinSamples, "publication is marked unsafe") {
		t.Fatalf("lineage of an unsafe publication: %v", rep.Problems)
	}
	// Warmup: a run whose trials had none fails the gate.
	ev := map[string]*RunEvidence{}
	m := &manifestInfo{RunID: fx.runs[0].RunID}
	for _, tr := range fx.runs[0].Manifest.Trials {
		m.Trials = append(m.Trials, trialInfo{ID: tr.ID, Point: tr.Point, Status: tr.Status,
			Measure: &windowInfo{StartOffsetNs: tr.Measure.StartOffsetNs, EndOffsetNs: tr.Measure.EndOffsetNs, Operations: tr.Measure.Operations}})
	}
	ev[m.RunID] = &RunEvidence{manifest: m}
	sel := []outcome{{table: "storage_outcome_fact", runID: m.RunID, point: 1, count: 1200}}
	if v := warmupGate(sel, sel, ev, true); v.Status != Fail || !strings.Contains(v.Failures[0], "no warmup phase") {
		t.Fatalf("warmup gate without warmup: %+v", v)
	}
	sel[0].count = 1264 // warmup samples counted in
	if v := warmupGate(sel, sel, ev, false); v.Status != Fail || !strings.Contains(v.Failures[0], "1264 samples counted, the measurement phases recorded 1200") {
		t.Fatalf("warmup gate with warmup samples counted: %+v", v)
	}
}

func TestStableGate(t *testing.T) {
	cv := func(f float64) *float64 { return &f }
	sel := []outcome{
		{table: "storage_outcome_fact", runID: "r1", point: 1, op: "read", repetitions: 3, cv: cv(0.05), hasCV: true},
		{table: "storage_outcome_fact", runID: "r1", point: 2, op: "read", repetitions: 3, cv: cv(0.2), hasCV: true},
		{table: "storage_outcome_fact", runID: "r2", point: 1, op: "read", repetitions: 1, hasCV: true},
		{table: "serving_outcome_fact", runID: "r3", point: 1, model: "m", repetitions: 3},
	}
	v := stableGate(sel, 0.1)
	if v.Status != Fail || len(v.Failures) != 2 || !strings.Contains(v.Failures[0], "run r1 point 2 read: unstable, CV 0.2 > 0.1") ||
		!strings.Contains(v.Failures[1], "run r2 point 1 read: spread unknown (1 repetition)") {
		t.Fatalf("stable gate: %+v", v)
	}
	if v := stableGate(sel[:1], 0.1); v.Status != Pass {
		t.Fatalf("a stable point: %+v", v)
	}
	if v := stableGate(sel, 0); v.Status != NotApplicable {
		t.Fatalf("turned off: %+v", v)
	}
	if v := stableGate(sel[3:], 0.1); v.Status != NotApplicable {
		t.Fatalf("serving rows only: %+v", v)
	}
}

func TestUntraceableQueriesAreRefused(t *testing.T) {
	fx := newFixture(t, localStore{t.TempDir()}, 1)
	f := func(text, want string) {
		t.Helper()
		q, err := sql.Parse("custom.sql", []byte("-- name: custom\n-- description: d\n-- owner: o\n"+text))
		if err != nil {
			t.Fatal(err)
		}
		o := fx.publishOptions(t, "runs", nil)
		o.Query = q
		_, _, err = Publish(t.Context(), o)
		var ue *UntraceableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want an untraceable error containing %q", err, want)
		}
	}
	f("SELECT op, avg(ops_per_s) AS ops FROM {{from storage_outcome_fact}} GROUP BY op", "has no run_id column and it declares no run set")
	f("SELECT 'no-such-run' AS run_id", "run no-such-run is in the result but not in the warehouse")
	f("SELECT '' AS run_id", "row 1 has no run id")
	f("-- runs: by op\nSELECT op FROM {{from storage_outcome_fact}}\n-- @runs\nSELECT 'x' AS op, run_id FROM {{from storage_outcome_fact}}",
		"row 1 (op=read) matches no run of its run set")
}

func TestRunSetTrace(t *testing.T) {
	fx := newFixture(t, localStore{t.TempDir()}, 2)
	p, id := fx.publish(t, "storage_point_trend", map[string]string{"benchmark": "lineage-test"})
	if len(p.Rows) != 2 || len(p.Runs) != 2 {
		t.Fatalf("trend: %d rows over %d runs", len(p.Rows), len(p.Runs))
	}
	for i, rr := range p.RowRuns {
		if len(rr) != 2 || p.Rows[i][2] != int64(2) {
			t.Fatalf("row %d traces to %v (runs column %v)", i+1, rr, p.Rows[i][2])
		}
	}
	rep := fx.resolve(t, "pub:"+id.Hex()+"/1/mean_ops_per_s", LevelManifest)
	if !rep.OK || len(rep.Runs) != 2 {
		t.Fatalf("lineage of an aggregate: %d runs, %v", len(rep.Runs), rep.Problems)
	}
	p, _ = fx.publish(t, "storage_run_comparison", map[string]string{"run_a": fx.runs[0].RunID, "run_b": fx.runs[1].RunID})
	if len(p.Rows) != 2 || len(p.RowRuns[0]) != 2 {
		t.Fatalf("comparison: %d rows, row 1 runs %v", len(p.Rows), p.RowRuns[0])
	}
}

func TestTamperedPublicationIsNamed(t *testing.T) {
	fx := newFixture(t, localStore{t.TempDir()}, 1)
	_, id := fx.publish(t, "runs", nil)
	uri := fx.repo.Backend().URI(ObjectName(id))
	b := fx.store.read(t, uri)
	fx.store.overwrite(t, uri, bytes.Replace(b, []byte(`"published_by":"tester"`), []byte(`"published_by":"someone"`), 1))
	rep := fx.resolve(t, "pub:"+id.Hex(), LevelManifest)
	if rep.OK || !hasProblem(rep, "publication", id.String(), "corrupt: content hashes to") {
		t.Fatalf("altered publication: %v", rep.Problems)
	}
}

// The tamper cases, on both store backends: each is detected and
// the broken link named.
func TestTamperDetection(t *testing.T) {
	t.Run("local", func(t *testing.T) { testTamper(t, localStore{t.TempDir()}) })
	t.Run("s3", func(t *testing.T) { testTamper(t, newS3Store(t)) })
}

func testTamper(t *testing.T, st store) {
	fx := newFixture(t, st, 4)
	qdir := t.TempDir()
	custom := "-- name: my_runs\n-- description: d\n-- owner: o\nSELECT run_id, benchmark_name FROM {{from benchmark_run_fact}} ORDER BY run_id\n"
	if err := os.WriteFile(filepath.Join(qdir, "my_runs.sql"), []byte(custom), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if fx.reg, err = sql.Load(qdir); err != nil {
		t.Fatal(err)
	}
	ids := make([]evidence.Digest, len(fx.runs))
	for i, r := range fx.runs {
		_, ids[i] = fx.publish(t, "storage_outcomes_by_point", map[string]string{"run_id": r.RunID})
	}
	_, custID := fx.publish(t, "my_runs", nil)
	for i, id := range ids {
		if rep := fx.resolve(t, "pub:"+id.Hex(), LevelDeep); !rep.OK {
			t.Fatalf("publication %d before tampering: %v", i, rep.Problems)
		}
	}
	be := fx.repo.Backend()
	// 0: delete a blob.
	gone := fx.file(t, 0, "trials/t0001/samples.parquet")
	fx.store.remove(t, fx.repo.BlobURI(gone.Digest))
	// 1: corrupt a blob, keeping its size.
	bad := fx.file(t, 1, "trials/t0002/samples.parquet")
	data := fx.store.read(t, fx.repo.BlobURI(bad.Digest))
	data[len(data)/2] ^= 0xff
	fx.store.overwrite(t, fx.repo.BlobURI(bad.Digest), data)
	// 2: corrupt a manifest.
	md := fx.runs[2].ManifestDigest
	man := fx.store.read(t, fx.repo.ManifestURI(md))
	fx.store.overwrite(t, fx.repo.ManifestURI(md), bytes.Replace(man, []byte(`"status":"ok"`), []byte(`"status":"OK"`), 1))
	// 3: delete a run pointer.
	fx.store.remove(t, be.URI(evidence.RunName(fx.runs[3].RunID)))
	// and change a registered query's text after publishing.
	if err := os.WriteFile(filepath.Join(qdir, "my_runs.sql"), []byte(strings.Replace(custom, "ORDER BY run_id", "ORDER BY run_id DESC", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if fx.reg, err = sql.Load(qdir); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name              string
		ref               string
		level             Level
		link, object, msg string
	}{
		{"blob deleted", "pub:" + ids[0].Hex(), LevelManifest, "blob", gone.Digest.String(), "missing"},
		{"blob deleted, deep", "pub:" + ids[0].Hex(), LevelDeep, "blob", gone.Digest.String(), "missing"},
		{"blob corrupted", "pub:" + ids[1].Hex(), LevelDeep, "blob", bad.Digest.String(), "corrupt: content hashes to sha256:"},
		{"manifest corrupted", "pub:" + ids[2].Hex(), LevelManifest, "manifest", md.String(), "corrupt: content hashes to sha256:"},
		{"run pointer deleted", "pub:" + ids[3].Hex(), LevelManifest, "run", fx.runs[3].RunID, "run pointer missing"},
		{"query changed", "pub:" + custID.Hex(), LevelManifest, "query", "my_runs", "registered text changed since publication"},
	}
	for _, c := range cases {
		rep := fx.resolve(t, c.ref, c.level)
		if rep.OK || !hasProblem(rep, c.link, c.object, c.msg) {
			t.Errorf("%s: want problem %s %s %q; got %v", c.name, c.link, c.object, c.msg, rep.Problems)
		}
	}
	// At manifest level a corrupted blob of unchanged size is not read: deep finds it.
	if rep := fx.resolve(t, "pub:"+ids[1].Hex(), LevelManifest); !rep.OK {
		t.Errorf("manifest level read blob content: %v", rep.Problems)
	}
	// Publishing over broken evidence is refused by the evidence gate.
	o := fx.publishOptions(t, "storage_outcomes_by_point", map[string]string{"run_id": fx.runs[0].RunID})
	if _, _, err := Publish(t.Context(), o); err == nil || !strings.Contains(err.Error(), "gate evidence failed: blob "+gone.Digest.String()+" missing") {
		t.Errorf("publish over a missing blob: %v", err)
	}
}

func hasProblem(rep *Report, link, object, msg string) bool {
	for _, p := range rep.Problems {
		if p.Link == link && p.Object == object && strings.Contains(p.Message, msg) {
			return true
		}
	}
	return false
}
