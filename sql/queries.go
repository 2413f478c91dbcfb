package sql

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/internal/canonjson"
	"github.com/perfwh/perfwh/warehouse"
)

//go:embed queries/*.sql
var shipped embed.FS

// ParamType is the type of a query parameter.
type ParamType string

// Parameter types. Values are rendered as literals of the engine (Quote).
const (
	TypeString  ParamType = "String"
	TypeInt64   ParamType = "Int64"
	TypeFloat64 ParamType = "Float64"
)

// Param is one declared parameter of a registered query.
type Param struct {
	Name     string    `json:"name"`
	Type     ParamType `json:"type"`
	Required bool      `json:"required"`
	Default  any       `json:"default,omitempty"` // string, int64 or float64; nil when Required
	Doc      string    `json:"doc,omitempty"`
}

// Trace says how each result row of a query names the runs it came from:
// a result column holding one run id (Column), or, for queries that
// aggregate over runs, a second statement (the "-- @runs" section) whose
// rows pair the result's Key columns with a run_id column.
type Trace struct {
	Column  string   `json:"column,omitempty"`   // result column with the row's run id
	Key     []string `json:"key,omitempty"`      // result columns matched against the runs statement's
	RunsSQL string   `json:"runs_sql,omitempty"` // the "-- @runs" statement (canonical)
}

// Query is a registered query.
type Query struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Owner       string          `json:"owner"`
	Params      []Param         `json:"params"`
	Trace       Trace           `json:"trace"`
	Body        string          `json:"sql"`    // canonical main statement, placeholders unrendered
	Text        string          `json:"text"`   // the file as given (line endings normalised)
	Source      string          `json:"source"` // where it was loaded from
	Digest      evidence.Digest `json:"query_spec_digest"`
}

// Param returns the declared parameter name.
func (q *Query) Param(name string) (Param, bool) {
	for _, p := range q.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// SpecFormat identifies the document whose sha256 is a query_spec_digest.
const SpecFormat = "perfwh.query"

// Spec returns the canonical document the query_spec_digest is computed
// over: the canonical statements, the parameter schema sorted by name and
// the trace declaration. Name, description, owner and header comments are
// not part of it: they do not change what the query computes.
func (q *Query) Spec() map[string]any {
	params := make([]map[string]any, 0, len(q.Params))
	for _, p := range q.Params {
		params = append(params, map[string]any{"name": p.Name, "type": string(p.Type), "required": p.Required, "default": p.Default})
	}
	slices.SortFunc(params, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	return map[string]any{
		"format": SpecFormat, "format_version": 1,
		"sql": q.Body, "runs_sql": q.Trace.RunsSQL,
		"trace":  map[string]any{"column": q.Trace.Column, "key": nonNil(q.Trace.Key)},
		"params": params,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SpecDigest computes the query_spec_digest of q's current content.
func (q *Query) SpecDigest() (evidence.Digest, error) {
	b, err := canonjson.Marshal(q.Spec())
	if err != nil {
		return evidence.Digest{}, fmt.Errorf("query %s: encode spec: %w", q.Name, err)
	}
	return evidence.Sum(b), nil
}

var (
	nameRe        = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	identRe       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	fieldRe       = regexp.MustCompile(`^[a-z_]+$`)
	selectRe      = regexp.MustCompile(`^(?i)(\s*--[^\n]*\n)*\s*\(*\s*SELECT\b`)
	placeholderRe = regexp.MustCompile(`\{\{\s*(from|param)\s+([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
)

// runsMarker starts a query's second statement: its run set.
const runsMarker = "-- @runs"

// Parse reads a registered query from text; source names it in errors
// ("sql/queries/x.sql"). The header is the leading block of "--" comment
// lines; "-- key: value" lines set fields, and a line "--   more" (two or
// more spaces) continues the previous field.
func Parse(source string, text []byte) (*Query, error) {
	s := strings.ReplaceAll(string(text), "\r\n", "\n")
	q := &Query{Text: s, Source: source}
	lines := strings.Split(s, "\n")
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", source, line+1, fmt.Sprintf(format, args...))
	}
	var last *string
	seen := map[string]int{}
	i := 0
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if !strings.HasPrefix(l, "--") || l == runsMarker {
			break
		}
		raw := strings.TrimPrefix(l, "--")
		if strings.HasPrefix(raw, "  ") && last != nil {
			*last = strings.TrimSpace(*last + " " + strings.TrimSpace(raw))
			continue
		}
		key, val, ok := strings.Cut(strings.TrimSpace(raw), ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		last = nil
		if !ok || !fieldRe.MatchString(key) {
			continue // a plain comment
		}
		if prev, dup := seen[key]; dup && key != "param" {
			return nil, errf(i, "%s is set twice (first on line %d)", key, prev+1)
		}
		seen[key] = i
		switch key {
		case "name":
			q.Name = val
		case "description":
			q.Description, last = val, &q.Description
		case "owner":
			q.Owner = val
		case "param":
			p, err := parseParam(val)
			if err != nil {
				return nil, errf(i, "param: %v", err)
			}
			if _, dup := q.Param(p.Name); dup {
				return nil, errf(i, "param %s is declared twice", p.Name)
			}
			q.Params = append(q.Params, p)
			last = &q.Params[len(q.Params)-1].Doc
		case "runs":
			if err := parseTrace(&q.Trace, val); err != nil {
				return nil, errf(i, "runs: %v", err)
			}
		default:
			return nil, errf(i, "unknown header field %q (want name, description, owner, param, runs)", key)
		}
	}
	rest := lines[i:]
	if j := slices.IndexFunc(rest, func(l string) bool { return strings.TrimSpace(l) == runsMarker }); j >= 0 {
		q.Trace.RunsSQL = canonicalSQL(strings.Join(rest[j+1:], "\n"))
		if q.Trace.RunsSQL == "" {
			return nil, errf(i+j, "the %q section is empty", runsMarker)
		}
		rest = rest[:j]
	}
	q.Body = canonicalSQL(strings.Join(rest, "\n"))
	if err := q.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	d, err := q.SpecDigest()
	if err != nil {
		return nil, err
	}
	q.Digest = d
	return q, nil
}

func parseTrace(t *Trace, val string) error {
	if rest, ok := strings.CutPrefix(val, "by "); ok {
		for _, k := range strings.Split(rest, ",") {
			k = strings.TrimSpace(k)
			if !identRe.MatchString(k) {
				return fmt.Errorf("key column %q is not a column name", k)
			}
			t.Key = append(t.Key, k)
		}
		return nil
	}
	if !identRe.MatchString(val) {
		return fmt.Errorf("want a result column (runs: run_id) or key columns (runs: by col, col) with a %q section, got %q", runsMarker, val)
	}
	t.Column = val
	return nil
}

// canonicalSQL normalises a statement: trailing spaces and blank edge lines
// removed, one trailing semicolon dropped.
func canonicalSQL(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	out := strings.Trim(strings.Join(lines, "\n"), "\n")
	return strings.TrimRight(strings.TrimSuffix(out, ";"), " \t\n")
}

func (q *Query) validate() error {
	switch {
	case !nameRe.MatchString(q.Name):
		return fmt.Errorf("header: name %q must be lowercase letters, digits and _ (up to 64), starting with a letter", q.Name)
	case q.Description == "":
		return fmt.Errorf("header: description is missing")
	case q.Owner == "":
		return fmt.Errorf("header: owner is missing")
	case q.Body == "":
		return fmt.Errorf("no SQL after the header")
	case len(q.Trace.Key) > 0 && q.Trace.RunsSQL == "":
		return fmt.Errorf("runs: by %s needs a %q section: a statement returning those columns and run_id", strings.Join(q.Trace.Key, ", "), runsMarker)
	case len(q.Trace.Key) == 0 && q.Trace.RunsSQL != "":
		return fmt.Errorf("a %q section needs a header line \"-- runs: by COLUMN, ...\" naming the columns that join it to the result", runsMarker)
	}
	if q.Trace.Column == "" && len(q.Trace.Key) == 0 {
		q.Trace.Column = "run_id"
	}
	used := map[string]bool{}
	for _, stmt := range []string{q.Body, q.Trace.RunsSQL} {
		if err := checkStatement(stmt, q, used); err != nil {
			return err
		}
	}
	for _, p := range q.Params {
		if !used[p.Name] {
			return fmt.Errorf("param %s is declared but never used", p.Name)
		}
	}
	return nil
}

func checkStatement(stmt string, q *Query, used map[string]bool) error {
	if stmt == "" {
		return nil
	}
	if !selectRe.MatchString(stmt) {
		return fmt.Errorf("a registered query is one SELECT statement (DuckDB would run anything else as written)")
	}
	if strings.Contains(stmt, "?") {
		return fmt.Errorf("the SQL contains '?': parameters are written {{param NAME}}")
	}
	if strings.Contains(stmt, ";") {
		return fmt.Errorf("the SQL holds more than one statement (';')")
	}
	if rest := placeholderRe.ReplaceAllString(stmt, ""); strings.Contains(rest, "{{") || strings.Contains(rest, "}}") {
		return fmt.Errorf("unknown placeholder: only {{from TABLE}} and {{param NAME}} are defined")
	}
	for _, m := range placeholderRe.FindAllStringSubmatch(stmt, -1) {
		switch m[1] {
		case "from":
			if _, ok := warehouse.Lookup(m[2]); !ok {
				return fmt.Errorf("{{from %s}}: no such table in the warehouse schema", m[2])
			}
		case "param":
			if _, ok := q.Param(m[2]); !ok {
				return fmt.Errorf("{{param %s}}: no such parameter in the header", m[2])
			}
			used[m[2]] = true
		}
	}
	return nil
}

// Registry is a set of registered queries by name.
type Registry struct {
	byName map[string]*Query
}

// ShippedDir is where the shipped queries live in the source tree.
const ShippedDir = "sql/queries"

// Load returns the shipped queries plus every *.sql file of dirs. Two
// queries with one name are an error, so a name always means one query.
func Load(dirs ...string) (*Registry, error) {
	r := &Registry{byName: map[string]*Query{}}
	files, err := fs.Glob(shipped, "queries/*.sql")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := shipped.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := r.add(path.Join("sql", f), b); err != nil {
			return nil, err
		}
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			return nil, fmt.Errorf("queries in %s: %w", dir, err)
		}
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("queries directory: %w", err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read query: %w", err)
			}
			if err := r.add(f, b); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func (r *Registry) add(source string, b []byte) error {
	q, err := Parse(source, b)
	if err != nil {
		return err
	}
	if base := strings.TrimSuffix(path.Base(filepath.ToSlash(source)), ".sql"); base != q.Name {
		return fmt.Errorf("%s: the query is named %q but its file %q: name the file NAME.sql", source, q.Name, base)
	}
	if prev, dup := r.byName[q.Name]; dup {
		return fmt.Errorf("query %s is defined twice: %s and %s", q.Name, prev.Source, source)
	}
	r.byName[q.Name] = q
	return nil
}

// Get returns the query called name.
func (r *Registry) Get(name string) (*Query, bool) {
	q, ok := r.byName[name]
	return q, ok
}

// List returns every query, by name.
func (r *Registry) List() []*Query {
	out := make([]*Query, 0, len(r.byName))
	for _, q := range r.byName {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b *Query) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the query names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
