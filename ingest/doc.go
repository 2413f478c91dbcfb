// Package ingest verifies evidence bundles and normalises them into the
// warehouse tables (warehouse.Tables).
//
// For each committed run not yet in the ingest ledger, Run reads the
// manifest and every blob once, verifying each digest and size before
// anything is written; a run whose evidence is missing, corrupt or cannot be
// decoded is quarantined (a ledger row with the reason) and the pass goes
// on. Deriver computes the rows: the run fact; content-keyed software,
// hardware, cluster and workload dimensions; artifact lineage; custom
// metadata; outcomes per workload point derived from the raw samples with
// warmup excluded (exact nearest-rank percentiles, mean, population
// standard deviation, throughput, error rate, and the coefficient of
// variation of throughput across repetitions); and telemetry rolled up into
// windows aligned to each trial's measurement window. Every derived row
// records Version, so old evidence can be re-derived by a newer perfwh.
//
// Raw per-operation samples stay in the evidence store; only what is
// derived from them enters the warehouse. Warehouse.WriteRun makes each
// run's write exactly-once in effect and writes the ledger row last.
package ingest
