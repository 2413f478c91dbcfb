package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/evidence"
)

func newRunsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, inspect and compare the runs in the store",
		Args:  noArgs,
		RunE:  helpRun,
	}
	cmd.AddCommand(newRunsListCmd(f), newRunsShowCmd(f), newRunsDiffCmd(f))
	return cmd
}

func newRunsListCmd(f *Factory) *cobra.Command {
	var benchmark string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List committed runs, oldest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			log := f.Logger()
			runs, err := repo.ListRuns(ctx, func(name string, err error) {
				log.Warn("unreadable run pointer skipped", "object", repo.Backend().URI(name), "error", err.Error())
			})
			if err != nil {
				return err
			}
			var out []evidence.RunPointer
			for _, r := range runs {
				if benchmark == "" || r.Benchmark == benchmark {
					out = append(out, r)
				}
			}
			if limit > 0 && len(out) > limit {
				out = out[len(out)-limit:]
			}
			if f.JSON() {
				if out == nil {
					out = []evidence.RunPointer{}
				}
				return writeJSON(f.IO.Out, map[string]any{"runs": out})
			}
			t := newTable(f.IO.Out, "RUN ID", "BENCHMARK", "STATUS", "TRIALS OK", "STARTED (UTC)", "DURATION", "MANIFEST")
			for _, r := range out {
				t.row(r.RunID, r.Benchmark, r.Status, fmt.Sprintf("%d/%d", r.TrialsOK, r.TrialsTotal),
					r.StartedAt.UTC().Format(time.DateTime), r.EndedAt.Sub(r.StartedAt).Round(time.Millisecond), r.ManifestDigest.Short())
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&benchmark, "benchmark", "", "only runs of this benchmark")
	cmd.Flags().IntVar(&limit, "last", 0, "only the last N runs")
	return cmd
}

// resolveRun finds a run by id or unique id prefix.
func resolveRun(ctx context.Context, repo *evidence.Repository, ref string) (evidence.RunPointer, error) {
	if evidence.ValidRunID(ref) != nil {
		return evidence.RunPointer{}, usageErrorf("%q is not a run id", ref)
	}
	p, err := repo.ReadRun(ctx, ref)
	if err == nil || !errors.Is(err, evidence.ErrNotFound) {
		return p, err
	}
	runs, lerr := repo.ListRuns(ctx, nil)
	if lerr != nil {
		return p, lerr
	}
	var matches []evidence.RunPointer
	for _, r := range runs {
		if strings.HasPrefix(r.RunID, ref) {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 0:
		return p, fmt.Errorf("no run %q in %s", ref, repo.Backend().URI("runs/"))
	case 1:
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.RunID
	}
	return p, usageErrorf("run id prefix %q is ambiguous: %s", ref, strings.Join(ids, ", "))
}

func newRunsShowCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show a run's manifest: trials, and every file with its digest, size and role",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			p, err := resolveRun(ctx, repo, args[0])
			if err != nil {
				return err
			}
			m, err := repo.ReadManifest(ctx, p.ManifestDigest)
			if err != nil {
				return fmt.Errorf("run %s: %w", p.RunID, err)
			}
			type fileDoc struct {
				evidence.File
				URI string `json:"uri"`
			}
			files := make([]fileDoc, len(m.Files))
			for i, fl := range m.Files {
				files[i] = fileDoc{File: fl, URI: repo.BlobURI(fl.Digest)}
			}
			if f.JSON() {
				return writeJSON(f.IO.Out, map[string]any{
					"run_id": p.RunID, "manifest_digest": p.ManifestDigest, "manifest_uri": repo.ManifestURI(p.ManifestDigest),
					"manifest": m, "files": files,
				})
			}
			w := f.IO.Out
			fmt.Fprintf(w, "run_id               %s\n", m.RunID)
			fmt.Fprintf(w, "status               %s\n", m.Status)
			fmt.Fprintf(w, "benchmark            %s %s (driver %s %s)\n", m.Benchmark.Name, m.Benchmark.Version, m.Benchmark.Driver, m.Benchmark.DriverVersion)
			fmt.Fprintf(w, "benchmark_case_id    %s\n", m.BenchmarkCaseID)
			fmt.Fprintf(w, "workload_spec_digest %s\n", m.WorkloadSpecDigest)
			fmt.Fprintf(w, "manifest_digest      %s\n", p.ManifestDigest)
			fmt.Fprintf(w, "manifest             %s\n", repo.ManifestURI(p.ManifestDigest))
			fmt.Fprintf(w, "producer             %s %s (%s)\n", m.Producer.Name, m.Producer.Version, m.Producer.Revision)
			fmt.Fprintf(w, "time                 %s → %s (%s)\n\n", m.StartedAt.Format(time.RFC3339), m.EndedAt.Format(time.RFC3339),
				m.EndedAt.Sub(m.StartedAt).Round(time.Millisecond))
			t := newTable(w, "TRIAL", "POINT", "REP", "STATUS", "MEASURED OPS", "PARAMS")
			for _, tr := range m.Trials {
				ops := "-"
				if tr.Measure != nil {
					ops = fmt.Sprint(tr.Measure.Operations)
				}
				t.row(tr.ID, tr.Point, tr.Repetition, tr.Status, ops, formatParams(tr.Params))
			}
			if err := t.flush(); err != nil {
				return err
			}
			fmt.Fprintln(w)
			t = newTable(w, "PATH", "ROLE", "SIZE", "SHA256")
			for _, fl := range m.Files {
				t.row(fl.Path, fl.Role, fl.Size, fl.Digest.Hex())
			}
			return t.flush()
		},
	}
}

func formatParams(p map[string]any) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + formatParam(k, p[k])
	}
	return strings.Join(parts, " ")
}
