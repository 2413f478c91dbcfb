package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/perfwh/perfwh/warehouse"
)

// mutationTimeout bounds the wait for a DELETE mutation when ctx has no
// deadline of its own.
var mutationTimeout = 10 * time.Minute

// deleteWhere deletes table's rows matching cond with an ALTER ... DELETE
// mutation (ClickHouse 1.1.54388 and newer, so 18.16) and waits until the
// server reports every mutation of the table done: mutations are
// asynchronous, and 18.16 has no mutations_sync.
func (w *Warehouse) deleteWhere(ctx context.Context, table, cond string) error {
	if err := w.conn.Exec(ctx, "ALTER TABLE "+w.local(table)+" DELETE WHERE "+cond); err != nil {
		return fmt.Errorf("delete from %s: %w", table, err)
	}
	return w.waitMutations(ctx, table)
}

func (w *Warehouse) waitMutations(ctx context.Context, table string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, mutationTimeout)
		defer cancel()
	}
	from, tbl := "system.mutations", table
	if w.cfg.Cluster != "" {
		from, tbl = "cluster('"+w.cfg.Cluster+"', system, mutations)", table+"_local"
	}
	q := "SELECT count() FROM " + from + " WHERE database = ? AND table = ? AND is_done = 0"
	pause := 5 * time.Millisecond
	for {
		n, err := w.count(ctx, q, w.cfg.Database, tbl)
		if err != nil {
			return fmt.Errorf("wait for the mutations of %s: %w", table, err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the mutations of %s: %d not done: %w", table, n, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// optimize collapses duplicate keys of table physically with OPTIMIZE ...
// FINAL: in the partitions holding run's rows, or every partition when run
// is empty. optimize_throw_if_noop makes a merge the server could not
// start (another merge, often a racing writer's OPTIMIZE, holds the parts)
// an error that errBusy reports; the callers count again and retry.
func (w *Warehouse) optimize(ctx context.Context, table, run string) error {
	var stmts []string
	if w.cfg.Cluster != "" {
		stmts = []string{"OPTIMIZE TABLE " + w.local(table) + " FINAL"}
	} else {
		q := "SELECT DISTINCT partition_id FROM system.parts WHERE active AND database = " + literal(w.cfg.Database) + " AND table = " + literal(table)
		if run != "" {
			q = "SELECT DISTINCT _partition_id FROM " + w.name(table) + " WHERE run_id = " + literal(run)
		}
		ids, err := w.strings(ctx, q)
		if err != nil {
			return fmt.Errorf("optimize %s: find partitions: %w", table, err)
		}
		for _, id := range ids {
			stmts = append(stmts, "OPTIMIZE TABLE "+w.name(table)+" PARTITION ID "+literal(id)+" FINAL")
		}
	}
	octx := ch.Context(ctx, ch.WithSettings(ch.Settings{"optimize_throw_if_noop": 1}))
	var busy error
	for _, s := range stmts {
		if err := w.conn.Exec(octx, s); err != nil {
			if !errBusy(err) {
				return fmt.Errorf("%s: %w", s, err)
			}
			busy = fmt.Errorf("%s: %w", s, err)
		}
	}
	return busy
}

// errBusy reports whether err is ClickHouse's CANNOT_ASSIGN_OPTIMIZE (388):
// the parts are being merged already.
func errBusy(err error) bool {
	var e *ch.Exception
	return errors.As(err, &e) && e.Code == 388
}

// retry runs step until done says so, pausing with backoff while the
// server is busy merging, for up to optimizeTimeout.
func retry(ctx context.Context, what string, done func() (bool, error), step func() error) error {
	deadline := time.Now().Add(optimizeTimeout)
	pause := 10 * time.Millisecond
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		err = step()
		switch {
		case err == nil:
			continue
		case !errBusy(err):
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("%s: the server stayed busy merging for %s: %w", what, optimizeTimeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// optimizeTimeout bounds how long a write waits for the server to accept
// an OPTIMIZE while other merges hold the parts.
var optimizeTimeout = 5 * time.Minute

// converge optimizes table until it holds want physical rows of run. Fewer
// than want means a racing writer of the same run with other keys removed
// some of ours; for the ledger (want 1, found 0) it means a racing writer
// un-committed the run and will commit it itself, which is not an error.
func (w *Warehouse) converge(ctx context.Context, t warehouse.Table, run string, want int64) error {
	q := "SELECT count() FROM " + w.name(t.Name) + " WHERE run_id = " + literal(run)
	rounds := 0
	return retry(ctx, "collapse "+t.Name, func() (bool, error) {
		n, err := w.count(ctx, q)
		if err != nil {
			return false, fmt.Errorf("count the run's rows in %s: %w", t.Name, err)
		}
		switch {
		case n == want:
			return true, nil
		case n < want && t.Name == "ingest_ledger":
			return true, nil
		case n < want:
			return false, fmt.Errorf("%s holds %d rows of the run, want %d: a concurrent write of the same run with other keys removed some; write it again", t.Name, n, want)
		case rounds == 10:
			return false, fmt.Errorf("%s still holds %d rows of the run after %d OPTIMIZE FINAL, want %d", t.Name, n, rounds, want)
		}
		return false, nil
	}, func() error {
		err := w.optimize(ctx, t.Name, run)
		if err == nil {
			rounds++
		}
		return err
	})
}

// convergeDim optimizes a dimension table until each key of tr is stored
// once: after a changed row, or a racing writer's copy of a new one.
func (w *Warehouse) convergeDim(ctx context.Context, tr *tableRows) error {
	t := tr.table
	tuples := make([][]any, tr.n)
	for r := range tuples {
		tuples[r] = tr.key(r)
	}
	rounds := 0
	return retry(ctx, "collapse "+t.Name, func() (bool, error) {
		var n int64
		for _, chunk := range chunkTuples(tuples, 64<<10) {
			c, err := w.count(ctx, "SELECT count() FROM "+w.name(t.Name)+" WHERE "+keyExpr(t)+" IN ("+chunk+")")
			if err != nil {
				return false, fmt.Errorf("count %s rows: %w", t.Name, err)
			}
			n += c
		}
		if n > int64(tr.n) && rounds == 10 {
			return false, fmt.Errorf("%s still stores duplicate keys after %d OPTIMIZE FINAL", t.Name, rounds)
		}
		return n <= int64(tr.n), nil
	}, func() error {
		err := w.optimize(ctx, t.Name, "")
		if err == nil {
			rounds++
		}
		return err
	})
}

// strings runs a query returning one String column.
func (w *Warehouse) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := w.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// runKeys returns the distinct keys of run's rows in t, typed as convert
// types them.
func (w *Warehouse) runKeys(ctx context.Context, t warehouse.Table, run string) ([][]any, error) {
	defs := make([]warehouse.Column, len(t.Key))
	for i, k := range t.Key {
		defs[i], _ = t.Column(k)
	}
	q := "SELECT DISTINCT " + strings.Join(t.Key, ", ") + " FROM " + w.name(t.Name) + " WHERE run_id = " + literal(run)
	out, err := w.scanTyped(ctx, q, defs)
	if err != nil {
		return nil, fmt.Errorf("read the run's keys in %s: %w", t.Name, err)
	}
	return out, nil
}

// scanTyped runs q, whose result columns are defs, and returns its rows
// typed as convert types them.
func (w *Warehouse) scanTyped(ctx context.Context, q string, defs []warehouse.Column) ([][]any, error) {
	rows, err := w.conn.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		dest := make([]any, len(defs))
		for i, d := range defs {
			switch d.Type {
			case warehouse.String:
				dest[i] = new(string)
			case warehouse.Int64:
				dest[i] = new(int64)
			case warehouse.Float64:
				dest[i] = new(float64)
			case warehouse.NFloat64:
				dest[i] = new(*float64)
			case warehouse.DateTime, warehouse.Date:
				dest[i] = new(time.Time)
			case warehouse.Bool:
				dest[i] = new(uint8)
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]any, len(defs))
		for i, d := range dest {
			switch x := d.(type) {
			case *string:
				row[i] = *x
			case *int64:
				row[i] = *x
			case *float64:
				row[i] = *x
			case **float64:
				row[i] = *x
			case *time.Time:
				row[i] = x.UTC()
			case *uint8:
				row[i] = *x
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// newDimRows returns the rows of a dimension table that the warehouse does
// not hold yet, or holds with other content (keys are unique in tr:
// prepare checked). Dimensions are keyed by the digest of their content,
// so usually every row is either new or held unchanged, and re-ingesting a
// run inserts none.
func (w *Warehouse) newDimRows(ctx context.Context, tr *tableRows) (*tableRows, error) {
	t := tr.table
	tuples := make([][]any, tr.n)
	for r := range tuples {
		tuples[r] = tr.key(r)
	}
	held := map[string]string{} // encoded key -> encoded row
	keyIdx := make([]int, len(t.Key))
	for i, k := range t.Key {
		keyIdx[i] = columnIndex(t, k)
	}
	for _, chunk := range chunkTuples(tuples, 64<<10) {
		q := "SELECT " + strings.Join(t.ColumnNames(), ", ") + " FROM " + w.name(t.Name) + " FINAL WHERE " + keyExpr(t) + " IN (" + chunk + ")"
		rows, err := w.scanTyped(ctx, q, t.Columns)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", t.Name, err)
		}
		for _, row := range rows {
			var k []byte
			for _, j := range keyIdx {
				k = encode(k, row[j])
			}
			held[string(k)] = string(encodeRow(nil, row))
		}
	}
	var pick []int
	for r, k := range tuples {
		if have, ok := held[string(encodeRow(nil, k))]; !ok || have != string(tr.rowEncoding(r)) {
			pick = append(pick, r)
		}
	}
	return tr.subset(pick), nil
}

// keyExpr is t's key as an IN operand: a column or a tuple of columns.
func keyExpr(t warehouse.Table) string {
	if len(t.Key) == 1 {
		return t.Key[0]
	}
	return "(" + strings.Join(t.Key, ", ") + ")"
}

func (tr *tableRows) rowEncoding(r int) []byte {
	var b []byte
	for _, c := range tr.cols {
		b = encode(b, c.value(r))
	}
	return b
}

// subset returns the rows of tr at idx.
func (tr *tableRows) subset(idx []int) *tableRows {
	rows := make([][]any, len(idx))
	for i, r := range idx {
		row := make([]any, len(tr.cols))
		for j, c := range tr.cols {
			row[j] = c.value(r)
		}
		rows[i] = row
	}
	out, err := convert(tr.table, rows)
	if err != nil {
		panic("clickhouse: re-converting converted rows: " + err.Error())
	}
	return out
}
