// Package runner executes a plan: for each trial it opens the driver,
// runs the warmup phase (recorded, marked, excluded from results), starts
// the collectors, runs the measurement phase, and writes the samples,
// telemetry and log into the evidence bundle. Every trial runs under its
// time limit; a failing, panicking or overrunning trial is recorded with an
// error kind and the sweep goes on. When the context is cancelled (Ctrl-C)
// the finished trials are committed as a partial run.
//
// The run becomes visible in the store only when the bundle commits its run
// pointer, after every blob and the manifest are stored.
package runner
