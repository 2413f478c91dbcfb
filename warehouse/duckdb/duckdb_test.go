package duckdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

// The lock tests re-execute this test binary as a second process that
// opens the file named by envChildOpen, waiting up to envChildTimeout.
const (
	envChildOpen    = "PERFWH_DUCKDB_TEST_CHILD_OPEN"
	envChildTimeout = "PERFWH_DUCKDB_TEST_CHILD_TIMEOUT"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envChildOpen); path != "" {
		os.Exit(childOpen(path))
	}
	os.Exit(m.Run())
}

// childOpen is the second process: it opens path, migrates it and says
// what happened on stdout.
func childOpen(path string) int {
	timeout, err := time.ParseDuration(os.Getenv(envChildTimeout))
	if err != nil {
		fmt.Println("bad timeout:", err)
		return 2
	}
	ctx := context.Background()
	fmt.Println("opening")
	w, err := Open(ctx, path, LockTimeout(timeout))
	if err != nil {
		fmt.Printf("error (locked=%v): %v\n", errors.Is(err, ErrLocked), err)
		return 1
	}
	defer w.Close()
	if err := w.Migrate(ctx); err != nil {
		fmt.Println("migrate:", err)
		return 1
	}
	fmt.Println("opened and migrated")
	return 0
}

func openTemp(t *testing.T) warehouse.Warehouse {
	t.Helper()
	w, err := Open(t.Context(), filepath.Join(t.TempDir(), "wh", "warehouse.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w
}

func TestConformance(t *testing.T) {
	warehousetest.Run(t, openTemp)
}

// The INSERT strategy that BenchmarkWriteRunInsert measures must be as
// correct as the appender it is compared with.
func TestConformanceInsertStrategy(t *testing.T) {
	warehousetest.Run(t, func(t *testing.T) warehouse.Warehouse {
		w := openTemp(t)
		w.(*Warehouse).write = insertRows
		return w
	})
}

func TestDialectAndPath(t *testing.T) {
	w := openTemp(t).(*Warehouse)
	if w.Dialect() != warehouse.DuckDB || !strings.HasSuffix(w.Path(), "warehouse.duckdb") {
		t.Fatalf("got dialect %q path %q", w.Dialect(), w.Path())
	}
	if _, err := Open(t.Context(), ""); err == nil {
		t.Fatal("Open of an empty path succeeded; want an error")
	}
}

// Two Warehouses of one process on one file share DuckDB's database
// instance; their writes of one run must still end with one copy.
func TestTwoHandlesOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.duckdb")
	var ws []*Warehouse
	for range 2 {
		w, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ws = append(ws, w)
	}
	if err := ws[0].Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := warehousetest.SyntheticBatch("run-a", 1)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = ws[i%2].WriteRun(t.Context(), b) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	r, err := ws[1].Query(t.Context(), `SELECT count(*) FROM telemetry_slice_fact`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Rows[0][0], int64(len(b.Rows["telemetry_slice_fact"])); got != want {
		t.Fatalf("telemetry rows: got %v; want %d", got, want)
	}
}

// child starts the second process on path.
func child(t *testing.T, path string, timeout time.Duration) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildOpen+"="+path, envChildTimeout+"="+timeout.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

func TestSecondProcessWaitsForTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd, out := child(t, path, 60*time.Second)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	const hold = 2 * time.Second
	select {
	case err := <-done:
		w.Close()
		t.Fatalf("the second process ended (%v) while the first held the file:\n%s", err, out)
	case <-time.After(hold):
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second process: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "opened and migrated") {
		t.Fatalf("second process output:\n%s", out)
	}
	t.Logf("second process opened %s after %s", path, time.Since(start).Round(time.Millisecond))
	// The first can open it again now that the second has gone.
	w, err = Open(t.Context(), path, LockTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if st, err := w.Status(t.Context()); err != nil || st.SchemaVersion != warehouse.SchemaVersion {
		t.Fatalf("after the second process migrated: status %+v, %v", st, err)
	}
}

func TestSecondProcessGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.duckdb")
	w, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const timeout = 700 * time.Millisecond
	start := time.Now()
	cmd, out := child(t, path, timeout)
	err = cmd.Wait()
	elapsed := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second process: got %v; want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"locked=true", path, "another perfwh process holds", "waited"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("second process's error lacks %q:\n%s", want, out)
		}
	}
	if elapsed < timeout {
		t.Errorf("the second process gave up after %s; want at least the %s timeout", elapsed, timeout)
	}
	t.Logf("second process: %s", strings.TrimSpace(out.String()))
}

// A new file is created whole: no temporary file remains, and the file
// opens again.
func TestOpenCreatesFileAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.duckdb")
	w, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".creating-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
	w, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	w.Close()
}
