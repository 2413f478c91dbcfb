package clickhouse

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/warehouse"
)

// structure describes every table of a database as the server sees it:
// engine, keys and columns.
func structure(t *testing.T, db string) string {
	t.Helper()
	c := testenv.ClickHouseConn(t)
	ctx := t.Context()
	var b strings.Builder
	rows, err := c.Query(ctx, "SELECT name, engine, partition_key, sorting_key FROM system.tables WHERE database = ? ORDER BY name", db)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, engine, part, sort string
		if err := rows.Scan(&name, &engine, &part, &sort); err != nil {
			t.Fatal(err)
		}
		b.WriteString(name + " " + engine + " partition(" + part + ") order(" + sort + ")\n")
	}
	rows.Close()
	rows, err = c.Query(ctx, "SELECT table, name, type FROM system.columns WHERE database = ? ORDER BY table", db)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, name, typ string
		if err := rows.Scan(&table, &name, &typ); err != nil {
			t.Fatal(err)
		}
		b.WriteString("  " + table + "." + name + " " + typ + "\n")
	}
	rows.Close()
	return b.String()
}

// Migrate executes the rendered single-node DDL on the server; the golden
// file sql/ddl/clickhouse.sql, fed to clickhouse-client --multiquery with
// its database renamed, creates exactly the same tables.
func TestGoldenDDLWithClickHouseClient(t *testing.T) {
	w := open(t)
	if err := w.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	migrated := structure(t, w.cfg.Database)
	if n := strings.Count(migrated, "ReplacingMergeTree"); n != len(warehouse.Tables) {
		t.Fatalf("migrated database has %d ReplacingMergeTree tables; want %d:\n%s", n, len(warehouse.Tables), migrated)
	}

	client, err := exec.LookPath("clickhouse-client")
	if err != nil {
		testenv.Missing(t, "clickhouse-client", "install it: apt-get install clickhouse-client")
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "sql", "ddl", "clickhouse.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db, _ := testenv.ClickHouseDatabase(t)
	sql := regexp.MustCompile(`\bperfwh\.`).ReplaceAll(golden, []byte(db+"."))
	u, _ := url.Parse(testenv.ClickHouseURL(t))
	cmd := exec.CommandContext(t.Context(), client, "--host", u.Hostname(), "--port", u.Port(), "--multiquery")
	cmd.Stdin = bytes.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clickhouse-client --multiquery < clickhouse.sql: %v\n%s", err, out)
	}
	fromGolden := structure(t, db)
	if strings.ReplaceAll(fromGolden, db, "DB") != strings.ReplaceAll(migrated, w.cfg.Database, "DB") {
		t.Fatalf("tables from the golden file differ from Migrate's:\ngolden:\n%s\nmigrated:\n%s", fromGolden, migrated)
	}
}

// The test server has no ZooKeeper, so ON CLUSTER statements cannot run;
// the server still parses each one before refusing it, which is what this
// checks for the golden cluster DDL and every ON CLUSTER statement
// Migrate and WriteRun issue with ?cluster=.
func TestClusterStatementsParse(t *testing.T) {
	db, u := testenv.ClickHouseDatabase(t)
	w, err := Open(t.Context(), u+"?cluster=perfwh_cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	golden, err := os.ReadFile(filepath.Join("..", "..", "sql", "ddl", "clickhouse-cluster.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for _, s := range strings.Split(string(golden), ";\n") {
		if strings.Contains(s, "CREATE") {
			stmts = append(stmts, strings.ReplaceAll(s, "perfwh.", db+"."))
		}
	}
	if len(stmts) != 2*len(warehouse.Tables) {
		t.Fatalf("clickhouse-cluster.sql has %d statements; want %d", len(stmts), 2*len(warehouse.Tables))
	}
	stmts = append(stmts,
		"CREATE DATABASE IF NOT EXISTS "+db+w.onCluster(),
		"ALTER TABLE "+w.local("run_metadata")+" DELETE WHERE run_id = 'r' AND key IN ('a', 'b')",
		"OPTIMIZE TABLE "+w.local("run_metadata")+" FINAL",
	)
	for _, s := range stmts {
		err := w.conn.Exec(t.Context(), s)
		var e *ch.Exception
		switch {
		case err == nil:
			t.Errorf("%s: ran without ZooKeeper; the test assumes it cannot", firstLine(s))
		case errors.As(err, &e) && e.Code == 62: // SYNTAX_ERROR
			t.Errorf("%s: does not parse on this server: %v", firstLine(s), err)
		case errors.As(err, &e) && e.Code == 49: // "DDL background thread is not initialized": parsed, then refused
		default:
			t.Errorf("%s: unexpected error: %v", firstLine(s), err)
		}
	}
	// Waiting for mutations reads every node's system.mutations.
	if err := w.waitMutations(context.Background(), "run_metadata"); err != nil {
		t.Errorf("waitMutations on a cluster: %v", err)
	}
}
