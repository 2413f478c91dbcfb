// Command fileio-bench runs the perfwh fileio driver and fio side by side on
// the same file with the same settings, alternating which tool goes first,
// and prints per-repetition numbers, medians and the perfwh/fio ratio.
//
// It calls the driver directly (drivers.Get("fileio"), Open, Run), not the
// perfwh CLI, so the numbers are the driver's. See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/perfwh/perfwh/drivers"
	_ "github.com/perfwh/perfwh/drivers/fileio"
	"github.com/perfwh/perfwh/internal/units"
)

// benchCase is one comparison: a mode and block size, and the number that
// is compared (MB/s for sequential, IOPS for random).
type benchCase struct {
	name      string
	mode      string
	blockSize int64
	metric    string // "mb_per_s" or "iops"
}

var allCases = []benchCase{
	{"seqread", "read", 1 << 20, "mb_per_s"},
	{"seqwrite", "write", 1 << 20, "mb_per_s"},
	{"randread", "randread", 4 << 10, "iops"},
	{"randwrite", "randwrite", 4 << 10, "iops"},
}

// options are the settings shared by both tools.
type options struct {
	dir           string
	fileSize      int64
	duration      time.Duration
	reps          int
	threads       int
	fsync         int
	direct        bool
	filePerThread bool
	fio           string
	fioAlign      bool
	verbose       bool
}

// result is one run of one tool.
type result struct {
	mbps, iops   float64
	p50us, p99us float64
	ops          int64
	durationS    float64
	// CPU time per operation (µs) and context switches per second: for
	// perfwh the whole process during Run (the I/O thread, the Go runtime,
	// and turning samples into rows and sorting latencies after the
	// phase); for fio its job process. Less sensitive than throughput to
	// a noisy host.
	cpuPerOpUs float64
	ctxPerS    float64
}

func (r result) value(metric string) float64 {
	if metric == "iops" {
		return r.iops
	}
	return r.mbps
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "fileio-bench:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	var o options
	var size, cases, cpuprofile string
	flag.StringVar(&o.dir, "dir", "", "parent directory for the temporary data directory (default: $TMPDIR or /tmp)")
	flag.StringVar(&size, "size", "1GiB", "file size")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "duration of each run of each tool")
	flag.IntVar(&o.reps, "reps", 5, "repetitions per case (tool order alternates)")
	flag.IntVar(&o.threads, "threads", 1, "threads (fio numjobs)")
	flag.IntVar(&o.fsync, "fsync", 0, "fsync every N writes (0: never)")
	flag.BoolVar(&o.direct, "direct", false, "O_DIRECT")
	flag.BoolVar(&o.filePerThread, "file-per-thread", false, "one file per thread")
	flag.StringVar(&cases, "cases", "seqread,seqwrite,randread", "comma-separated cases: "+caseNames())
	flag.StringVar(&o.fio, "fio", "fio", "fio binary")
	flag.BoolVar(&o.fioAlign, "fio-align", true, "pass --iomem_align=4096 to fio so its buffer is page-aligned like perfwh's")
	flag.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of this process (the perfwh runs) to this file")
	flag.BoolVar(&o.verbose, "v", false, "print the fio command lines")
	flag.Parse()

	var err error
	if o.fileSize, err = units.ParseBytes(size); err != nil {
		return fmt.Errorf("-size: %w", err)
	}
	var selected []benchCase
	for _, name := range strings.Split(cases, ",") {
		i := slices.IndexFunc(allCases, func(c benchCase) bool { return c.name == strings.TrimSpace(name) })
		if i < 0 {
			return fmt.Errorf("-cases: unknown case %q (known: %s)", name, caseNames())
		}
		selected = append(selected, allCases[i])
	}
	if _, err := lookPath(o.fio); err != nil {
		return fmt.Errorf("fio not found (%s): install it (apt-get install fio) or pass -fio: %w", o.fio, err)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	data, err := os.MkdirTemp(o.dir, "perfwh-fileio-bench-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(data)
	o.dir = data

	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	fioVersion := commandOutput(o.fio, "--version")
	fmt.Printf("fileio-bench: data in %s (%s), file_size %s, %d thread(s), direct=%v, fsync=%d, file_per_thread=%v, %s per run, %d reps; %s\n",
		data, fsName(data), units.FormatBytes(o.fileSize), o.threads, o.direct, o.fsync, o.filePerThread, o.duration, o.reps, fioVersion)

	// Lay the file(s) out once with the driver; both tools then use them.
	start := time.Now()
	if _, err := runPerfwh(ctx, o, allCases[0], 0, true); err != nil {
		return fmt.Errorf("lay out: %w", err)
	}
	fmt.Printf("laid out in %.1fs\n\n", time.Since(start).Seconds())

	var summary []string
	for _, c := range selected {
		unit := "MB/s"
		if c.metric == "iops" {
			unit = "IOPS"
		}
		fmt.Printf("== %s: mode=%s block_size=%s (%s; MB = 1e6 bytes)\n", c.name, c.mode, units.FormatBytes(c.blockSize), unit)
		fmt.Printf("%-4s %-11s %12s %12s %6s  %-27s %-13s %s\n", "rep", "order", "perfwh", "fio", "ratio",
			"p50/p99 µs perfwh | fio", "cpu µs/op p|f", "ctxsw/s p|f")
		var pv, fv, ratios, pcpu, fcpu, pp50, fp50 []float64
		for rep := range o.reps {
			var p, f result
			order := "perfwh,fio"
			if rep%2 == 0 {
				if p, err = runPerfwh(ctx, o, c, int64(rep), false); err == nil {
					f, err = runFio(ctx, o, c)
				}
			} else {
				order = "fio,perfwh"
				if f, err = runFio(ctx, o, c); err == nil {
					p, err = runPerfwh(ctx, o, c, int64(rep), false)
				}
			}
			if err != nil {
				return fmt.Errorf("%s rep %d: %w", c.name, rep+1, err)
			}
			pv, fv = append(pv, p.value(c.metric)), append(fv, f.value(c.metric))
			ratios = append(ratios, p.value(c.metric)/f.value(c.metric))
			pcpu, fcpu = append(pcpu, p.cpuPerOpUs), append(fcpu, f.cpuPerOpUs)
			pp50, fp50 = append(pp50, p.p50us), append(fp50, f.p50us)
			fmt.Printf("%-4d %-11s %12.1f %12.1f %6.3f  %-27s %-13s %.0f|%.0f\n", rep+1, order,
				p.value(c.metric), f.value(c.metric), ratios[rep],
				fmt.Sprintf("%.1f/%.1f | %.1f/%.1f", p.p50us, p.p99us, f.p50us, f.p99us),
				fmt.Sprintf("%.2f|%.2f", p.cpuPerOpUs, f.cpuPerOpUs), p.ctxPerS, f.ctxPerS)
		}
		mp, mf := median(pv), median(fv)
		fmt.Printf("%-16s %12.1f %12.1f %6.3f  median of ratios %.3f; p50 µs %.1f|%.1f; cpu µs/op %.2f|%.2f\n\n", "median",
			mp, mf, mp/mf, median(ratios), median(pp50), median(fp50), median(pcpu), median(fcpu))
		summary = append(summary, fmt.Sprintf("%-10s %-4s perfwh %10.1f  fio %10.1f  perfwh/fio %.3f (median of ratios %.3f)  cpu µs/op %.2f|%.2f",
			c.name, unit, mp, mf, mp/mf, median(ratios), median(pcpu), median(fcpu)))
	}
	fmt.Println("== medians")
	for _, s := range summary {
		fmt.Println(s)
	}
	return nil
}

// runPerfwh runs the driver once for o.duration. layoutOnly opens (which
// lays the file out) and closes without running.
func runPerfwh(ctx context.Context, o options, c benchCase, seed int64, layoutOnly bool) (result, error) {
	d, ok := drivers.Get("fileio")
	if !ok {
		return result{}, errors.New("driver fileio is not registered")
	}
	info := d.Info()
	params, err := drivers.Resolve(info.Params, map[string]any{
		"mode": c.mode, "file_size": o.fileSize, "block_size": c.blockSize, "threads": o.threads,
		"fsync": o.fsync, "direct": o.direct, "file_per_thread": o.filePerThread,
	})
	if err != nil {
		return result{}, err
	}
	target, err := drivers.Resolve(info.Target, nil)
	if err != nil {
		return result{}, err
	}
	// Start each run with a collected heap, as a fresh fio process starts
	// with nothing: the previous run's samples are garbage now.
	runtime.GC()
	inst, err := d.Open(ctx, drivers.TrialConfig{Params: params, Target: target, Seed: seed, WorkDir: o.dir, Origin: time.Now()})
	if err != nil {
		return result{}, err
	}
	defer inst.Close()
	if layoutOnly {
		return result{}, inst.Close()
	}
	var rec drivers.Recorder
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	sum, err := inst.Run(ctx, drivers.Phase{Name: "measure", Duration: o.duration}, &rec)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if err != nil {
		return result{}, err
	}
	if err := inst.Close(); err != nil {
		return result{}, err
	}
	if n := rec.Len(); int64(n) != sum["ops"].(int64)+sum["fsyncs"].(int64) {
		return result{}, fmt.Errorf("recorder holds %d samples, summary says %v ops + %v fsyncs", n, sum["ops"], sum["fsyncs"])
	}
	ops, secs := sum["ops"].(int64), sum["duration_s"].(float64)
	cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) +
		syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
	ctxsw := ru1.Nvcsw - ru0.Nvcsw + ru1.Nivcsw - ru0.Nivcsw
	return result{
		mbps: sum["throughput_mb_per_s"].(float64), iops: sum["iops"].(float64),
		p50us: sum["latency_p50_us"].(float64), p99us: sum["latency_p99_us"].(float64),
		ops: ops, durationS: secs,
		cpuPerOpUs: cpu.Seconds() * 1e6 / float64(max(ops, 1)), ctxPerS: float64(ctxsw) / secs,
	}, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func caseNames() string {
	var n []string
	for _, c := range allCases {
		n = append(n, c.name)
	}
	return strings.Join(n, ",")
}

func fsName(dir string) string {
	out := commandOutput("stat", "-f", "-c", "%T", dir)
	if out == "" {
		return "unknown fs"
	}
	return filepath.Base(out)
}
