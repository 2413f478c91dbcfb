package sysinfo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/shirou/gopsutil/v3/disk"
)

func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	env, err := Snapshot(ctx)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if env.Hostname == "" {
		t.Error("no hostname")
	}
	if env.OS.Name != runtime.GOOS || env.OS.KernelVersion == "" || env.OS.KernelArch == "" {
		t.Errorf("os = %+v; want name %s, a kernel version and architecture", env.OS, runtime.GOOS)
	}
	if env.CPU.LogicalCores < 1 || env.CPU.PhysicalCores < 1 || env.CPU.PhysicalCores > env.CPU.LogicalCores {
		t.Errorf("cpu cores: %d physical, %d logical", env.CPU.PhysicalCores, env.CPU.LogicalCores)
	}
	if env.Memory.TotalBytes == 0 {
		t.Error("memory total is 0")
	}
	if _, err := os.Stat(sysNode); err == nil && env.CPU.NUMANodes < 1 {
		t.Errorf("numa_nodes = %d with %s present", env.CPU.NUMANodes, sysNode)
	}
	if env.CPU.NUMANodes != len(env.CPU.NUMA) {
		t.Errorf("numa_nodes = %d but %d nodes listed", env.CPU.NUMANodes, len(env.CPU.NUMA))
	}
	if env.GoVersion != runtime.Version() || env.Perfwh.Version == "" || env.Perfwh.Revision == "" {
		t.Errorf("build: go %q, perfwh %+v", env.GoVersion, env.Perfwh)
	}
	if env.GPUs == nil {
		t.Error("gpus is nil; want an empty list when there are none")
	}
	if env.GPUProbe == "" {
		t.Error("gpu_probe is empty")
	}
	t.Logf("gpu_probe: %s", env.GPUProbe)

	first, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot:\n%s", first)
	if len(env.GPUs) == 0 && !bytes.Contains(first, []byte(`"gpus": []`)) {
		t.Error(`no GPUs, but the JSON has no "gpus": []`)
	}
	var doc any
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range jsonKeys(doc) {
		for _, word := range []string{"uptime", "boot", "free", "time", "procs", "avail"} {
			if strings.Contains(key, word) {
				t.Errorf("snapshot has key %q, which sounds like a value that changes between runs", key)
			}
		}
	}

	again, err := Snapshot(ctx)
	if err != nil {
		t.Fatalf("second Snapshot: %v", err)
	}
	second, err := json.MarshalIndent(again, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("two snapshots differ:\n%s\n---\n%s", first, second)
	}
}

// jsonKeys lists every object key in a decoded JSON document.
func jsonKeys(v any) []string {
	var keys []string
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			keys = append(keys, k)
			keys = append(keys, jsonKeys(child)...)
		}
	case []any:
		for _, child := range t {
			keys = append(keys, jsonKeys(child)...)
		}
	}
	return keys
}

func TestReadNUMA(t *testing.T) {
	dir := t.TempDir()
	for node, cpus := range map[string]string{"node0": "0-7,16-23\n", "node1": "8-15,24-31\n", "node10": "\n"} {
		if err := os.MkdirAll(filepath.Join(dir, node), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, node, "cpulist"), []byte(cpus), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files next to the nodes in the real directory.
	for _, f := range []string{"has_cpu", "online", "possible"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("0-1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readNUMA(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []NUMANode{{0, "0-7,16-23"}, {1, "8-15,24-31"}, {10, ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readNUMA = %+v; want %+v", got, want)
	}

	got, err = readNUMA(filepath.Join(dir, "absent"))
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("readNUMA(absent) = %#v, %v; want [], nil", got, err)
	}
}

func TestMountOf(t *testing.T) {
	parts := []disk.PartitionStat{
		{Device: "/dev/vda", Mountpoint: "/", Fstype: "ext4"},
		{Device: "/dev/nvme0n1p1", Mountpoint: "/data", Fstype: "xfs"},
		{Device: "tmpfs", Mountpoint: "/data/tmp", Fstype: "tmpfs"},
		{Device: "overlay", Mountpoint: "/data/tmp", Fstype: "overlay"}, // mounted on top
	}
	for path, want := range map[string]string{
		"/":              "/dev/vda",
		"/work/main":     "/dev/vda",
		"/data":          "/dev/nvme0n1p1",
		"/database":      "/dev/vda",
		"/data/x/y":      "/dev/nvme0n1p1",
		"/data/tmp":      "overlay",
		"/data/tmp/a/b/": "overlay",
	} {
		fs := mountOf(path, parts)
		if fs == nil || fs.Device != want {
			t.Errorf("mountOf(%q) = %+v; want device %s", path, fs, want)
		}
	}
	if fs := mountOf("/x", nil); fs != nil {
		t.Errorf("mountOf with no mounts = %+v; want nil", fs)
	}
}

func TestWorkDirFilesystem(t *testing.T) {
	fs := workDirFilesystem(context.Background())
	if fs == nil {
		t.Skip("no mount found for the working directory")
	}
	wd, _ := os.Getwd()
	if fs.FSType == "" || !strings.HasPrefix(wd, strings.TrimSuffix(fs.Mountpoint, "/")) {
		t.Errorf("working directory %s: got %+v", wd, fs)
	}
}
