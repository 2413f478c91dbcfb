package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/stores"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/engines"
)

// Factory holds global options and opens what a command needs, lazily: a
// command that never touches the store never opens it.
type Factory struct {
	IO     *IOStreams
	Output string // table | json
	Home   string // --home / PERFWH_HOME
	Store  string // --store / PERFWH_STORE
	WH     string // --warehouse / PERFWH_WAREHOUSE
	Level  string // --log-level

	once sync.Once
	repo *evidence.Repository
	err  error
}

// Environment variables read by perfwh.
const (
	EnvHome      = "PERFWH_HOME"
	EnvStore     = "PERFWH_STORE"
	EnvWarehouse = "PERFWH_WAREHOUSE"
)

// defaultHome is ~/.perfwh.
func defaultHome() string {
	if h := os.Getenv(EnvHome); h != "" {
		return h
	}
	if u, err := os.UserHomeDir(); err == nil {
		return filepath.Join(u, ".perfwh")
	}
	return ".perfwh"
}

// HomeDir returns the absolute home directory, created if missing.
func (f *Factory) HomeDir() (string, error) {
	h, err := filepath.Abs(f.Home)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(h, 0o755); err != nil {
		return "", fmt.Errorf("perfwh home %s: %w", h, err)
	}
	return h, nil
}

// StoreURL returns the configured store, defaulting to $PERFWH_HOME/store.
func (f *Factory) StoreURL() (string, error) {
	if f.Store != "" {
		return f.Store, nil
	}
	if s := os.Getenv(EnvStore); s != "" {
		return s, nil
	}
	h, err := f.HomeDir()
	if err != nil {
		return "", err
	}
	return "file://" + filepath.ToSlash(filepath.Join(h, "store")), nil
}

// WarehouseURL returns the configured warehouse, defaulting to
// duckdb://$PERFWH_HOME/warehouse.duckdb.
func (f *Factory) WarehouseURL() (string, error) {
	if f.WH != "" {
		return f.WH, nil
	}
	if s := os.Getenv(EnvWarehouse); s != "" {
		return s, nil
	}
	h, err := f.HomeDir()
	if err != nil {
		return "", err
	}
	return "duckdb://" + filepath.ToSlash(filepath.Join(h, "warehouse.duckdb")), nil
}

// Warehouse opens the warehouse; the caller closes it.
func (f *Factory) Warehouse(ctx context.Context) (warehouse.Warehouse, error) {
	u, err := f.WarehouseURL()
	if err != nil {
		return nil, err
	}
	w, err := engines.Open(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", u, err)
	}
	return w, nil
}

// Repo opens the evidence repository once.
func (f *Factory) Repo(ctx context.Context) (*evidence.Repository, error) {
	f.once.Do(func() {
		u, err := f.StoreURL()
		if err != nil {
			f.err = err
			return
		}
		be, err := stores.Open(ctx, u)
		if err != nil {
			f.err = fmt.Errorf("open store %s: %w", u, err)
			return
		}
		f.repo = evidence.NewRepository(be)
	})
	return f.repo, f.err
}

// Logger logs to stderr as text at the configured level.
func (f *Factory) Logger() *slog.Logger {
	lvl := slog.LevelInfo
	_ = lvl.UnmarshalText([]byte(f.Level))
	return slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: lvl}))
}

// JSON reports whether --output json was asked for.
func (f *Factory) JSON() bool { return f.Output == OutputJSON }
