// Package cli implements perfwh's commands, one file per command (cmd_*.go),
// each a thin cobra command over the packages that hold the behaviour
// (spec, runner, evidence, ingest, warehouse, lineage, compare). A Factory
// carries the global options and opens the store and the warehouse only when
// a command needs them; IOStreams separate the result (stdout: a table, or
// exactly one JSON document with --output json) from logs and progress
// (stderr; a progress bar only on a terminal). Errors carry exit codes
// (errors.go): 0 ok, 1 failure, 2 bad input, 3 trials failed or runs
// quarantined, 4 not publication-safe, 130 interrupted.
//
// Adding a command: write cmd_<verb>.go with newXCmd(f *Factory), keep
// parsing there and behaviour in a package with its own tests, register it
// in NewRootCmd, and document it in docs/cli.md.
package cli
