package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfwh/perfwh/lineage"
	"github.com/perfwh/perfwh/sql"
)

// EnvQueries names a directory of team queries registered beside the
// shipped ones.
const EnvQueries = "PERFWH_QUERIES"

// queryFlags are the options of the commands that use registered queries.
type queryFlags struct {
	dir    string
	params []string
}

func (q *queryFlags) addDir(fs *pflag.FlagSet) {
	fs.StringVar(&q.dir, "queries", "", "directory of more registered queries (*.sql), beside the shipped ones (env "+EnvQueries+")")
}

func (q *queryFlags) addParams(fs *pflag.FlagSet) {
	fs.StringArrayVar(&q.params, "param", nil, "query parameter: name=value (repeatable; typed by the query's header)")
}

// registry loads the shipped queries and those of --queries.
func (q *queryFlags) registry() (*sql.Registry, error) {
	dir := q.dir
	if dir == "" {
		dir = os.Getenv(EnvQueries)
	}
	r, err := sql.Load(dir)
	if err != nil {
		return nil, usageError(fmt.Errorf("registered queries: %w", err))
	}
	return r, nil
}

// query returns the registered query name.
func (q *queryFlags) query(name string) (*sql.Query, error) {
	r, err := q.registry()
	if err != nil {
		return nil, err
	}
	qq, ok := r.Get(name)
	if !ok {
		return nil, usageErrorf("no registered query %q (registered: %s)", name, strings.Join(r.Names(), ", "))
	}
	return qq, nil
}

// queryWithParams returns the registered query name and the --param
// values given for it (not yet bound: publish binds them itself).
func (q *queryFlags) queryWithParams(name string) (*sql.Query, map[string]string, error) {
	qq, err := q.query(name)
	if err != nil {
		return nil, nil, err
	}
	raw, err := q.paramMap()
	if err != nil {
		return nil, nil, err
	}
	return qq, raw, nil
}

// paramMap parses --param name=value flags.
func (q *queryFlags) paramMap() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range q.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageErrorf("--param %q: want name=value", p)
		}
		if _, dup := out[k]; dup {
			return nil, usageErrorf("--param %s is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// addGateFlags binds the publication gates' thresholds to flags.
func addGateFlags(fs *pflag.FlagSet, g *lineage.GateConfig) {
	*g = lineage.DefaultGates
	fs.Int64Var(&g.MinSamples, "min-samples", g.MinSamples, "gate: fewest measured samples (serving: requests) per workload point, warmup excluded")
	fs.Int64Var(&g.MinRepetitions, "min-repetitions", g.MinRepetitions, "gate: fewest ok repetitions per workload point")
	fs.Float64Var(&g.MaxCV, "max-cv", g.MaxCV, "gate: largest coefficient of variation of throughput across repetitions (0.1 = 10%; 0 turns the gate off)")
	fs.BoolVar(&g.RequireWarmup, "require-warmup", g.RequireWarmup, "gate: every trial must have had a warmup phase")
}

func newQueryCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "query",
		Short: "List, show and run the registered queries (sql/queries)",
		Args:  noArgs,
		RunE:  helpRun,
	}
	cmd.AddCommand(newQueryListCmd(f), newQueryShowCmd(f), newQueryRunCmd(f))
	return cmd
}

func paramSignature(q *sql.Query) string {
	parts := make([]string, len(q.Params))
	for i, p := range q.Params {
		parts[i] = p.Name + " " + string(p.Type)
		if !p.Required {
			parts[i] += "=" + fmt.Sprintf("%#v", p.Default)
		}
	}
	return strings.Join(parts, ", ")
}

func traceText(q *sql.Query) string {
	if q.Trace.Column != "" {
		return "column " + q.Trace.Column
	}
	return "run set by " + strings.Join(q.Trace.Key, ", ")
}

func newQueryListCmd(f *Factory) *cobra.Command {
	var qf queryFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List registered queries with their parameters and query_spec_digest",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := qf.registry()
			if err != nil {
				return err
			}
			qs := reg.List()
			if f.JSON() {
				return writeJSON(f.IO.Out, map[string]any{"queries": qs})
			}
			t := newTable(f.IO.Out, "NAME", "PARAMS", "ROWS TRACED BY", "QUERY_SPEC_DIGEST", "OWNER")
			for _, q := range qs {
				t.row(q.Name, paramSignature(q), traceText(q), "sha256:"+q.Digest.Short(), q.Owner)
			}
			return t.flush()
		},
	}
	qf.addDir(cmd.Flags())
	return cmd
}

func newQueryShowCmd(f *Factory) *cobra.Command {
	var qf queryFlags
	cmd := &cobra.Command{
		Use:   "show QUERY",
		Short: "Show a registered query: header, parameters, digest and text",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := qf.query(args[0])
			if err != nil {
				return err
			}
			if f.JSON() {
				return writeJSON(f.IO.Out, q)
			}
			w := f.IO.Out
			fmt.Fprintf(w, "name               %s\ndescription        %s\nowner              %s\nsource             %s\n",
				q.Name, q.Description, q.Owner, q.Source)
			fmt.Fprintf(w, "query_spec_digest  %s\nrows traced by     %s\n", q.Digest, traceText(q))
			for _, p := range q.Params {
				req := "required"
				if !p.Required {
					req = fmt.Sprintf("default %#v", p.Default)
				}
				fmt.Fprintf(w, "param              %s %s (%s) %s\n", p.Name, p.Type, req, p.Doc)
			}
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(q.Text, "\n"))
			return nil
		},
	}
	qf.addDir(cmd.Flags())
	return cmd
}

func newQueryRunCmd(f *Factory) *cobra.Command {
	var qf queryFlags
	cmd := &cobra.Command{
		Use:   "run QUERY [--param name=value ...]",
		Short: "Run a registered query and print its rows; nothing is published",
		Example: `  perfwh query run storage_outcomes_by_point --param benchmark=quickstart
  perfwh query run storage_run_comparison --param run_a=019aa6f0-… --param run_b=019aa6f2-… -o csv`,
		Annotations: map[string]string{"csv": "yes"},
		Args:        exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			q, raw, err := qf.queryWithParams(args[0])
			if err != nil {
				return err
			}
			vals, err := q.Bind(raw)
			if err != nil {
				return usageError(err)
			}
			wh, err := f.Warehouse(ctx)
			if err != nil {
				return err
			}
			defer wh.Close()
			stmt, err := q.Render(wh.Dialect(), vals)
			if err != nil {
				return err
			}
			res, err := wh.Query(ctx, stmt)
			if err != nil {
				return fmt.Errorf("query %s: %w", q.Name, err)
			}
			return printResult(f, res)
		},
	}
	qf.addDir(cmd.Flags())
	qf.addParams(cmd.Flags())
	return cmd
}
