package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/engines"
)

const quickCase = `name: crash-test
driver: fileio
workload:
  mode: [read, write]
  file_size: 1MiB
  block_size: 4KiB
  fsync: 32
repetitions: 2
warmup_operations: 50
operations: 2000
collectors:
  host: {interval: 20ms}
`

// tableCounts counts every table, logically (FINAL on ClickHouse) and
// physically (what is stored, merged or not), and fails when a key appears
// twice. It opens the warehouse in-process after perfwh has exited.
func tableCounts(t *testing.T, wh string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	w, err := engines.Open(ctx, wh)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	final := ""
	if w.Dialect() == warehouse.ClickHouse {
		final = " FINAL"
	}
	var parts []string
	for _, tb := range warehouse.Tables {
		if tb.Name == "schema_migrations" {
			continue
		}
		keys := strings.Join(tb.Key, ", ")
		parts = append(parts,
			fmt.Sprintf("SELECT '%s' AS name, count(*) AS n FROM %s%s", tb.Name, tb.Name, final),
			fmt.Sprintf("SELECT '%s (physical)' AS name, count(*) AS n FROM %s", tb.Name, tb.Name),
			fmt.Sprintf("SELECT '%s (duplicate keys)' AS name, count(*) AS n FROM (SELECT %s FROM %s%s GROUP BY %s HAVING count(*) > 1) d",
				tb.Name, keys, tb.Name, final, keys))
	}
	r, err := w.Query(ctx, strings.Join(parts, " UNION ALL "))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, row := range r.Rows {
		name, n := row[0].(string), row[1].(int64)
		if strings.HasSuffix(name, "(duplicate keys)") && n != 0 {
			t.Fatalf("%s: %d", name, n)
		}
		out[name] = n
	}
	return out
}

func ingestCmd(home, wh string) error {
	out, err := command(home, "--warehouse", wh, "ingest").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// SIGKILL at random points of an ingest, then a re-run, ends with exactly
// the rows of one clean ingest, on both engines.
func TestIngestSurvivesSIGKILL(t *testing.T) {
	home := t.TempDir()
	cs := filepath.Join(home, "case.yaml")
	if err := os.WriteFile(cs, []byte(quickCase), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if out, err := command(home, "run", cs).CombinedOutput(); err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
	}
	engines := map[string]func(t *testing.T, i int) string{
		"duckdb": func(t *testing.T, i int) string {
			return "duckdb://" + filepath.Join(t.TempDir(), fmt.Sprintf("wh%d.duckdb", i))
		},
		"clickhouse": func(t *testing.T, i int) string { _, u := testenv.ClickHouseDatabase(t); return u },
	}
	for name, fresh := range engines {
		t.Run(name, func(t *testing.T) {
			// Time a clean ingest three times (the first ones warm caches) and
			// kill at uniformly random points within the fastest.
			var ref string
			full := time.Hour
			for i := range 3 {
				ref = fresh(t, 100+i)
				start := time.Now()
				if err := ingestCmd(home, ref); err != nil {
					t.Fatalf("clean ingest: %v", err)
				}
				full = min(full, time.Since(start))
			}
			want := tableCounts(t, ref)
			if want["benchmark_run_fact"] != 4 || want["ingest_ledger"] != 4 {
				t.Fatalf("clean ingest counts %v", want)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			// Iterate until 20 kills have landed mid-ingest (a kill that comes
			// after the process finished still checks the re-run).
			killed, i := 0, 0
			for killed < 20 && i < 80 {
				i++
				wh := fresh(t, i)
				cmd := command(home, "--warehouse", wh, "ingest")
				started := time.Now()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				after := time.Duration(rng.Int64N(int64(full)))
				select {
				case <-exited:
					// Finished before the kill: the machine is faster now than
					// when full was measured; aim the next kills earlier.
					full = min(full, time.Since(started))
				case <-time.After(after):
					_ = cmd.Process.Signal(syscall.SIGKILL)
					if err := <-exited; err != nil {
						killed++
					}
				}
				if err := ingestCmd(home, wh); err != nil {
					t.Fatalf("iteration %d (killed after %s): re-run: %v", i, after, err)
				}
				got := tableCounts(t, wh)
				for table, n := range want {
					if got[table] != n {
						t.Fatalf("iteration %d (killed after %s of %s): %s has %d rows; one clean ingest has %d",
							i, after.Round(time.Millisecond), full.Round(time.Millisecond), table, got[table], n)
					}
				}
			}
			t.Logf("%s: clean ingest %s; %d of %d ingests killed mid-way, all recovered to the clean counts", name, full.Round(time.Millisecond), killed, i)
			if killed < 20 {
				t.Fatalf("only %d of %d kills landed before the ingest finished", killed, i)
			}
		})
	}
}

// Two ingest processes at once end with the rows of one.
func TestConcurrentIngests(t *testing.T) {
	home := t.TempDir()
	cs := filepath.Join(home, "case.yaml")
	if err := os.WriteFile(cs, []byte(quickCase), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if out, err := command(home, "run", cs).CombinedOutput(); err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
	}
	for _, name := range []string{"duckdb", "clickhouse"} {
		t.Run(name, func(t *testing.T) {
			wh := "duckdb://" + filepath.Join(t.TempDir(), "wh.duckdb")
			if name == "clickhouse" {
				_, wh = testenv.ClickHouseDatabase(t)
			}
			// Separate homes: separate ingest locks, so the processes really race.
			a, b := command(t.TempDir(), "--store", "file://"+filepath.Join(home, "store"), "--warehouse", wh, "ingest"),
				command(t.TempDir(), "--store", "file://"+filepath.Join(home, "store"), "--warehouse", wh, "ingest")
			if err := a.Start(); err != nil {
				t.Fatal(err)
			}
			if err := b.Start(); err != nil {
				t.Fatal(err)
			}
			if err := a.Wait(); err != nil {
				t.Fatalf("first ingest: %v", err)
			}
			if err := b.Wait(); err != nil {
				t.Fatalf("second ingest: %v", err)
			}
			got := tableCounts(t, wh)
			if got["benchmark_run_fact"] != 3 || got["ingest_ledger"] != 3 || got["storage_outcome_fact"] != 9 {
				t.Fatalf("counts after two concurrent ingests: %v", got)
			}
		})
	}
}

// ingest --watch picks up runs committed while it watches and stops
// cleanly on SIGTERM.
func TestIngestWatch(t *testing.T) {
	home := t.TempDir()
	cs := filepath.Join(home, "case.yaml")
	if err := os.WriteFile(cs, []byte(quickCase), 0o644); err != nil {
		t.Fatal(err)
	}
	wh := "duckdb://" + filepath.Join(home, "wh.duckdb")
	watch := command(home, "--warehouse", wh, "ingest", "--watch", "--every", "200ms")
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer watch.Process.Kill()
	for range 2 {
		if out, err := command(home, "run", cs).CombinedOutput(); err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
	}
	// DuckDB admits one process per file, so ask through the watcher's
	// results only after it stops; give it time for a pass after the runs.
	time.Sleep(1500 * time.Millisecond)
	if err := watch.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch exited with %v after SIGTERM; want 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop within 10s of SIGTERM")
	}
	if got := tableCounts(t, wh); got["ingest_ledger"] != 2 || got["benchmark_run_fact"] != 2 {
		t.Fatalf("after watching two runs: %v", got)
	}
}
