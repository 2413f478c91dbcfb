// Package warehousetest is the conformance suite every warehouse engine
// passes (warehouse/duckdb, warehouse/clickhouse): Run writes deterministic
// synthetic batches (SyntheticBatch) and checks migrations, Status row
// counts, value-for-value and type-for-type round trips, rewrites,
// concurrent writes, rejected batches, the ledger and shared dimensions.
//
// Cross-engine identity: CanonicalQueries is a fixed set of portable
// queries (DuckDB 1.4 and ClickHouse 18.16); the suite compares their
// results over CanonicalBatches with testdata/canonical.golden, so two
// engines passing it agree exactly. CanonicalResults and CompareResults let
// other tests (ingest) compare engines over their own data. Queries read
// through From, which adds FINAL on ClickHouse.
//
// Regenerate the golden file after an intended change:
//
//	go test ./warehouse/duckdb -run TestConformance/CanonicalResults -warehousetest.update
package warehousetest
