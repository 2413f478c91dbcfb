package sysinfo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// GPU is one NVIDIA GPU.
type GPU struct {
	Index            int    `json:"index"` // nvidia-smi's index (PCI bus order)
	Name             string `json:"name"`  // NVIDIA H100 80GB HBM3
	UUID             string `json:"uuid"`  // GPU-...; the device of GPU telemetry points
	DriverVersion    string `json:"driver_version"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes,omitempty"` // absent when only /proc was read
}

const (
	// procNvidia is where the NVIDIA kernel driver describes itself.
	procNvidia = "/proc/driver/nvidia"
	// nvidiaSMITimeout bounds nvidia-smi, which can take seconds to wake
	// GPUs that are not in persistence mode, and hangs on a wedged driver.
	nvidiaSMITimeout = 10 * time.Second
)

// nvidiaSMIArgs ask for the fields parseNvidiaSMI reads, in its order.
var nvidiaSMIArgs = []string{
	"--query-gpu=index,name,uuid,driver_version,memory.total",
	"--format=csv,noheader,nounits",
}

// probeGPUs lists the NVIDIA GPUs, preferring nvidia-smi and falling back
// to the driver's files under procDir. It never fails: the second result
// names the source of the list, or says why it is empty. The list is never
// nil, so it marshals as [].
func probeGPUs(ctx context.Context, procDir string) ([]GPU, string) {
	versionFile := filepath.Join(procDir, "version")
	_, statErr := os.Stat(versionFile)
	haveDriver := statErr == nil

	var why []string
	if !haveDriver {
		why = append(why, fmt.Sprintf("no NVIDIA driver (%s absent)", versionFile))
	}
	if smi, err := exec.LookPath("nvidia-smi"); err != nil {
		why = append(why, "nvidia-smi not in PATH")
	} else {
		gpus, err := runNvidiaSMI(ctx, smi)
		switch {
		case err != nil:
			why = append(why, err.Error())
		case len(gpus) == 0:
			why = append(why, "nvidia-smi listed no GPUs")
		default:
			return gpus, "nvidia-smi"
		}
	}
	if haveDriver {
		gpus, err := readProcGPUs(procDir)
		switch {
		case err != nil:
			why = append(why, err.Error())
		case len(gpus) == 0:
			why = append(why, fmt.Sprintf("the NVIDIA driver lists no GPUs in %s", filepath.Join(procDir, "gpus")))
		default:
			return gpus, fmt.Sprintf("%s (%s)", procDir, strings.Join(why, "; "))
		}
	}
	return []GPU{}, strings.Join(why, "; ")
}

// runNvidiaSMI runs nvidia-smi at path with a timeout and parses its list.
func runNvidiaSMI(ctx context.Context, path string) ([]GPU, error) {
	ctx, cancel := context.WithTimeout(ctx, nvidiaSMITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, nvidiaSMIArgs...)
	cmd.WaitDelay = time.Second // do not wait on pipes a killed nvidia-smi's children hold
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("nvidia-smi did not answer within %s", nvidiaSMITimeout)
		}
		msg := firstLine(stderr.Bytes())
		if msg == "" {
			msg = firstLine(stdout.Bytes()) // nvidia-smi reports most failures on stdout
		}
		if msg != "" {
			return nil, fmt.Errorf("nvidia-smi failed: %w: %s", err, msg)
		}
		return nil, fmt.Errorf("nvidia-smi failed: %w", err)
	}
	gpus, err := parseNvidiaSMI(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	return gpus, nil
}

// parseNvidiaSMI parses the output of nvidia-smi with nvidiaSMIArgs: one
// line per GPU, "index, name, uuid, driver_version, memory.total" with the
// memory in MiB. A name holding a comma is put back together. The result
// is sorted by index and never nil.
func parseNvidiaSMI(out []byte) ([]GPU, error) {
	gpus := []GPU{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 5 {
			return nil, fmt.Errorf("line %d %q: want 5 comma-separated fields, got %d", n, line, len(f))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		last := len(f) - 3 // uuid, driver_version, memory.total follow the name
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: index %q: %w", n, f[0], err)
		}
		g := GPU{
			Index:         idx,
			Name:          strings.Join(f[1:last], ","),
			UUID:          f[last],
			DriverVersion: f[last+1],
		}
		if mib, err := strconv.ParseUint(f[last+2], 10, 64); err == nil {
			g.MemoryTotalBytes = mib << 20
		} // else "[N/A]" or "[Not Supported]": leave it out
		gpus = append(gpus, g)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read output: %w", err)
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}

// readProcGPUs lists GPUs from dir/gpus/<bus>/information, with the driver
// version from dir/version. Indexes follow PCI bus order, as nvidia-smi's
// do by default.
func readProcGPUs(dir string) ([]GPU, error) {
	v, err := os.ReadFile(filepath.Join(dir, "version"))
	if err != nil {
		return nil, fmt.Errorf("read NVIDIA driver version: %w", err)
	}
	driver := parseDriverVersion(v)
	paths, err := filepath.Glob(filepath.Join(dir, "gpus", "*", "information"))
	if err != nil {
		return nil, fmt.Errorf("list NVIDIA GPUs: %w", err)
	}
	sort.Strings(paths) // the directory names are PCI bus addresses
	gpus := []GPU{}
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read NVIDIA GPU information: %w", err)
		}
		info := parseProcInformation(b)
		gpus = append(gpus, GPU{Index: i, Name: info["Model"], UUID: info["GPU UUID"], DriverVersion: driver})
	}
	return gpus, nil
}

// driverVersion finds the version in /proc/driver/nvidia/version, of the
// proprietary ("... Kernel Module  550.54.15  ...") or the open driver
// ("... Open Kernel Module for x86_64  550.54.15  ...").
var driverVersion = regexp.MustCompile(`Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)`)

// parseDriverVersion returns the driver version in the contents of
// /proc/driver/nvidia/version, or "" when it cannot find one.
func parseDriverVersion(b []byte) string {
	if m := driverVersion.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// parseProcInformation reads the "Key: value" lines of
// /proc/driver/nvidia/gpus/<bus>/information.
func parseProcInformation(b []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// firstLine returns the first non-blank line of b, cut to 200 bytes.
func firstLine(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200]
			}
			return line
		}
	}
	return ""
}
