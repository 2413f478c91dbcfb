package testenv

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// EnvClickHouse names the ClickHouse server the tests use, as a perfwh
// warehouse URL (clickhouse://127.0.0.1:PORT/perfwh_test);
// scripts/testenv/clickhouse.sh starts one and prints it.
const EnvClickHouse = "PERFWH_TEST_CLICKHOUSE"

// ClickHouseURL returns the test server's warehouse URL.
func ClickHouseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvClickHouse)
	if u == "" {
		Missing(t, "ClickHouse server", EnvClickHouse+` is not set; start one with: eval "$(scripts/testenv/clickhouse.sh start /tmp/perfwh-clickhouse)"`)
	}
	return u
}

// ClickHouseConn connects to the test server directly, bypassing perfwh,
// with no default database. It is closed when the test ends.
func ClickHouseConn(t testing.TB) driver.Conn {
	t.Helper()
	u, err := url.Parse(ClickHouseURL(t))
	if err != nil {
		t.Fatalf("%s: %v", EnvClickHouse, err)
	}
	c, err := ch.Open(&ch.Options{Addr: []string{u.Host}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("connect to ClickHouse at %s: %v", u.Host, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ClickHouseDatabase creates a database unique to this test and returns
// its name and the test server's warehouse URL pointing at it (the
// server's URL options kept). The database is dropped when the test ends.
func ClickHouseDatabase(t testing.TB) (name, warehouseURL string) {
	t.Helper()
	u, err := url.Parse(ClickHouseURL(t))
	if err != nil {
		t.Fatalf("%s: %v", EnvClickHouse, err)
	}
	c := ClickHouseConn(t)
	name = "perfwh_test_" + RandomHex(6)
	ctx := context.Background()
	if err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return name, u.String()
}
