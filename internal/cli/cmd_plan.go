package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/internal/units"
	"github.com/perfwh/perfwh/spec"

	_ "github.com/perfwh/perfwh/collectors/all" // register collectors
	_ "github.com/perfwh/perfwh/drivers/all"    // register drivers
)

// loadPlan loads, validates and expands a case; bad input is a usage error.
func loadPlan(path string, sets []string) (*spec.Plan, error) {
	c, err := spec.LoadFile(path, sets)
	if err != nil {
		return nil, usageError(err)
	}
	pl, err := c.Plan()
	if err != nil {
		return nil, usageError(err)
	}
	return pl, nil
}

func newPlanCmd(f *Factory) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "plan CASE.yaml",
		Short: "Validate a case and show its expanded trials; nothing runs",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pl, err := loadPlan(args[0], sets)
			if err != nil {
				return err
			}
			return printPlan(f, pl)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a case field: key=value (repeatable; value is YAML, a list makes a sweep)")
	return cmd
}

// planDoc is the JSON shape of a plan.
type planDoc struct {
	Benchmark          string         `json:"benchmark"`
	Version            string         `json:"version"`
	Driver             string         `json:"driver"`
	Deprecated         bool           `json:"deprecated"`
	BenchmarkCaseID    string         `json:"benchmark_case_id"`
	WorkloadSpecDigest string         `json:"workload_spec_digest"`
	Axes               []string       `json:"axes"`
	Points             int            `json:"points"`
	Repetitions        int            `json:"repetitions"`
	Warmup             string         `json:"warmup"`
	Duration           string         `json:"duration"`
	Operations         int64          `json:"operations"`
	TimeLimit          string         `json:"time_limit"`
	Collectors         []string       `json:"collectors"`
	Trials             []planTrialDoc `json:"trials"`
}

type planTrialDoc struct {
	ID         string         `json:"id"`
	Point      int            `json:"point"`
	Repetition int            `json:"repetition"`
	Seed       int64          `json:"seed"`
	Params     map[string]any `json:"params"`
}

func printPlan(f *Factory, pl *spec.Plan) error {
	c := pl.Case
	doc := planDoc{
		Benchmark: c.Name, Version: c.Version, Driver: c.Driver.Info().Name, Deprecated: c.Deprecated,
		BenchmarkCaseID: c.CaseID().String(), WorkloadSpecDigest: c.WorkloadSpecDigest().String(),
		Axes: pl.Axes, Points: len(pl.Points), Repetitions: c.Repetitions,
		Warmup: c.Warmup.String(), Duration: c.Duration.String(), Operations: c.Operations,
		TimeLimit: c.Resources.TimeLimit.String(), Collectors: []string{},
	}
	for name := range c.Collectors {
		doc.Collectors = append(doc.Collectors, name)
	}
	sort.Strings(doc.Collectors)
	for _, t := range pl.Trials {
		doc.Trials = append(doc.Trials, planTrialDoc{ID: t.ID, Point: t.Point, Repetition: t.Repetition, Seed: t.Seed, Params: t.Params})
	}
	if f.JSON() {
		return writeJSON(f.IO.Out, doc)
	}
	w := f.IO.Out
	if c.Deprecated {
		fmt.Fprintf(w, "warning: benchmark %s is deprecated\n", c.Name)
	}
	fmt.Fprintf(w, "benchmark            %s (version %s, driver %s %s)\n", c.Name, c.Version, doc.Driver, c.Driver.Info().Version)
	fmt.Fprintf(w, "benchmark_case_id    %s\n", doc.BenchmarkCaseID)
	fmt.Fprintf(w, "workload_spec_digest %s\n", doc.WorkloadSpecDigest)
	fmt.Fprintf(w, "trials               %d (%d points × %d repetitions), warmup %s, measure %s, time limit %s each\n",
		len(pl.Trials), len(pl.Points), c.Repetitions, c.Warmup, describeMeasure(c), c.Resources.TimeLimit)
	fmt.Fprintf(w, "fixed                %s\n", fixedParams(c, pl.Axes))
	if len(doc.Collectors) > 0 {
		fmt.Fprintf(w, "collectors           %s\n", strings.Join(doc.Collectors, ", "))
	}
	fmt.Fprintln(w)
	t := newTable(w, append([]string{"TRIAL", "POINT", "REP"}, upper(pl.Axes)...)...)
	for _, tr := range pl.Trials {
		cells := []any{tr.ID, tr.Point, tr.Repetition}
		for _, a := range pl.Axes {
			cells = append(cells, formatParam(a, tr.Params[a]))
		}
		t.row(cells...)
	}
	return t.flush()
}

func describeMeasure(c *spec.Case) string {
	switch {
	case c.Duration > 0 && c.Operations > 0:
		return fmt.Sprintf("%s or %d ops", c.Duration, c.Operations)
	case c.Duration > 0:
		return c.Duration.String()
	}
	return fmt.Sprintf("%d ops", c.Operations)
}

func fixedParams(c *spec.Case, axes []string) string {
	var names []string
	for k, vs := range c.Workload {
		if len(vs) == 1 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + formatParam(n, c.Workload[n][0])
	}
	return strings.Join(parts, " ")
}

// formatParam renders sizes readably (parameters named *_size are bytes).
func formatParam(name string, v any) string {
	if n, ok := v.(int64); ok && strings.HasSuffix(name, "_size") {
		return units.FormatBytes(n)
	}
	return fmt.Sprint(v)
}

func upper(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToUpper(s)
	}
	return out
}
