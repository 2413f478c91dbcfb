package warehouse

import (
	"fmt"
	"strings"
)

// Dialects.
const (
	DuckDB     = "duckdb"
	ClickHouse = "clickhouse"
)

// DDLOptions select what Render produces.
type DDLOptions struct {
	Dialect  string // DuckDB or ClickHouse
	Database string // ClickHouse database; ignored for DuckDB
	// Cluster, for ClickHouse, renders ON CLUSTER DDL: a replicated
	// <table>_local on every node and a Distributed <table> over them,
	// sharded by run_id (or the dimension key) so a run's rows stay on one
	// shard and ReplacingMergeTree can collapse re-ingested rows.
	Cluster string
}

// Render returns the CREATE statements of every table, in schema order.
func Render(tables []Table, o DDLOptions) ([]string, error) {
	var out []string
	for _, t := range tables {
		switch o.Dialect {
		case DuckDB:
			out = append(out, renderDuckDB(t))
		case ClickHouse:
			if o.Database == "" {
				return nil, fmt.Errorf("render %s: ClickHouse needs a database", t.Name)
			}
			out = append(out, renderClickHouse(t, o)...)
		default:
			return nil, fmt.Errorf("unknown dialect %q", o.Dialect)
		}
	}
	return out, nil
}

// DuckDBType maps a portable type to DuckDB.
func DuckDBType(t Type) string {
	switch t {
	case String:
		return "VARCHAR NOT NULL"
	case Int64:
		return "BIGINT NOT NULL"
	case Float64:
		return "DOUBLE NOT NULL"
	case NFloat64:
		return "DOUBLE"
	case DateTime:
		return "TIMESTAMP NOT NULL"
	case Date:
		return "DATE NOT NULL"
	case Bool:
		return "UTINYINT NOT NULL"
	}
	panic("warehouse: unknown type " + string(t))
}

func renderDuckDB(t Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s (%s): %s\n", t.Name, t.Kind, t.Doc)
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", t.Name)
	for i, c := range t.Columns {
		sep := ","
		if i == len(t.Columns)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    %s %s%s\n", c.Name, DuckDBType(c.Type), sep)
	}
	b.WriteString(")")
	return b.String()
}

func chColumns(b *strings.Builder, t Table) {
	b.WriteString(" (\n")
	for i, c := range t.Columns {
		sep := ","
		if i == len(t.Columns)-1 {
			sep = ""
		}
		fmt.Fprintf(b, "    %s %s%s\n", c.Name, c.Type, sep)
	}
	b.WriteString(")\n")
}

func chTail(b *strings.Builder, t Table) {
	if t.Partition != "" {
		fmt.Fprintf(b, "PARTITION BY toYYYYMM(%s)\n", t.Partition)
	}
	fmt.Fprintf(b, "ORDER BY (%s)", strings.Join(t.Key, ", "))
}

func renderClickHouse(t Table, o DDLOptions) []string {
	if o.Cluster == "" {
		var b strings.Builder
		fmt.Fprintf(&b, "-- %s (%s): %s\n", t.Name, t.Kind, t.Doc)
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s.%s", o.Database, t.Name)
		chColumns(&b, t)
		b.WriteString("ENGINE = ReplacingMergeTree()\n")
		chTail(&b, t)
		return []string{b.String()}
	}
	var local strings.Builder
	fmt.Fprintf(&local, "-- %s (%s): %s\n", t.Name, t.Kind, t.Doc)
	fmt.Fprintf(&local, "CREATE TABLE IF NOT EXISTS %s.%s_local ON CLUSTER %s", o.Database, t.Name, o.Cluster)
	chColumns(&local, t)
	fmt.Fprintf(&local, "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/%s/%s', '{replica}')\n", o.Database, t.Name)
	chTail(&local, t)
	shard := t.Key[0]
	dist := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s ON CLUSTER %s AS %s.%s_local\nENGINE = Distributed(%s, %s, %s_local, cityHash64(%s))",
		o.Database, t.Name, o.Cluster, o.Database, t.Name, o.Cluster, o.Database, t.Name, shard)
	return []string{local.String(), dist}
}
