// Package collectors defines the Collector interface and registry.
// Collectors sample telemetry (host counters, GPU state, a server's
// Prometheus metrics) within each trial's measurement window; one package
// per collector (collectors/host, ...) registers itself in init.
// collectors/sysinfo takes the one-off environment snapshot of a run.
package collectors
