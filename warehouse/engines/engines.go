// Package engines opens a warehouse from its URL:
//
//	duckdb:///abs/path/warehouse.duckdb   embedded DuckDB file (the default)
//	clickhouse://host:9000/db             ClickHouse over the native protocol
//
// A plain path is a DuckDB file.
package engines

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/clickhouse"
	"github.com/perfwh/perfwh/warehouse/duckdb"
)

// Open connects to the warehouse named by rawURL.
func Open(ctx context.Context, rawURL string) (warehouse.Warehouse, error) {
	switch {
	case strings.HasPrefix(rawURL, "clickhouse://"):
		return clickhouse.Open(ctx, rawURL)
	case strings.HasPrefix(rawURL, "duckdb://"):
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("warehouse URL: %w", err)
		}
		p := u.Path
		if u.Host != "" && u.Host != "localhost" {
			p = filepath.Join(u.Host, p) // duckdb://relative/path
		}
		if p == "" {
			return nil, fmt.Errorf("warehouse URL %q names no file: use duckdb:///abs/path/warehouse.duckdb", rawURL)
		}
		return duckdb.Open(ctx, p)
	case strings.Contains(rawURL, "://"):
		scheme, _, _ := strings.Cut(rawURL, "://")
		return nil, fmt.Errorf("unsupported warehouse URL scheme %q: use duckdb:///path or clickhouse://host:9000/db", scheme)
	case rawURL == "":
		return nil, fmt.Errorf("no warehouse URL")
	}
	return duckdb.Open(ctx, rawURL)
}
