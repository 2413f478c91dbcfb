package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfwh/perfwh/warehouse"
)

// insertBlockRows is how many rows go into one native block. The server
// squashes the blocks of an INSERT into parts of min_insert_block_size_rows
// (1M) itself, so small blocks cost no extra parts; they let the server
// parse one block while the next is encoded, and keep the client's buffers
// small. bench/clickhouse-ingest measured 4k-32k rows as fastest, and 1M
// rows (one block per table) about twice as slow.
var insertBlockRows = 1 << 15

// runScoped reports whether t's rows belong to one run (t has run_id): a
// rewrite of the run replaces exactly these rows. Other tables are
// dimensions keyed by the digest of their content, shared between runs.
func runScoped(t warehouse.Table) bool {
	_, ok := t.Column("run_id")
	return ok
}

// WriteRun writes every row of b and then the ledger row, exactly once in
// effect; see the package documentation for how, without transactions.
func (w *Warehouse) WriteRun(ctx context.Context, b *warehouse.Batch) error {
	if b == nil || b.RunID == "" {
		return fmt.Errorf("write run: batch without run id")
	}
	run := b.RunID
	// 1. Validate and convert everything before sending anything.
	data, ledger, err := prepare(b)
	if err != nil {
		return fmt.Errorf("write run %s: %w", run, err)
	}
	var scoped []warehouse.Table
	for _, t := range warehouse.Tables {
		if runScoped(t) {
			scoped = append(scoped, t)
		}
	}
	// 2. Did an earlier attempt (or a racing writer) leave rows of this
	// run? Then un-commit it first: without its ledger row the run counts
	// as not ingested until this call commits again, so a crash from here
	// on leaves a run that ingest retries, never a half run.
	pre, err := w.runCounts(ctx, run, scoped)
	if err != nil {
		return fmt.Errorf("write run %s: %w", run, err)
	}
	if pre["ingest_ledger"] > 0 {
		if err := w.deleteWhere(ctx, "ingest_ledger", "run_id = "+literal(run)); err != nil {
			return fmt.Errorf("write run %s: un-commit the ledger row: %w", run, err)
		}
	}
	// 3. Dimensions: only rows that are new or changed.
	for _, t := range warehouse.Tables {
		tr := data[t.Name]
		if tr == nil || runScoped(t) {
			continue
		}
		fresh, err := w.newDimRows(ctx, tr)
		if err != nil {
			return fmt.Errorf("write run %s: %w", run, err)
		}
		if err := w.insert(ctx, fresh); err != nil {
			return fmt.Errorf("write run %s: %w", run, err)
		}
		if fresh.n > 0 {
			// A changed row, or a racing writer that inserted the same new
			// row, leaves a duplicate key: collapse it.
			if err := w.convergeDim(ctx, fresh); err != nil {
				return fmt.Errorf("write run %s: %w", run, err)
			}
		}
	}
	// 3. The run's rows, every table, in schema order.
	for _, t := range scoped {
		if tr := data[t.Name]; tr != nil {
			if err := w.insert(ctx, tr); err != nil {
				return fmt.Errorf("write run %s: %w", run, err)
			}
		}
	}
	// 4. Now that every row is in: where the table holds more rows of the
	// run than this batch (an earlier write, a racing one, or stale keys
	// an earlier derivation produced), remove the stale keys and collapse
	// the duplicates, so the physical rows equal one clean write.
	facts := scoped[:0:0]
	for _, t := range scoped {
		if t.Name != "ingest_ledger" {
			facts = append(facts, t)
		}
	}
	post, err := w.runCounts(ctx, run, facts)
	if err != nil {
		return fmt.Errorf("write run %s: %w", run, err)
	}
	for _, t := range facts {
		tr := data[t.Name]
		n := 0
		if tr != nil {
			n = tr.n
		}
		if post[t.Name] == int64(n) {
			continue
		}
		if err := w.clean(ctx, t, run, tr); err != nil {
			return fmt.Errorf("write run %s: %w", run, err)
		}
	}
	// 5. The ledger row, last: the commit point.
	if ledger != nil {
		if err := w.insert(ctx, ledger); err != nil {
			return fmt.Errorf("write run %s: ledger: %w", run, err)
		}
		lt, _ := warehouse.Lookup("ingest_ledger")
		if err := w.converge(ctx, lt, run, 1); err != nil {
			return fmt.Errorf("write run %s: ledger: %w", run, err)
		}
	}
	return nil
}

// prepare validates b and converts its rows column-wise.
func prepare(b *warehouse.Batch) (map[string]*tableRows, *tableRows, error) {
	for name := range b.Rows {
		if t, ok := warehouse.Lookup(name); !ok {
			return nil, nil, fmt.Errorf("unknown table %q", name)
		} else if t.Kind == warehouse.Ledger {
			return nil, nil, fmt.Errorf("table %s: ledger rows go in Batch.Ledger, not Batch.Rows", name)
		}
	}
	data := map[string]*tableRows{}
	for _, t := range warehouse.Tables { // schema order: the same error first every time
		name, rows := t.Name, b.Rows[t.Name]
		if len(rows) == 0 {
			continue
		}
		tr, err := convert(t, rows)
		if err != nil {
			return nil, nil, err
		}
		if err := tr.checkKeys(); err != nil {
			return nil, nil, err
		}
		if runScoped(t) {
			idx := columnIndex(t, "run_id")
			for i, id := range tr.cols[idx].strs {
				if id != b.RunID {
					return nil, nil, fmt.Errorf("%s row %d: run_id %q, but the batch is run %q", name, i, id, b.RunID)
				}
			}
		}
		data[name] = tr
	}
	if b.Ledger == nil {
		return data, nil, nil
	}
	if b.Ledger.RunID != b.RunID {
		return nil, nil, fmt.Errorf("ledger row for run %q in the batch of run %q", b.Ledger.RunID, b.RunID)
	}
	lt, _ := warehouse.Lookup("ingest_ledger")
	ledger, err := convert(lt, [][]any{b.Ledger.Row()})
	if err != nil {
		return nil, nil, err
	}
	return data, ledger, nil
}

func columnIndex(t warehouse.Table, name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// insert sends tr's rows with one INSERT with an explicit column list
// (18.16 needs it), column-wise, insertBlockRows rows per block.
func (w *Warehouse) insert(ctx context.Context, tr *tableRows) error {
	if tr == nil || tr.n == 0 {
		return nil
	}
	t := tr.table
	q := "INSERT INTO " + w.name(t.Name) + " (" + strings.Join(t.ColumnNames(), ", ") + ")"
	batch, err := w.conn.PrepareBatch(w.insertCtx(ctx), q)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", t.Name, err)
	}
	defer batch.Close()
	for from := 0; from < tr.n; from += insertBlockRows {
		to := min(from+insertBlockRows, tr.n)
		for j, c := range tr.cols {
			if err := batch.Column(j).Append(c.window(from, to).slice()); err != nil {
				return fmt.Errorf("insert into %s: rows %d..%d, column %s: %w", t.Name, from, to-1, c.def.Name, err)
			}
		}
		if to < tr.n {
			if err := batch.Flush(); err != nil {
				return fmt.Errorf("insert into %s: rows %d..%d: %w", t.Name, from, to-1, err)
			}
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("insert into %s: %d rows: %w", t.Name, tr.n, err)
	}
	return nil
}

// runCounts returns the physical row count (no FINAL: duplicates count) of
// run in each table, in one query.
func (w *Warehouse) runCounts(ctx context.Context, run string, tables []warehouse.Table) (map[string]int64, error) {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = fmt.Sprintf("SELECT %s AS t, count() AS n FROM %s WHERE run_id = %s", literal(t.Name), w.name(t.Name), literal(run))
	}
	rows, err := w.conn.Query(ctx, strings.Join(parts, " UNION ALL "))
	if err != nil {
		return nil, fmt.Errorf("count the run's rows (is the warehouse migrated?): %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var t string
		var n uint64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, fmt.Errorf("count the run's rows: %w", err)
		}
		out[t] = int64(n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count the run's rows: %w", err)
	}
	return out, nil
}

// clean makes t hold exactly the keys of tr (none when tr is nil) for run,
// once each physically: it deletes stale keys with a mutation and
// collapses duplicates with OPTIMIZE ... FINAL.
func (w *Warehouse) clean(ctx context.Context, t warehouse.Table, run string, tr *tableRows) error {
	runIs := "run_id = " + literal(run)
	if tr == nil || tr.n == 0 {
		if err := w.deleteWhere(ctx, t.Name, runIs); err != nil {
			return fmt.Errorf("remove the run's old rows from %s: %w", t.Name, err)
		}
		return w.converge(ctx, t, run, 0)
	}
	ours := tr.keySet()
	have, err := w.runKeys(ctx, t, run)
	if err != nil {
		return err
	}
	var stale [][]any
	for _, k := range have {
		if _, ok := ours[string(encodeRow(nil, k))]; !ok {
			stale = append(stale, k)
		}
	}
	for _, chunk := range chunkTuples(stale, 64<<10) {
		if err := w.deleteWhere(ctx, t.Name, runIs+" AND "+keyExpr(t)+" IN ("+chunk+")"); err != nil {
			return fmt.Errorf("remove %d stale keys of the run from %s: %w", len(stale), t.Name, err)
		}
	}
	return w.converge(ctx, t, run, int64(len(ours)))
}

// keySet returns the encoded keys of tr's rows.
func (tr *tableRows) keySet() map[string]struct{} {
	idx := make([]int, len(tr.table.Key))
	for i, k := range tr.table.Key {
		idx[i] = columnIndex(tr.table, k)
	}
	out := make(map[string]struct{}, tr.n)
	var b []byte
	for r := 0; r < tr.n; r++ {
		b = b[:0]
		for _, j := range idx {
			b = encode(b, tr.cols[j].value(r))
		}
		out[string(b)] = struct{}{}
	}
	return out
}

func encodeRow(b []byte, vals []any) []byte {
	for _, v := range vals {
		b = encode(b, v)
	}
	return b
}

// tuple renders values as a SQL tuple, or a lone literal for one value.
func tuple(vals []any) string {
	if len(vals) == 1 {
		return literal(vals[0])
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = literal(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// chunkTuples renders tuples as comma-separated IN lists of at most about
// maxBytes each (ClickHouse's max_query_size is 256 KiB by default).
func chunkTuples(tuples [][]any, maxBytes int) []string {
	var out []string
	var b strings.Builder
	for _, t := range tuples {
		s := tuple(t)
		if b.Len() > 0 && b.Len()+len(s) > maxBytes {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}
