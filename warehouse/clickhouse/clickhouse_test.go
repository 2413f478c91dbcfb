package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

// open returns a warehouse on a fresh database of the test server (never
// migrated), closed and dropped when t ends.
func open(t *testing.T) *Warehouse {
	t.Helper()
	_, u := testenv.ClickHouseDatabase(t)
	w, err := Open(t.Context(), u)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w
}

func TestConformance(t *testing.T) {
	warehousetest.Run(t, func(t *testing.T) warehouse.Warehouse { return open(t) })
}

func TestServerVersion(t *testing.T) {
	w := open(t)
	v := w.ServerVersion()
	if !v.AtLeast(MinVersion) {
		t.Fatalf("server %s is older than %s but Open accepted it", v, MinVersion)
	}
	st, err := w.Status(t.Context())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if !strings.HasPrefix(st.ServerVersion, fmt.Sprintf("%d.%d.", v.Major, v.Minor)) {
		t.Fatalf("Status.ServerVersion %q does not match %s", st.ServerVersion, v)
	}
	t.Logf("ClickHouse %s (parsed %s)", st.ServerVersion, v)
	if v.Major == 18 && v.Minor == 16 {
		// The oldest supported server: what perfwh is tested on.
		if v.AtLeast(Version{18, 17, 0}) || v.AtLeast(Version{19, 0, 0}) {
			t.Fatal("version comparison is wrong")
		}
	}
}

func TestVersion(t *testing.T) {
	f := func(s string, want Version, wantErr bool) {
		t.Helper()
		got, err := parseVersion(s)
		if (err != nil) != wantErr || got != want {
			t.Fatalf("parseVersion(%q) = %v, %v; want %v (error %v)", s, got, err, want, wantErr)
		}
	}
	f("18.16.1", Version{18, 16, 1}, false)
	f("23.8.2.7", Version{23, 8, 2}, false)
	f("24.3", Version{24, 3, 0}, false)
	f("dev", Version{}, true)
	for _, c := range []struct {
		a, b Version
		want bool
	}{
		{Version{18, 16, 1}, MinVersion, true},
		{Version{18, 14, 19}, MinVersion, false},
		{Version{19, 1, 0}, MinVersion, true},
		{Version{18, 16, 0}, Version{18, 16, 1}, false},
	} {
		if got := c.a.AtLeast(c.b); got != c.want {
			t.Fatalf("%s.AtLeast(%s) = %v; want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestParseURL(t *testing.T) {
	f := func(raw string, want Config) {
		t.Helper()
		got, err := ParseURL(raw)
		if err != nil {
			t.Fatalf("ParseURL(%q): %v", raw, err)
		}
		if got != want {
			t.Fatalf("ParseURL(%q) = %+v; want %+v", raw, got, want)
		}
	}
	base := Config{Addr: "ch:9000", Database: "perfwh", Username: "default", PasswordEnv: DefaultPasswordEnv}
	f("clickhouse://ch", base)
	c := base
	c.Addr, c.Database = "ch:9440", "perf"
	f("clickhouse://ch:9440/perf", c)
	c = base
	c.Username, c.PasswordEnv, c.Cluster, c.Secure, c.Compress = "ingest", "CH_PASS", "perfwh_cluster", true, true
	f("clickhouse://ch/perfwh?username=ingest&password_env=CH_PASS&cluster=perfwh_cluster&secure=true&compress=lz4", c)
	c = base
	c.Username = "alice"
	f("clickhouse://alice@ch/perfwh", c)
	if got := (Config{Addr: "ch:9000", Database: "d", Cluster: "c"}).Location(); got != "clickhouse://ch:9000/d?cluster=c" {
		t.Fatalf("Location = %q", got)
	}

	bad := func(raw, wantInErr string) {
		t.Helper()
		_, err := ParseURL(raw)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Fatalf("ParseURL(%q) error %v; want one containing %q", raw, err, wantInErr)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("ParseURL(%q) error leaks the password: %v", raw, err)
		}
	}
	bad("clickhouse://u:hunter2@ch/db", "password")
	bad("clickhouse://ch/db?password=hunter2", "password")
	bad("clickhouse://ch/db?pasword_env=X", "unknown option")
	bad("clickhouse://ch/db;drop", "identifier")
	bad("clickhouse://ch/db?cluster=a-b", "identifier")
	bad("http://ch/db", "scheme")
	bad("clickhouse:///db", "no host")
}

// A wrong password (from the environment) fails Open, and the error does
// not contain it.
func TestPasswordFromEnvNotLeaked(t *testing.T) {
	_, u := testenv.ClickHouseDatabase(t)
	const secret = "not-the-password-7f3a"
	t.Setenv("PERFWH_TEST_CH_SECRET", secret)
	w, err := Open(t.Context(), u+"?password_env=PERFWH_TEST_CH_SECRET")
	if err == nil {
		w.Close()
		t.Skip("the test server accepted a password for the default user; nothing to check")
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("Open error leaks the password: %v", err)
	}
	t.Logf("wrong password: %v", err)
}

// Query is read-only: writes and DDL are refused by the server.
func TestQueryIsReadOnly(t *testing.T) {
	w := open(t)
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO run_metadata (run_id, key, value) VALUES ('r', 'k', 'v')",
		"DROP TABLE run_metadata",
		"CREATE TABLE x (a String) ENGINE = Memory",
	} {
		if _, err := w.Query(t.Context(), q); err == nil {
			t.Errorf("Query(%q) succeeded; want a read-only error", q)
		}
	}
}

// Query normalises every ClickHouse type it meets into the types
// warehouse.Result promises.
func TestQueryNormalises(t *testing.T) {
	w := open(t)
	r, err := w.Query(t.Context(), `SELECT count() AS c, toUInt8(1) AS u8, toInt8(-1) AS i8, toUInt32(7) AS u32,
		toFloat32(0.5) AS f32, 2.25 AS f64, CAST(NULL AS Nullable(Float64)) AS nul, toNullable(1.5) AS nf,
		toDateTime('2024-05-01 12:00:00', 'UTC') AS dt, toDate('2024-05-01') AS d, 'x' AS s, toFixedString('ab', 2) AS fs,
		[toUInt8(1), toUInt8(2)] AS arr
		FROM system.one`)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	got := warehousetest.FormatResults(map[string]*warehouse.Result{"q": r})
	want := "== q\nc | u8 | i8 | u32 | f32 | f64 | nul | nf | dt | d | s | fs | arr\n" +
		"int64:1 | int64:1 | int64:-1 | int64:7 | float64:0.5 | float64:2.25 | nil | float64:1.5 | time:2024-05-01T12:00:00Z | time:2024-05-01T00:00:00Z | string:\"x\" | string:\"ab\" | []interface {}(not normalised):[1 2]\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// Arguments are bound client-side in forms 18.16 parses (no DateTime64).
	at := time.Date(2024, 5, 1, 12, 0, 0, 500, time.UTC)
	r, err = w.Query(t.Context(), "SELECT ? AS t, ? AS s, ? AS n, ? AS f", at, "it's", int64(-3), 0.25)
	if err != nil {
		t.Fatalf("Query with arguments: %v", err)
	}
	got = warehousetest.FormatResults(map[string]*warehouse.Result{"q": r})
	if want := "== q\nt | s | n | f\ntime:2024-05-01T12:00:00Z | string:\"it's\" | int64:-3 | float64:0.25\n"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := w.Query(t.Context(), "SELECT toUInt64(18446744073709551615) AS big"); err == nil || !strings.Contains(err.Error(), "big") {
		t.Fatalf("UInt64 above MaxInt64: error %v; want one naming the column", err)
	}
}

// physical returns the run's row count in table without FINAL: what is
// stored, duplicates included.
func physical(t *testing.T, w *Warehouse, table, run string) int64 {
	t.Helper()
	n, err := w.count(t.Context(), "SELECT count() FROM "+w.name(table)+" WHERE run_id = ?", run)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkPhysical checks that every run-scoped table stores exactly b's rows
// of the run once, without FINAL, and every dimension each key once.
func checkPhysical(t *testing.T, w *Warehouse, b *warehouse.Batch) {
	t.Helper()
	for _, tb := range warehouse.Tables {
		if !runScoped(tb) {
			if len(b.Rows[tb.Name]) == 0 {
				continue
			}
			n, err := w.count(t.Context(), "SELECT toUInt64(count() - uniqExact("+strings.Join(tb.Key, ", ")+")) FROM "+w.name(tb.Name))
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s stores %d duplicate rows physically", tb.Name, n)
			}
			continue
		}
		want := int64(len(b.Rows[tb.Name]))
		if tb.Name == "ingest_ledger" && b.Ledger != nil {
			want = 1
		}
		if got := physical(t, w, tb.Name, b.RunID); got != want {
			t.Errorf("%s stores %d rows of %s physically; want %d (one clean write)", tb.Name, got, b.RunID, want)
		}
	}
}

// A writer crashed after some fact rows and before the ledger; the rewrite
// leaves exactly one copy of every row, physically, and the ledger row.
func TestCrashBeforeLedgerThenRewrite(t *testing.T) {
	w := open(t)
	ctx := t.Context()
	if err := w.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := warehousetest.SyntheticBatch("run-crash", 1)
	crash(t, w, b, "benchmark_run_fact", "storage_outcome_fact", "telemetry_slice_fact")
	if led, _ := w.Ledger(ctx); len(led) != 0 {
		t.Fatalf("ledger after the crash: %v; want none", led)
	}
	if err := w.WriteRun(ctx, b); err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	checkPhysical(t, w, b)
	if led, _ := w.Ledger(ctx); len(led) != 1 {
		t.Fatalf("ledger after the rewrite: %v; want run-crash", led)
	}
}

// A committed run is rewritten by a derivation with fewer rows, and that
// rewrite crashes before its ledger: the run is then not committed (its old
// ledger row is gone), and the next rewrite leaves exactly its rows.
func TestCrashDuringRewriteUncommits(t *testing.T) {
	w := open(t)
	ctx := t.Context()
	if err := w.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := warehousetest.SyntheticBatch("run-r", 1)
	if err := w.WriteRun(ctx, b); err != nil {
		t.Fatal(err)
	}
	fewer := warehousetest.CloneBatch(b)
	fewer.Rows["telemetry_slice_fact"] = fewer.Rows["telemetry_slice_fact"][:5]
	delete(fewer.Rows, "run_metadata")
	fewer.Ledger.Rows = int64(fewer.Count())
	crashAfterUncommit(t, w, fewer, "telemetry_slice_fact")
	if led, _ := w.Ledger(ctx); len(led) != 0 {
		t.Fatalf("ledger after a crashed rewrite: %v; want none (the run must count as not ingested)", led)
	}
	if err := w.WriteRun(ctx, fewer); err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	checkPhysical(t, w, fewer)
}

// crash does what WriteRun does up to a crash after inserting tables' rows:
// no cleanup, no ledger.
func crash(t *testing.T, w *Warehouse, b *warehouse.Batch, tables ...string) {
	t.Helper()
	data, _, err := prepare(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tables {
		if err := w.insert(t.Context(), data[name]); err != nil {
			t.Fatal(err)
		}
	}
}

// crashAfterUncommit is crash preceded by WriteRun's un-commit step.
func crashAfterUncommit(t *testing.T, w *Warehouse, b *warehouse.Batch, tables ...string) {
	t.Helper()
	if err := w.deleteWhere(t.Context(), "ingest_ledger", "run_id = "+literal(b.RunID)); err != nil {
		t.Fatal(err)
	}
	crash(t, w, b, tables...)
}

// Writers in separate connections (as separate processes would be) write
// the same run at once: afterwards FINAL counts and the stored rows equal
// one write.
func TestConcurrentWritersSeparateConnections(t *testing.T) {
	w := open(t)
	ctx := t.Context()
	if err := w.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := warehousetest.SyntheticBatchN("run-c", 1, 500, 2000)
	const writers = 4
	ws := make([]*Warehouse, writers)
	for i := range ws {
		x, err := Open(ctx, w.cfg.Location())
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		ws[i] = x
	}
	for round := 0; round < 2; round++ { // the second round rewrites a committed run
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i, x := range ws {
			wg.Go(func() { errs[i] = x.WriteRun(ctx, b) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d writer %d: %v", round, i, err)
			}
		}
		for _, tb := range warehouse.Tables {
			want := int64(len(b.Rows[tb.Name]))
			if tb.Name == "ingest_ledger" {
				want = 1
			}
			if tb.Name == "schema_migrations" {
				continue
			}
			if got := finalCount(t, w, tb.Name); got != want {
				t.Errorf("round %d: SELECT count() FROM %s FINAL = %d; want %d", round, tb.Name, got, want)
			}
		}
		checkPhysical(t, w, b)
	}
}

func finalCount(t *testing.T, w *Warehouse, table string) int64 {
	t.Helper()
	n, err := w.count(t.Context(), "SELECT count() FROM "+w.name(table)+" FINAL")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Stale keys of an earlier derivation are deleted even when the rewrite
// has as many rows (other keys): counts alone would not notice.
func TestRewriteWithOtherKeys(t *testing.T) {
	w := open(t)
	ctx := context.Background()
	if err := w.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := warehousetest.SyntheticBatch("run-k", 1)
	if err := w.WriteRun(ctx, b); err != nil {
		t.Fatal(err)
	}
	other := warehousetest.CloneBatch(b)
	key := columnAt(t, "run_metadata", "key")
	for i, r := range other.Rows["run_metadata"] {
		r[key] = fmt.Sprintf("renamed-%d", i)
	}
	if err := w.WriteRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	checkPhysical(t, w, other)
	r, err := w.Query(ctx, "SELECT key FROM run_metadata FINAL WHERE run_id = 'run-k' ORDER BY key")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 || r.Rows[0][0] != "renamed-0" {
		t.Fatalf("run_metadata keys after the rewrite: %v; want renamed-0..2 only", r.Rows)
	}
}

func columnAt(t *testing.T, table, name string) int {
	tb, _ := warehouse.Lookup(table)
	for i, c := range tb.Columns {
		if c.Name == name {
			return i
		}
	}
	t.Fatalf("no column %s.%s", table, name)
	return -1
}
