package clickhouse

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

// DateTime's range in ClickHouse (UInt32 seconds since the epoch).
var (
	minDateTime = time.Unix(0, 0).UTC()
	maxDateTime = time.Unix(math.MaxUint32, 0).UTC()
)

// kind is a column type as a small integer, for the per-value switches.
type kind uint8

const (
	kString kind = iota
	kInt64
	kFloat64
	kNFloat64
	kDateTime
	kDate
	kBool
)

func kindOf(t warehouse.Type) (kind, bool) {
	switch t {
	case warehouse.String:
		return kString, true
	case warehouse.Int64:
		return kInt64, true
	case warehouse.Float64:
		return kFloat64, true
	case warehouse.NFloat64:
		return kNFloat64, true
	case warehouse.DateTime:
		return kDateTime, true
	case warehouse.Date:
		return kDate, true
	case warehouse.Bool:
		return kBool, true
	}
	return 0, false
}

// column holds one column's values, typed as the driver appends them
// column-wise. Exactly one slice is used, chosen by kind.
type column struct {
	def     warehouse.Column
	kind    kind
	strs    []string
	ints    []int64
	floats  []float64
	nfloats []*float64
	times   []time.Time
	bools   []uint8
}

// slice returns the values for batch.Column(i).Append.
func (c *column) slice() any {
	switch c.kind {
	case kString:
		return c.strs
	case kInt64:
		return c.ints
	case kFloat64:
		return c.floats
	case kNFloat64:
		return c.nfloats
	case kDateTime, kDate:
		return c.times
	default:
		return c.bools
	}
}

// window returns a column holding rows [from, to) of c, sharing storage.
func (c *column) window(from, to int) *column {
	w := &column{def: c.def, kind: c.kind}
	switch c.kind {
	case kString:
		w.strs = c.strs[from:to]
	case kInt64:
		w.ints = c.ints[from:to]
	case kFloat64:
		w.floats = c.floats[from:to]
	case kNFloat64:
		w.nfloats = c.nfloats[from:to]
	case kDateTime, kDate:
		w.times = c.times[from:to]
	default:
		w.bools = c.bools[from:to]
	}
	return w
}

// value returns row i's value, typed as in a warehouse.Batch.
func (c *column) value(i int) any {
	switch c.kind {
	case kString:
		return c.strs[i]
	case kInt64:
		return c.ints[i]
	case kFloat64:
		return c.floats[i]
	case kNFloat64:
		return c.nfloats[i]
	case kDateTime, kDate:
		return c.times[i]
	default:
		return c.bools[i]
	}
}

// tableRows is one table's rows of a batch, converted column-wise.
type tableRows struct {
	table warehouse.Table
	cols  []*column
	n     int
}

// convert checks rows against t's columns and converts them column-wise.
// It fails naming the table, row and column of the first bad value, before
// anything is sent.
func convert(t warehouse.Table, rows [][]any) (*tableRows, error) {
	n := len(rows)
	tr := &tableRows{table: t, n: n, cols: make([]*column, len(t.Columns))}
	for j, def := range t.Columns {
		k, ok := kindOf(def.Type)
		if !ok {
			return nil, fmt.Errorf("%s.%s: unsupported column type %s", t.Name, def.Name, def.Type)
		}
		c := &column{def: def, kind: k}
		switch k {
		case kString:
			c.strs = make([]string, n)
		case kInt64:
			c.ints = make([]int64, n)
		case kFloat64:
			c.floats = make([]float64, n)
		case kNFloat64:
			c.nfloats = make([]*float64, n)
		case kDateTime, kDate:
			c.times = make([]time.Time, n)
		case kBool:
			c.bools = make([]uint8, n)
		}
		tr.cols[j] = c
	}
	// Nullable floats point into one backing array, not one allocation
	// each; its capacity is never exceeded, so the pointers stay valid.
	backing := make([]float64, 0, n*countType(t, warehouse.NFloat64))
	width := len(t.Columns)
	for i, row := range rows {
		if len(row) != width {
			return nil, fmt.Errorf("%s row %d: %d values, want %d (%s)", t.Name, i, len(row), width, strings.Join(t.ColumnNames(), ", "))
		}
		for j, v := range row {
			c := tr.cols[j]
			var err error
			switch c.kind {
			case kString:
				if s, ok := v.(string); ok {
					c.strs[i] = s
				} else {
					err = fmt.Errorf("got %T, want string", v)
				}
			case kInt64:
				if x, ok := v.(int64); ok {
					c.ints[i] = x
				} else {
					c.ints[i], err = toInt64(v)
				}
			case kFloat64:
				if x, ok := v.(float64); ok {
					c.floats[i] = x
				} else {
					c.floats[i], err = toFloat64(v)
				}
			case kNFloat64:
				if p, ok := v.(*float64); ok {
					if p != nil {
						backing = append(backing, *p)
						c.nfloats[i] = &backing[len(backing)-1]
					}
				} else {
					var f float64
					var null bool
					if f, null, err = toNullFloat64(v); err == nil && !null {
						backing = append(backing, f)
						c.nfloats[i] = &backing[len(backing)-1]
					}
				}
			case kDateTime:
				c.times[i], err = toDateTime(v, time.Second)
			case kDate:
				c.times[i], err = toDateTime(v, 24*time.Hour)
			case kBool:
				c.bools[i], err = toBool(v)
			}
			if err != nil {
				return nil, fmt.Errorf("%s row %d column %s (%s): %w", t.Name, i, c.def.Name, c.def.Type, err)
			}
		}
	}
	return tr, nil
}

func countType(t warehouse.Table, typ warehouse.Type) int {
	n := 0
	for _, c := range t.Columns {
		if c.Type == typ {
			n++
		}
	}
	return n
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows Int64", x)
		}
		return int64(x), nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows Int64", x)
		}
		return int64(x), nil
	}
	return 0, fmt.Errorf("got %T, want int64", v)
}

func toFloat64(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case *float64:
		if x != nil {
			return *x, nil
		}
		return 0, fmt.Errorf("got NULL in a column that is not Nullable")
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	}
	return 0, fmt.Errorf("got %T, want float64", v)
}

func toNullFloat64(v any) (f float64, null bool, err error) {
	switch x := v.(type) {
	case nil:
		return 0, true, nil
	case *float64:
		if x == nil {
			return 0, true, nil
		}
		return *x, false, nil
	}
	f, err = toFloat64(v)
	if err != nil {
		return 0, false, fmt.Errorf("got %T, want *float64 (nil for NULL) or float64", v)
	}
	return f, false, nil
}

func toDateTime(v any, unit time.Duration) (time.Time, error) {
	t, ok := v.(time.Time)
	if !ok {
		if p, isPtr := v.(*time.Time); isPtr && p != nil {
			t, ok = *p, true
		}
	}
	if !ok {
		return time.Time{}, fmt.Errorf("got %T, want time.Time", v)
	}
	t = t.UTC().Truncate(unit)
	if t.Before(minDateTime) || t.After(maxDateTime) {
		return time.Time{}, fmt.Errorf("%s is outside ClickHouse's DateTime range (%s to %s)", t.Format(time.RFC3339), minDateTime.Format(time.RFC3339), maxDateTime.Format(time.RFC3339))
	}
	return t, nil
}

func toBool(v any) (uint8, error) {
	switch x := v.(type) {
	case uint8:
		if x <= 1 {
			return x, nil
		}
		return 0, fmt.Errorf("%d is not 0 or 1", x)
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case int64:
		if x == 0 || x == 1 {
			return uint8(x), nil
		}
		return 0, fmt.Errorf("%d is not 0 or 1", x)
	case int:
		if x == 0 || x == 1 {
			return uint8(x), nil
		}
		return 0, fmt.Errorf("%d is not 0 or 1", x)
	}
	return 0, fmt.Errorf("got %T, want uint8 (0 or 1)", v)
}

// encode appends a type-tagged, unambiguous encoding of a normalised value
// (what convert produces, or what scanning a column of the same type
// yields); equal values encode equally. Keys and rows are compared in it.
func encode(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		b = append(b, 's')
		b = strconv.AppendQuote(b, x)
	case int64:
		b = append(b, 'i')
		b = strconv.AppendInt(b, x, 10)
	case float64:
		b = append(b, 'f')
		b = strconv.AppendUint(b, math.Float64bits(x), 16)
	case *float64:
		if x == nil {
			return append(b, 'N')
		}
		return encode(b, *x)
	case time.Time:
		b = append(b, 't')
		b = strconv.AppendInt(b, x.Unix(), 10)
	case uint8:
		b = append(b, 'b')
		b = strconv.AppendUint(b, uint64(x), 10)
	default:
		b = fmt.Appendf(b, "?%T:%v", v, v)
	}
	return append(b, 0)
}

// literal renders a normalised value as a ClickHouse SQL literal.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		var b strings.Builder
		b.WriteByte('\'')
		for _, r := range []byte(x) {
			switch r {
			case '\\', '\'':
				b.WriteByte('\\')
				b.WriteByte(r)
			default:
				b.WriteByte(r)
			}
		}
		b.WriteByte('\'')
		return b.String()
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case *float64:
		if x == nil {
			return "NULL"
		}
		return literal(*x)
	case time.Time:
		return "toDateTime(" + strconv.FormatInt(x.Unix(), 10) + ")"
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	}
	panic(fmt.Sprintf("clickhouse: no literal for %T", v))
}

// key returns row r's key values.
func (tr *tableRows) key(r int) []any {
	out := make([]any, len(tr.table.Key))
	for i, k := range tr.table.Key {
		out[i] = tr.cols[columnIndex(tr.table, k)].value(r)
	}
	return out
}

// checkKeys fails when two rows of tr have the same key: ClickHouse would
// silently keep one of them, and a batch is one run's rows, each once. It
// sorts 64-bit hashes of the keys (cheaper than a map for a million rows)
// and compares the rows behind equal hashes.
func (tr *tableRows) checkKeys() error {
	t := tr.table
	idx := make([]int, len(t.Key))
	for i, k := range t.Key {
		idx[i] = columnIndex(t, k)
	}
	seed := maphash.MakeSeed()
	hashes := make([]uint64, tr.n)
	var buf []byte
	for r := range hashes {
		buf = buf[:0]
		for _, j := range idx {
			buf = tr.cols[j].appendKey(buf, r)
		}
		hashes[r] = maphash.Bytes(seed, buf)
	}
	sorted := slices.Clone(hashes)
	slices.Sort(sorted)
	var clash map[uint64][]int
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			if clash == nil {
				clash = map[uint64][]int{}
			}
			clash[sorted[i]] = nil
		}
	}
	if clash == nil {
		return nil
	}
	for r, h := range hashes {
		rows, ok := clash[h]
		if !ok {
			continue
		}
		for _, prev := range rows {
			if tr.sameKey(idx, prev, r) {
				parts := make([]string, len(idx))
				for i, j := range idx {
					parts[i] = fmt.Sprintf("%s=%v", t.Key[i], tr.cols[j].value(r))
				}
				return fmt.Errorf("%s rows %d and %d: duplicate key (%s)", t.Name, prev, r, strings.Join(parts, ", "))
			}
		}
		clash[h] = append(rows, r)
	}
	return nil
}

func (tr *tableRows) sameKey(idx []int, a, b int) bool {
	for _, j := range idx {
		if string(encode(nil, tr.cols[j].value(a))) != string(encode(nil, tr.cols[j].value(b))) {
			return false
		}
	}
	return true
}

// appendKey appends row r's value for hashing; cheaper than encode for the
// common types.
func (c *column) appendKey(b []byte, r int) []byte {
	switch c.kind {
	case kString:
		b = binary.AppendUvarint(b, uint64(len(c.strs[r])))
		return append(b, c.strs[r]...)
	case kInt64:
		return binary.LittleEndian.AppendUint64(b, uint64(c.ints[r]))
	}
	return encode(b, c.value(r))
}
