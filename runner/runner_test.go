package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfwh/perfwh/drivers"
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/local"
	"github.com/perfwh/perfwh/evidence/records"
	"github.com/perfwh/perfwh/spec"

	_ "github.com/perfwh/perfwh/collectors/host"
)

// scripted is a driver whose behaviour per trial is set by its "behave"
// parameter, so the runner's handling of each failure mode can be tested.
type scripted struct{}

func (scripted) Info() drivers.Info {
	return drivers.Info{Name: "runnertest", Version: "1",
		Params: []drivers.Param{
			{Name: "behave", Type: drivers.String, Default: "ok", Enum: []string{"ok", "fail", "panic", "hang", "block", "badopen"}},
			{Name: "ops", Type: drivers.Int, Default: 100},
		}}
}

type scriptedInst struct {
	cfg    drivers.TrialConfig
	behave string
}

func (scripted) Open(ctx context.Context, cfg drivers.TrialConfig) (drivers.Instance, error) {
	if cfg.Params.String("behave") == "badopen" {
		return nil, errors.New("target refused")
	}
	return &scriptedInst{cfg: cfg, behave: cfg.Params.String("behave")}, nil
}

func (s *scriptedInst) Run(ctx context.Context, ph drivers.Phase, rec *drivers.Recorder) (map[string]any, error) {
	n := int(s.cfg.Params.Int("ops"))
	batch := make([]records.OpSample, 0, n)
	for i := range n {
		at := int64(time.Since(s.cfg.Origin))
		batch = append(batch, records.OpSample{Seq: int64(i), Phase: ph.Name, Op: "noop", IntendedNs: at, StartNs: at, LatencyNs: 1000, OK: true})
	}
	rec.Append(batch)
	if ph.Name == records.PhaseWarmup {
		return nil, nil
	}
	switch s.behave {
	case "fail":
		s.cfg.Log.Info("about to fail", "why", "scripted")
		return nil, errors.New("scripted failure")
	case "panic":
		panic("scripted panic")
	case "hang": // honours ctx, but only returns when it ends
		<-ctx.Done()
		return nil, ctx.Err()
	case "block": // ignores ctx entirely
		time.Sleep(2 * time.Second)
		return nil, nil
	}
	if ph.Duration > 0 {
		select {
		case <-time.After(ph.Duration):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return map[string]any{"ops": float64(n)}, nil
}

func (s *scriptedInst) Attributes() map[string]any { return map[string]any{"behave": s.behave} }
func (s *scriptedInst) Close() error               { return nil }

func init() { drivers.Register(scripted{}) }

type env struct {
	repo *evidence.Repository
	home string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := t.TempDir()
	be, err := local.Open(filepath.Join(home, "store"))
	if err != nil {
		t.Fatal(err)
	}
	return &env{repo: evidence.NewRepository(be), home: home}
}

func (e *env) run(t *testing.T, ctx context.Context, doc string, sets ...string) *Result {
	t.Helper()
	c, err := spec.Parse("case.yaml", []byte(doc), sets)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, pl, Options{Repo: e.repo, StagingDir: filepath.Join(e.home, "staging"),
		ScratchDir: filepath.Join(e.home, "scratch"), Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const caseDoc = `name: runner-test
driver: runnertest
workload:
  behave: [ok, fail]
repetitions: 2
warmup_operations: 10
warmup: 20ms
duration: 30ms
collectors:
  host: {interval: 10ms}
`

func TestRunRecordsTrialsAndCommits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	res := e.run(t, ctx, caseDoc)
	m := res.Manifest
	if res.Status != evidence.RunComplete || len(m.Trials) != 4 || res.Failed() != 2 {
		t.Fatalf("status %s trials %d failed %d; want complete, 4, 2", res.Status, len(m.Trials), res.Failed())
	}
	for _, tr := range m.Trials {
		switch tr.Params["behave"] {
		case "ok":
			if tr.Status != evidence.TrialOK || tr.Error != nil || tr.Summary["ops"] != 100.0 {
				t.Fatalf("ok trial: %+v", tr)
			}
		case "fail":
			if tr.Status != evidence.TrialFailed || tr.Error.Kind != "driver" || !strings.Contains(tr.Error.Message, "scripted failure") ||
				!strings.Contains(tr.Error.Excerpt, "about to fail") {
				t.Fatalf("failed trial: %+v %+v", tr, tr.Error)
			}
		}
		if tr.Warmup == nil || tr.Measure == nil || tr.Warmup.Operations != 100 || tr.Measure.Operations != 100 {
			t.Fatalf("windows of %s: warmup %+v measure %+v", tr.ID, tr.Warmup, tr.Measure)
		}
		if tr.Warmup.EndOffsetNs > tr.Measure.StartOffsetNs || tr.Measure.EndOffsetNs <= tr.Measure.StartOffsetNs {
			t.Fatalf("windows out of order: %+v %+v", tr.Warmup, tr.Measure)
		}
	}
	// The run is visible, verifies, and its files are where the format says.
	runs, err := e.repo.ListRuns(ctx, nil)
	if err != nil || len(runs) != 1 || runs[0].RunID != res.RunID || runs[0].TrialsOK != 2 {
		t.Fatalf("ListRuns = %+v, %v", runs, err)
	}
	rep, err := e.repo.Verify(ctx, res.RunID)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	paths := map[string]evidence.File{}
	for _, f := range m.Files {
		paths[f.Path] = f
	}
	for _, p := range []string{"case.yaml", "spec.json", "config.json", "environment.json", "run.log.jsonl",
		"trials/t0001/samples.parquet", "trials/t0001/telemetry.parquet", "trials/t0001/log.jsonl"} {
		if _, ok := paths[p]; !ok {
			t.Fatalf("bundle lacks %s; has %v", p, m.Files)
		}
	}
	if paths["spec.json"].Digest != m.WorkloadSpecDigest {
		t.Fatal("spec.json is not the workload spec the digest names")
	}
	// Samples round-trip with warmup marked; telemetry was taken in the measure window.
	data, err := e.repo.ReadBlob(ctx, paths["trials/t0001/samples.parquet"].Digest)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := records.Read[records.OpSample](strings.NewReader(string(data)), int64(len(data)))
	if err != nil || len(rows) != 200 || rows[0].Phase != records.PhaseWarmup || rows[199].Phase != records.PhaseMeasure {
		t.Fatalf("samples: %d rows, %v", len(rows), err)
	}
	tel, err := e.repo.ReadBlob(ctx, paths["trials/t0001/telemetry.parquet"].Digest)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := records.Read[records.TelemetryPoint](strings.NewReader(string(tel)), int64(len(tel)))
	if err != nil || len(pts) == 0 {
		t.Fatalf("telemetry: %d points, %v", len(pts), err)
	}
	w := m.Trials[0].Measure
	for _, p := range pts {
		if p.OffsetNs < w.StartOffsetNs || p.OffsetNs > w.EndOffsetNs {
			t.Fatalf("telemetry point at %d outside the measure window [%d, %d]", p.OffsetNs, w.StartOffsetNs, w.EndOffsetNs)
		}
	}
	// Staging and scratch are cleaned up.
	for _, d := range []string{filepath.Join(e.home, "staging", res.RunID), filepath.Join(e.home, "scratch", res.RunID, "t0001")} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left behind (%v)", d, err)
		}
	}
}

func TestSecondRunDeduplicatesUnchangedBlobs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	doc := "name: dedup\ndriver: runnertest\noperations: 5\n"
	first := e.run(t, ctx, doc)
	second := e.run(t, ctx, doc)
	if first.RunID == second.RunID {
		t.Fatal("two runs share an id")
	}
	// case.yaml, spec.json, config.json and environment.json are identical.
	if second.Commit.BlobsExisting < 4 {
		t.Fatalf("second run re-stored unchanged blobs: %+v", second.Commit)
	}
	for _, p := range []string{"case.yaml", "spec.json", "config.json", "environment.json"} {
		if fileDigest(first.Manifest, p) != fileDigest(second.Manifest, p) {
			t.Fatalf("%s differs between identical runs", p)
		}
	}
}

func fileDigest(m *evidence.Manifest, path string) evidence.Digest {
	for _, f := range m.Files {
		if f.Path == path {
			return f.Digest
		}
	}
	return evidence.Digest{}
}

func TestFailureKinds(t *testing.T) {
	e := newEnv(t)
	f := func(behave, limit string, status evidence.TrialStatus, kind, msg string) {
		t.Helper()
		t.Run(behave, func(t *testing.T) {
			doc := fmt.Sprintf("name: kinds\ndriver: runnertest\nduration: 20ms\nworkload: {behave: %s}\nresources: {time_limit: %s}\n", behave, limit)
			start := time.Now()
			res := e.run(t, context.Background(), doc)
			tr := res.Manifest.Trials[0]
			if tr.Status != status || tr.Error == nil || tr.Error.Kind != kind || !strings.Contains(tr.Error.Message, msg) {
				t.Fatalf("trial: status %s error %+v; want %s/%s containing %q", tr.Status, tr.Error, status, kind, msg)
			}
			if el := time.Since(start); el > 1500*time.Millisecond {
				t.Fatalf("trial took %s; the limit was not enforced", el)
			}
		})
	}
	f("panic", "5s", evidence.TrialFailed, "panic", "scripted panic")
	f("badopen", "5s", evidence.TrialFailed, "setup", "target refused")
	f("hang", "150ms", evidence.TrialTimedOut, "timeout", "exceeded its time limit of 150ms")
	f("block", "150ms", evidence.TrialTimedOut, "timeout", "abandoned")
}

func TestCancelCommitsPartialRun(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := spec.Parse("case.yaml", []byte("name: cancel\ndriver: runnertest\nduration: 300ms\nrepetitions: 5\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := c.Plan()
	res, err := Run(ctx, pl, Options{Repo: e.repo, StagingDir: filepath.Join(e.home, "staging"),
		ScratchDir: filepath.Join(e.home, "scratch"), Events: cancelAt{n: 1, cancel: cancel}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if res.Status != evidence.RunPartial || len(m.Trials) != 2 {
		t.Fatalf("status %s with %d trials; want partial with 2", res.Status, len(m.Trials))
	}
	if m.Trials[0].Status != evidence.TrialOK || m.Trials[1].Status != evidence.TrialCanceled {
		t.Fatalf("statuses %s, %s; want ok, canceled", m.Trials[0].Status, m.Trials[1].Status)
	}
	p, err := e.repo.ReadRun(context.Background(), res.RunID)
	if err != nil || p.Status != evidence.RunPartial {
		t.Fatalf("run pointer %+v, %v", p, err)
	}
}

// cancelAt cancels the run once trial n has started its measurement.
type cancelAt struct {
	n      int
	cancel func()
}

func (c cancelAt) TrialStarted(i, n int, t spec.Trial) {}
func (c cancelAt) PhaseStarted(t spec.Trial, phase string, d time.Duration, ops int64) {
	if t.ID == fmt.Sprintf("t%04d", c.n+1) {
		go func() { time.Sleep(50 * time.Millisecond); c.cancel() }()
	}
}
func (c cancelAt) TrialFinished(int, int, spec.Trial, evidence.TrialStatus, *evidence.TrialError) {}
func (c cancelAt) Committing(int)                                                                 {}
