package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/warehouse"
)

func newWarehouseCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "warehouse",
		Short: "Create or upgrade the warehouse schema, and show its state",
		Args:  noArgs,
		RunE:  helpRun,
	}
	status := func(cmd *cobra.Command, migrate bool) error {
		ctx := cmd.Context()
		wh, err := f.Warehouse(ctx)
		if err != nil {
			return err
		}
		defer wh.Close()
		if migrate {
			if err := wh.Migrate(ctx); err != nil {
				return fmt.Errorf("migrate: %w", err)
			}
		}
		st, err := wh.Status(ctx)
		if err != nil {
			return err
		}
		if f.JSON() {
			return writeJSON(f.IO.Out, st)
		}
		w := f.IO.Out
		fmt.Fprintf(w, "warehouse      %s (%s %s)\n", st.Location, st.Dialect, st.ServerVersion)
		fmt.Fprintf(w, "schema version %d (this perfwh: %d)\n", st.SchemaVersion, warehouse.SchemaVersion)
		if st.SchemaVersion < warehouse.SchemaVersion {
			fmt.Fprintln(w, "               run 'perfwh warehouse migrate' (perfwh ingest migrates too)")
		}
		fmt.Fprintln(w)
		t := newTable(w, "TABLE", "ROWS")
		for _, tb := range st.Tables {
			t.row(tb.Name, tb.Rows)
		}
		return t.flush()
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the schema (idempotent)",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return status(cmd, true) },
	}, &cobra.Command{
		Use:   "status",
		Short: "Schema version, tables and row counts",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return status(cmd, false) },
	})
	return cmd
}
