package sql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/warehouse"
)

const sample = `-- name: sample
-- description: A query for tests,
--   over two lines.
-- owner: tests
-- A plain comment line is allowed in the header.
-- param: run_id String = ""   only this run
-- param: n Int64 = 10
-- param: x Float64
SELECT run_id, point   
FROM {{from storage_outcome_fact}}
WHERE ({{param run_id}} = '' OR run_id = {{param run_id}}) AND point < {{param n}} AND ops_per_s > {{param x}};
`

func TestParseHeader(t *testing.T) {
	q, err := Parse("sample.sql", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != "sample" || q.Owner != "tests" || q.Description != "A query for tests, over two lines." {
		t.Fatalf("header: %+v", q)
	}
	if len(q.Params) != 3 {
		t.Fatalf("params %+v", q.Params)
	}
	want := []Param{
		{Name: "run_id", Type: TypeString, Default: "", Doc: "only this run"},
		{Name: "n", Type: TypeInt64, Default: int64(10)},
		{Name: "x", Type: TypeFloat64, Required: true},
	}
	for i, p := range q.Params {
		if p != want[i] {
			t.Errorf("param %d: got %+v; want %+v", i, p, want[i])
		}
	}
	if q.Trace.Column != "run_id" || q.Trace.RunsSQL != "" {
		t.Errorf("trace %+v; want the run_id column", q.Trace)
	}
	if strings.HasSuffix(q.Body, ";") || strings.Contains(q.Body, "point   \n") || !strings.HasPrefix(q.Body, "SELECT") {
		t.Errorf("body not canonical: %q", q.Body)
	}
}

func TestDigestCoversSQLAndParamsOnly(t *testing.T) {
	base, err := Parse("sample.sql", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	f := func(name, text string, same bool) {
		t.Helper()
		q, err := Parse("sample.sql", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (q.Digest == base.Digest) != same {
			t.Errorf("%s: digest equal = %v; want %v", name, q.Digest == base.Digest, same)
		}
	}
	f("CRLF and trailing blanks", strings.ReplaceAll(sample, "\n", "  \r\n")+"\r\n\r\n", true)
	f("description", strings.Replace(sample, "A query for tests", "Another text", 1), true)
	f("owner", strings.Replace(sample, "owner: tests", "owner: someone", 1), true)
	f("param doc", strings.Replace(sample, "only this run", "one run", 1), true)
	f("SQL", strings.Replace(sample, "point < ", "point <= ", 1), false)
	f("param default", strings.Replace(sample, "n Int64 = 10", "n Int64 = 11", 1), false)
	f("param type", strings.Replace(sample, "x Float64", "x Int64", 1), false)
	f("param required", strings.Replace(sample, "x Float64", "x Float64 = 0.5", 1), false)
	f("trace", strings.Replace(sample, "-- owner: tests", "-- owner: tests\n-- runs: point", 1), false)
}

func TestParseErrors(t *testing.T) {
	f := func(name, text, want string) {
		t.Helper()
		_, err := Parse("bad.sql", []byte(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got error %v; want one containing %q", name, err, want)
		}
	}
	hdr := "-- name: bad\n-- description: d\n-- owner: o\n"
	f("no name", "-- description: d\n-- owner: o\nSELECT 1", "name")
	f("no description", "-- name: bad\n-- owner: o\nSELECT 1", "description is missing")
	f("no owner", "-- name: bad\n-- description: d\nSELECT 1", "owner is missing")
	f("no SQL", hdr, "no SQL")
	f("unknown field", hdr+"-- frobnicate: yes\nSELECT 1", `bad.sql:4: unknown header field "frobnicate"`)
	f("twice", hdr+"-- owner: p\nSELECT 1", "bad.sql:4: owner is set twice")
	f("bad type", hdr+"-- param: a Int32\nSELECT {{param a}}", "not String, Int64 or Float64")
	f("bad default", hdr+"-- param: a Int64 = x\nSELECT {{param a}}", `"x" is not an Int64`)
	f("unquoted string default", hdr+"-- param: a String = x\nSELECT {{param a}}", "double-quoted")
	f("undeclared", hdr+"SELECT {{param a}}", "{{param a}}: no such parameter")
	f("unused", hdr+"-- param: a Int64 = 1\nSELECT 1", "never used")
	f("unknown table", hdr+"SELECT 1 FROM {{from nope}}", "{{from nope}}: no such table")
	f("unknown placeholder", hdr+"SELECT {{final}}", "unknown placeholder")
	f("question mark", hdr+"SELECT 1 WHERE x = ?", "'?'")
	f("two statements", hdr+"SELECT 1; SELECT 2", "more than one statement")
	f("not a SELECT", hdr+"DELETE FROM {{from storage_outcome_fact}}", "one SELECT statement")
	f("runs section not a SELECT", hdr+"-- runs: by a\nSELECT 1 AS a\n-- @runs\n-- a comment\nDROP TABLE x", "one SELECT statement")
	f("runs by without section", hdr+"-- runs: by a\nSELECT 1 AS a", "needs a \"-- @runs\" section")
	f("section without key", hdr+"SELECT 1 AS a\n-- @runs\nSELECT 1 AS a, 'r' AS run_id", "needs a header line")
	f("empty section", hdr+"-- runs: by a\nSELECT 1 AS a\n-- @runs\n", "section is empty")
}

func TestRunsSection(t *testing.T) {
	q, err := Parse("t.sql", []byte("-- name: t\n-- description: d\n-- owner: o\n-- runs: by params, op\n"+
		"SELECT params, op FROM {{from storage_outcome_fact}}\n-- @runs\nSELECT params, op, run_id FROM {{from storage_outcome_fact}};\n"))
	if err != nil {
		t.Fatal(err)
	}
	if q.Trace.Column != "" || strings.Join(q.Trace.Key, ",") != "params,op" ||
		q.Trace.RunsSQL != "SELECT params, op, run_id FROM {{from storage_outcome_fact}}" || strings.Contains(q.Body, "@runs") {
		t.Fatalf("trace %+v body %q", q.Trace, q.Body)
	}
	s, err := q.RenderRuns(warehouse.ClickHouse, nil)
	if err != nil || s != "SELECT params, op, run_id FROM storage_outcome_fact FINAL" {
		t.Fatalf("RenderRuns: %q, %v", s, err)
	}
}

func TestBindAndRender(t *testing.T) {
	q, err := Parse("sample.sql", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Bind(map[string]string{}); err == nil || !strings.Contains(err.Error(), "--param x=Float64") {
		t.Errorf("missing required: %v", err)
	}
	if _, err := q.Bind(map[string]string{"x": "1", "nope": "2"}); err == nil || !strings.Contains(err.Error(), `no parameter "nope"`) {
		t.Errorf("unknown param: %v", err)
	}
	if _, err := q.Bind(map[string]string{"x": "NaN"}); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := q.Bind(map[string]string{"x": "1", "n": "1.5"}); err == nil {
		t.Error("1.5 accepted as Int64")
	}
	vals, err := q.Bind(map[string]string{"x": "2", "run_id": "it's"})
	if err != nil {
		t.Fatal(err)
	}
	if vals["n"] != int64(10) || vals["x"] != 2.0 || vals["run_id"] != "it's" {
		t.Fatalf("values %v", vals)
	}
	got, err := q.Render(warehouse.ClickHouse, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := "FROM storage_outcome_fact FINAL\nWHERE ('it\\'s' = '' OR run_id = 'it\\'s') AND point < 10 AND ops_per_s > 2.0"
	if !strings.Contains(got, want) {
		t.Errorf("ClickHouse rendering:\n%s\nwant it to contain\n%s", got, want)
	}
	got, _ = q.Render(warehouse.DuckDB, vals)
	if !strings.Contains(got, "FROM storage_outcome_fact\nWHERE ('it''s' = '' OR run_id = 'it''s')") {
		t.Errorf("DuckDB rendering:\n%s", got)
	}
	again, err := q.Typed(map[string]any{"x": 2.0, "n": 10.0, "run_id": "it's"})
	if err != nil || again["n"] != int64(10) || again["x"] != 2.0 {
		t.Errorf("Typed: %v, %v", again, err)
	}
}

func TestQuote(t *testing.T) {
	f := func(dialect string, v any, want string) {
		t.Helper()
		got, err := Quote(dialect, v)
		if err != nil || got != want {
			t.Errorf("Quote(%s, %#v) = %q, %v; want %q", dialect, v, got, err, want)
		}
	}
	f(warehouse.DuckDB, `a'b\c`, `'a''b\c'`)
	f(warehouse.ClickHouse, `a'b\c`, `'a\'b\\c'`)
	f(warehouse.DuckDB, int64(-5), "(-5)") // never "--5"
	f(warehouse.ClickHouse, -0.25, "(-0.25)")
	f(warehouse.DuckDB, 3.0, "3.0")
	f(warehouse.DuckDB, 1e300, "1e+300")
	for _, bad := range []any{"nul\x00", "\xff", true} {
		if _, err := Quote(warehouse.DuckDB, bad); err == nil {
			t.Errorf("Quote(%#v) succeeded", bad)
		}
	}
	if _, err := Quote("postgres", "x"); err == nil {
		t.Error("unknown dialect accepted")
	}
}

func TestShippedRegistry(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"storage_outcomes_by_point", "serving_percentiles_by_point", "runs",
		"storage_run_comparison", "storage_point_trend", "telemetry_summary"} {
		q, ok := r.Get(name)
		if !ok {
			t.Errorf("query %s is not shipped", name)
			continue
		}
		if q.Source != "sql/queries/"+name+".sql" || q.Digest.IsZero() {
			t.Errorf("%s: source %q digest %s", name, q.Source, q.Digest)
		}
		// The file in the source tree is the one embedded.
		b, err := os.ReadFile(filepath.Join("queries", name+".sql"))
		if err != nil || string(b) != q.Text {
			t.Errorf("%s: embedded text differs from queries/%s.sql (%v)", name, name, err)
		}
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sample.sql", sample)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if q, ok := r.Get("sample"); !ok || q.Source != filepath.Join(dir, "sample.sql") {
		t.Fatalf("custom query not loaded: %+v", q)
	}
	if _, ok := r.Get("runs"); !ok {
		t.Fatal("shipped queries missing beside a directory")
	}
	write("other.sql", sample)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `named "sample" but its file "other"`) {
		t.Errorf("misnamed file: %v", err)
	}
	os.Remove(filepath.Join(dir, "other.sql"))
	write("runs.sql", strings.Replace(sample, "name: sample", "name: runs", 1))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "query runs is defined twice") {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing directory accepted")
	}
}
