package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/perfwh/perfwh/collectors/sysinfo"
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/buildinfo"
	"github.com/perfwh/perfwh/internal/canonjson"
	"github.com/perfwh/perfwh/spec"
)

// Options configure a run.
type Options struct {
	Repo       *evidence.Repository
	StagingDir string       // parent of the run's staging directory (same file system as a local store, ideally)
	ScratchDir string       // parent of the trials' scratch directories
	Log        *slog.Logger // run log for people (stderr); the bundle gets its own JSONL copy
	Events     Events       // progress callbacks; may be nil
	// Grace is how long the runner waits for a driver to return after its
	// time limit before abandoning it (default 5s).
	Grace time.Duration
	// Clock returns the current time; tests may replace it. Default time.Now.
	Clock func() time.Time
}

// Events receive progress; they are called from the runner's goroutine.
type Events interface {
	TrialStarted(i, n int, t spec.Trial)
	PhaseStarted(t spec.Trial, phase string, planned time.Duration, plannedOps int64)
	TrialFinished(i, n int, t spec.Trial, status evidence.TrialStatus, err *evidence.TrialError)
	Committing(files int)
}

// Result is what a run produced.
type Result struct {
	RunID          string
	ManifestDigest evidence.Digest
	Status         evidence.RunStatus
	Manifest       *evidence.Manifest
	Commit         evidence.CommitResult
}

// Failed counts trials that did not end ok.
func (r *Result) Failed() int {
	n := 0
	for _, t := range r.Manifest.Trials {
		if t.Status != evidence.TrialOK {
			n++
		}
	}
	return n
}

// NewRunID returns a time-sortable run id (UUIDv7).
func NewRunID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// Run executes the plan and commits its bundle. It returns an error only
// when nothing could be committed (the store failed, staging failed); trial
// failures are recorded in the result. When ctx is cancelled the finished
// trials are committed as a partial run and ctx's error is not returned.
func Run(ctx context.Context, pl *spec.Plan, opts Options) (*Result, error) {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Grace == 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	c := pl.Case
	runID, err := NewRunID()
	if err != nil {
		return nil, err
	}
	bw, err := evidence.NewBundleWriter(filepath.Join(opts.StagingDir, runID))
	if err != nil {
		return nil, err
	}
	runLog, closeLog, err := bundleLogger(bw, "run.log.jsonl", "", opts.Log)
	if err != nil {
		return nil, err
	}
	info := c.Driver.Info()
	m := &evidence.Manifest{
		Format: evidence.ManifestFormat, FormatVersion: evidence.ManifestFormatVersion,
		RunID: runID, BenchmarkCaseID: c.CaseID(), WorkloadSpecDigest: c.WorkloadSpecDigest(),
		Benchmark: evidence.Benchmark{Name: c.Name, Version: c.Version, Driver: info.Name, DriverVersion: info.Version},
		Producer: evidence.Producer{Name: "perfwh", Version: buildinfo.Version(), Revision: buildinfo.Revision(),
			GoVersion: buildinfo.GoVersion()},
		Status:    evidence.RunComplete,
		StartedAt: opts.Clock(),
		Metadata:  c.Metadata,
	}
	runLog.Info("run started", "run_id", runID, "benchmark", c.Name, "trials", len(pl.Trials),
		"workload_spec_digest", m.WorkloadSpecDigest.String(), "benchmark_case_id", m.BenchmarkCaseID.String())
	if err := stageRunFiles(ctx, bw, c); err != nil {
		closeLog()
		return nil, err
	}

	for i, t := range pl.Trials {
		if ctx.Err() != nil {
			m.Status = evidence.RunPartial
			runLog.Warn("run interrupted; committing finished trials as a partial run",
				"finished", i, "planned", len(pl.Trials))
			break
		}
		if opts.Events != nil {
			opts.Events.TrialStarted(i, len(pl.Trials), t)
		}
		tr := runTrial(ctx, runID, c, t, bw, opts, runLog)
		if ctx.Err() != nil && tr.Status == evidence.TrialCanceled {
			m.Status = evidence.RunPartial
		}
		m.Trials = append(m.Trials, tr)
		if opts.Events != nil {
			opts.Events.TrialFinished(i, len(pl.Trials), t, tr.Status, tr.Error)
		}
	}
	m.EndedAt = opts.Clock()
	runLog.Info("run finished", "status", string(m.Status), "trials", len(m.Trials))
	closeLog()

	if opts.Events != nil {
		opts.Events.Committing(len(m.Trials))
	}
	// The commit must not be cut short by the cancellation that ended
	// the trials: a partial run is still a run.
	commitCtx := context.WithoutCancel(ctx)
	cr, err := bw.Commit(commitCtx, opts.Repo, m)
	if err != nil {
		return nil, fmt.Errorf("commit run %s: %w (staged files kept in %s)", runID, err, bw.Dir())
	}
	return &Result{RunID: runID, ManifestDigest: cr.ManifestDigest, Status: m.Status, Manifest: m, Commit: cr}, nil
}

// stageRunFiles adds the run-level files: the case as given, the canonical
// workload spec, the effective configuration and the environment snapshot.
func stageRunFiles(ctx context.Context, bw *evidence.BundleWriter, c *spec.Case) error {
	if err := bw.AddBytes("case.yaml", evidence.RoleCase, evidence.MediaYAML, "", c.Raw); err != nil {
		return err
	}
	if err := bw.AddBytes("spec.json", evidence.RoleSpec, evidence.MediaJSON, "", c.WorkloadSpecJSON()); err != nil {
		return err
	}
	cfg, err := canonjson.Marshal(c.EffectiveConfig())
	if err != nil {
		return err
	}
	if err := bw.AddBytes("config.json", evidence.RoleConfig, evidence.MediaJSON, "", cfg); err != nil {
		return err
	}
	env, err := sysinfo.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("environment snapshot: %w", err)
	}
	envJSON, err := canonjson.Marshal(env)
	if err != nil {
		return err
	}
	return bw.AddBytes("environment.json", evidence.RoleEnvironment, evidence.MediaJSON, "", envJSON)
}

// scratchDir creates a trial's private scratch directory.
func scratchDir(parent, runID, trial string) (string, error) {
	d := filepath.Join(parent, runID, trial)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("scratch dir: %w", err)
	}
	return d, nil
}

var errAbandoned = errors.New("driver did not return within the grace period after its time limit; abandoned")
