package lineage

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/warehouse/duckdb"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

func TestParseSelector(t *testing.T) {
	s, err := ParseSelector(` serving_outcome_fact.ttft_p99_ms { run_id="a\"b", concurrency!="32",model=~"tiny|big", params!~` + "`x.*`" + ` } `)
	if err != nil {
		t.Fatal(err)
	}
	if s.Table != "serving_outcome_fact" || s.Column != "ttft_p99_ms" || len(s.Matchers) != 4 {
		t.Fatalf("%+v", s)
	}
	m := s.Matchers
	if m[0].Value != `a"b` || m[1].Op != "!=" || !m[2].Matches("big") || m[2].Matches("bigger") || m[3].Matches("xy") || !m[3].Matches("yx") {
		t.Fatalf("matchers %+v", m)
	}
	if got := s.String(); got != `serving_outcome_fact.ttft_p99_ms{run_id="a\"b",concurrency!="32",model=~"tiny|big",params!~"x.*"}` {
		t.Fatalf("String() = %s", got)
	}
	if s, err := ParseSelector("benchmark_run_fact.status"); err != nil || len(s.Matchers) != 0 {
		t.Fatalf("no braces: %+v, %v", s, err)
	}
	for _, bad := range []string{"", "table", "t.c{", "t.c{a}", "t.c{a=b}", `t.c{a='b'}`, `t.c{a="b" c="d"}`, `t.c{a=~"("}`, `t.c x`} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParsePubRef(t *testing.T) {
	f := func(s string, want PubRef, ok, bad bool) {
		t.Helper()
		got, isPub, err := ParsePubRef(s)
		if isPub != ok || (err != nil) != bad || (!bad && got != want) {
			t.Errorf("ParsePubRef(%q) = %+v, %v, %v", s, got, isPub, err)
		}
	}
	f("pub:abcd", PubRef{ID: "abcd"}, true, false)
	f("pub:abcd/3", PubRef{ID: "abcd", Row: 3}, true, false)
	f("pub:abcd/3/p99", PubRef{ID: "abcd", Row: 3, Column: "p99"}, true, false)
	f("pub:abcd/0", PubRef{}, true, true)
	f("pub:abcd/x", PubRef{}, true, true)
	f("pub:/1", PubRef{}, true, true)
	f("pub:a/1/c/d", PubRef{}, true, true)
	f("t.c{}", PubRef{}, false, false)
}

// Cells of the synthetic batches: float labels compare as text, params keys
// are labels, and the candidates name cells by key.
func TestFindCell(t *testing.T) {
	w, err := duckdb.Open(t.Context(), filepath.Join(t.TempDir(), "w.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, b := range warehousetest.CanonicalBatches() {
		if err := w.WriteRun(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Query(t.Context(), "SELECT run_id, concurrency, ttft_p99_ms FROM serving_outcome_fact WHERE concurrency IS NOT NULL ORDER BY run_id, point LIMIT 1")
	if err != nil || len(res.Rows) != 1 {
		t.Fatal(res, err)
	}
	run, conc := res.Rows[0][0].(string), text(res.Rows[0][1])
	f := func(sel string) (*Cell, error) {
		t.Helper()
		s, err := ParseSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		return FindCell(t.Context(), w, s)
	}
	c, err := f(`serving_outcome_fact.ttft_p99_ms{run_id="` + run + `",concurrency="` + conc + `"}`)
	if err != nil || c.Value != res.Rows[0][2] {
		t.Fatalf("by a float label (concurrency=%s): %v, %v", conc, c, err)
	}
	c, err = f(`storage_outcome_fact.ops_per_s{run_id="run-a",block_size="8192",op="write"}`)
	if err != nil || c.RowMap()["point"] != int64(1) {
		t.Fatalf("by a params key: %+v, %v", c, err)
	}
	_, err = f(`storage_outcome_fact.ops_per_s{block_size="8192",op="write"}`)
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Matches != 3 || !strings.Contains(amb.Candidates[0], `{run_id="run-a",point="1",op="write"} = `) {
		t.Fatalf("ambiguous: %v", err)
	}
	_, err = f(`storage_outcome_fact.ops_per_s{run_id="run-a",point="x"}`)
	var nm *NoMatchError
	if !errors.As(err, &nm) || !strings.Contains(err.Error(), `point is one of "0", "1", "2"`) {
		t.Fatalf("no match: %v", err)
	}
	// With a params column an unknown label is a parameter no row has; without
	// one it is bad input.
	if _, err := f(`storage_outcome_fact.ops_per_s{nope="x"}`); !errors.As(err, &nm) {
		t.Fatalf("unknown params key: %v", err)
	}
	var ie *InputError
	if _, err := f(`benchmark_run_fact.status{nope="x"}`); !errors.As(err, &ie) {
		t.Fatalf("unknown label without params: %v", err)
	}
}
