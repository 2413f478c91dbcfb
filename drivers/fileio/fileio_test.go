package fileio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/perfwh/perfwh/drivers"
	"github.com/perfwh/perfwh/evidence/records"
)

// open resolves params and target against the registered driver's schema
// and opens a trial in a fresh WorkDir. The instance is closed at cleanup.
func open(t *testing.T, params, target map[string]any, seed int64) (*instance, drivers.TrialConfig) {
	t.Helper()
	tc := trialConfig(t, params, target, seed)
	inst, err := Driver{}.Open(context.Background(), tc)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { inst.Close() })
	return inst.(*instance), tc
}

func trialConfig(t *testing.T, params, target map[string]any, seed int64) drivers.TrialConfig {
	t.Helper()
	d, ok := drivers.Get(Name)
	if !ok {
		t.Fatalf("driver %s is not registered", Name)
	}
	info := d.Info()
	pv, err := drivers.Resolve(info.Params, params)
	if err != nil {
		t.Fatalf("Resolve params: %v", err)
	}
	tv, err := drivers.Resolve(info.Target, target)
	if err != nil {
		t.Fatalf("Resolve target: %v", err)
	}
	return drivers.TrialConfig{Params: pv, Target: tv, Seed: seed, WorkDir: t.TempDir(),
		Origin: time.Now(), Log: slog.New(slog.DiscardHandler)}
}

func run(t *testing.T, in *instance, ph drivers.Phase, rec *drivers.Recorder) map[string]any {
	t.Helper()
	sum, err := in.Run(context.Background(), ph, rec)
	if err != nil {
		t.Fatalf("Run %s: %v", ph.Name, err)
	}
	return sum
}

func TestInfoAndDefaults(t *testing.T) {
	info := Driver{}.Info()
	if info.Name != "fileio" || info.Version != "1.0.0" || info.Description == "" {
		t.Fatalf("info = %q %q %q", info.Name, info.Version, info.Description)
	}
	p, err := drivers.Resolve(info.Params, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := drivers.Values{"mode": "read", "file_size": int64(64 << 20), "block_size": int64(4096), "threads": int64(1),
		"fsync": int64(0), "direct": false, "file_per_thread": false}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("default %s = %v (%T); want %v", k, p[k], p[k], v)
		}
	}
	tg, err := drivers.Resolve(info.Target, nil)
	if err != nil || tg["dir"] != "" {
		t.Fatalf("target defaults = %v, %v", tg, err)
	}
}

func TestResolveRejectsInvalidParams(t *testing.T) {
	schema := Driver{}.Info().Params
	f := func(raw map[string]any, wantInErr string) {
		t.Helper()
		_, err := drivers.Resolve(schema, raw)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("Resolve(%v) error = %v; want one mentioning %q", raw, err, wantInErr)
		}
	}
	f(map[string]any{"block_size": 256}, "block_size")
	f(map[string]any{"threads": 0}, "threads")
	f(map[string]any{"threads": 257}, "threads")
	f(map[string]any{"mode": "rw"}, "mode")
	f(map[string]any{"fsync": -1}, "fsync")
	f(map[string]any{"file_size": "lots"}, "file_size")
	f(map[string]any{"direct": "yes"}, "direct")
	f(map[string]any{"bs": 4096}, "bs")
}

func TestOpenRejectsInconsistentParams(t *testing.T) {
	f := func(params, target map[string]any, wantInErr ...string) {
		t.Helper()
		_, err := Driver{}.Open(context.Background(), trialConfig(t, params, target, 1))
		if err == nil {
			t.Fatalf("Open(%v, %v) succeeded; want an error", params, target)
		}
		for _, w := range wantInErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%v, %v) error = %v; want it to mention %q", params, target, err, w)
			}
		}
	}
	f(map[string]any{"file_size": "64KiB", "block_size": "1MiB"}, nil, "block_size", "larger than file_size")
	f(map[string]any{"file_size": "8KiB", "block_size": "4KiB", "threads": 4}, nil, "too small for 4 threads")
	f(map[string]any{"block_size": 1000, "direct": true, "file_size": "1MiB"}, nil, "multiple of 512")
	missing := filepath.Join(t.TempDir(), "nope")
	f(map[string]any{"file_size": "1MiB"}, map[string]any{"dir": missing}, missing)
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o644)
	f(map[string]any{"file_size": "1MiB"}, map[string]any{"dir": notDir}, notDir, "not a directory")
}

func TestModesRecordExpectedOpsAndBytes(t *testing.T) {
	for _, mode := range []string{ModeRead, ModeWrite, ModeRandRead, ModeRandWrite} {
		for _, threads := range []int{1, 3} {
			t.Run(mode+"/"+string(rune('0'+threads)), func(t *testing.T) {
				const ops, bs = 1000, 4096
				in, _ := open(t, map[string]any{"mode": mode, "file_size": "1MiB", "block_size": bs, "threads": threads}, nil, 42)
				var rec drivers.Recorder
				sum := run(t, in, drivers.Phase{Name: records.PhaseMeasure, Operations: ops}, &rec)
				rows := rec.Seal()
				if len(rows) != ops {
					t.Fatalf("%d samples; want %d", len(rows), ops)
				}
				wantOp := OpRead
				if strings.HasSuffix(mode, "write") {
					wantOp = OpWrite
				}
				perWorker := map[int32][]int64{}
				for _, r := range rows {
					if r.Op != wantOp || r.Bytes != bs || !r.OK || r.ErrorKind != "" || r.Phase != records.PhaseMeasure {
						t.Fatalf("sample %+v; want op %s, %d bytes, ok, phase measure", r, wantOp, bs)
					}
					if r.IntendedNs != r.StartNs || r.StartNs <= 0 || r.LatencyNs <= 0 {
						t.Fatalf("sample times %+v", r)
					}
					perWorker[r.Worker] = append(perWorker[r.Worker], r.Seq)
				}
				for w := range int32(threads) {
					want := ops / threads
					if int(w) < ops%threads {
						want++
					}
					seqs := perWorker[w]
					slices.Sort(seqs)
					if len(seqs) != want || seqs[0] != 0 || seqs[len(seqs)-1] != int64(want-1) {
						t.Errorf("worker %d: %d samples, seq %d..%d; want %d samples, seq 0..%d", w, len(seqs), seqs[0], seqs[len(seqs)-1], want, want-1)
					}
				}
				if sum["ops"] != int64(ops) || sum["bytes"] != int64(ops*bs) || sum["errors"] != int64(0) || sum["fsyncs"] != int64(0) {
					t.Errorf("summary %v", sum)
				}
				for _, k := range []string{"duration_s", "throughput_mb_per_s", "iops", "latency_p50_us", "latency_p90_us", "latency_p99_us", "latency_p999_us"} {
					if v, ok := sum[k].(float64); !ok || v <= 0 {
						t.Errorf("summary %s = %v; want a positive number", k, sum[k])
					}
				}
			})
		}
	}
}

func TestPhasesContinueSequenceNumbers(t *testing.T) {
	in, _ := open(t, map[string]any{"mode": ModeRead, "file_size": "64KiB", "block_size": 4096, "threads": 2}, nil, 1)
	var rec drivers.Recorder
	run(t, in, drivers.Phase{Name: records.PhaseWarmup, Operations: 10}, &rec)
	run(t, in, drivers.Phase{Name: records.PhaseMeasure, Operations: 30}, &rec)
	rows := rec.Seal()
	count := map[string]int{}
	for _, r := range rows {
		count[r.Phase]++
		if r.Phase == records.PhaseMeasure && r.Seq < 5 {
			t.Errorf("measure sample has seq %d; want >= 5 (after 5 warmup samples of its worker)", r.Seq)
		}
	}
	if count[records.PhaseWarmup] != 10 || count[records.PhaseMeasure] != 30 {
		t.Errorf("samples per phase %v", count)
	}
}

func TestDurationBound(t *testing.T) {
	in, _ := open(t, map[string]any{"mode": ModeRandRead, "file_size": "1MiB", "threads": 2}, nil, 1)
	var rec drivers.Recorder
	start := time.Now()
	sum := run(t, in, drivers.Phase{Name: records.PhaseMeasure, Duration: 200 * time.Millisecond}, &rec)
	took := time.Since(start)
	if took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("Run took %v; want about 200ms", took)
	}
	if d := sum["duration_s"].(float64); d < 0.2 || d > 5 {
		t.Errorf("duration_s = %v", d)
	}
	if rec.Len() == 0 || int64(rec.Len()) != sum["ops"].(int64) {
		t.Errorf("%d samples, summary ops %v", rec.Len(), sum["ops"])
	}
}

func TestOffsets(t *testing.T) {
	const fileSize, bs = 1 << 20, 4096
	offsets := func(seed int64, mode string, threads int) [][]int64 {
		in, _ := open(t, map[string]any{"mode": mode, "file_size": fileSize, "block_size": bs, "threads": threads}, nil, seed)
		out := make([][]int64, threads)
		for i, w := range in.workers {
			for range 600 {
				out[i] = append(out[i], w.nextOffset())
			}
		}
		return out
	}
	a, b, c := offsets(7, ModeRandRead, 2), offsets(7, ModeRandWrite, 2), offsets(8, ModeRandRead, 2)
	if !slices.Equal(a[0], b[0]) || !slices.Equal(a[1], b[1]) {
		t.Error("same seed gave different random offsets")
	}
	if slices.Equal(a[0], c[0]) || slices.Equal(a[0], a[1]) {
		t.Error("different seeds or threads gave the same random offsets")
	}
	for _, offs := range a {
		distinct := map[int64]bool{}
		for _, o := range offs {
			if o%bs != 0 || o < 0 || o > fileSize-bs {
				t.Fatalf("random offset %d not block-aligned within the file", o)
			}
			distinct[o] = true
		}
		if len(distinct) < 150 { // 600 draws of 256 blocks cover nearly all
			t.Errorf("only %d distinct random offsets", len(distinct))
		}
	}
	// Sequential, shared file: 4 threads, disjoint 256 KiB regions, wrapping.
	seq := offsets(7, ModeRead, 4)
	for i, offs := range seq {
		region := int64(fileSize / 4)
		for j, o := range offs {
			if want := int64(i)*region + int64(j%64)*bs; o != want {
				t.Fatalf("thread %d op %d: offset %d; want %d", i, j, o, want)
			}
		}
	}
}

func TestRandWriteLandsWhereDrawn(t *testing.T) {
	const fileSize, bs, ops = 1 << 20, 4096, 400
	params := map[string]any{"mode": ModeRandWrite, "file_size": fileSize, "block_size": bs, "threads": 2}
	twin, _ := open(t, params, nil, 9) // same seed: predicts the offsets
	in, tc := open(t, params, nil, 9)
	path := filepath.Join(tc.WorkDir, "fileio.dat")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec drivers.Recorder
	run(t, in, drivers.Phase{Name: records.PhaseMeasure, Operations: ops}, &rec)
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	written := map[int64]bool{}
	for _, w := range twin.workers {
		for range ops / 2 {
			written[w.nextOffset()] = true
		}
	}
	for off := int64(0); off < fileSize; off += bs {
		got := after[off : off+bs]
		if !written[off] {
			if !bytes.Equal(got, before[off:off+bs]) {
				t.Fatalf("block at %d changed but was not drawn", off)
			}
			continue
		}
		if stamp := int64(binary.LittleEndian.Uint64(got)); stamp != off {
			t.Fatalf("block at %d carries stamp %d", off, stamp)
		}
		if !bytes.Equal(got[8:], in.workers[0].buf[8:]) && !bytes.Equal(got[8:], in.workers[1].buf[8:]) {
			t.Fatalf("block at %d does not hold a worker's payload", off)
		}
	}
}

func TestSequentialWriteCoversFile(t *testing.T) {
	const fileSize, bs = 256 << 10, 4096
	in, tc := open(t, map[string]any{"mode": ModeWrite, "file_size": fileSize, "block_size": bs, "threads": 2, "file_per_thread": true}, nil, 3)
	var rec drivers.Recorder
	run(t, in, drivers.Phase{Name: records.PhaseMeasure, Operations: 2 * fileSize / bs}, &rec)
	for i := range 2 {
		data, err := os.ReadFile(filepath.Join(tc.WorkDir, "fileio."+string(rune('0'+i))+".dat"))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != fileSize {
			t.Fatalf("file %d has %d bytes", i, len(data))
		}
		for off := 0; off < fileSize; off += bs {
			if stamp := binary.LittleEndian.Uint64(data[off:]); stamp != uint64(off) {
				t.Fatalf("file %d block %d carries stamp %d", i, off, stamp)
			}
		}
	}
}

func TestFsyncEveryN(t *testing.T) {
	f := func(threads, ops, every, wantFsyncs int) {
		t.Helper()
		in, _ := open(t, map[string]any{"mode": ModeWrite, "file_size": "1MiB", "threads": threads, "fsync": every}, nil, 1)
		var rec drivers.Recorder
		sum := run(t, in, drivers.Phase{Name: records.PhaseMeasure, Operations: int64(ops)}, &rec)
		rows := rec.Seal()
		var fsyncs, writes int
		for _, r := range rows {
			switch r.Op {
			case OpFsync:
				fsyncs++
				if r.Bytes != 0 || !r.OK {
					t.Errorf("fsync sample %+v", r)
				}
				if r.Seq%int64(every+1) != int64(every) { // w w w F w w w F ...
					t.Errorf("fsync sample has seq %d; want every %d writes", r.Seq, every)
				}
			case OpWrite:
				writes++
			}
		}
		if fsyncs != wantFsyncs || writes != ops || sum["fsyncs"] != int64(wantFsyncs) || sum["ops"] != int64(ops) {
			t.Errorf("threads %d, %d writes, fsync=%d: %d fsyncs, %d writes, summary %v; want %d fsyncs",
				threads, ops, every, fsyncs, writes, sum, wantFsyncs)
		}
	}
	f(1, 10, 4, 2)
	f(2, 20, 3, 6)
	f(1, 8, 1, 8)
	in, _ := open(t, map[string]any{"mode": ModeRead, "file_size": "64KiB", "fsync": 2}, nil, 1)
	if in.Attributes()["fsync_every"] != int64(0) {
		t.Error("fsync is not ignored in read modes")
	}
}

func TestCancelReturnsPromptlyWithSamples(t *testing.T) {
	in, _ := open(t, map[string]any{"mode": ModeRandRead, "file_size": "1MiB", "threads": 2}, nil, 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var rec drivers.Recorder
	start := time.Now()
	_, err := in.Run(ctx, drivers.Phase{Name: records.PhaseMeasure, Duration: time.Minute}, &rec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v; want context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Run returned %v after start; want shortly after the cancel at 100ms", took)
	}
	if rec.Len() == 0 {
		t.Error("no samples kept after cancel")
	}
}

// TestDirectWorksOrFailsClearly tries O_DIRECT in a temporary directory, in
// /dev/shm (tmpfs refused O_DIRECT before Linux 6.6) and in
// $FILEIO_TEST_EXTRA_DIR if set (e.g. a ramfs mount, which refuses it).
func TestDirectWorksOrFailsClearly(t *testing.T) {
	dirs := []string{t.TempDir()}
	if d := os.Getenv("FILEIO_TEST_EXTRA_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "fileio-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			dirs = append(dirs, d)
		}
	}
	for _, dir := range dirs {
		tc := trialConfig(t, map[string]any{"mode": ModeRandRead, "file_size": "1MiB", "direct": true}, map[string]any{"dir": dir}, 1)
		inst, err := Driver{}.Open(context.Background(), tc)
		if err != nil {
			if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "O_DIRECT") {
				t.Errorf("%s: Open error %q does not name the path and O_DIRECT", dir, err)
			}
			t.Logf("%s (%s): O_DIRECT refused: %v", dir, fsTypeName(dir), err)
			continue
		}
		if inst.Attributes()["direct"] != true {
			t.Errorf("%s: attributes say direct is off", dir)
		}
		var rec drivers.Recorder
		if _, err := inst.Run(context.Background(), drivers.Phase{Name: records.PhaseMeasure, Operations: 100}, &rec); err != nil || rec.Len() != 100 {
			t.Errorf("%s: O_DIRECT run: %v, %d samples", dir, err, rec.Len())
		}
		t.Logf("%s (%s): O_DIRECT works", dir, fsTypeName(dir))
		if err := inst.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestFilesCleanup(t *testing.T) {
	params := map[string]any{"file_size": "64KiB"}
	// In WorkDir: left for the runner.
	in, tc := open(t, params, nil, 1)
	in.Close()
	if _, err := os.Stat(filepath.Join(tc.WorkDir, "fileio.dat")); err != nil {
		t.Errorf("file in WorkDir removed by Close: %v", err)
	}
	// In a target dir: removed when created by the trial ...
	dir := t.TempDir()
	in, _ = open(t, params, map[string]any{"dir": dir}, 1)
	path := filepath.Join(dir, "fileio.dat")
	if got := in.Attributes()["files"].([]string); len(got) != 1 || got[0] != path {
		t.Errorf("files attribute %v; want [%s]", got, path)
	}
	in.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file created in target dir not removed: %v", err)
	}
	// ... and kept, unchanged, when it existed at the right size.
	content := bytes.Repeat([]byte{0xAB}, 64<<10)
	os.WriteFile(path, content, 0o644)
	in, _ = open(t, params, map[string]any{"dir": dir}, 1)
	in.Close()
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, content) {
		t.Errorf("existing file of the right size was rewritten or removed (%v)", err)
	}
	// A file of another size is laid out again.
	os.WriteFile(path, []byte("short"), 0o644)
	in, _ = open(t, params, map[string]any{"dir": dir}, 1)
	if st, err := os.Stat(path); err != nil || st.Size() != 64<<10 {
		t.Errorf("file of the wrong size not laid out again: %v", err)
	}
	in.Close()
}

func TestShortReadIsRecorded(t *testing.T) {
	in, tc := open(t, map[string]any{"mode": ModeRead, "file_size": "64KiB", "block_size": 4096}, nil, 1)
	path := filepath.Join(tc.WorkDir, "fileio.dat")
	if err := os.Truncate(path, 10000); err != nil {
		t.Fatal(err)
	}
	var rec drivers.Recorder
	sum, err := in.Run(context.Background(), drivers.Phase{Name: records.PhaseMeasure, Operations: 16}, &rec)
	if err == nil || !strings.Contains(err.Error(), "short read") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Run error = %v; want a short read naming %s", err, path)
	}
	rows := rec.Seal()
	last := rows[len(rows)-1]
	if len(rows) != 3 || last.OK || last.ErrorKind != ErrKindShortRead || last.Bytes != 10000-8192 {
		t.Errorf("samples %+v; want 2 ok reads then a short read of %d bytes", rows, 10000-8192)
	}
	if sum["errors"] != int64(1) {
		t.Errorf("summary errors = %v", sum["errors"])
	}
}

func TestAttributes(t *testing.T) {
	in, tc := open(t, map[string]any{"mode": ModeRandWrite, "file_size": "1MiB", "block_size": "8KiB", "threads": 2, "fsync": 16}, nil, 1)
	a := in.Attributes()
	want := map[string]any{"mode": ModeRandWrite, "file_size": int64(1 << 20), "block_size": int64(8192), "threads": 2,
		"direct": false, "fsync_every": int64(16), "buffer_alignment": bufAlign, "offset_alignment": int64(8192),
		"dir": tc.WorkDir, "files_laid_out": 1}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("attribute %s = %v (%T); want %v (%T)", k, a[k], a[k], v, v)
		}
	}
	for _, w := range in.workers {
		if addr := uintptrOf(w.buf); addr%bufAlign != 0 {
			t.Errorf("buffer of thread %d at %#x is not %d-aligned", w.id, addr, bufAlign)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	v := make([]int64, 1000)
	for i := range v {
		v[i] = int64(i + 1)
	}
	f := func(vals []int64, permille int, want int64) {
		t.Helper()
		if got := percentile(vals, permille); got != want {
			t.Errorf("percentile(%d values, %d‰) = %d; want %d", len(vals), permille, got, want)
		}
	}
	f(v, 500, 500)
	f(v, 900, 900)
	f(v, 990, 990)
	f(v, 999, 999)
	f(v[:10], 999, 10)
	f(v[:10], 500, 5)
	f(v[:1], 500, 1)
	f(nil, 500, 0)
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
