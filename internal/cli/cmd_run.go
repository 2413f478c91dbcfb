package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/runner"
	"github.com/perfwh/perfwh/spec"
)

func newRunCmd(f *Factory) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "run CASE.yaml",
		Short: "Run a benchmark case and store its evidence bundle",
		Long: `Run expands the case's sweep, runs every trial (warmup, then measurement with
the collectors on), and stores the evidence bundle in the store. It prints the
run id and the manifest digest.

Exit status: 0 every trial ok; 3 the run was stored but some trials failed or
timed out; 130 interrupted (finished trials stored as a partial run); 2 bad
case file or flags (nothing runs, nothing is written); 1 any other failure.`,
		Example: `  perfwh run examples/quickstart.yaml
  perfwh run case.yaml --set workload.threads=4 --set repetitions=5
  perfwh run case.yaml --set 'workload.block_size=[4KiB,1MiB]' --output json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pl, err := loadPlan(args[0], sets)
			if err != nil {
				return err
			}
			return runRun(cmd.Context(), f, pl)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a case field: key=value (repeatable; value is YAML, a list makes a sweep)")
	return cmd
}

func runRun(ctx context.Context, f *Factory, pl *spec.Plan) error {
	c := pl.Case
	repo, err := f.Repo(ctx)
	if err != nil {
		return err
	}
	home, err := f.HomeDir()
	if err != nil {
		return err
	}
	log := f.Logger()
	var events runner.Events
	if f.IO.StderrIsTTY {
		// The bar says what the log would; keep only warnings on the terminal.
		if f.Level == "info" {
			log = slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		bar := newProgressBar(f.IO.ErrOut)
		defer bar.stop()
		events = bar
	}
	if c.Deprecated {
		log.Warn("benchmark is deprecated", "benchmark", c.Name)
	}
	res, err := runner.Run(ctx, pl, runner.Options{
		Repo:       repo,
		StagingDir: filepath.Join(home, "staging"),
		ScratchDir: filepath.Join(home, "scratch"),
		Log:        log,
		Events:     events,
	})
	if err != nil {
		return err
	}
	if err := printRunResult(f, repo, res); err != nil {
		return err
	}
	switch {
	case res.Status == evidence.RunPartial:
		return &ExitError{Code: ExitInterrupted}
	case res.Failed() > 0:
		return &ExitError{Code: ExitTrialsFailed}
	}
	return nil
}

// runDoc is the JSON shape of perfwh run's result.
type runDoc struct {
	RunID              string           `json:"run_id"`
	ManifestDigest     string           `json:"manifest_digest"`
	Status             string           `json:"status"`
	Benchmark          string           `json:"benchmark"`
	BenchmarkCaseID    string           `json:"benchmark_case_id"`
	WorkloadSpecDigest string           `json:"workload_spec_digest"`
	TrialsFailed       int              `json:"trials_failed"`
	Trials             []evidence.Trial `json:"trials"`
	Store              map[string]any   `json:"store"`
}

func printRunResult(f *Factory, repo *evidence.Repository, res *runner.Result) error {
	m := res.Manifest
	doc := runDoc{
		RunID: res.RunID, ManifestDigest: res.ManifestDigest.String(), Status: string(res.Status),
		Benchmark: m.Benchmark.Name, BenchmarkCaseID: m.BenchmarkCaseID.String(),
		WorkloadSpecDigest: m.WorkloadSpecDigest.String(), TrialsFailed: res.Failed(), Trials: m.Trials,
		Store: map[string]any{
			"manifest_uri":   repo.ManifestURI(res.ManifestDigest),
			"files":          res.Commit.Files,
			"bytes":          res.Commit.Bytes,
			"blobs_created":  res.Commit.BlobsCreated,
			"blobs_existing": res.Commit.BlobsExisting,
			"bytes_created":  res.Commit.BytesCreated,
		},
	}
	if f.JSON() {
		return writeJSON(f.IO.Out, doc)
	}
	w := f.IO.Out
	keys := summaryKeys(m.Trials)
	t := newTable(w, append([]string{"TRIAL", "POINT", "REP", "STATUS"}, upper(keys)...)...)
	for _, tr := range m.Trials {
		cells := []any{tr.ID, tr.Point, tr.Repetition, tr.Status}
		for _, k := range keys {
			cells = append(cells, formatSummary(tr.Summary[k]))
		}
		t.row(cells...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, tr := range m.Trials {
		if tr.Error != nil {
			fmt.Fprintf(w, "%s %s (%s): %s\n", tr.ID, tr.Status, tr.Error.Kind, tr.Error.Message)
		}
	}
	fmt.Fprintf(w, "\nrun_id          %s (%s, %d/%d trials ok)\n", res.RunID, res.Status, len(m.Trials)-res.Failed(), len(m.Trials))
	fmt.Fprintf(w, "manifest_digest %s\n", res.ManifestDigest)
	fmt.Fprintf(w, "stored          %d files, %s; %d new blobs (%s), %d already stored\n",
		res.Commit.Files, humanBytes(res.Commit.Bytes), res.Commit.BlobsCreated, humanBytes(res.Commit.BytesCreated), res.Commit.BlobsExisting)
	return nil
}

// summaryKeys picks the summary columns to show: the driver's headline
// numbers, in a stable order.
func summaryKeys(trials []evidence.Trial) []string {
	preferred := []string{"throughput_mb_per_s", "iops", "latency_p50_us", "latency_p99_us", "latency_p999_us", "errors"}
	seen := map[string]bool{}
	for _, t := range trials {
		for k := range t.Summary {
			seen[k] = true
		}
	}
	var keys []string
	for _, k := range preferred {
		if seen[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		for k := range seen {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 6 {
			keys = keys[:6]
		}
	}
	return keys
}

func formatSummary(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case float64:
		if t >= 100 {
			return fmt.Sprintf("%.0f", t)
		}
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", t), "0"), ".")
	}
	return fmt.Sprint(v)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
