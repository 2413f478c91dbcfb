package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// fioArgs builds the fio command line that matches the driver's behaviour
// for case c (see drivers/fileio/doc.go):
//   - psync engine, the driver's file(s), no layout, no cache invalidation;
//   - shared file, sequential: each job its own disjoint region
//     (size = offset_increment = region), as the driver does;
//   - random: uniform over the whole file with replacement (norandommap),
//     as the driver draws offsets.
func fioArgs(o options, c benchCase) []string {
	rw := map[string]string{"read": "read", "write": "write", "randread": "randread", "randwrite": "randwrite"}[c.mode]
	random := strings.HasPrefix(c.mode, "rand")
	size := o.fileSize / c.blockSize * c.blockSize
	args := []string{
		"--name=perfwh-bench", "--ioengine=psync", "--rw=" + rw,
		fmt.Sprintf("--bs=%d", c.blockSize),
		fmt.Sprintf("--numjobs=%d", o.threads),
		"--time_based", fmt.Sprintf("--runtime=%dms", o.duration.Milliseconds()),
		"--invalidate=0", fmt.Sprintf("--direct=%d", b2i(o.direct)),
		fmt.Sprintf("--fsync=%d", o.fsync),
		"--group_reporting", "--output-format=json",
	}
	if o.fioAlign {
		// perfwh's buffers are 4096-aligned; fio's default malloc buffer is
		// not page-aligned, which makes page-cache copies several times
		// slower on some CPUs (see bench/README.md).
		args = append(args, "--iomem_align=4096")
	}
	if random {
		args = append(args, "--norandommap")
	}
	switch {
	case o.filePerThread:
		args = append(args, "--directory="+o.dir, "--filename_format=fileio.$jobnum.dat", fmt.Sprintf("--size=%d", size))
	case random:
		args = append(args, "--filename="+filepath.Join(o.dir, "fileio.dat"), fmt.Sprintf("--size=%d", size))
	default:
		region := o.fileSize / c.blockSize / int64(o.threads) * c.blockSize
		args = append(args, "--filename="+filepath.Join(o.dir, "fileio.dat"),
			fmt.Sprintf("--size=%d", region), fmt.Sprintf("--offset_increment=%d", region))
	}
	return args
}

// fioOutput is the part of fio's JSON output the benchmark reads.
type fioOutput struct {
	Jobs []struct {
		Error  int          `json:"error"`
		UsrCPU float64      `json:"usr_cpu"` // percent of a job's runtime
		SysCPU float64      `json:"sys_cpu"`
		Ctx    int64        `json:"ctx"` // context switches
		Read   fioDirection `json:"read"`
		Write  fioDirection `json:"write"`
	} `json:"jobs"`
}

type fioDirection struct {
	IOBytes int64   `json:"io_bytes"`
	BW      int64   `json:"bw_bytes"` // bytes per second
	IOPS    float64 `json:"iops"`
	Runtime int64   `json:"runtime"` // ms
	TotalIO int64   `json:"total_ios"`
	Clat    struct {
		Percentile map[string]float64 `json:"percentile"`
	} `json:"clat_ns"`
}

// runFio runs fio once and returns its numbers for the direction of c.
func runFio(ctx context.Context, o options, c benchCase) (result, error) {
	args := fioArgs(o, c)
	if o.verbose {
		fmt.Fprintln(os.Stderr, "+", o.fio, strings.Join(args, " "))
	}
	cmd := exec.CommandContext(ctx, o.fio, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("fio %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// fio may print notes before the JSON document.
	out := stdout.Bytes()
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var fo fioOutput
	if err := json.Unmarshal(out, &fo); err != nil {
		return result{}, fmt.Errorf("fio output: %w", err)
	}
	if len(fo.Jobs) != 1 {
		return result{}, fmt.Errorf("fio output: %d job entries, want 1 (group_reporting)", len(fo.Jobs))
	}
	j := fo.Jobs[0]
	if j.Error != 0 {
		return result{}, fmt.Errorf("fio job error %d: %s", j.Error, strings.TrimSpace(stderr.String()))
	}
	d := j.Read
	if strings.Contains(c.mode, "write") {
		d = j.Write
	}
	secs := float64(d.Runtime) / 1e3
	return result{
		mbps: float64(d.BW) / 1e6, iops: d.IOPS, ops: d.TotalIO,
		p50us: d.Clat.Percentile["50.000000"] / 1e3, p99us: d.Clat.Percentile["99.000000"] / 1e3,
		durationS: secs,
		// With group_reporting fio's CPU percentages are per-job averages.
		cpuPerOpUs: (j.UsrCPU + j.SysCPU) / 100 * secs * float64(o.threads) * 1e6 / float64(max(d.TotalIO, 1)),
		ctxPerS:    float64(j.Ctx) / max(secs, 1e-9),
	}, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func lookPath(name string) (string, error) { return exec.LookPath(name) }

func commandOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
