package duckdb

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	duckdb "github.com/marcboeker/go-duckdb/v2"

	"github.com/perfwh/perfwh/warehouse"
)

// Query runs one SQL statement in DuckDB's dialect (read_parquet and the
// other table functions included) and returns its rows with values
// normalised as warehouse.Result documents; see normalize. DuckDB does not
// enforce that the statement is read-only: a statement that writes runs
// as written, outside WriteRun's serialisation. Callers offering Query to
// people (perfwh sql) should say so.
func (w *Warehouse) Query(ctx context.Context, query string, args ...any) (*warehouse.Result, error) {
	rows, err := w.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", w.path, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("query %s: columns: %w", w.path, err)
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("query %s: column types: %w", w.path, err)
	}
	res := &warehouse.Result{Columns: cols, Rows: [][]any{}}
	ptrs := make([]any, len(cols))
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("query %s: row %d: %w", w.path, len(res.Rows), err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok && len(b) == 16 && types[i].DatabaseTypeName() == "UUID" {
				u := duckdb.UUID(b)
				v = u.String()
			}
			vals[i] = normalize(v)
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query %s: %w", w.path, err)
	}
	return res, nil
}

// normalize maps a value of the go-duckdb driver to the engine-neutral
// type: every integer (HUGEINT from sum() included) to int64, or to
// float64 when it does not fit; floats and DECIMAL to float64; BOOLEAN to
// int64 0 or 1 (ClickHouse has no boolean: its comparisons give UInt8);
// VARCHAR, BLOB and UUID (the canonical text form) to string; TIMESTAMP and DATE to time.Time in
// UTC; NULL to nil; LIST elements recursively. Other types (INTERVAL,
// MAP, STRUCT) pass through as the driver returns them.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return v
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return float64(x)
		}
		return int64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case float32:
		return float64(x)
	case duckdb.Decimal:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return x.Float64()
		}
		return f
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case []byte:
		return string(x)
	case duckdb.UUID:
		return x.String()
	case *duckdb.UUID:
		return x.String()
	case time.Time:
		return x.UTC()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// Ledger returns every ingest_ledger row by run id.
func (w *Warehouse) Ledger(ctx context.Context) (map[string]warehouse.LedgerEntry, error) {
	rows, err := w.db.QueryContext(ctx,
		`SELECT run_id, artifact_manifest_digest, status, reason, ingest_version, ingested_at, rows FROM ingest_ledger`)
	if err != nil {
		return nil, fmt.Errorf("read the ingest ledger of %s (is it migrated?): %w", w.path, err)
	}
	defer rows.Close()
	out := map[string]warehouse.LedgerEntry{}
	for rows.Next() {
		var e warehouse.LedgerEntry
		if err := rows.Scan(&e.RunID, &e.ManifestDigest, &e.Status, &e.Reason, &e.IngestVersion, &e.IngestedAt, &e.Rows); err != nil {
			return nil, fmt.Errorf("read the ingest ledger of %s: %w", w.path, err)
		}
		e.IngestedAt = e.IngestedAt.UTC()
		out[e.RunID] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the ingest ledger of %s: %w", w.path, err)
	}
	return out, nil
}
