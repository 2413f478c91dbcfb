package sysinfo

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v3/common"
	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/disk"
	"github.com/shirou/gopsutil/v3/host"
	"github.com/shirou/gopsutil/v3/mem"

	"github.com/perfwh/perfwh/internal/buildinfo"
)

// Environment describes the machine and the perfwh build of a run. Its JSON
// form is part of the evidence; see the package comment for why it holds
// no value that changes between runs on an unchanged machine.
type Environment struct {
	Hostname       string      `json:"hostname"`
	OS             OS          `json:"os"`
	CPU            CPU         `json:"cpu"`
	Memory         Memory      `json:"memory"`
	Virtualization Virtual     `json:"virtualization"`
	GPUs           []GPU       `json:"gpus"`      // sorted by index; empty, never null, when there are none
	GPUProbe       string      `json:"gpu_probe"` // where GPUs came from, or why there are none
	WorkDirFS      *Filesystem `json:"workdir_filesystem,omitempty"`
	GoVersion      string      `json:"go_version"`
	Perfwh         Build       `json:"perfwh"`
}

// OS is the operating system and kernel.
type OS struct {
	Name            string `json:"name"`             // runtime.GOOS: linux
	Platform        string `json:"platform"`         // debian, ubuntu, rhel, ...
	PlatformFamily  string `json:"platform_family"`  // debian, rhel, ...
	PlatformVersion string `json:"platform_version"` // 12.5
	KernelVersion   string `json:"kernel_version"`   // 6.1.0-18-amd64
	KernelArch      string `json:"kernel_arch"`      // x86_64, as uname -m
}

// CPU is the processor model and topology.
type CPU struct {
	ModelName     string `json:"model_name"`
	Vendor        string `json:"vendor"`
	Sockets       int    `json:"sockets"` // distinct physical package ids; 0 when the kernel does not say
	PhysicalCores int    `json:"physical_cores"`
	LogicalCores  int    `json:"logical_cores"`
	// MHz is the maximum clock (cpufreq's cpuinfo_max_freq) where the kernel
	// has cpufreq, else the "cpu MHz" of /proc/cpuinfo, rounded to whole
	// MHz. Without cpufreq (common in VMs, where the value is the fixed TSC
	// rate) that value can vary on bare metal; MHzSource says which it is.
	MHz       float64    `json:"mhz"`
	MHzSource string     `json:"mhz_source"` // "cpufreq_max", "cpuinfo" or "" when unknown
	NUMANodes int        `json:"numa_nodes"` // 0 when the kernel has no NUMA support in sysfs
	NUMA      []NUMANode `json:"numa"`       // sorted by id
}

// NUMANode is one node of /sys/devices/system/node.
type NUMANode struct {
	ID      int    `json:"id"`
	CPUList string `json:"cpulist"` // as the kernel writes it: "0-15,32-47"
}

// Memory is installed memory and configured swap.
type Memory struct {
	TotalBytes     uint64 `json:"total_bytes"`
	SwapTotalBytes uint64 `json:"swap_total_bytes"`
}

// Virtual is the virtualization gopsutil detects: System such as "kvm",
// "docker" or "" on bare metal, Role "guest" or "host".
type Virtual struct {
	System string `json:"system"`
	Role   string `json:"role"`
}

// Filesystem is the mount holding the working directory.
type Filesystem struct {
	Mountpoint string `json:"mountpoint"`
	Device     string `json:"device"`
	FSType     string `json:"fstype"`
}

// Build is the perfwh binary that ran.
type Build struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
}

// sysNode is where the kernel lists NUMA nodes; a variable for tests.
var sysNode = "/sys/devices/system/node"

// Snapshot describes the machine it runs on. It fails only when the basic
// facts (host name, kernel, CPUs, memory) cannot be read; a missing GPU,
// NUMA information or working-directory mount leaves that part empty.
func Snapshot(ctx context.Context) (*Environment, error) {
	env := &Environment{
		GoVersion: buildinfo.GoVersion(),
		Perfwh:    Build{Version: buildinfo.Version(), Revision: buildinfo.Revision()},
	}
	var err error
	if env.Hostname, err = os.Hostname(); err != nil {
		return nil, fmt.Errorf("sysinfo: read host name: %w", err)
	}
	if env.OS, err = readOS(ctx); err != nil {
		return nil, err
	}
	if env.CPU, err = readCPU(ctx); err != nil {
		return nil, err
	}
	if env.Memory, err = readMemory(ctx); err != nil {
		return nil, err
	}
	if sys, role, err := host.VirtualizationWithContext(ctx); err == nil {
		env.Virtualization = Virtual{System: sys, Role: role}
	}
	env.GPUs, env.GPUProbe = probeGPUs(ctx, procNvidia)
	env.WorkDirFS = workDirFilesystem(ctx)
	return env, nil
}

func readOS(ctx context.Context) (OS, error) {
	o := OS{Name: runtime.GOOS}
	var err error
	if o.Platform, o.PlatformFamily, o.PlatformVersion, err = host.PlatformInformationWithContext(ctx); err != nil {
		return OS{}, fmt.Errorf("sysinfo: read platform: %w", err)
	}
	if o.KernelVersion, err = host.KernelVersionWithContext(ctx); err != nil {
		return OS{}, fmt.Errorf("sysinfo: read kernel version: %w", err)
	}
	if o.KernelArch, err = host.KernelArch(); err != nil {
		return OS{}, fmt.Errorf("sysinfo: read kernel architecture: %w", err)
	}
	return o, nil
}

func readCPU(ctx context.Context) (CPU, error) {
	var c CPU
	var err error
	if c.LogicalCores, err = cpu.CountsWithContext(ctx, true); err != nil {
		return CPU{}, fmt.Errorf("sysinfo: count logical CPUs: %w", err)
	}
	if c.PhysicalCores, err = cpu.CountsWithContext(ctx, false); err != nil {
		return CPU{}, fmt.Errorf("sysinfo: count physical cores: %w", err)
	}
	infos, err := cpu.InfoWithContext(ctx)
	if err != nil {
		return CPU{}, fmt.Errorf("sysinfo: read CPU model: %w", err)
	}
	sockets := map[string]bool{}
	for _, in := range infos {
		if in.PhysicalID != "" {
			sockets[in.PhysicalID] = true
		}
	}
	c.Sockets = len(sockets)
	if len(infos) > 0 {
		first := infos[0]
		c.ModelName, c.Vendor = strings.TrimSpace(first.ModelName), first.VendorID
		c.MHz = math.Round(first.Mhz)
		if c.MHz > 0 {
			c.MHzSource = "cpuinfo"
			if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", first.CPU)); err == nil {
				c.MHzSource = "cpufreq_max" // gopsutil prefers it when it exists
			}
		}
	}
	if c.NUMA, err = readNUMA(sysNode); err != nil {
		return CPU{}, err
	}
	c.NUMANodes = len(c.NUMA)
	return c, nil
}

// readNUMA lists dir/node*/cpulist, sorted by node id. A missing dir (no
// NUMA in the kernel) is no nodes, not an error.
func readNUMA(dir string) ([]NUMANode, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "node*", "cpulist"))
	if err != nil {
		return nil, fmt.Errorf("sysinfo: list NUMA nodes: %w", err)
	}
	nodes := []NUMANode{}
	for _, p := range paths {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "node"))
		if err != nil {
			continue // not nodeN
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("sysinfo: read NUMA node %d: %w", id, err)
		}
		nodes = append(nodes, NUMANode{ID: id, CPUList: strings.TrimSpace(string(b))})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	return nodes, nil
}

func readMemory(ctx context.Context) (Memory, error) {
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return Memory{}, fmt.Errorf("sysinfo: read memory size: %w", err)
	}
	sw, err := mem.SwapMemoryWithContext(ctx)
	if err != nil {
		return Memory{}, fmt.Errorf("sysinfo: read swap size: %w", err)
	}
	return Memory{TotalBytes: vm.Total, SwapTotalBytes: sw.Total}, nil
}

// workDirFilesystem finds the mount that holds the working directory: the
// mount point that is the longest prefix of its real path. It returns nil
// when that cannot be found out.
func workDirFilesystem(ctx context.Context) *Filesystem {
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	// Our own mount namespace, not PID 1's, which gopsutil reads by default.
	ctx = context.WithValue(ctx, common.EnvKey, common.EnvMap{"HOST_PROC_MOUNTINFO": "/proc/self/mountinfo"})
	parts, err := disk.PartitionsWithContext(ctx, true)
	if err != nil && len(parts) == 0 {
		return nil
	}
	return mountOf(wd, parts)
}

// mountOf picks the partition whose mount point is the longest prefix of
// path; of mounts stacked on the same point, the last one listed (the one
// on top) wins.
func mountOf(path string, parts []disk.PartitionStat) *Filesystem {
	var best *disk.PartitionStat
	for i := range parts {
		mp := parts[i].Mountpoint
		if !within(path, mp) {
			continue
		}
		if best == nil || len(mp) >= len(best.Mountpoint) {
			best = &parts[i]
		}
	}
	if best == nil {
		return nil
	}
	return &Filesystem{Mountpoint: best.Mountpoint, Device: best.Device, FSType: best.Fstype}
}

func within(path, dir string) bool {
	if dir == "/" || path == dir {
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}
