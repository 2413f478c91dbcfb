// Package duckdb implements warehouse.Warehouse on an embedded DuckDB file
// (database/sql with the go-duckdb driver; cgo, DuckDB 1.4): the default
// warehouse, one machine, no server.
//
// Schema: Migrate runs warehouse.Migrations rendered for the DuckDB dialect,
// each migration and its schema_migrations row in one transaction. The
// tables have no PRIMARY KEY (the rendered DDL declares none, and keeping
// it so keeps bulk writes fast), so the key of warehouse.Table is enforced
// by WriteRun, not by DuckDB.
//
// Exactly once: WriteRun validates the whole batch first (arity, Go types,
// NULLs, run ids, duplicate keys), then in ONE transaction deletes the
// run's rows from every table keyed by run (facts, artifact_lineage_dim,
// ingest_ledger) and the batch's keys from the dimensions, appends the rows
// (DuckDB's appender, explicit column lists) and inserts the ledger row
// last. Any number of WriteRun calls for one run, interrupted or concurrent,
// leave the rows of exactly one call: a failed call rolls back, and writes
// are serialised within the process (one mutex per file shared by every
// Warehouse of the process) while DuckDB admits one writing process per
// file.
//
// Processes: DuckDB locks the file for the process that opens it
// read-write. Open retries with backoff while another process holds it (up
// to LockTimeout, default 60s) and then fails with an error wrapping
// ErrLocked that names the file. A long-lived holder (a watching ingest)
// therefore blocks other perfwh commands on the same file until it closes.
//
// Query runs any SQL DuckDB accepts — including read_parquet over evidence
// files — and normalises values (integers int64, floats float64, text
// string, times time.Time UTC, booleans int64, NULL nil). It does not
// enforce read-only: DuckDB has no read-only transaction on a read-write
// connection, so a writing statement passed to Query is executed.
package duckdb
