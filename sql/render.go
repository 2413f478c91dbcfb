package sql

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfwh/perfwh/warehouse"
)

// parseParam reads "NAME TYPE [= DEFAULT] [DOC]"; a String default is
// double-quoted ("" is the empty string).
func parseParam(s string) (Param, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return Param{}, fmt.Errorf("want NAME TYPE [= DEFAULT] [doc], got %q", s)
	}
	p := Param{Name: f[0], Type: ParamType(f[1]), Required: true}
	if !identRe.MatchString(p.Name) {
		return p, fmt.Errorf("%q is not a parameter name", p.Name)
	}
	if !slices.Contains([]ParamType{TypeString, TypeInt64, TypeFloat64}, p.Type) {
		return p, fmt.Errorf("%s: type %q is not String, Int64 or Float64", p.Name, p.Type)
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), f[0]))
	rest = strings.TrimSpace(strings.TrimPrefix(rest, f[1]))
	if after, ok := strings.CutPrefix(rest, "="); ok {
		after = strings.TrimSpace(after)
		var lit string
		if p.Type == TypeString {
			q, err := strconv.QuotedPrefix(after)
			if err != nil || !strings.HasPrefix(q, `"`) {
				return p, fmt.Errorf("%s: a String default is double-quoted, got %q", p.Name, after)
			}
			lit, _ = strconv.Unquote(q)
			rest = after[len(q):]
		} else {
			tok, tail, _ := strings.Cut(after, " ")
			lit, rest = tok, tail
		}
		v, err := p.Parse(lit)
		if err != nil {
			return p, fmt.Errorf("default: %w", err)
		}
		p.Default, p.Required = v, false
	}
	p.Doc = strings.TrimSpace(rest)
	return p, nil
}

// Parse converts a value given as text (--param k=v) to the parameter's
// type.
func (p Param) Parse(s string) (any, error) {
	switch p.Type {
	case TypeInt64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an Int64", p.Name, s)
		}
		return n, nil
	case TypeFloat64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: %q is not a finite Float64", p.Name, s)
		}
		return f, nil
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return nil, fmt.Errorf("%s: a String must be valid UTF-8 without NUL bytes", p.Name)
	}
	return s, nil
}

// Bind checks raw values (name → text) against the declared parameters and
// returns every parameter's typed value, defaults filled in. Unknown names
// and missing required parameters are errors.
func (q *Query) Bind(raw map[string]string) (map[string]any, error) {
	out := map[string]any{}
	for name, s := range raw {
		p, ok := q.Param(name)
		if !ok {
			return nil, fmt.Errorf("query %s has no parameter %q (it has: %s)", q.Name, name, q.paramNames())
		}
		v, err := p.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.Name, err)
		}
		out[name] = v
	}
	for _, p := range q.Params {
		if _, ok := out[p.Name]; ok {
			continue
		}
		if p.Required {
			return nil, fmt.Errorf("query %s needs --param %s=%s", q.Name, p.Name, p.Type)
		}
		out[p.Name] = p.Default
	}
	return out, nil
}

// Typed checks already typed values (as a publication stores them, numbers
// possibly decoded as float64 or json.Number) and returns them as Bind would.
func (q *Query) Typed(vals map[string]any) (map[string]any, error) {
	raw := map[string]string{}
	for k, v := range vals {
		switch x := v.(type) {
		case string:
			raw[k] = x
		case float64:
			raw[k] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			raw[k] = fmt.Sprint(x)
		}
	}
	return q.Bind(raw)
}

func (q *Query) paramNames() string {
	if len(q.Params) == 0 {
		return "none"
	}
	names := make([]string, len(q.Params))
	for i, p := range q.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// From returns how a statement names table on the dialect: ClickHouse reads
// ReplacingMergeTree tables with FINAL, so rows rewritten by a re-ingest
// and not merged yet count once.
func From(dialect, table string) string {
	if dialect == warehouse.ClickHouse {
		return table + " FINAL"
	}
	return table
}

// Quote renders v as an SQL literal of the dialect. Strings are quoted as
// the engine reads them back unchanged (DuckDB doubles quotes; ClickHouse
// escapes quotes and backslashes); negative numbers are parenthesised so
// that no rendering can start a "--" comment.
func Quote(dialect string, v any) (string, error) {
	if dialect != warehouse.DuckDB && dialect != warehouse.ClickHouse {
		return "", fmt.Errorf("unknown SQL dialect %q", dialect)
	}
	var lit string
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) || strings.ContainsRune(x, 0) {
			return "", fmt.Errorf("string literal must be valid UTF-8 without NUL bytes")
		}
		if dialect == warehouse.ClickHouse {
			return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(x) + "'", nil
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case int64:
		lit = strconv.FormatInt(x, 10)
	case int:
		lit = strconv.Itoa(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("%v cannot be an SQL literal", x)
		}
		lit = strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(lit, ".eEn") {
			lit += ".0" // typed as a float on both engines
		}
	default:
		return "", fmt.Errorf("no SQL literal for %T", v)
	}
	if strings.HasPrefix(lit, "-") {
		lit = "(" + lit + ")"
	}
	return lit, nil
}

// Render returns the main statement for dialect with params (as Bind
// returns them) substituted.
func (q *Query) Render(dialect string, params map[string]any) (string, error) {
	return q.render(q.Body, dialect, params)
}

// RenderRuns returns the "-- @runs" statement, or "" when the query traces
// rows through a column.
func (q *Query) RenderRuns(dialect string, params map[string]any) (string, error) {
	if q.Trace.RunsSQL == "" {
		return "", nil
	}
	return q.render(q.Trace.RunsSQL, dialect, params)
}

func (q *Query) render(stmt, dialect string, params map[string]any) (string, error) {
	var err error
	out := placeholderRe.ReplaceAllStringFunc(stmt, func(m string) string {
		sm := placeholderRe.FindStringSubmatch(m)
		if sm[1] == "from" {
			return From(dialect, sm[2])
		}
		v, ok := params[sm[2]]
		if !ok {
			err = fmt.Errorf("query %s: no value for parameter %s", q.Name, sm[2])
			return m
		}
		lit, qerr := Quote(dialect, v)
		if qerr != nil && err == nil {
			err = fmt.Errorf("query %s: parameter %s: %w", q.Name, sm[2], qerr)
		}
		return lit
	})
	if err != nil {
		return "", err
	}
	if dialect != warehouse.DuckDB && dialect != warehouse.ClickHouse {
		return "", fmt.Errorf("unknown SQL dialect %q", dialect)
	}
	return out, nil
}
