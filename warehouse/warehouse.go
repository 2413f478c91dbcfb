package warehouse

import (
	"context"
	"time"
)

// SchemaVersion is the version of Tables; migrations bring a warehouse to it.
const SchemaVersion = 1

// Warehouse is an analytical store holding the schema. Two implementations
// (warehouse/duckdb, warehouse/clickhouse) pass one conformance suite
// (warehouse/warehousetest). Implementations are safe for concurrent use.
type Warehouse interface {
	// Migrate creates or upgrades the schema to SchemaVersion. It is
	// idempotent and records each applied migration.
	Migrate(ctx context.Context) error
	// Status reports the schema version and every table's row count. A
	// warehouse that was never migrated has version 0 and no tables.
	Status(ctx context.Context) (Status, error)
	// WriteRun writes every row of one run, exactly once in effect: after
	// any number of WriteRun calls for the same run (interrupted or
	// concurrent ones included) the tables hold exactly the rows of one
	// call — the rows are keyed (Table.Key) and a rewrite replaces them.
	// The ledger row, if present in b, is written last: it is the commit
	// point that makes the run count as ingested.
	WriteRun(ctx context.Context, b *Batch) error
	// Ledger returns the ledger rows, by run id.
	Ledger(ctx context.Context) (map[string]LedgerEntry, error)
	// Query runs a read-only SQL statement in the engine's dialect.
	Query(ctx context.Context, sql string, args ...any) (*Result, error)
	// Dialect names the engine: "duckdb" or "clickhouse".
	Dialect() string
	// Close releases the connection.
	Close() error
}

// Batch is every row derived from one run, by table.
type Batch struct {
	RunID string
	// Rows maps a table name to its rows; each row holds one value per
	// column of the table, in Table.Columns order, typed as the column:
	// string, int64, float64, *float64 (nil is NULL), time.Time (UTC),
	// or uint8 for Bool.
	Rows map[string][][]any
	// Ledger is written after every other row.
	Ledger *LedgerEntry
}

// Add appends a row to table.
func (b *Batch) Add(table string, row ...any) {
	if b.Rows == nil {
		b.Rows = map[string][][]any{}
	}
	b.Rows[table] = append(b.Rows[table], row)
}

// Count returns the number of rows in the batch, ledger excluded.
func (b *Batch) Count() int {
	n := 0
	for _, rs := range b.Rows {
		n += len(rs)
	}
	return n
}

// Ledger statuses.
const (
	Ingested    = "ingested"
	Quarantined = "quarantined"
)

// LedgerEntry is one row of ingest_ledger.
type LedgerEntry struct {
	RunID          string    `json:"run_id"`
	ManifestDigest string    `json:"artifact_manifest_digest"`
	Status         string    `json:"status"`
	Reason         string    `json:"reason,omitempty"`
	IngestVersion  int64     `json:"ingest_version"`
	IngestedAt     time.Time `json:"ingested_at"`
	Rows           int64     `json:"rows"`
}

// Row returns the entry as an ingest_ledger row.
func (e LedgerEntry) Row() []any {
	return []any{e.RunID, e.ManifestDigest, e.Status, e.Reason, e.IngestVersion, e.IngestedAt.UTC().Truncate(time.Second), e.Rows}
}

// Status describes a warehouse.
type Status struct {
	Dialect       string        `json:"dialect"`
	Location      string        `json:"location"`
	SchemaVersion int           `json:"schema_version"`
	Latest        int           `json:"latest_schema_version"`
	ServerVersion string        `json:"server_version"`
	Tables        []TableStatus `json:"tables"`
}

// TableStatus is one table's row count.
type TableStatus struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
}

// Result is a query's answer. Values are normalised across engines:
// integers as int64, floats as float64, text as string, times as
// time.Time in UTC, NULL as nil.
type Result struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}
