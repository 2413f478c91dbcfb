package duckdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

// validate checks a batch before anything is written, so that a bad batch
// leaves the warehouse untouched: every table exists and is writable, every
// row has one value per column of the type Batch documents, NOT NULL
// columns hold no NULL, rows that carry a run_id belong to b.RunID, and no
// two rows of a table share a key (ClickHouse would silently collapse them,
// DuckDB would keep both). Errors name the table, row index and column.
func validate(b *warehouse.Batch) error {
	if b == nil {
		return errors.New("nil batch")
	}
	if b.RunID == "" {
		return errors.New("batch has no run id")
	}
	if b.Ledger != nil && b.Ledger.RunID != b.RunID {
		return fmt.Errorf("ledger entry is for run %q, not the batch's %q", b.Ledger.RunID, b.RunID)
	}
	names := make([]string, 0, len(b.Rows))
	for name := range b.Rows {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t, ok := warehouse.Lookup(name)
		if !ok {
			return fmt.Errorf("table %s: not in the schema", name)
		}
		if t.Kind == warehouse.Ledger {
			return fmt.Errorf("table %s: not writable through batch rows (the ledger entry goes in Batch.Ledger)", name)
		}
		if err := validateRows(t, b.RunID, b.Rows[name]); err != nil {
			return err
		}
	}
	return nil
}

func validateRows(t warehouse.Table, runID string, rows [][]any) error {
	runCol := -1
	keyCols := make([]int, len(t.Key))
	for i, c := range t.Columns {
		if c.Name == "run_id" {
			runCol = i
		}
		for k, name := range t.Key {
			if c.Name == name {
				keyCols[k] = i
			}
		}
	}
	for r, row := range rows {
		if len(row) != len(t.Columns) {
			return fmt.Errorf("table %s row %d: %d values, want %d (%s)", t.Name, r, len(row), len(t.Columns), strings.Join(t.ColumnNames(), ", "))
		}
		for i, c := range t.Columns {
			if err := checkValue(c.Type, row[i]); err != nil {
				return fmt.Errorf("table %s row %d column %s: %w", t.Name, r, c.Name, err)
			}
		}
		if runCol >= 0 && row[runCol] != runID {
			return fmt.Errorf("table %s row %d: run_id %q is not the batch's run %q", t.Name, r, row[runCol], runID)
		}
	}
	if a, b, dup := duplicateKey(rows, keyCols); dup {
		return fmt.Errorf("table %s rows %d and %d have the same key (%s)", t.Name, a, b, strings.Join(t.Key, ", "))
	}
	return nil
}

// duplicateKey returns two rows with equal keys. The fast path hashes
// every key to 64 bits and sorts the hashes (no allocation per row, no
// million-entry map); only when two hashes are equal — a duplicate, or a
// collision — does it look for the rows with exact keys.
func duplicateKey(rows [][]any, cols []int) (int, int, bool) {
	var (
		h   maphash.Hash
		buf []byte
	)
	hashes := make([]uint64, len(rows))
	for r, row := range rows {
		h.Reset()
		for _, i := range cols {
			switch x := row[i].(type) {
			case string: // ambiguous concatenations only cost the slow path
				h.WriteString(x) //nolint:errcheck // never fails
				h.WriteByte(0)   //nolint:errcheck // never fails
			case int64:
				h.Write(binary.LittleEndian.AppendUint64(buf[:0], uint64(x))) //nolint:errcheck // never fails
			default:
				h.Write(appendKey(buf[:0], x)) //nolint:errcheck // never fails
			}
		}
		hashes[r] = h.Sum64()
	}
	slices.Sort(hashes)
	clash := false
	for i := 1; i < len(hashes) && !clash; i++ {
		clash = hashes[i] == hashes[i-1]
	}
	if !clash {
		return 0, 0, false
	}
	seen := make(map[string]int, len(rows))
	for r, row := range rows {
		buf = buf[:0]
		for _, i := range cols {
			buf = appendKey(buf, row[i])
		}
		if prev, dup := seen[string(buf)]; dup {
			return prev, r, true
		}
		seen[string(buf)] = r
	}
	return 0, 0, false
}

// checkValue reports whether v is what Batch documents for a column of
// type typ.
func checkValue(typ warehouse.Type, v any) error {
	ok := false
	switch typ {
	case warehouse.String:
		_, ok = v.(string)
	case warehouse.Int64:
		_, ok = v.(int64)
	case warehouse.Float64:
		_, ok = v.(float64)
	case warehouse.NFloat64:
		switch v.(type) {
		case nil, *float64, float64:
			ok = true
		}
	case warehouse.DateTime, warehouse.Date:
		_, ok = v.(time.Time)
	case warehouse.Bool:
		_, ok = v.(uint8)
	default:
		return fmt.Errorf("unknown column type %s", typ)
	}
	if !ok {
		if v == nil {
			return fmt.Errorf("NULL in a NOT NULL %s column", typ)
		}
		return fmt.Errorf("value %v of Go type %T does not fit %s", v, v, typ)
	}
	return nil
}

// appendKey appends an unambiguous encoding of a key value.
func appendKey(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		b = append(b, x...)
	case int64:
		b = strconv.AppendInt(b, x, 10)
	case uint8:
		b = strconv.AppendUint(b, uint64(x), 10)
	case float64:
		b = strconv.AppendUint(b, math.Float64bits(x), 16)
	case time.Time:
		b = strconv.AppendInt(b, x.Unix(), 10)
	default:
		b = fmt.Append(b, x)
	}
	return append(b, 0)
}

// dbValue converts a validated batch value to what the DuckDB appender
// takes: NULL-able floats dereferenced, times in UTC at the column's
// precision (DateTime is whole seconds on every engine).
func dbValue(typ warehouse.Type, v any) any {
	switch x := v.(type) {
	case *float64:
		if x == nil {
			return nil
		}
		return *x
	case time.Time:
		if typ != warehouse.Date && x.Location() == time.UTC && x.Nanosecond() == 0 {
			return v // as stored: no new allocation
		}
		x = x.UTC().Truncate(time.Second)
		if typ == warehouse.Date {
			x = time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC)
		}
		return x
	}
	return v
}
