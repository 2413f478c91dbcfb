package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfwh/perfwh/collectors"
	"github.com/perfwh/perfwh/drivers"
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/records"
	"github.com/perfwh/perfwh/spec"
)

// trialOutcome is what the trial goroutine hands back. It is only read
// after the goroutine finished, so an abandoned driver cannot race with
// the manifest.
type trialOutcome struct {
	warmup, measure *evidence.Window
	summary         map[string]any
	attributes      map[string]any
	collectorErrs   map[string]string
	telemetry       []records.TelemetryPoint
	err             error
	kind            string // setup, driver, panic
	stack           string
}

// runTrial runs one trial under its time limit and stages its files. It
// never fails: what went wrong is recorded in the returned trial.
func runTrial(ctx context.Context, runID string, c *spec.Case, t spec.Trial, bw *evidence.BundleWriter, opts Options, runLog *slog.Logger) evidence.Trial {
	origin := time.Now() // carries the monotonic reading every offset is taken from
	tr := evidence.Trial{
		ID: t.ID, Point: t.Point, Repetition: t.Repetition, Seed: t.Seed,
		Params: map[string]any(maps.Clone(t.Params)), Status: evidence.TrialOK,
		StartedAt: origin, TimeLimit: c.Resources.TimeLimit.String(),
	}
	dir := "trials/" + t.ID + "/"
	tlog, tail, closeLog, err := bundleLoggerTail(bw, dir+"log.jsonl", t.ID, nil)
	if err != nil {
		return failed(tr, "setup", err, "")
	}
	defer closeLog()
	runLog.Info("trial started", "trial", t.ID, "point", t.Point, "repetition", t.Repetition, "params", formatParams(t.Params))

	work, err := scratchDir(opts.ScratchDir, runID, t.ID)
	if err != nil {
		return failed(tr, "setup", err, "")
	}
	defer os.RemoveAll(work)

	tctx, cancel := context.WithTimeout(ctx, c.Resources.TimeLimit)
	defer cancel()
	rec := &drivers.Recorder{}
	cfg := drivers.TrialConfig{Params: t.Params, Target: c.Target, Seed: t.Seed, WorkDir: work, Origin: origin, Log: tlog}
	done := make(chan *trialOutcome, 1)
	go func() {
		out := &trialOutcome{}
		defer func() {
			if p := recover(); p != nil {
				out.err, out.kind, out.stack = fmt.Errorf("driver panicked: %v", p), "panic", string(debug.Stack())
			}
			done <- out
		}()
		phase := func(name string, d time.Duration, ops int64) {
			if opts.Events != nil {
				opts.Events.PhaseStarted(t, name, d, ops)
			}
		}
		execTrial(tctx, c, cfg, rec, phase, out)
	}()

	var out *trialOutcome
	select {
	case out = <-done:
	case <-tctx.Done():
		select {
		case out = <-done:
		case <-time.After(opts.Grace):
			out = &trialOutcome{err: errAbandoned, kind: "timeout"}
			tlog.Error("driver abandoned", "grace", opts.Grace.String())
		}
	}
	samples := rec.Seal()
	tr.EndedAt = origin.Add(time.Since(origin))
	tr.Warmup, tr.Measure = out.warmup, out.measure
	tr.Summary, tr.Attributes = out.summary, out.attributes
	if len(out.collectorErrs) > 0 {
		tr.CollectorErrors = out.collectorErrs
	}
	for _, w := range []*evidence.Window{tr.Warmup, tr.Measure} {
		if w != nil {
			w.Operations = countPhase(samples, w == tr.Warmup)
		}
	}

	switch {
	case ctx.Err() != nil && out.err != nil && out.kind != "panic":
		tr.Status = evidence.TrialCanceled
		tr.Error = &evidence.TrialError{Kind: "canceled", Message: "run interrupted before the trial finished"}
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		msg := fmt.Sprintf("trial exceeded its time limit of %s", c.Resources.TimeLimit)
		if errors.Is(out.err, errAbandoned) {
			msg += "; " + errAbandoned.Error()
		}
		tr.Status = evidence.TrialTimedOut
		tr.Error = &evidence.TrialError{Kind: "timeout", Message: msg, Excerpt: tail.String()}
	case out.err != nil:
		excerpt := out.stack
		if excerpt == "" {
			excerpt = tail.String()
		}
		tr = failed(tr, out.kind, out.err, excerpt)
	}
	if tr.Error != nil {
		tlog.Error("trial did not succeed", "status", string(tr.Status), "kind", tr.Error.Kind, "error", tr.Error.Message)
		runLog.Warn("trial did not succeed", "trial", t.ID, "status", string(tr.Status), "kind", tr.Error.Kind, "error", tr.Error.Message)
	} else {
		runLog.Info("trial finished", "trial", t.ID, "samples", len(samples))
	}
	if err := stageRecords(bw, dir+"samples.parquet", evidence.RoleSamples, t.ID, samples); err != nil {
		return failed(tr, "evidence", err, "")
	}
	if len(c.Collectors) > 0 {
		if err := stageRecords(bw, dir+"telemetry.parquet", evidence.RoleTelemetry, t.ID, out.telemetry); err != nil {
			return failed(tr, "evidence", err, "")
		}
	}
	return tr
}

// execTrial runs the driver's phases and the collectors; it runs in its
// own goroutine and writes only to out.
func execTrial(ctx context.Context, c *spec.Case, cfg drivers.TrialConfig, rec *drivers.Recorder,
	phaseEvent func(string, time.Duration, int64), out *trialOutcome) {
	offset := func() int64 { return int64(time.Since(cfg.Origin)) }
	window := func(start int64) *evidence.Window {
		end := offset()
		return &evidence.Window{Start: cfg.Origin.Add(time.Duration(start)), End: cfg.Origin.Add(time.Duration(end)),
			StartOffsetNs: start, EndOffsetNs: end}
	}
	inst, err := c.Driver.Open(ctx, cfg)
	if err != nil {
		out.err, out.kind = fmt.Errorf("open %s: %w", c.Driver.Info().Name, err), "setup"
		return
	}
	defer func() {
		if err := inst.Close(); err != nil && out.err == nil {
			out.err, out.kind = fmt.Errorf("close %s: %w", c.Driver.Info().Name, err), "driver"
		}
	}()
	out.attributes = inst.Attributes()
	if c.Warmup > 0 || c.WarmupOperations > 0 {
		phaseEvent(records.PhaseWarmup, c.Warmup, c.WarmupOperations)
		start := offset()
		_, err := inst.Run(ctx, drivers.Phase{Name: records.PhaseWarmup, Duration: c.Warmup, Operations: c.WarmupOperations}, rec)
		out.warmup = window(start)
		if err != nil {
			out.err, out.kind = fmt.Errorf("warmup: %w", err), "driver"
			return
		}
	}
	stop := startCollectors(ctx, c, cfg, out)
	phaseEvent(records.PhaseMeasure, c.Duration, c.Operations)
	start := offset()
	summary, err := inst.Run(ctx, drivers.Phase{Name: records.PhaseMeasure, Duration: c.Duration, Operations: c.Operations}, rec)
	out.measure = window(start)
	stop()
	out.summary = summary
	if err != nil {
		out.err, out.kind = fmt.Errorf("measure: %w", err), "driver"
	}
}

// startCollectors starts every configured collector; stop ends them and
// waits, leaving their points and errors in out.
func startCollectors(ctx context.Context, c *spec.Case, cfg drivers.TrialConfig, out *trialOutcome) (stop func()) {
	cctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, o := range c.Collectors {
		interval := collectors.DefaultInterval
		opts := map[string]any{}
		for k, v := range o {
			if k == "interval" {
				interval, _ = time.ParseDuration(v.(string))
				continue
			}
			opts[k] = v
		}
		factory, _ := collectors.Get(name) // validated by spec
		col, err := factory(opts)
		if err != nil {
			setCollectorErr(&mu, out, name, err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := col.Run(cctx, interval, cfg.Origin, func(pts []records.TelemetryPoint) {
				mu.Lock()
				out.telemetry = append(out.telemetry, pts...)
				mu.Unlock()
			})
			if err != nil {
				setCollectorErr(&mu, out, name, err)
				cfg.Log.Warn("collector failed", "collector", name, "error", err.Error())
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

func setCollectorErr(mu *sync.Mutex, out *trialOutcome, name string, err error) {
	mu.Lock()
	defer mu.Unlock()
	if out.collectorErrs == nil {
		out.collectorErrs = map[string]string{}
	}
	out.collectorErrs[name] = err.Error()
}

func failed(tr evidence.Trial, kind string, err error, excerpt string) evidence.Trial {
	tr.Status = evidence.TrialFailed
	if len(excerpt) > 8192 {
		excerpt = excerpt[:8192]
	}
	tr.Error = &evidence.TrialError{Kind: kind, Message: err.Error(), Excerpt: excerpt}
	return tr
}

func countPhase(samples []records.OpSample, warmup bool) int64 {
	want := records.PhaseMeasure
	if warmup {
		want = records.PhaseWarmup
	}
	var n int64
	for i := range samples {
		if samples[i].Phase == want {
			n++
		}
	}
	return n
}

func stageRecords[T any](bw *evidence.BundleWriter, path, role, trial string, rows []T) error {
	f, err := bw.Create(path, role, evidence.MediaParquet, trial)
	if err != nil {
		return err
	}
	if err := records.Write(f, rows); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// formatParams renders parameters as sorted key=value pairs for logs.
func formatParams(p drivers.Values) string {
	keys := slices.Sorted(maps.Keys(p))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, p[k])
	}
	return strings.Join(parts, " ")
}
