// Package sysinfo takes the one-off snapshot of the environment a run
// executes in: host name, operating system and kernel, CPU model and
// topology (NUMA nodes included), memory, virtualization, NVIDIA GPUs and
// the perfwh build.
//
// The snapshot is stored as a content-addressed blob, so it must be
// deterministic: the same machine in the same state gives byte-identical
// JSON. It therefore holds no uptime, boot time, timestamps, free memory,
// current clock speeds or other values that change from run to run, and
// every list in it is sorted. Telemetry that changes belongs to the
// collectors (collectors/host).
//
// A machine without a GPU is not an error: GPUs is then an empty list and
// GPUProbe says why none were found.
package sysinfo
