package cli

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfwh/perfwh/warehouse"
)

func newSQLCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   `sql "SELECT ..."`,
		Short: "Run SQL against the warehouse (table, json or csv output)",
		Long: `sql runs one statement in the warehouse engine's own dialect (DuckDB or
ClickHouse) and prints the result. On ClickHouse, add FINAL after a table name
to read rows exactly as one ingest wrote them (ReplacingMergeTree).`,
		Example: `  perfwh sql "SELECT run_id, benchmark_name, trials_ok FROM benchmark_run_fact ORDER BY started_at"
  perfwh sql "SELECT op, params, ops_per_s, latency_p99_ms FROM storage_outcome_fact" -o csv`,
		Annotations: map[string]string{"csv": "yes"},
		Args:        exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			wh, err := f.Warehouse(ctx)
			if err != nil {
				return err
			}
			defer wh.Close()
			res, err := wh.Query(ctx, args[0])
			if err != nil {
				return usageError(fmt.Errorf("query: %w", err))
			}
			return printResult(f, res)
		},
	}
}

func printResult(f *Factory, res *warehouse.Result) error {
	switch f.Output {
	case OutputJSON:
		rows := make([]map[string]any, len(res.Rows))
		for i, r := range res.Rows {
			rows[i] = map[string]any{}
			for j, c := range res.Columns {
				rows[i][c] = jsonValue(r[j])
			}
		}
		return writeJSON(f.IO.Out, map[string]any{"columns": res.Columns, "rows": rows})
	case OutputCSV:
		w := csv.NewWriter(f.IO.Out)
		if err := w.Write(res.Columns); err != nil {
			return err
		}
		for _, r := range res.Rows {
			rec := make([]string, len(r))
			for j, v := range r {
				rec[j] = cell(v)
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		w.Flush()
		return w.Error()
	}
	t := newTable(f.IO.Out, upper(res.Columns)...)
	for _, r := range res.Rows {
		cells := make([]any, len(r))
		for j, v := range r {
			cells[j] = cell(v)
		}
		t.row(cells...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "(%d rows)\n", len(res.Rows))
	return nil
}

// jsonValue keeps JSON valid: NaN and infinities become null.
func jsonValue(v any) any {
	if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
		return nil
	}
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return v
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}
