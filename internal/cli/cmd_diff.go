package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/compare"
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/units"
)

func newRunsDiffCmd(f *Factory) *cobra.Command {
	var differing bool
	o := compare.Options{}
	cmd := &cobra.Command{
		Use:   "diff RUN_A RUN_B",
		Short: "Compare two ingested runs: which dimensions differ, and the outcome deltas (B relative to A)",
		Long: `diff puts the dimensions of two ingested runs side by side — the run (benchmark,
driver and ingest versions), software versions, hardware topology, cluster
context, the workload spec field by field, and metadata — marking with * those
that differ. It then matches workload points by their parameters and prints,
per point and operation, the change of throughput, latency percentiles and
error rate, with a bootstrap confidence interval of the difference in mean
per-repetition throughput where both runs have several repetitions (read
from the raw evidence in the store). A diff is information: it exits 0
whatever differs.`,
		Example: `  perfwh runs diff 01a1fde8 01a1fdf2
  perfwh runs diff 01a1fde8 01a1fdf2 --differing      # only the dimensions that differ
  perfwh runs diff 01a1fde8 01a1fdf2 -o json`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Resamples < 100 || o.Resamples > 1_000_000 {
				return usageErrorf("--resamples must be between 100 and 1000000, got %d", o.Resamples)
			}
			if !(o.Confidence > 0 && o.Confidence < 1) {
				return usageErrorf("--confidence must be between 0 and 1 (0.95 for 95%%), got %g", o.Confidence)
			}
			ctx := cmd.Context()
			wh, err := f.Warehouse(ctx)
			if err != nil {
				return err
			}
			defer wh.Close()
			log := f.Logger()
			repo, err := f.Repo(ctx)
			if err != nil {
				log.Warn("evidence store not available: no confidence intervals", "error", err.Error())
				repo = nil
			}
			ids := make([]string, 2)
			for i, ref := range args {
				if ids[i], err = compare.Resolve(ctx, wh, repo, ref); err != nil {
					var re *compare.RunRefError
					if errors.As(err, &re) {
						return usageError(err)
					}
					return err
				}
			}
			o.Warehouse, o.Repo = wh, repo
			r, err := compare.Diff(ctx, o, ids[0], ids[1])
			if err != nil {
				var re *compare.RunRefError
				if errors.As(err, &re) {
					return usageError(err)
				}
				return err
			}
			for _, w := range r.Warnings {
				log.Warn(w)
			}
			if f.JSON() {
				return writeJSON(f.IO.Out, r)
			}
			return printDiff(f.IO.Out, r, differing)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&differing, "differing", false, "list only the dimensions that differ (table output)")
	fl.IntVar(&o.Resamples, "resamples", compare.DefaultResamples, "bootstrap resamples")
	fl.Float64Var(&o.Confidence, "confidence", compare.DefaultConfidence, "confidence level of the intervals")
	fl.Uint64Var(&o.Seed, "seed", compare.DefaultSeed, "bootstrap seed (equal seeds give equal intervals)")
	return cmd
}

func printDiff(w io.Writer, r *compare.Report, onlyDiffering bool) error {
	t := newTable(w, "", "A", "B")
	t.row("run_id", r.A.RunID, r.B.RunID)
	t.row("benchmark", r.A.Benchmark, r.B.Benchmark)
	t.row("started (UTC)", r.A.StartedAt.UTC().Format(time.DateTime), r.B.StartedAt.UTC().Format(time.DateTime))
	t.row("duration", diffSeconds(r.A.DurationS), diffSeconds(r.B.DurationS))
	t.row("manifest", diffShortDigest(r.A.ManifestDigest), diffShortDigest(r.B.ManifestDigest))
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nDIMENSIONS: %d of %d differ (*)\n", r.DifferingDimensions, len(r.Dimensions))
	if onlyDiffering && r.DifferingDimensions == 0 {
		fmt.Fprintln(w, "(none)")
	}
	t = newTable(w)
	if !onlyDiffering || r.DifferingDimensions > 0 {
		t.row("", "SECTION", "NAME", "A", "B")
	}
	for _, d := range r.Dimensions {
		if onlyDiffering && !d.Differs {
			continue
		}
		mark := ""
		if d.Differs {
			mark = "*"
		}
		t.row(mark, d.Section, d.Name, diffValue(d.Name, d.A), diffValue(d.Name, d.B))
	}
	if err := t.flush(); err != nil {
		return err
	}

	counts := map[string]int{}
	for _, o := range r.Outcomes {
		counts[o.In]++
	}
	fmt.Fprintf(w, "\nOUTCOMES: B relative to A; %d points in both runs, %d only in A, %d only in B\n",
		counts[compare.InBoth], counts[compare.OnlyInA], counts[compare.OnlyInB])
	if len(r.RunWideChanges) > 0 {
		parts := make([]string, len(r.RunWideChanges))
		for i, c := range r.RunWideChanges {
			parts[i] = fmt.Sprintf("%s %s → %s", c.Param, diffValue(c.Param, c.A), diffValue(c.Param, c.B))
		}
		fmt.Fprintf(w, "points matched without the run-wide changes: %s\n", strings.Join(parts, ", "))
	}
	if len(r.Outcomes) == 0 {
		return nil
	}
	ciHead := fmt.Sprintf("%g%% CI (MEAN DIFF)", r.Bootstrap.Confidence*100)
	t = newTable(w, "POINT", "OP", "REPS", "METRIC", "A", "B", "DELTA", "REL", ciHead)
	caveat := false
	for _, o := range r.Outcomes {
		if o.Throughput != nil && o.Throughput.Caveat != "" {
			caveat = true
		}
		label := diffPointLabel(o)
		reps := fmt.Sprintf("%s/%s", diffInt(o.RepetitionsA), diffInt(o.RepetitionsB))
		for i, m := range o.Metrics {
			ci := ""
			if i == 0 {
				switch o.In {
				case compare.OnlyInA:
					ci = "(only in A)"
				case compare.OnlyInB:
					ci = "(only in B)"
				default:
					ci = diffCIText(o.Throughput)
				}
			}
			if i > 0 {
				label, reps = "", ""
			}
			op := o.Op
			if i > 0 {
				op = ""
			}
			t.row(label, op, reps, m.Name, diffNum(m.A), diffNum(m.B), diffSigned(m.Delta), diffPercent(m.Relative), ci)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nCI: %s; %d resamples, seed %d; * marks an interval that excludes 0; n/a needs 2 or more repetitions in each run.\n",
		r.Bootstrap.Method, r.Bootstrap.Resamples, r.Bootstrap.Seed)
	if caveat {
		fmt.Fprintf(w, "With fewer than %d repetitions per run an interval understates the uncertainty.\n", compare.FewRepetitions)
	}
	return nil
}

func diffPointLabel(o compare.Outcome) string {
	if len(o.Axes) == 0 {
		return "(the one point)"
	}
	keys := make([]string, 0, len(o.Axes))
	for k := range o.Axes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + diffValue(k, o.Axes[k])
	}
	return strings.Join(parts, " ")
}

func diffCIText(ci *compare.RepetitionCI) string {
	if ci == nil || ci.Interval == nil {
		return "n/a"
	}
	mark := ""
	if ci.Interval.Low > 0 || ci.Interval.High < 0 {
		mark = " *"
	}
	return fmt.Sprintf("[%s, %s]%s", diffSigned(&ci.Interval.Low), diffSigned(&ci.Interval.High), mark)
}

// dimValue renders a dimension or parameter value for a table: sizes
// (names ending in _size or _bytes) in binary units, digests shortened,
// long text cut, "-" for a value the run does not have.
func diffValue(name string, v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return diffValue(name, n)
		}
		return x.String()
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return diffValue(name, int64(x))
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		switch {
		case x == 0:
			return "0"
		case strings.HasSuffix(name, "_size"):
			return units.FormatBytes(x) // exact, as the case file would say it
		case strings.HasSuffix(name, "_bytes"):
			return diffBytes(x)
		}
		return strconv.FormatInt(x, 10)
	case time.Time:
		return x.UTC().Format(time.DateTime)
	case string:
		if strings.HasPrefix(x, "sha256:") {
			return diffShortDigest(x)
		}
		if x == "" {
			return `""`
		}
		if r := []rune(x); len(r) > 48 {
			return string(r[:47]) + "…"
		}
		return x
	case []any:
		b, _ := json.Marshal(x)
		return diffValue(name, string(b))
	}
	return fmt.Sprint(v)
}

// diffBytes renders a byte count to three significant digits in binary
// units (memory sizes are rarely round).
func diffBytes(n int64) string {
	f, unit := float64(n), "B"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		if math.Abs(f) < 1024 {
			break
		}
		f, unit = f/1024, u
	}
	if unit == "B" {
		return strconv.FormatInt(n, 10) + "B"
	}
	return strconv.FormatFloat(f, 'g', 3, 64) + unit
}

func diffShortDigest(s string) string {
	if d, err := evidence.ParseDigest(s); err == nil {
		return "sha256:" + d.Short()
	}
	return s
}

func diffSeconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

func diffInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// num renders a measured value with precision that suits its size.
func diffNum(p *float64) string {
	if p == nil {
		return "-"
	}
	x := *p
	switch a := math.Abs(x); {
	case x == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func diffSigned(p *float64) string {
	s := diffNum(p)
	if p != nil && *p > 0 {
		return "+" + s
	}
	return s
}

func diffPercent(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *p*100)
}
