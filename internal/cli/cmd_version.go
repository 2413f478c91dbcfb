package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/buildinfo"
)

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print perfwh's version, revision and bundle format",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := map[string]any{
				"version":       buildinfo.Version(),
				"revision":      buildinfo.Revision(),
				"go_version":    buildinfo.GoVersion(),
				"bundle_format": fmt.Sprintf("%s/%d", evidence.ManifestFormat, evidence.ManifestFormatVersion),
			}
			if f.JSON() {
				return writeJSON(f.IO.Out, v)
			}
			_, err := fmt.Fprintf(f.IO.Out, "perfwh %s (revision %s, %s, bundle format %s)\n",
				v["version"], v["revision"], v["go_version"], v["bundle_format"])
			return err
		},
	}
}
