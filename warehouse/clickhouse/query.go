package clickhouse

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"reflect"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/shopspring/decimal"

	"github.com/perfwh/perfwh/warehouse"
)

// Query runs a read-only statement (readonly=2: the session may change
// settings, not data) with the warehouse's database as the default, so
// tables can be named without it. Values are normalised as
// warehouse.Result says. Reads that must be exact add FINAL: a rewrite's
// replaced rows linger until merged (WriteRun merges the ones it makes).
func (w *Warehouse) Query(ctx context.Context, sql string, args ...any) (*warehouse.Result, error) {
	conn, err := w.queryConn()
	if err != nil {
		return nil, err
	}
	rctx := ch.Context(ctx, ch.WithSettings(ch.Settings{"readonly": 2}))
	rows, err := conn.Query(rctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	types := rows.ColumnTypes()
	res := &warehouse.Result{Columns: rows.Columns(), Rows: [][]any{}}
	for rows.Next() {
		dest := make([]any, len(types))
		for i, ct := range types {
			dest[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("query: row %d: %w", len(res.Rows), err)
		}
		row := make([]any, len(dest))
		for i, d := range dest {
			if row[i], err = normalise(reflect.ValueOf(d).Elem().Interface()); err != nil {
				return nil, fmt.Errorf("query: row %d column %s (%s): %w", len(res.Rows), res.Columns[i], types[i].DatabaseTypeName(), err)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return res, nil
}

// normalise maps a scanned value to the types warehouse.Result promises:
// int64, float64, string, time.Time (UTC), nil; arrays and tuples become
// []any of normalised values.
func normalise(v any) (any, error) {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, nil
		}
		return normalise(rv.Elem().Interface())
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		i, err := toInt64(x)
		if err != nil {
			return nil, fmt.Errorf("%w; cast it in SQL (toString or toFloat64)", err)
		}
		return i, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case time.Time:
		return x.UTC(), nil
	case decimal.Decimal:
		return x.InexactFloat64(), nil
	case big.Int:
		if x.IsInt64() {
			return x.Int64(), nil
		}
		return x.String(), nil
	case net.IP:
		return x.String(), nil
	case fmt.Stringer:
		return x.String(), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			var err error
			if out[i], err = normalise(rv.Index(i).Interface()); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// Ledger returns the ledger rows, by run id (the latest row of each run:
// read with FINAL).
func (w *Warehouse) Ledger(ctx context.Context) (map[string]warehouse.LedgerEntry, error) {
	lt, _ := warehouse.Lookup("ingest_ledger")
	rows, err := w.scanTyped(ctx, "SELECT "+strings.Join(lt.ColumnNames(), ", ")+" FROM "+w.name("ingest_ledger")+" FINAL", lt.Columns)
	if err != nil {
		return nil, fmt.Errorf("read %s.ingest_ledger: %w", w.cfg.Database, err)
	}
	out := make(map[string]warehouse.LedgerEntry, len(rows))
	for _, r := range rows {
		e := warehouse.LedgerEntry{
			RunID: r[0].(string), ManifestDigest: r[1].(string), Status: r[2].(string), Reason: r[3].(string),
			IngestVersion: r[4].(int64), IngestedAt: r[5].(time.Time), Rows: r[6].(int64),
		}
		out[e.RunID] = e
	}
	return out, nil
}
