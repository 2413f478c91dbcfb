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
)

// Factory holds global options and opens what a command needs, lazily: a
// command that never touches the store never opens it.
type Factory struct {
	IO     *IOStreams
	Output string // table | json
	Home   string // --home / PERFWH_HOME
	Store  string // --store / PERFWH_STORE
	Level  string // --log-level

	once sync.Once
	repo *evidence.Repository
	err  error
}

// Environment variables read by perfwh.
const (
	EnvHome  = "PERFWH_HOME"
	EnvStore = "PERFWH_STORE"
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
