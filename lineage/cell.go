package lineage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfwh/perfwh/internal/canonjson"
	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
)

// Cell is the one warehouse value a selector names, with its row.
type Cell struct {
	Selector *Selector
	Table    warehouse.Table
	Columns  []string
	Row      []any
	Value    any
}

// RowMap returns the cell's row by column.
func (c *Cell) RowMap() map[string]any { return rowMap(c.Columns, c.Row) }

// NoMatchError says that no cell matches a selector, and why, label by
// label.
type NoMatchError struct {
	Selector string
	Hints    []string
}

func (e *NoMatchError) Error() string {
	return "no cell matches " + e.Selector + "\n  " + strings.Join(e.Hints, "\n  ")
}

// AmbiguousError lists the cells a selector matches when it must match one.
type AmbiguousError struct {
	Selector   string
	Matches    int
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	more := ""
	if e.Matches > len(e.Candidates) {
		more = fmt.Sprintf("\n  ... and %d more", e.Matches-len(e.Candidates))
	}
	return fmt.Sprintf("%s matches %d cells; add labels to pick one:\n  %s%s", e.Selector, e.Matches, strings.Join(e.Candidates, "\n  "), more)
}

// maxScan bounds the rows a selector may have to filter.
const maxScan = 100000

// FindCell returns the one cell sel names. A selector that matches none
// or several returns a *NoMatchError or *AmbiguousError; an invalid one
// (unknown table, column or label, a table without run_id) an *InputError.
func FindCell(ctx context.Context, w warehouse.Warehouse, sel *Selector) (*Cell, error) {
	t, ok := warehouse.Lookup(sel.Table)
	if !ok {
		return nil, &InputError{fmt.Errorf("selector %s: no table %s in the warehouse schema", sel, sel.Table)}
	}
	if _, ok := t.Column("run_id"); !ok {
		return nil, &InputError{fmt.Errorf("selector %s: table %s has no run_id: its values do not come from one run", sel, t.Name)}
	}
	if _, ok := t.Column(sel.Column); !ok {
		return nil, &InputError{fmt.Errorf("selector %s: table %s has no column %s (columns: %s)", sel, t.Name, sel.Column, strings.Join(t.ColumnNames(), ", "))}
	}
	_, hasParams := t.Column("params")
	for _, m := range sel.Matchers {
		if _, ok := t.Column(m.Label); !ok && !hasParams {
			return nil, &InputError{fmt.Errorf("selector %s: table %s has no column %s", sel, t.Name, m.Label)}
		}
	}
	rows, cols, err := scan(ctx, w, t, sel.Matchers)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 1:
		j := slices.Index(cols, sel.Column)
		return &Cell{Selector: sel, Table: t, Columns: cols, Row: rows[0], Value: rows[0][j]}, nil
	case 0:
		return nil, &NoMatchError{Selector: sel.String(), Hints: hints(ctx, w, t, sel)}
	}
	e := &AmbiguousError{Selector: sel.String(), Matches: len(rows)}
	shown := rows[:min(len(rows), 20)]
	extra := differingParams(cols, shown)
	for _, row := range shown {
		e.Candidates = append(e.Candidates, candidate(t, sel, cols, row, extra))
	}
	return nil, e
}

// differingParams returns the params keys whose values differ among rows:
// the labels that tell the candidates apart by workload parameter.
func differingParams(cols []string, rows [][]any) []string {
	if !slices.Contains(cols, "params") {
		return nil
	}
	vals := map[string]map[string]bool{}
	for _, row := range rows {
		params := decodeParams(cols, row)
		for k := range params {
			if vals[k] == nil {
				vals[k] = map[string]bool{}
			}
			s, _ := label(cols, row, k, &params)
			vals[k][s] = true
		}
	}
	var out []string
	for k, v := range vals {
		if len(v) > 1 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// scan reads the rows of t that satisfy every matcher: equality on
// columns in SQL (bound arguments), the rest here.
func scan(ctx context.Context, w warehouse.Warehouse, t warehouse.Table, ms []Matcher) ([][]any, []string, error) {
	var conds []string
	var args []any
	for _, m := range ms {
		c, ok := t.Column(m.Label)
		if !ok || m.Op != "=" {
			continue
		}
		switch c.Type {
		case warehouse.String:
			args = append(args, m.Value)
		case warehouse.Int64:
			n, err := strconv.ParseInt(m.Value, 10, 64)
			if err != nil {
				return nil, nil, nil // an Int64 column equals no non-integer: no row
			}
			args = append(args, n)
		default:
			continue // compared as text below
		}
		conds = append(conds, m.Label+" = ?")
	}
	q := "SELECT " + strings.Join(t.ColumnNames(), ", ") + " FROM " + sql.From(w.Dialect(), t.Name)
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	q += " ORDER BY " + strings.Join(t.Key, ", ") + fmt.Sprintf(" LIMIT %d", maxScan+1)
	res, err := w.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", t.Name, err)
	}
	if len(res.Rows) > maxScan {
		return nil, nil, &InputError{fmt.Errorf("more than %d rows of %s match the selector's column labels: add run_id=\"...\"", maxScan, t.Name)}
	}
	var out [][]any
	for _, row := range res.Rows {
		if matchesAll(res.Columns, row, ms) {
			out = append(out, row)
		}
	}
	return out, res.Columns, nil
}

func matchesAll(cols []string, row []any, ms []Matcher) bool {
	var params map[string]any
	for _, m := range ms {
		s, ok := label(cols, row, m.Label, &params)
		if !m.Matches(s) || (!ok && m.Op == "=" && m.Value != "") {
			return false
		}
	}
	return true
}

// label returns the text of a label of row: a column, else a key of the
// params JSON (decoded once into *params). ok is false when neither has it.
func label(cols []string, row []any, name string, params *map[string]any) (string, bool) {
	if j := slices.Index(cols, name); j >= 0 {
		return text(row[j]), true
	}
	if *params == nil {
		*params = decodeParams(cols, row)
	}
	v, ok := (*params)[name]
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	}
	b, _ := canonjson.Marshal(v)
	return string(b), true
}

// decodeParams returns the row's params JSON object (empty without one).
func decodeParams(cols []string, row []any) map[string]any {
	out := map[string]any{}
	if j := slices.Index(cols, "params"); j >= 0 {
		if s, ok := row[j].(string); ok {
			dec := json.NewDecoder(bytes.NewReader([]byte(s)))
			dec.UseNumber()
			_ = dec.Decode(&out)
		}
	}
	return out
}

// text is how a value compares with a label value.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

// candidate renders a matching row as a selector naming it by its key.
func candidate(t warehouse.Table, sel *Selector, cols []string, row []any, params []string) string {
	var ms []string
	for _, k := range t.Key {
		ms = append(ms, k+"="+strconv.Quote(text(row[slices.Index(cols, k)])))
	}
	var decoded map[string]any
	for _, k := range params {
		if s, ok := label(cols, row, k, &decoded); ok {
			ms = append(ms, k+"="+strconv.Quote(s))
		}
	}
	return fmt.Sprintf("%s.%s{%s} = %s", t.Name, sel.Column, strings.Join(ms, ","), text(row[slices.Index(cols, sel.Column)]))
}

// hints explains a selector that matches nothing: for each label, the
// values it takes among the rows the other labels match.
func hints(ctx context.Context, w warehouse.Warehouse, t warehouse.Table, sel *Selector) []string {
	var out []string
	for i, m := range sel.Matchers {
		others := slices.Delete(slices.Clone(sel.Matchers), i, i+1)
		rows, cols, err := scan(ctx, w, t, others)
		if err != nil || len(rows) == 0 {
			continue
		}
		var vals []string
		for _, row := range rows {
			var params map[string]any
			if s, ok := label(cols, row, m.Label, &params); ok && !slices.Contains(vals, strconv.Quote(s)) {
				vals = append(vals, strconv.Quote(s))
			}
		}
		slices.Sort(vals)
		if len(vals) > 12 {
			vals = append(vals[:12], fmt.Sprintf("... (%d values)", len(vals)))
		}
		if len(vals) == 0 {
			out = append(out, fmt.Sprintf("%s: no row has this label", m.Label))
			continue
		}
		out = append(out, fmt.Sprintf("%s: no row has %s; where the other labels match, %s is one of %s", m.Label, m, m.Label, strings.Join(vals, ", ")))
	}
	if len(out) == 0 {
		out = append(out, "no row matches even with one label left out; list candidates with perfwh sql")
	}
	return out
}
