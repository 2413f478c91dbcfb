package cli

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// The embedded default end to end: run, ingest, query, status.
func TestIngestSQLStatusOnDefaultWarehouse(t *testing.T) {
	home := t.TempDir()
	cs := writeCase(t, smallCase)
	if out, stderr, code := perfwh(t, home, "run", cs, "-o", "json"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code := perfwh(t, home, "ingest", "-o", "json")
	if code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, stderr)
	}
	var sum struct {
		Ingested int            `json:"ingested"`
		Rows     map[string]int `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Ingested != 1 || sum.Rows["storage_outcome_fact"] != 2 {
		t.Fatalf("ingest summary %s (%v)", out, err)
	}
	out, _, code = perfwh(t, home, "ingest")
	if code != 0 || !strings.Contains(out, "ingested 0, already present 1") {
		t.Fatalf("second ingest (exit %d):\n%s", code, out)
	}
	out, stderr, code = perfwh(t, home, "sql", "-o", "csv",
		"SELECT r.benchmark_name, o.op, o.samples, o.latency_p99_ms > 0 AS has_p99 FROM benchmark_run_fact r JOIN storage_outcome_fact o ON o.run_id = r.run_id ORDER BY o.point")
	if code != 0 {
		t.Fatalf("sql: exit %d\n%s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][0] != "cli-test" || recs[1][1] != "read" || recs[1][2] != "256" || recs[1][3] != "1" {
		t.Fatalf("sql csv:\n%s (%v)", out, err)
	}
	if _, stderr, code := perfwh(t, home, "sql", "SELEKT 1"); code != ExitUsage || !strings.Contains(stderr, "query") {
		t.Fatalf("bad SQL: exit %d, %s", code, stderr)
	}
	if _, _, code := perfwh(t, home, "runs", "list", "-o", "csv"); code != ExitUsage {
		t.Fatalf("csv outside sql: exit %d; want 2", code)
	}
	out, _, code = perfwh(t, home, "warehouse", "status", "-o", "json")
	var st struct {
		Dialect       string `json:"dialect"`
		SchemaVersion int    `json:"schema_version"`
		Tables        []struct {
			Name string `json:"name"`
			Rows int64  `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || st.Dialect != "duckdb" || st.SchemaVersion != 1 {
		t.Fatalf("status %s (%v)", out, err)
	}
	for _, tb := range st.Tables {
		if tb.Name == "benchmark_run_fact" && tb.Rows != 1 {
			t.Fatalf("benchmark_run_fact rows %d", tb.Rows)
		}
	}
}
