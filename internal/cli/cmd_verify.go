package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newVerifyCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "verify RUN_ID|DIGEST",
		Short: "Re-hash a run, manifest or blob; exit 1 naming every object that fails",
		Long: `Verify re-reads and re-hashes what the reference names: for a run id (or a
unique prefix), its run pointer, its manifest and every blob the manifest lists;
for a manifest digest, the manifest and its blobs; for a blob digest, the blob.
Every object that is missing, unreadable or does not hash to its address is
named, and the exit status is 1.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			ref := args[0]
			if len(ref) < 64 {
				if p, err := resolveRun(ctx, repo, ref); err == nil {
					ref = p.RunID
				}
			}
			rep, err := repo.Verify(ctx, ref)
			if err != nil {
				return err
			}
			if f.JSON() {
				doc := map[string]any{"ok": rep.OK(), "report": rep}
				if err := writeJSON(f.IO.Out, doc); err != nil {
					return err
				}
			} else {
				t := newTable(f.IO.Out, "RESULT", "KIND", "SIZE", "OBJECT", "PROBLEM")
				for _, o := range rep.Objects {
					res, prob := "ok", ""
					if !o.OK {
						res, prob = "FAIL", o.Error
					}
					name := o.URI
					if o.Path != "" {
						name += " (" + o.Path + ")"
					}
					t.row(res, o.Kind, o.Size, name, prob)
				}
				if err := t.flush(); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "\n%d objects checked, %s verified, %d failed\n", rep.Checked, humanBytes(rep.Bytes), rep.Failed)
			}
			if !rep.OK() {
				for _, o := range rep.Objects {
					if !o.OK {
						what := o.Kind
						if o.Path != "" {
							what += " " + o.Path
						}
						msg := o.Error
						if !strings.Contains(msg, o.URI) {
							msg = o.URI + ": " + msg
						}
						fmt.Fprintf(f.IO.ErrOut, "perfwh: verify: %s: %s\n", what, msg)
					}
				}
				return &ExitError{Code: ExitFailure}
			}
			return nil
		},
	}
}
