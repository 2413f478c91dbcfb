package sysinfo

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// nvidiaSMIOutput is what nvidia-smi prints for nvidiaSMIArgs on a machine
// with two H100s (listed out of order, as a merged capture might be).
const nvidiaSMIOutput = `1, NVIDIA H100 80GB HBM3, GPU-5f2c8a1e-93b4-4d7e-a0c6-1b2d3e4f5a6b, 550.54.15, 81559
0, NVIDIA H100 80GB HBM3, GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d, 550.54.15, 81559
`

var twoH100s = []GPU{
	{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", DriverVersion: "550.54.15", MemoryTotalBytes: 81559 << 20},
	{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-5f2c8a1e-93b4-4d7e-a0c6-1b2d3e4f5a6b", DriverVersion: "550.54.15", MemoryTotalBytes: 81559 << 20},
}

func TestParseNvidiaSMI(t *testing.T) {
	f := func(out string, want []GPU) {
		t.Helper()
		got, err := parseNvidiaSMI([]byte(out))
		if err != nil {
			t.Fatalf("parseNvidiaSMI(%q): %v", out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseNvidiaSMI(%q)\n got %+v\nwant %+v", out, got, want)
		}
	}
	f(nvidiaSMIOutput, twoH100s)
	f("", []GPU{})
	f("\n", []GPU{})
	f("0, NVIDIA H100 NVL, GPU-aa, 560.35.03, [N/A]\n",
		[]GPU{{Index: 0, Name: "NVIDIA H100 NVL", UUID: "GPU-aa", DriverVersion: "560.35.03"}})
	f("0, Some GPU, rev A, GPU-bb, 560.35.03, 1024",
		[]GPU{{Index: 0, Name: "Some GPU,rev A", UUID: "GPU-bb", DriverVersion: "560.35.03", MemoryTotalBytes: 1 << 30}})

	for _, bad := range []string{
		"No devices were found",
		"x, NVIDIA H100 80GB HBM3, GPU-aa, 550.54.15, 81559",
		"0, NVIDIA H100 80GB HBM3, GPU-aa, 550.54.15",
	} {
		if got, err := parseNvidiaSMI([]byte(bad)); err == nil {
			t.Errorf("parseNvidiaSMI(%q) = %+v; want an error", bad, got)
		}
	}
}

func TestParseDriverVersion(t *testing.T) {
	for in, want := range map[string]string{
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n": "535.104.05",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n": "550.54.15",
		"something else": "",
	} {
		if got := parseDriverVersion([]byte(in)); got != want {
			t.Errorf("parseDriverVersion(%q) = %q; want %q", in, got, want)
		}
	}
}

// fakeNvidiaSMI makes PATH a directory holding only an nvidia-smi shell
// script that runs body, which can therefore use shell builtins only.
func fakeNvidiaSMI(t *testing.T, body string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

// fakeProcNvidia writes a /proc/driver/nvidia with one GPU and returns it.
func fakeProcNvidia(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n")
	write("gpus/0000:18:00.0/information", "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 0\n")
	return dir
}

func TestProbeGPUs(t *testing.T) {
	ctx := context.Background()
	absent := filepath.Join(t.TempDir(), "nvidia")

	t.Run("nvidia-smi", func(t *testing.T) {
		fakeNvidiaSMI(t, "printf '%s' '"+nvidiaSMIOutput+"'") // PATH holds only the fake: builtins only
		gpus, probe := probeGPUs(ctx, absent)
		if probe != "nvidia-smi" || !reflect.DeepEqual(gpus, twoH100s) {
			t.Errorf("probeGPUs = %+v, %q; want the two H100s from nvidia-smi", gpus, probe)
		}
	})
	t.Run("no driver, no nvidia-smi", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		gpus, probe := probeGPUs(ctx, absent)
		want := "no NVIDIA driver (" + filepath.Join(absent, "version") + " absent); nvidia-smi not in PATH"
		if gpus == nil || len(gpus) != 0 || probe != want {
			t.Errorf("probeGPUs = %#v, %q; want [], %q", gpus, probe, want)
		}
	})
	t.Run("nvidia-smi fails, /proc fallback", func(t *testing.T) {
		fakeNvidiaSMI(t, "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'; exit 9")
		proc := fakeProcNvidia(t)
		gpus, probe := probeGPUs(ctx, proc)
		want := []GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", DriverVersion: "550.54.15"}}
		if !reflect.DeepEqual(gpus, want) {
			t.Errorf("probeGPUs = %+v; want %+v", gpus, want)
		}
		if !strings.HasPrefix(probe, proc+" (nvidia-smi failed: exit status 9: NVIDIA-SMI has failed") {
			t.Errorf("probe = %q; want the /proc source and why nvidia-smi was not used", probe)
		}
	})
	t.Run("nvidia-smi lists nothing", func(t *testing.T) {
		fakeNvidiaSMI(t, "exit 0")
		gpus, probe := probeGPUs(ctx, absent)
		if len(gpus) != 0 || !strings.Contains(probe, "nvidia-smi listed no GPUs") {
			t.Errorf("probeGPUs = %+v, %q", gpus, probe)
		}
	})
}
