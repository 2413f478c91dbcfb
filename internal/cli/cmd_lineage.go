package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/lineage"
)

func newLineageCmd(f *Factory) *cobra.Command {
	var qf queryFlags
	var gates lineage.GateConfig
	var verify string
	cmd := &cobra.Command{
		Use:   "lineage SELECTOR|pub:ID[/ROW/COLUMN]",
		Short: "Walk a number back to its raw evidence; exit 4 unless every link resolves and verifies",
		Long: `Lineage walks a number back through every link to the raw evidence:

  number → publication → query (name, query_spec_digest, text) → rows → runs
         → run pointer → manifest (digest, files, roles) → blobs (URIs, sizes)

and shows the dimensions each run used (software, hardware, cluster, workload,
driver and ingest versions). The number is a publication's (pub:ID, one row
pub:ID/ROW, one cell pub:ID/ROW/COLUMN; ROW counts from 1; ID is a unique
prefix of the publication's sha256) or a warehouse cell named by a selector,
table.column{label="value",...}, with PromQL's = != =~ !~ and labels that are
the table's columns or keys of its params; a selector must match exactly one
cell.

Checks: --verify=manifest reads every run pointer, re-hashes every manifest and
checks that every blob exists with its manifest size; --verify=deep re-hashes
every blob too. A publication is checked against its own digest, its query
against the query registered under that name now (a changed text is named),
and the publication gates it recorded; a warehouse cell is judged by the gates
as the flags set them.

Exit status: 0 every link resolves and verifies; 4 not publication-safe, each
broken link named on stderr ("blob sha256:… missing"); 2 bad reference, or a
selector matching no cell or several (the candidates are listed).`,
		Example: `  perfwh lineage pub:3f2a9c1b7d4e
  perfwh lineage pub:3f2a9c1b7d4e/2/latency_p99_ms --verify=deep
  perfwh lineage 'storage_outcome_fact.latency_p99_ms{run_id="019aa6f0-…",op="read",block_size="4096"}'
  perfwh lineage 'serving_outcome_fact.ttft_p99_ms{run_id="019aa6f0-…",concurrency="32"}' -o json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			level, err := lineage.ParseLevel(verify)
			if err != nil {
				return usageError(err)
			}
			reg, err := qf.registry()
			if err != nil {
				return err
			}
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			wh, err := f.Warehouse(ctx)
			if err != nil {
				return err
			}
			defer wh.Close()
			rep, err := lineage.Resolve(ctx, args[0], lineage.Options{Repo: repo, Warehouse: wh, Registry: reg, Level: level, Gates: gates})
			if err != nil {
				return lineageError(err)
			}
			if f.JSON() {
				err = writeJSON(f.IO.Out, rep)
			} else {
				err = lineage.WriteTree(f.IO.Out, rep)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "lineage: %d runs, %d blobs checked (%s) in %.1f ms\n", rep.Summary.Runs, rep.Summary.Blobs, level, rep.Summary.ElapsedMS)
			if rep.OK {
				return nil
			}
			for _, p := range rep.Problems {
				fmt.Fprintf(f.IO.ErrOut, "perfwh: not publication-safe: %s\n", p)
			}
			return &ExitError{Code: ExitUnsafe}
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&verify, "verify", string(lineage.LevelManifest), "manifest (pointers, manifests, blob existence and size) or deep (also re-hash every blob)")
	qf.addDir(fs)
	addGateFlags(fs, &gates)
	return cmd
}
