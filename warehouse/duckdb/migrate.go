package duckdb

import (
	"context"
	"fmt"
	"time"

	"github.com/perfwh/perfwh/warehouse"
)

const migrationsTable = "schema_migrations"

// Migrate creates schema_migrations if needed and applies every pending
// migration, each with its version row in one transaction. Running it again
// does nothing. A file migrated by a newer perfwh (a version above
// warehouse.SchemaVersion) is refused rather than touched.
func (w *Warehouse) Migrate(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := warehouse.Lookup(migrationsTable)
	if !ok {
		return fmt.Errorf("migrate %s: the schema has no %s table", w.path, migrationsTable)
	}
	ddl, err := warehouse.Render([]warehouse.Table{t}, warehouse.DDLOptions{Dialect: warehouse.DuckDB})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", w.path, err)
	}
	if _, err := w.db.ExecContext(ctx, ddl[0]); err != nil {
		return fmt.Errorf("migrate %s: create %s: %w", w.path, migrationsTable, err)
	}
	version, err := w.version(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", w.path, err)
	}
	if version > warehouse.SchemaVersion {
		return fmt.Errorf("migrate %s: schema version %d is newer than this perfwh's %d: upgrade perfwh", w.path, version, warehouse.SchemaVersion)
	}
	for _, m := range warehouse.Pending(version) {
		if err := w.apply(ctx, m); err != nil {
			return fmt.Errorf("migrate %s to version %d (%s): %w", w.path, m.Version, m.Description, err)
		}
	}
	return nil
}

func (w *Warehouse) apply(ctx context.Context, m warehouse.Migration) error {
	stmts, err := m.Statements(warehouse.DDLOptions{Dialect: warehouse.DuckDB})
	if err != nil {
		return err
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%w\n%s", err, s)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)`,
		int64(m.Version), m.Description, time.Now().UTC().Truncate(time.Second)); err != nil {
		return fmt.Errorf("record migration: %w", err)
	}
	return tx.Commit()
}

// version returns the highest applied migration, 0 when schema_migrations
// is missing or empty.
func (w *Warehouse) version(ctx context.Context) (int, error) {
	exists, err := w.tableExists(ctx, migrationsTable)
	if err != nil || !exists {
		return 0, err
	}
	var v int64
	if err := w.db.QueryRowContext(ctx, `SELECT COALESCE(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v), nil
}

func (w *Warehouse) tableExists(ctx context.Context, name string) (bool, error) {
	var n int64
	err := w.db.QueryRowContext(ctx,
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up table %s: %w", name, err)
	}
	return n > 0, nil
}

// Status reports the schema version, the DuckDB version and the row count
// of every schema table that exists (none before the first Migrate).
func (w *Warehouse) Status(ctx context.Context) (warehouse.Status, error) {
	st := warehouse.Status{Dialect: warehouse.DuckDB, Location: w.path, Latest: warehouse.SchemaVersion, Tables: []warehouse.TableStatus{}}
	if err := w.db.QueryRowContext(ctx, `SELECT version()`).Scan(&st.ServerVersion); err != nil {
		return st, fmt.Errorf("status of %s: read DuckDB version: %w", w.path, err)
	}
	v, err := w.version(ctx)
	if err != nil {
		return st, fmt.Errorf("status of %s: %w", w.path, err)
	}
	st.SchemaVersion = v
	if v == 0 {
		return st, nil
	}
	for _, t := range warehouse.Tables {
		exists, err := w.tableExists(ctx, t.Name)
		if err != nil {
			return st, fmt.Errorf("status of %s: %w", w.path, err)
		}
		if !exists {
			continue
		}
		var n int64
		// The name comes from the schema, never from input.
		if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM `+t.Name).Scan(&n); err != nil {
			return st, fmt.Errorf("status of %s: count %s: %w", w.path, t.Name, err)
		}
		st.Tables = append(st.Tables, warehouse.TableStatus{Name: t.Name, Rows: n})
	}
	return st, nil
}
