// Command hashstore measures bundle hashing + local store throughput beside
// sha256sum (and openssl dgst -sha256, when installed) over the same files, in one process run, alternating the two
// tools and repeating, and prints per-repetition numbers, medians and the
// ratio. See bench/README.md.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/local"
)

func main() {
	files := flag.Int("files", 16, "number of files")
	sizeMiB := flag.Int("size", 64, "size of each file in MiB")
	reps := flag.Int("reps", 5, "repetitions")
	dirty := flag.Bool("dirty", false, "rewrite the files before each perfwh repetition, so the store's fsync must write them (as after a real run)")
	procs := flag.Int("procs", runtime.GOMAXPROCS(0), "GOMAXPROCS for perfwh (Commit hashes files in parallel, one per CPU)")
	dir := flag.String("dir", "", "work directory (default: a temp dir under $TMPDIR, removed afterwards)")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)

	work := *dir
	if work == "" {
		d, err := os.MkdirTemp("", "perfwh-hashbench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		work = d
	}
	src := filepath.Join(work, "src")
	must(os.MkdirAll(src, 0o755))
	var paths []string
	for i := range *files {
		p := filepath.Join(src, fmt.Sprintf("f%03d.bin", i))
		writeRandom(p, int64(*sizeMiB)<<20)
		paths = append(paths, p)
	}
	total := float64(*files) * float64(*sizeMiB) * (1 << 20)
	fmt.Printf("hashstore: %d files x %d MiB = %.0f MiB in %s, GOMAXPROCS=%d, dirty=%v\n", *files, *sizeMiB, total/(1<<20), work, *procs, *dirty)

	// The tools in rotating order, so none always runs first.
	tools := []struct {
		name string
		run  func(rep int) time.Duration
	}{
		{"perfwh", func(rep int) time.Duration { return storeOnce(work, rep, paths, *dirty) }},
		{"sha256sum", func(int) time.Duration { return peer(paths, "sha256sum") }},
	}
	if _, err := exec.LookPath("openssl"); err == nil {
		tools = append(tools, struct {
			name string
			run  func(rep int) time.Duration
		}{"openssl", func(int) time.Duration { return peer(paths, "openssl", "dgst", "-sha256") }})
	}
	results := make([][]float64, len(tools))
	for r := range *reps {
		for k := range tools {
			i := (k + r) % len(tools)
			d := tools[i].run(r)
			mbps := total / 1e6 / d.Seconds()
			fmt.Printf("  rep %d %-10s %8.1f MB/s (%s)\n", r+1, tools[i].name, mbps, d.Round(time.Millisecond))
			results[i] = append(results[i], mbps)
		}
	}
	mo := median(results[0])
	fmt.Printf("median: perfwh %.1f MB/s", mo)
	for i := 1; i < len(tools); i++ {
		mp := median(results[i])
		fmt.Printf(", %s %.1f MB/s (perfwh %.2fx)", tools[i].name, mp, mo/mp)
	}
	fmt.Println()
}

// storeOnce stages the files in a bundle and commits it to a fresh local
// store; it times Commit (hash, store, manifest, run pointer).
func storeOnce(work string, rep int, paths []string, dirty bool) time.Duration {
	ctx := context.Background()
	storeDir := filepath.Join(work, fmt.Sprintf("store-%d", rep))
	defer os.RemoveAll(storeDir)
	be, err := local.Open(storeDir)
	must(err)
	repo := evidence.NewRepository(be)
	bw, err := evidence.NewBundleWriter(filepath.Join(work, fmt.Sprintf("staging-%d", rep)))
	must(err)
	for i, p := range paths {
		f, err := bw.Create(fmt.Sprintf("data/%03d.bin", i), "samples", evidence.MediaParquet, "")
		must(err)
		if dirty {
			in, err := os.Open(p)
			must(err)
			_, err = io.Copy(f, in)
			must(err)
			in.Close()
			must(f.Close())
		} else {
			// Same bytes, already durable: replace the staged file by a link.
			name := f.Name()
			must(f.Close())
			must(os.Remove(name))
			must(os.Link(p, name))
		}
	}
	m := &evidence.Manifest{Format: evidence.ManifestFormat, FormatVersion: 1,
		RunID: fmt.Sprintf("bench-%d-%d", os.Getpid(), rep), Status: evidence.RunComplete}
	start := time.Now()
	if _, err := bw.Commit(ctx, repo, m); err != nil {
		log.Fatal(err)
	}
	d := time.Since(start)
	for _, p := range paths { // links made the sources read-only
		must(os.Chmod(p, 0o644))
	}
	return d
}

// peer times a hashing tool over the files.
func peer(paths []string, tool string, args ...string) time.Duration {
	cmd := exec.Command(tool, append(args, paths...)...)
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	start := time.Now()
	must(cmd.Run())
	return time.Since(start)
}

func writeRandom(p string, n int64) {
	f, err := os.Create(p)
	must(err)
	_, err = io.CopyN(f, rand.Reader, n)
	must(err)
	must(f.Sync())
	must(f.Close())
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
