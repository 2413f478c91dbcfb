package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/lineage"
	"github.com/perfwh/perfwh/warehouse"
)

func newPublishCmd(f *Factory) *cobra.Command {
	var qf queryFlags
	var gates lineage.GateConfig
	var by, verify string
	var allowUnsafe bool
	cmd := &cobra.Command{
		Use:   "publish QUERY [--param name=value ...]",
		Short: "Run a registered query and store its result as an immutable, traceable publication",
		Long: `Publish runs a registered query (perfwh query list), traces every result row
to the runs it came from (its run_id column, or the query's declared run set),
checks those runs' evidence and the publication gates, and stores the
publication write-once in the evidence store under the sha256 of its canonical
JSON: the query text and query_spec_digest, the parameters, the rows, the runs
of each row with their manifest digests, who published it and when, and the
gate verdicts. It prints the publication id; perfwh lineage pub:ID walks it
back to the raw blobs.

Gates: every workload point has at least --min-samples samples (warmup
excluded; the sample count must equal the measurement phases' operations) and
--min-repetitions ok repetitions; every trial had a warmup phase
(--require-warmup); throughput varies across repetitions by at most --max-cv;
every run pointer, manifest and blob is present and verified (--verify).

Exit status: 0 published; 4 not publication-safe (a row cannot be traced to
runs, or a gate failed: nothing is stored unless --allow-unsafe, which stores
it marked unsafe); 2 unknown query or bad parameters; 1 any other failure.`,
		Example: `  perfwh publish storage_outcomes_by_point --param benchmark=quickstart
  perfwh publish storage_run_comparison --param run_a=019aa6f0-… --param run_b=019aa6f2-… --by alice
  perfwh publish runs --allow-unsafe --min-repetitions 1`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			q, raw, err := qf.queryWithParams(args[0])
			if err != nil {
				return err
			}
			level, err := lineage.ParseLevel(verify)
			if err != nil {
				return usageError(err)
			}
			if by == "" {
				by = currentUser()
			}
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			whURL, err := f.WarehouseURL()
			if err != nil {
				return err
			}
			wh, err := f.Warehouse(ctx)
			if err != nil {
				return err
			}
			defer wh.Close()
			p, id, err := lineage.Publish(ctx, lineage.PublishOptions{Repo: repo, Warehouse: wh, WarehouseURL: whURL,
				Query: q, Params: raw, By: by, Gates: gates, AllowUnsafe: allowUnsafe, Level: level})
			if err != nil {
				var ue *lineage.UnsafeError
				if errors.As(err, &ue) && !f.JSON() {
					_ = writeGates(f, ue.Gates)
				}
				return lineageError(err)
			}
			return printPublication(f, repo, p, id)
		},
	}
	fs := cmd.Flags()
	qf.addDir(fs)
	qf.addParams(fs)
	addGateFlags(fs, &gates)
	fs.StringVar(&by, "by", "", "who publishes (default $USER)")
	fs.BoolVar(&allowUnsafe, "allow-unsafe", false, "publish even when a gate fails; the publication is marked unsafe")
	fs.StringVar(&verify, "verify", string(lineage.LevelManifest), "evidence check before publishing: manifest (pointers, manifests, blob sizes) or deep (re-hash every blob)")
	return cmd
}

// lineageError maps lineage's errors to exit codes: bad input 2, not
// publication-safe 4.
func lineageError(err error) error {
	var ie *lineage.InputError
	var nm *lineage.NoMatchError
	var am *lineage.AmbiguousError
	var ue *lineage.UnsafeError
	var te *lineage.UntraceableError
	switch {
	case errors.As(err, &ie), errors.As(err, &nm), errors.As(err, &am):
		return usageError(err)
	case errors.As(err, &ue), errors.As(err, &te):
		return &ExitError{Code: ExitUnsafe, Err: err}
	case errors.Is(err, evidence.ErrNotFound):
		return &ExitError{Code: ExitUnsafe, Err: fmt.Errorf("not publication-safe: %w", err)}
	}
	return err
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func writeGates(f *Factory, g lineage.GateReport) error {
	t := newTable(f.IO.ErrOut, "GATE", "VERDICT", "DETAIL")
	for _, v := range g.Verdicts {
		t.row(v.Gate, v.Status, v.Detail)
		for _, x := range v.Failures {
			t.row("", "", "  "+x)
		}
	}
	return t.flush()
}

func printPublication(f *Factory, repo *evidence.Repository, p *lineage.Publication, id evidence.Digest) error {
	uri := repo.Backend().URI(lineage.ObjectName(id))
	if f.JSON() {
		return writeJSON(f.IO.Out, map[string]any{"id": id, "uri": uri, "lineage": "pub:" + id.Hex()[:12], "publication": p})
	}
	res := &warehouse.Result{Columns: append([]string{"row"}, p.Columns...)}
	for i, r := range p.Rows {
		res.Rows = append(res.Rows, append([]any{int64(i + 1)}, r...))
	}
	if err := printResult(f, res); err != nil {
		return err
	}
	w := f.IO.Out
	state := "all gates pass"
	if p.Unsafe {
		state = "MARKED UNSAFE: a gate failed"
	}
	fmt.Fprintf(w, "\npublished   %s\n", id)
	fmt.Fprintf(w, "            %s\n", uri)
	fmt.Fprintf(w, "query       %s %s\n", p.Query.Name, p.Query.Digest)
	fmt.Fprintf(w, "by          %s at %s\n", p.PublishedBy, p.PublishedAt.Format(time.RFC3339))
	fmt.Fprintf(w, "rows        %d from %d runs; %s\n", len(p.Rows), len(p.Runs), state)
	fmt.Fprintf(w, "lineage     perfwh lineage pub:%s\n", id.Hex()[:12])
	return nil
}

func newPublicationsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publications",
		Short: "List and show stored publications",
		Args:  noArgs,
		RunE:  helpRun,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List publications, oldest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			ls, err := lineage.List(ctx, repo.Backend())
			if err != nil {
				return err
			}
			if f.JSON() {
				return writeJSON(f.IO.Out, map[string]any{"publications": ls})
			}
			t := newTable(f.IO.Out, "ID", "PUBLISHED (UTC)", "BY", "QUERY", "ROWS", "RUNS", "STATE")
			for _, l := range ls {
				state := "ok"
				switch {
				case l.Error != "":
					state = "UNREADABLE: " + l.Error
				case l.Unsafe:
					state = "unsafe"
				}
				t.row(l.ID.Hex()[:12], l.PublishedAt.UTC().Format(time.DateTime), l.PublishedBy, l.Query, l.Rows, l.Runs, state)
			}
			return t.flush()
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a publication's rows and record (verified against its id)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			p, id, err := readPublication(ctx, repo, args[0])
			if err != nil {
				return err
			}
			return printPublication(f, repo, p, id)
		},
	}
	cmd.AddCommand(list, show)
	return cmd
}

func readPublication(ctx context.Context, repo *evidence.Repository, ref string) (*lineage.Publication, evidence.Digest, error) {
	id, err := lineage.ResolveID(ctx, repo.Backend(), strings.TrimPrefix(ref, "pub:"))
	if err != nil {
		if errors.Is(err, evidence.ErrNotFound) {
			return nil, id, err
		}
		return nil, id, usageError(err)
	}
	p, err := lineage.Get(ctx, repo.Backend(), id)
	return p, id, err
}
