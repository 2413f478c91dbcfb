// Command lineage measures perfwh lineage on the embedded default (local
// store + DuckDB) for a publication with many contributing runs: the walk
// at manifest level (in process, and as the perfwh command end to end), and
// --verify=deep beside sha256sum and openssl dgst -sha256 over the same
// blobs. See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	_ "github.com/perfwh/perfwh/collectors/all"
	_ "github.com/perfwh/perfwh/drivers/all"
	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/local"
	"github.com/perfwh/perfwh/ingest"
	"github.com/perfwh/perfwh/lineage"
	"github.com/perfwh/perfwh/runner"
	"github.com/perfwh/perfwh/spec"
	"github.com/perfwh/perfwh/sql"
	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/duckdb"
)

// benchCase is a small real fileio case: 2 points × 2 repetitions, 13
// files per run, 9 of them unique to the run.
const benchCase = `name: lineage-bench
driver: fileio
workload:
  mode: [read, randread]
  file_size: 256KiB
  block_size: 4KiB
repetitions: 2
warmup_operations: 32
operations: %d
`

func main() {
	runs := flag.Int("runs", 1000, "contributing runs")
	ops := flag.Int("ops", 600, "measured operations per trial (samples blob size)")
	reps := flag.Int("reps", 7, "timed repetitions of each measurement")
	dir := flag.String("dir", "", "perfwh home to create or reuse (default: a temp dir, removed afterwards)")
	bin := flag.String("perfwh", "", "perfwh binary to time end to end (default: skip)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the in-process walks (manifest level, then deep) to FILE")
	flag.Parse()
	ctx := context.Background()

	home := *dir
	if home == "" {
		d, err := os.MkdirTemp("", "perfwh-lineagebench-")
		must(err)
		defer os.RemoveAll(d)
		home = d
	}
	storeDir := filepath.Join(home, "store")
	be, err := local.Open(storeDir)
	must(err)
	repo := evidence.NewRepository(be)
	wh, err := duckdb.Open(ctx, filepath.Join(home, "warehouse.duckdb"))
	must(err)
	must(wh.Migrate(ctx))
	setup(ctx, home, repo, wh, *runs, *ops)

	reg, err := sql.Load()
	must(err)
	q, _ := reg.Get("runs")
	pub, id, err := lineage.Publish(ctx, lineage.PublishOptions{Repo: repo, Warehouse: wh, WarehouseURL: "duckdb://" + home + "/warehouse.duckdb",
		Query: q, Params: map[string]string{"benchmark": "lineage-bench", "limit": fmt.Sprint(*runs)}, By: "bench",
		Gates: lineage.GateConfig{MinSamples: 1, MinRepetitions: 1}})
	must(err)
	ref := "pub:" + id.Hex()[:12]
	fmt.Printf("lineage bench: publication %s of query runs: %d rows, %d contributing runs; GOMAXPROCS=%d\n", ref, len(pub.Rows), len(pub.Runs), runtime.GOMAXPROCS(0))

	resolve := func(level lineage.Level) (time.Duration, *lineage.Report) {
		start := time.Now()
		rep, err := lineage.Resolve(ctx, ref, lineage.Options{Repo: repo, Warehouse: wh, Registry: reg, Level: level})
		d := time.Since(start)
		must(err)
		if !rep.OK {
			log.Fatalf("lineage not ok: %v", rep.Problems[0])
		}
		return d, rep
	}
	_, rep := resolve(lineage.LevelDeep) // warm the page cache and DuckDB
	paths := blobPaths(rep)
	fmt.Printf("  %d runs, %d manifests, %d distinct blobs, %.1f MB\n", rep.Summary.Runs, rep.Summary.Manifests, rep.Summary.Blobs, float64(rep.Summary.Bytes)/1e6)

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		must(err)
		must(pprof.StartCPUProfile(f))
		for range 20 {
			resolve(lineage.LevelManifest)
		}
		for range 5 {
			resolve(lineage.LevelDeep)
		}
		pprof.StopCPUProfile()
		must(f.Close())
	}
	var manifest []time.Duration
	for range *reps {
		d, _ := resolve(lineage.LevelManifest)
		manifest = append(manifest, d)
	}
	fmt.Printf("manifest level, in process:        median %s  (min %s, max %s)\n", median(manifest), minD(manifest), maxD(manifest))
	if *bin != "" {
		must(wh.Close()) // DuckDB admits one process per file
		for _, out := range []string{"table", "json"} {
			var cli []time.Duration
			for range *reps {
				cmd := exec.Command(*bin, "--home", home, "lineage", ref, "-o", out)
				cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
				start := time.Now()
				must(cmd.Run())
				cli = append(cli, time.Since(start))
			}
			fmt.Printf("manifest level, perfwh lineage -o %-5s (the whole process: start, DuckDB open, output): median %s\n", out, median(cli))
		}
		wh, err = duckdb.Open(ctx, filepath.Join(home, "warehouse.duckdb"))
		must(err)
	}

	tools := []struct {
		name string
		run  func() time.Duration
	}{
		{"perfwh deep", func() time.Duration { d, _ := resolve(lineage.LevelDeep); return d }},
		{"sha256sum", func() time.Duration { return peer(storeDir, paths, "sha256sum") }},
	}
	if _, err := exec.LookPath("openssl"); err == nil {
		tools = append(tools, struct {
			name string
			run  func() time.Duration
		}{"openssl", func() time.Duration { return peer(storeDir, paths, "openssl", "dgst", "-sha256") }})
	}
	results := make([][]time.Duration, len(tools))
	for r := range *reps {
		for k := range tools {
			i := (k + r) % len(tools)
			results[i] = append(results[i], tools[i].run())
		}
	}
	base := median(results[0])
	fmt.Printf("deep: perfwh lineage --verify=deep median %s", base)
	for i := 1; i < len(tools); i++ {
		m := median(results[i])
		fmt.Printf("; %s %s (perfwh/%s = %.2f)", tools[i].name, m, tools[i].name, base.Seconds()/m.Seconds())
	}
	fmt.Println()
	must(wh.Close())
}

// setup makes the store hold n runs of benchCase, all ingested; it reuses
// what an earlier call left in home.
func setup(ctx context.Context, home string, repo *evidence.Repository, wh warehouse.Warehouse, n, ops int) {
	have, err := repo.ListRuns(ctx, nil)
	must(err)
	if len(have) < n {
		cs := filepath.Join(home, "case.yaml")
		must(os.WriteFile(cs, []byte(fmt.Sprintf(benchCase, ops)), 0o644))
		c, err := spec.LoadFile(cs, nil)
		must(err)
		pl, err := c.Plan()
		must(err)
		start := time.Now()
		for i := len(have); i < n; i++ {
			_, err := runner.Run(ctx, pl, runner.Options{Repo: repo, StagingDir: filepath.Join(home, "staging"),
				ScratchDir: filepath.Join(home, "scratch"), Log: slog.New(slog.DiscardHandler)})
			must(err)
			if (i+1)%100 == 0 {
				fmt.Fprintf(os.Stderr, "setup: %d/%d runs (%s)\n", i+1, n, time.Since(start).Round(time.Second))
			}
		}
	}
	start := time.Now()
	sum, err := ingest.Run(ctx, ingest.Options{Repo: repo, Warehouse: wh})
	must(err)
	if sum.Ingested > 0 {
		fmt.Fprintf(os.Stderr, "setup: ingested %d runs in %s\n", sum.Ingested, time.Since(start).Round(time.Millisecond))
	}
}

// blobPaths lists the distinct blobs of a report, relative to the store.
func blobPaths(rep *lineage.Report) []string {
	seen := map[evidence.Digest]bool{}
	var out []string
	for _, r := range rep.Runs {
		for _, b := range r.Blobs {
			if !seen[b.Digest] {
				seen[b.Digest] = true
				out = append(out, evidence.BlobName(b.Digest))
			}
		}
	}
	sort.Strings(out)
	return out
}

// peer times a hashing tool over the blobs, in one process.
func peer(dir string, paths []string, tool string, args ...string) time.Duration {
	cmd := exec.Command(tool, append(args, paths...)...)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	start := time.Now()
	must(cmd.Run())
	d := time.Since(start)
	if n := strings.Count(out.String(), "\n"); n != len(paths) {
		log.Fatalf("%s printed %d lines for %d files", tool, n, len(paths))
	}
	return d
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

func minD(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func maxD(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
