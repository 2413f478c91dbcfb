package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/perfwh/perfwh/warehouse"
)

// ddlOptions are the rendering options of this warehouse.
func (w *Warehouse) ddlOptions() warehouse.DDLOptions {
	return warehouse.DDLOptions{Dialect: warehouse.ClickHouse, Database: w.cfg.Database, Cluster: w.cfg.Cluster}
}

// onCluster is the ON CLUSTER clause of database-level DDL, if any.
func (w *Warehouse) onCluster() string {
	if w.cfg.Cluster == "" {
		return ""
	}
	return " ON CLUSTER " + w.cfg.Cluster
}

// Migrate creates the database and brings the schema to
// warehouse.SchemaVersion: it creates schema_migrations, runs every pending
// migration rendered for this server (ON CLUSTER DDL with ?cluster=), and
// records each version. Every statement is CREATE ... IF NOT EXISTS, so a
// migration interrupted half-way is simply run again; concurrent Migrate
// calls record the same version twice, which the ReplacingMergeTree
// collapses.
func (w *Warehouse) Migrate(ctx context.Context) error {
	if err := w.conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+w.cfg.Database+w.onCluster()); err != nil {
		return fmt.Errorf("migrate: create database %s: %w", w.cfg.Database, err)
	}
	sm, ok := warehouse.Lookup("schema_migrations")
	if !ok {
		return fmt.Errorf("migrate: the schema has no schema_migrations table")
	}
	boot, err := warehouse.Render([]warehouse.Table{sm}, w.ddlOptions())
	if err != nil {
		return fmt.Errorf("migrate: render schema_migrations: %w", err)
	}
	for _, s := range boot {
		if err := w.conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("migrate: create %s.schema_migrations: %w", w.cfg.Database, err)
		}
	}
	version, err := w.schemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range warehouse.Pending(version) {
		stmts, err := m.Statements(w.ddlOptions())
		if err != nil {
			return fmt.Errorf("migrate: render migration %d: %w", m.Version, err)
		}
		for i, s := range stmts {
			if err := w.conn.Exec(ctx, s); err != nil {
				return fmt.Errorf("migrate: migration %d (%s), statement %d %q: %w", m.Version, m.Description, i+1, firstLine(s), err)
			}
		}
		b, err := w.conn.PrepareBatch(w.insertCtx(ctx), "INSERT INTO "+w.name("schema_migrations")+" (version, description, applied_at)")
		if err != nil {
			return fmt.Errorf("migrate: record migration %d: %w", m.Version, err)
		}
		if err := b.Append(int64(m.Version), m.Description, time.Now().UTC().Truncate(time.Second)); err != nil {
			b.Abort()
			return fmt.Errorf("migrate: record migration %d: %w", m.Version, err)
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("migrate: record migration %d: %w", m.Version, err)
		}
	}
	return nil
}

// schemaVersion returns the highest applied migration (0 when none).
func (w *Warehouse) schemaVersion(ctx context.Context) (int, error) {
	var v int64
	if err := w.conn.QueryRow(ctx, "SELECT max(version) FROM "+w.name("schema_migrations")).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version from %s.schema_migrations: %w", w.cfg.Database, err)
	}
	return int(v), nil
}

// insertCtx returns the context inserts run under: on a cluster, inserts
// into Distributed tables are synchronous, so that WriteRun's checks after
// an insert see its rows.
func (w *Warehouse) insertCtx(ctx context.Context) context.Context {
	if w.cfg.Cluster == "" {
		return ctx
	}
	return ch.Context(ctx, ch.WithSettings(ch.Settings{"insert_distributed_sync": 1}))
}

// firstLine returns the first SQL line of a statement, skipping comments.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			return l
		}
	}
	return s
}
