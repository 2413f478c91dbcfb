package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	// The driver registers itself as "duckdb" with database/sql.
	_ "github.com/marcboeker/go-duckdb/v2"

	"github.com/perfwh/perfwh/warehouse"
)

// DefaultLockTimeout is how long Open waits for another process to release
// the database file.
const DefaultLockTimeout = 60 * time.Second

// ErrLocked means another process held the database file for longer than
// the lock timeout. Open's error wraps it: test with errors.Is.
var ErrLocked = errors.New("another perfwh process holds the DuckDB file")

// Warehouse is the warehouse.Warehouse on an embedded DuckDB file. It is
// safe for concurrent use; its writes are serialised (see doc.go).
type Warehouse struct {
	db   *sql.DB
	path string
	// mu serialises Migrate and WriteRun of every Warehouse of this process
	// on the same file: DuckDB shares one database instance per file within
	// a process, and its optimistic concurrency control would otherwise let
	// two first writes of one run both insert (there is no PRIMARY KEY).
	mu *sync.Mutex
	// write appends the rows of one table inside WriteRun's transaction;
	// tests swap it to compare strategies (see bench_test.go).
	write writeFunc
}

var _ warehouse.Warehouse = (*Warehouse)(nil)

// Option configures Open.
type Option func(*options)

type options struct {
	lockTimeout time.Duration
}

// LockTimeout sets how long Open retries while another process holds the
// file (default DefaultLockTimeout). Zero or less tries once.
func LockTimeout(d time.Duration) Option {
	return func(o *options) { o.lockTimeout = d }
}

// fileLocks holds one write mutex per database file opened by this process.
var fileLocks sync.Map // absolute path → *sync.Mutex

// Open opens (creating it and its directory if needed) the DuckDB file at
// path. DuckDB lets one process at a time open a file read-write: while
// another process holds it, Open retries with backoff for the lock timeout,
// then fails with an error that wraps ErrLocked. Open does not migrate.
func Open(ctx context.Context, path string, opts ...Option) (*Warehouse, error) {
	o := options{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" || path == ":memory:" {
		return nil, errors.New("open duckdb warehouse: a file path is required")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open duckdb warehouse %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open duckdb warehouse %s: %w", path, err)
	}
	if err := createAtomically(ctx, abs); err != nil {
		return nil, fmt.Errorf("open duckdb warehouse %s: %w", path, err)
	}
	db, err := openRetrying(ctx, abs, o.lockTimeout)
	if err != nil {
		return nil, err
	}
	mu, _ := fileLocks.LoadOrStore(abs, &sync.Mutex{})
	return &Warehouse{db: db, path: path, mu: mu.(*sync.Mutex), write: appendRows}, nil
}

// createAtomically makes a new database file appear whole: DuckDB writes
// its header after creating the file, so a process killed in between (an
// ingest killed at start-up) would leave a file no later open accepts.
// The file is initialised under a temporary name and linked into place;
// link(2) fails if another process created it meanwhile, which is fine.
func createAtomically(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return nil // exists (or cannot be checked: let the open report it)
	}
	tmp := fmt.Sprintf("%s.creating-%d", path, os.Getpid())
	_ = os.Remove(tmp)
	defer os.Remove(tmp)
	defer os.Remove(tmp + ".wal")
	db, err := openOnce(ctx, tmp)
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// openRetrying opens the file, retrying while another process holds its
// lock: 50ms doubling to 2s between tries, until timeout or ctx ends.
func openRetrying(ctx context.Context, path string, timeout time.Duration) (*sql.DB, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	wait := 50 * time.Millisecond
	for {
		db, err := openOnce(ctx, path)
		if err == nil {
			return db, nil
		}
		if !isLockConflict(err) {
			return nil, fmt.Errorf("open duckdb warehouse %s: %w", path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("open duckdb warehouse %s: %w (waited %s; DuckDB allows one read-write process per file: stop the other process or retry later): %w",
				path, ErrLocked, time.Since(start).Round(time.Millisecond), err)
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("open duckdb warehouse %s: waiting for another perfwh process to release it: %w", path, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func openOnce(ctx context.Context, path string) (*sql.DB, error) {
	// go-duckdb opens the database file in sql.Open; a lock conflict
	// surfaces there.
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// isLockConflict reports whether err is DuckDB's "file is locked by another
// process" error. DuckDB has no error code for it; its message is stable:
// `IO Error: Could not set lock on file "…": Conflicting lock is held in …`.
func isLockConflict(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Could not set lock on file") || strings.Contains(s, "Conflicting lock is held")
}

// Dialect returns warehouse.DuckDB.
func (w *Warehouse) Dialect() string { return warehouse.DuckDB }

// Path returns the database file as given to Open.
func (w *Warehouse) Path() string { return w.path }

// Close releases the database; the file lock goes when the last Warehouse
// of this process on the file is closed.
func (w *Warehouse) Close() error {
	if err := w.db.Close(); err != nil {
		return fmt.Errorf("close duckdb warehouse %s: %w", w.path, err)
	}
	return nil
}
