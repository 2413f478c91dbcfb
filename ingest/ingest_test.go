package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/local"
	"github.com/perfwh/perfwh/ingest"
	"github.com/perfwh/perfwh/internal/testwh"
	"github.com/perfwh/perfwh/runner"
	"github.com/perfwh/perfwh/spec"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"

	_ "github.com/perfwh/perfwh/collectors/all"
	_ "github.com/perfwh/perfwh/drivers/all"
)

// A real fileio case: two modes (one of them also fsyncs), two
// repetitions, warmup, host telemetry every 20 ms rolled into 100 ms slices.
const ingestCase = `name: ingest-test
driver: fileio
workload:
  mode: [randread, write]
  file_size: 1MiB
  block_size: 4KiB
  fsync: 64
repetitions: 2
warmup_operations: 200
duration: 250ms
collectors:
  host: {interval: 20ms}
metadata:
  cluster: lab
  ticket: PERF-1
`

// store makes a local store holding n runs of ingestCase.
func store(t *testing.T, n int) (*evidence.Repository, string) {
	t.Helper()
	home := t.TempDir()
	be, err := local.Open(filepath.Join(home, "store"))
	if err != nil {
		t.Fatal(err)
	}
	repo := evidence.NewRepository(be)
	c, err := spec.Parse("ingest.yaml", []byte(ingestCase), nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		res, err := runner.Run(context.Background(), pl, runner.Options{Repo: repo,
			StagingDir: filepath.Join(home, "staging"), ScratchDir: filepath.Join(home, "scratch")})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() != 0 {
			t.Fatalf("run had failed trials: %+v", res.Manifest.Trials)
		}
	}
	return repo, filepath.Join(home, "store")
}

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ingestAll(t *testing.T, repo *evidence.Repository, w warehouse.Warehouse) *ingest.Summary {
	t.Helper()
	if err := w.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := ingest.Run(context.Background(), ingest.Options{Repo: repo, Warehouse: w, Window: 100 * time.Millisecond,
		Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func count(t *testing.T, w warehouse.Warehouse, table string) int64 {
	t.Helper()
	r, err := w.Query(context.Background(), warehousetest.CountSQL(w, table))
	if err != nil {
		t.Fatal(err)
	}
	return r.Rows[0][0].(int64)
}

func TestIngestIsIdempotentAndComplete(t *testing.T) {
	repo, _ := store(t, 2)
	for name, open := range testwh.Engines() {
		t.Run(name, func(t *testing.T) {
			w := open(t)
			s := ingestAll(t, repo, w)
			if s.Ingested != 2 || s.Quarantined != 0 || s.AlreadyPresent != 0 {
				t.Fatalf("first pass %+v", s)
			}
			// 2 runs × 2 points × (randread: read; write: write + fsync) = 6 outcome rows.
			want := map[string]int64{"benchmark_run_fact": 2, "storage_outcome_fact": 6, "artifact_lineage_dim": 2,
				"workload_dim": 1, "run_metadata": 4, "ingest_ledger": 2, "cluster_region_dim": 1}
			check := func() {
				for table, n := range want {
					if got := count(t, w, table); got != n {
						t.Fatalf("%s has %d rows; want %d", table, got, n)
					}
				}
				if got := count(t, w, "telemetry_slice_fact"); int(got) != s.Rows["telemetry_slice_fact"] || got == 0 {
					t.Fatalf("telemetry_slice_fact has %d rows; ingest wrote %d", got, s.Rows["telemetry_slice_fact"])
				}
			}
			check()
			again := ingestAll(t, repo, w)
			if again.Ingested != 0 || again.AlreadyPresent != 2 {
				t.Fatalf("second pass %+v", again)
			}
			check()
			// The outcome table answers what a person asks of it.
			r, err := w.Query(context.Background(), fmt.Sprintf(
				"SELECT op, repetitions, samples, ops_per_s, latency_p99_ms FROM %s WHERE op = 'fsync'",
				warehousetest.From(w, "storage_outcome_fact")))
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range r.Rows {
				if row[1].(int64) != 2 || row[2].(int64) == 0 || row[3].(float64) <= 0 || row[4] == nil {
					t.Fatalf("fsync outcome row %v", row)
				}
			}
		})
	}
}

// Percentiles derived by ingest equal the engine's own exact quantile over
// the raw Parquet samples (DuckDB quantile_disc is nearest rank).
func TestPercentilesMatchEngineOverRawSamples(t *testing.T) {
	repo, root := store(t, 1)
	w := testwh.DuckDB(t)
	ingestAll(t, repo, w)
	ctx := context.Background()
	runs, _ := repo.ListRuns(ctx, nil)
	m, err := repo.ReadManifest(ctx, runs[0].ManifestDigest)
	if err != nil {
		t.Fatal(err)
	}
	files := map[int][]string{} // point -> sample blob paths
	for _, f := range m.Files {
		if f.Role != evidence.RoleSamples {
			continue
		}
		for _, tr := range m.Trials {
			if tr.ID == f.Trial {
				files[tr.Point] = append(files[tr.Point], "'"+filepath.Join(root, evidence.BlobName(f.Digest))+"'")
			}
		}
	}
	rows, err := w.Query(ctx, "SELECT point, op, samples, latency_p50_ms, latency_p90_ms, latency_p95_ms, latency_p99_ms, latency_p999_ms, latency_mean_ms FROM storage_outcome_fact")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Rows) != 3 {
		t.Fatalf("%d outcome rows; want 3", len(rows.Rows))
	}
	for _, row := range rows.Rows {
		point, op := row[0].(int64), row[1].(string)
		q := fmt.Sprintf(`SELECT count(*), quantile_disc(latency_ns / 1e6, 0.5), quantile_disc(latency_ns / 1e6, 0.9),
			quantile_disc(latency_ns / 1e6, 0.95), quantile_disc(latency_ns / 1e6, 0.99), quantile_disc(latency_ns / 1e6, 0.999),
			avg(latency_ns / 1e6)
			FROM read_parquet([%s]) WHERE phase = 'measure' AND ok AND op = '%s'`, strings.Join(files[int(point)], ","), op)
		ref, err := w.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got := ref.Rows[0]
		if got[0].(int64) != row[2].(int64) || got[0].(int64) < 50 {
			t.Fatalf("point %d %s: %v samples in parquet, %v in the warehouse", point, op, got[0], row[2])
		}
		for i := 1; i <= 5; i++ {
			if got[i].(float64) != row[i+2].(float64) {
				t.Fatalf("point %d %s: percentile column %d is %v; DuckDB quantile_disc over the raw samples says %v", point, op, i, row[i+2], got[i])
			}
		}
		if d := got[6].(float64) - row[8].(float64); d > 1e-9 || d < -1e-9 {
			t.Fatalf("point %d %s: mean %v vs %v", point, op, row[8], got[6])
		}
	}
}

// The same evidence ingested into DuckDB and ClickHouse reads back
// identically, percentiles included.
func TestEnginesAgree(t *testing.T) {
	repo, _ := store(t, 2)
	duck, ch := testwh.DuckDB(t), testwh.ClickHouse(t)
	ingestAll(t, repo, duck)
	ingestAll(t, repo, ch)
	results := func(w warehouse.Warehouse) map[string]*warehouse.Result {
		out := map[string]*warehouse.Result{}
		for _, tb := range warehouse.Tables {
			if tb.Name == "schema_migrations" {
				continue
			}
			q := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(tb.ColumnNames(), ", "),
				warehousetest.From(w, tb.Name), strings.Join(tb.Key, ", "))
			r, err := w.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: %v", tb.Name, err)
			}
			out[tb.Name] = r
		}
		return out
	}
	want, got := results(duck), results(ch)
	if len(want["storage_outcome_fact"].Rows) != 6 {
		t.Fatalf("storage_outcome_fact: %d rows", len(want["storage_outcome_fact"].Rows))
	}
	warehousetest.CompareResults(t, want, got)
}

func TestCorruptBundleIsQuarantinedOthersIngested(t *testing.T) {
	repo, root := store(t, 3)
	ctx := context.Background()
	runs, _ := repo.ListRuns(ctx, nil)
	victim := runs[1]
	m, _ := repo.ReadManifest(ctx, victim.ManifestDigest)
	var blob evidence.File
	for _, f := range m.Files {
		if f.Path == "trials/t0002/samples.parquet" {
			blob = f
		}
	}
	p := filepath.Join(root, evidence.BlobName(blob.Digest))
	os.Chmod(p, 0o644)
	data, _ := os.ReadFile(p)
	data[len(data)/3] ^= 1
	os.WriteFile(p, data, 0o444)

	w := testwh.DuckDB(t)
	s := ingestAll(t, repo, w)
	if s.Ingested != 2 || s.Quarantined != 1 {
		t.Fatalf("summary %+v; want 2 ingested, 1 quarantined", s)
	}
	led, err := w.Ledger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := led[victim.RunID]
	if e.Status != warehouse.Quarantined || !strings.Contains(e.Reason, blob.Digest.String()) || !strings.Contains(e.Reason, "trials/t0002/samples.parquet") {
		t.Fatalf("ledger entry %+v does not name the corrupt blob %s", e, blob.Digest)
	}
	if n := count(t, w, "benchmark_run_fact"); n != 2 {
		t.Fatalf("benchmark_run_fact has %d rows; the quarantined run must have none", n)
	}
	// A later pass skips it rather than failing again; --retry-quarantined retries.
	again := ingestAll(t, repo, w)
	if again.Skipped != 1 || again.AlreadyPresent != 2 {
		t.Fatalf("second pass %+v", again)
	}
}
