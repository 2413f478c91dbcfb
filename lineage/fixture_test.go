package lineage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	_ "github.com/perfwh/perfwh/collectors/all" // register collectors
	_ "github.com/perfwh/perfwh/drivers/all"    // register drivers
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/stores"
	"github.com/perfwh/perfwh/ingest"
	"github.com/perfwh/perfwh/internal/testenv"
	"github.com/perfwh/perfwh/runner"
	"github.com/perfwh/perfwh/spec"
	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/clickhouse"
	"github.com/perfwh/perfwh/warehouse/duckdb"
)

// testCase is a small deterministic fileio case: 2 points × 2
// repetitions × 600 measured operations after a 32-operation warmup.
const testCase = `name: lineage-test
driver: fileio
workload:
  mode: [read, write]
  file_size: 256KiB
  block_size: 4KiB
repetitions: 2
warmup_operations: 32
operations: 600
`

// testGates pass on testCase's runs. The stable gate is off: on a loaded
// machine one of two 600-operation repetitions can take several times as
// long as the other (a CV above 1 was seen), so it is tested on fixed
// values (TestStableGate) and by making it fail (TestGatesRefuseUnlessAllowed).
var testGates = GateConfig{MinSamples: 1000, MinRepetitions: 2, MaxCV: 0, RequireWarmup: true}

// store is an evidence store the tests can tamper with behind perfwh's back.
type store interface {
	url() string
	remove(t *testing.T, uri string)
	overwrite(t *testing.T, uri string, data []byte)
	read(t *testing.T, uri string) []byte
}

type localStore struct{ root string }

func (s localStore) url() string { return "file://" + s.root }
func (s localStore) path(uri string) string {
	return strings.TrimPrefix(uri, "file://")
}
func (s localStore) remove(t *testing.T, uri string) {
	if err := os.Remove(s.path(uri)); err != nil {
		t.Fatal(err)
	}
}
func (s localStore) overwrite(t *testing.T, uri string, data []byte) {
	p := s.path(uri)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o444); err != nil {
		t.Fatal(err)
	}
}
func (s localStore) read(t *testing.T, uri string) []byte {
	b, err := os.ReadFile(s.path(uri))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type s3Store struct {
	bucket, endpoint string
	c                *minio.Client
}

func newS3Store(t *testing.T) s3Store {
	ep := testenv.S3Endpoint(t)
	return s3Store{bucket: testenv.S3Bucket(t, false), endpoint: ep, c: testenv.S3Client(t)}
}

func (s s3Store) url() string {
	return fmt.Sprintf("s3://%s/lineage?endpoint=%s&region=us-east-1", s.bucket, s.endpoint)
}
func (s s3Store) key(uri string) string { return strings.TrimPrefix(uri, "s3://"+s.bucket+"/") }
func (s s3Store) remove(t *testing.T, uri string) {
	if err := s.c.RemoveObject(context.Background(), s.bucket, s.key(uri), minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}
func (s s3Store) overwrite(t *testing.T, uri string, data []byte) {
	// An unconditional PUT, as a holder of the bucket's keys could make.
	if _, err := s.c.PutObject(context.Background(), s.bucket, s.key(uri), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}
func (s s3Store) read(t *testing.T, uri string) []byte {
	o, err := s.c.GetObject(context.Background(), s.bucket, s.key(uri), minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fixture is a store with runs of testCase, ingested into a DuckDB file.
type fixture struct {
	store store
	repo  *evidence.Repository
	wh    warehouse.Warehouse
	reg   *sql.Registry
	runs  []*runner.Result
}

func newFixture(t *testing.T, st store, runs int) *fixture {
	t.Helper()
	return newFixtureOn(t, st, runs, false)
}

// newFixtureOn is newFixture with the runs ingested into ClickHouse (the
// test server) instead of DuckDB when clickHouse is set.
func newFixtureOn(t *testing.T, st store, runs int, clickHouse bool) *fixture {
	t.Helper()
	ctx := t.Context()
	be, err := stores.Open(ctx, st.url())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	fx := &fixture{store: st, repo: evidence.NewRepository(be)}
	home := t.TempDir()
	cs := filepath.Join(home, "case.yaml")
	if err := os.WriteFile(cs, []byte(testCase), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := spec.LoadFile(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	for range runs {
		res, err := runner.Run(ctx, pl, runner.Options{Repo: fx.repo, StagingDir: filepath.Join(home, "staging"),
			ScratchDir: filepath.Join(home, "scratch"), Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() > 0 {
			t.Fatalf("run %s: %d trials failed", res.RunID, res.Failed())
		}
		fx.runs = append(fx.runs, res)
	}
	if clickHouse {
		_, u := testenv.ClickHouseDatabase(t)
		fx.wh, err = clickhouse.Open(ctx, u)
	} else {
		fx.wh, err = duckdb.Open(ctx, filepath.Join(home, "warehouse.duckdb"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.wh.Close() })
	if err := fx.wh.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	sum, err := ingest.Run(ctx, ingest.Options{Repo: fx.repo, Warehouse: fx.wh})
	if err != nil || sum.Ingested != runs {
		t.Fatalf("ingest: %+v, %v", sum, err)
	}
	if fx.reg, err = sql.Load(); err != nil {
		t.Fatal(err)
	}
	return fx
}

func (fx *fixture) publish(t *testing.T, query string, params map[string]string) (*Publication, evidence.Digest) {
	t.Helper()
	p, d, err := Publish(t.Context(), fx.publishOptions(t, query, params))
	if err != nil {
		t.Fatalf("publish %s %v: %v", query, params, err)
	}
	return p, d
}

func (fx *fixture) publishOptions(t *testing.T, query string, params map[string]string) PublishOptions {
	t.Helper()
	q, ok := fx.reg.Get(query)
	if !ok {
		t.Fatalf("no query %s", query)
	}
	return PublishOptions{Repo: fx.repo, Warehouse: fx.wh, WarehouseURL: "duckdb:///test", Query: q, Params: params,
		By: "tester", Gates: testGates}
}

func (fx *fixture) resolve(t *testing.T, ref string, level Level) *Report {
	t.Helper()
	rep, err := Resolve(t.Context(), ref, Options{Repo: fx.repo, Warehouse: fx.wh, Registry: fx.reg, Level: level, Gates: testGates})
	if err != nil {
		t.Fatalf("resolve %s: %v", ref, err)
	}
	return rep
}

// file returns the stored file of run i at bundle path.
func (fx *fixture) file(t *testing.T, i int, path string) evidence.File {
	t.Helper()
	for _, f := range fx.runs[i].Manifest.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("run %d has no file %s", i, path)
	return evidence.File{}
}
