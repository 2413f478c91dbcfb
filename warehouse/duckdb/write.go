package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/marcboeker/go-duckdb/v2"

	"github.com/perfwh/perfwh/warehouse"
)

// writeFunc inserts the validated rows of one table inside tx; conn is the
// connection tx runs on (for the driver's Appender).
type writeFunc func(ctx context.Context, tx *sql.Tx, conn *sql.Conn, t warehouse.Table, rows [][]any) error

// WriteRun replaces everything the warehouse holds for b.RunID with the
// rows of b, in one transaction:
//
//  1. the batch is validated before anything is touched;
//  2. every table keyed by run (the facts, artifact_lineage_dim,
//     ingest_ledger) loses the run's rows — also tables b has no rows for,
//     so a rewrite with fewer rows leaves exactly its own;
//  3. dimension rows with the key of a batch row are deleted (dimensions
//     are shared between runs and keyed by content digest);
//  4. the rows are appended, table by table, with explicit column lists;
//  5. the ledger row is inserted last, and the transaction commits.
//
// A failure or a cancelled ctx rolls everything back. Writes of all
// Warehouses of this process on the file are serialised, and DuckDB admits
// one writing process per file, so concurrent calls for the same run end
// with the rows of exactly one of them.
func (w *Warehouse) WriteRun(ctx context.Context, b *warehouse.Batch) error {
	if err := validate(b); err != nil {
		if b != nil {
			return fmt.Errorf("write run %s to %s: invalid batch: %w", b.RunID, w.path, err)
		}
		return fmt.Errorf("write to %s: invalid batch: %w", w.path, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeRun(ctx, b); err != nil {
		return fmt.Errorf("write run %s to %s: %w", b.RunID, w.path, err)
	}
	return nil
}

func (w *Warehouse) writeRun(ctx context.Context, b *warehouse.Batch) error {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for _, t := range warehouse.Tables {
		switch {
		case t.Name == migrationsTable:
		case keyedByRun(t):
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.Name+` WHERE run_id = ?`, b.RunID); err != nil {
				return fmt.Errorf("delete the run's rows from %s: %w", t.Name, err)
			}
		case t.Kind == warehouse.Dim:
			if err := deleteKeys(ctx, tx, t, b.Rows[t.Name]); err != nil {
				return err
			}
		}
	}
	for _, t := range warehouse.Tables {
		if rows := b.Rows[t.Name]; len(rows) > 0 {
			if err := w.write(ctx, tx, conn, t, rows); err != nil {
				return fmt.Errorf("insert %d rows into %s: %w", len(rows), t.Name, err)
			}
		}
	}
	if b.Ledger != nil {
		lt, _ := warehouse.Lookup("ingest_ledger")
		row := b.Ledger.Row()
		for i, c := range lt.Columns {
			row[i] = dbValue(c.Type, row[i])
		}
		if _, err := tx.ExecContext(ctx, insertSQL(lt, 1), row...); err != nil {
			return fmt.Errorf("insert the ledger row: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// keyedByRun reports whether a run's rows of t are replaced wholesale.
func keyedByRun(t warehouse.Table) bool {
	return t.Kind == warehouse.Fact || (len(t.Key) > 0 && t.Key[0] == "run_id")
}

// deleteKeys deletes the rows of dimension t that have the key of one of
// rows: the table has no PRIMARY KEY (it is analytical, and DuckDB's
// indexes slow bulk writes), so "insert or replace" is delete + insert.
func deleteKeys(ctx context.Context, tx *sql.Tx, t warehouse.Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	idx := make([]int, len(t.Key))
	conds := make([]string, len(t.Key))
	for k, name := range t.Key {
		for i, c := range t.Columns {
			if c.Name == name {
				idx[k] = i
			}
		}
		conds[k] = name + " = ?"
	}
	stmt, err := tx.PrepareContext(ctx, `DELETE FROM `+t.Name+` WHERE `+strings.Join(conds, " AND "))
	if err != nil {
		return fmt.Errorf("delete from %s by key: %w", t.Name, err)
	}
	defer stmt.Close()
	args := make([]any, len(idx))
	for r, row := range rows {
		for k, i := range idx {
			args[k] = dbValue(t.Columns[i].Type, row[i])
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("delete from %s the key of row %d: %w", t.Name, r, err)
		}
	}
	return nil
}

// insertSQL is a prepared INSERT of n rows with an explicit column list.
func insertSQL(t warehouse.Table, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + t.Name + " (" + strings.Join(t.ColumnNames(), ", ") + ") VALUES ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ") + ")"
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}

// appendRows writes rows with DuckDB's query appender: it batches rows
// into column vectors and, inside the open transaction, runs
// INSERT INTO t (every column) SELECT … FROM the appended vectors. Columns
// whose value is the same in every row (run_id, the digests,
// ingest_version, ingested_at) go into that SELECT as literals instead of
// through the appender, which copies every string value through cgo.
// bench_test.go measures this against prepared multi-row INSERTs.
func appendRows(ctx context.Context, _ *sql.Tx, conn *sql.Conn, t warehouse.Table, rows [][]any) error {
	sel := make([]string, len(t.Columns))
	var (
		names []string
		types []duckdb.TypeInfo
		vary  []int // columns that go through the appender
	)
	for i, c := range t.Columns {
		if lit, ok := constantLiteral(c.Type, rows, i); ok {
			sel[i] = lit
			continue
		}
		ti, err := duckdb.NewTypeInfo(duckType(c.Type))
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		sel[i], names, types, vary = c.Name, append(names, c.Name), append(types, ti), append(vary, i)
	}
	if len(vary) == 0 { // one row, or equal rows (validate refuses those): append it whole
		return appendAll(ctx, conn, t, rows)
	}
	query := "INSERT INTO " + t.Name + " (" + strings.Join(t.ColumnNames(), ", ") + ") SELECT " + strings.Join(sel, ", ") + " FROM appended_data"
	return conn.Raw(func(dc any) error {
		a, err := duckdb.NewQueryAppender(dc.(driver.Conn), query, "appended_data", types, names)
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(vary))
		for r, row := range rows {
			if r%4096 == 0 && ctx.Err() != nil {
				a.Close() //nolint:errcheck // the transaction is rolled back
				return ctx.Err()
			}
			for k, i := range vary {
				vals[k] = dbValue(t.Columns[i].Type, row[i])
			}
			if err := a.AppendRow(vals...); err != nil {
				a.Close() //nolint:errcheck // the transaction is rolled back
				return fmt.Errorf("row %d: %w", r, err)
			}
		}
		return a.Close()
	})
}

// appendAll appends every column of rows through the query appender.
func appendAll(ctx context.Context, conn *sql.Conn, t warehouse.Table, rows [][]any) error {
	types := make([]duckdb.TypeInfo, len(t.Columns))
	for i, c := range t.Columns {
		ti, err := duckdb.NewTypeInfo(duckType(c.Type))
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		types[i] = ti
	}
	cols := strings.Join(t.ColumnNames(), ", ")
	query := "INSERT INTO " + t.Name + " (" + cols + ") SELECT " + cols + " FROM appended_data"
	return conn.Raw(func(dc any) error {
		a, err := duckdb.NewQueryAppender(dc.(driver.Conn), query, "appended_data", types, t.ColumnNames())
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(t.Columns))
		for r, row := range rows {
			if ctx.Err() != nil {
				a.Close() //nolint:errcheck // the transaction is rolled back
				return ctx.Err()
			}
			for i, c := range t.Columns {
				vals[i] = dbValue(c.Type, row[i])
			}
			if err := a.AppendRow(vals...); err != nil {
				a.Close() //nolint:errcheck // the transaction is rolled back
				return fmt.Errorf("row %d: %w", r, err)
			}
		}
		return a.Close()
	})
}

// constantLiteral returns column i as a typed SQL literal when every row
// (two or more) holds the same string, integer or time in it. Strings with
// a NUL byte or invalid UTF-8, and times outside years 1..9999, are left to
// the appender.
func constantLiteral(typ warehouse.Type, rows [][]any, i int) (string, bool) {
	if len(rows) < 2 {
		return "", false
	}
	v := rows[0][i]
	for _, row := range rows[1:] {
		if row[i] != v {
			return "", false
		}
	}
	switch x := dbValue(typ, v).(type) {
	case string:
		if typ != warehouse.String || strings.IndexByte(x, 0) >= 0 || !utf8.ValidString(x) {
			return "", false
		}
		return "CAST('" + strings.ReplaceAll(x, "'", "''") + "' AS VARCHAR)", true
	case int64:
		return "CAST(" + strconv.FormatInt(x, 10) + " AS BIGINT)", true
	case time.Time:
		if typ != warehouse.DateTime || x.Year() < 1 || x.Year() > 9999 {
			return "", false
		}
		return "CAST('" + x.Format("2006-01-02 15:04:05") + "' AS TIMESTAMP)", true
	}
	return "", false
}

func duckType(t warehouse.Type) duckdb.Type {
	switch t {
	case warehouse.String:
		return duckdb.TYPE_VARCHAR
	case warehouse.Int64:
		return duckdb.TYPE_BIGINT
	case warehouse.Float64, warehouse.NFloat64:
		return duckdb.TYPE_DOUBLE
	case warehouse.DateTime:
		return duckdb.TYPE_TIMESTAMP
	case warehouse.Date:
		return duckdb.TYPE_DATE
	case warehouse.Bool:
		return duckdb.TYPE_UTINYINT
	}
	panic("duckdb: unknown column type " + string(t))
}
