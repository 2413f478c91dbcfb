package warehouse

import (
	"fmt"
	"strings"
)

// Markdown renders the schema reference (docs/schema.md).
func Markdown(tables []Table) string {
	var b strings.Builder
	b.WriteString("# Warehouse schema\n\n")
	b.WriteString("Generated from warehouse/schema.go by `go test ./warehouse -run TestGoldenDDL -update`; do not edit.\n\n")
	fmt.Fprintf(&b, "Schema version %d. Every fact row carries `run_id`, `workload_spec_digest` and `artifact_manifest_digest`, ", SchemaVersion)
	b.WriteString("so it can be walked back to the raw evidence; dimension rows are keyed by the sha256 of their content. ")
	b.WriteString("The DDL for each engine is under sql/ddl/. On ClickHouse every table is a ReplacingMergeTree ordered by its key: ")
	b.WriteString("rows re-written with the same key collapse, and `FINAL` reads them collapsed.\n\n")
	b.WriteString("Types: `String`, `Int64`, `Float64`, `Nullable(Float64)` (NULL when not measured), `DateTime` (UTC, seconds), `UInt8` (0/1). ")
	b.WriteString("Latencies are in milliseconds (`_ms`), rates per second (`_per_s`), sizes in bytes; percentiles are exact, nearest rank, over the measured (non-warmup) samples.\n\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "## %s\n\n%s (%s). Key: `%s`.\n\n| column | type | meaning |\n|---|---|---|\n", t.Name, t.Doc, t.Kind, strings.Join(t.Key, ", "))
		for _, c := range t.Columns {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Name, c.Type, c.Doc)
		}
		b.WriteString("\n")
	}
	return b.String()
}
