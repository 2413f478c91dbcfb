// Package compare answers "what changed between these two runs?" from the
// warehouse, with the raw evidence as the source of per-repetition values.
//
// Diff reads both runs' rows through a warehouse.Warehouse (portable SQL:
// no joins, WITH or window functions; FINAL on ClickHouse) and puts their
// dimensions side by side — the run (benchmark, driver and ingest versions),
// software versions, hardware topology, cluster context, the canonical
// workload spec flattened to one row per field, and custom metadata —
// marking each that differs. It then matches workload points across the
// runs by their canonical parameter JSON (never by index; parameters that
// are constant within each run but differ between them are run-wide
// changes, shown as workload dimensions and left out of the match) and
// reports, per matched point and operation, the absolute and relative change
// of throughput, latency percentiles and error rate. Points found in one run
// only are listed as such.
//
// Where both runs have several repetitions of a point, Diff adds a seeded
// percentile bootstrap confidence interval of the difference in mean
// per-repetition throughput (B − A). The per-repetition values are not in
// the warehouse (storage_outcome_fact pools repetitions); they are derived
// from the evidence store exactly as ingest derives ops_per_s_cv: measured
// samples of the operation in the trial divided by the trial's measurement
// window. Without the store, or with one repetition, the interval is not
// available and the report says why.
package compare
