// Package clickhouse implements warehouse.Warehouse on a ClickHouse server
// over the native protocol (clickhouse-go v2), for teams and clusters. It
// supports ClickHouse 18.16 (Debian's) and newer: Open reads the server's
// version and refuses older ones, every statement perfwh issues works on
// 18.16, and a newer-only feature would go behind Version.AtLeast.
//
// URL: clickhouse://host:9000/db?username=U&password_env=VAR&cluster=C.
// The password comes only from the environment (PERFWH_CLICKHOUSE_PASSWORD,
// or the variable password_env names); a password in the URL is refused,
// and none is ever logged or put in an error. With cluster=C, Migrate
// renders ON CLUSTER DDL (a replicated <table>_local per node and a
// Distributed <table> sharded by run_id or the dimension key), inserts go
// synchronously through the Distributed tables, and the DELETE and
// OPTIMIZE statements below run ON CLUSTER on the _local tables. That mode
// needs ZooKeeper, which the test server lacks: its statements are checked
// to parse on 18.16, not executed.
//
// # Exactly once without transactions
//
// ClickHouse has no transactions, so a write cannot be rolled back or made
// visible atomically. Every table is a ReplacingMergeTree ordered by its
// warehouse key: rows with equal keys collapse into the last one written,
// at query time with FINAL and physically when parts merge. WriteRun
// builds on that:
//
//  1. Validate and convert the whole batch first (arity, types, NULLs, run
//     ids, duplicate keys): a bad batch is refused before anything is sent.
//  2. Probe: count the run's rows in every table that has run_id (facts,
//     artifact_lineage_dim, ingest_ledger). If the ledger holds the run
//     (an earlier write, complete or not), delete its ledger row first
//     (ALTER TABLE ... DELETE mutation, waited for): from here until the
//     new ledger row lands, the run counts as not ingested, so a crash
//     leaves a run that ingest retries, never a committed half run.
//  3. Insert the dimension rows that are new or changed (dimensions are
//     keyed by the digest of their content and shared between runs, so a
//     re-ingest usually inserts none), then every fact table's rows:
//     PrepareBatch("INSERT INTO db.t (explicit columns)"), column-wise
//     Append, Send.
//  4. Count again. Where a table holds more rows of the run than the batch
//     (an earlier attempt, a racing writer, or keys an earlier derivation
//     produced and this one does not), read the run's keys, delete the
//     stale ones with a mutation (waited for by polling system.mutations:
//     18.16 has no mutations_sync), and run OPTIMIZE TABLE ... PARTITION ID
//     ... FINAL on the partitions holding the run until the table holds
//     exactly the batch's rows physically (optimize_throw_if_noop makes a
//     merge the server could not start an error, which is retried).
//  5. Insert the ledger row, last: the commit point. Collapse it the same
//     way if a racing writer inserted one too.
//
// So after any sequence of WriteRun calls for a run, interrupted or
// concurrent, SELECT ... FINAL returns the rows of one call, and once a call
// has returned, the physical rows (without FINAL) are those of one call
// too. Readers that must be exact while writes go on use FINAL (Status
// counts with FINAL; warehousetest.From adds it).
//
// Limits, on 18.16 and later:
//   - While a rewrite is in progress, readers see old and new values mixed
//     (each key has one value; FINAL picks the newer) and the run has no
//     ledger row.
//   - Two writers racing on the same run with different key sets (two
//     derivations that produce different rows) can end with keys of both
//     or with fewer; the loser of such a race gets an error, and writing
//     the run once more repairs it. Writers of the same evidence produce the
//     same keys and are safe.
//   - Deleting stale keys and OPTIMIZE ... FINAL rewrite the partitions the
//     run touches; the fact tables other than benchmark_run_fact are not
//     partitioned, so a rewrite that needs them costs time proportional to
//     the table. A first write never needs them.
//   - A racing writer's un-commit may remove a ledger row this call wrote;
//     that writer commits its own, so this call still succeeds.
//
// Query runs read-only (readonly=2) with the warehouse's database as the
// default, and normalises values as warehouse.Result says (UInt64 from
// count() included; a UInt64 above MaxInt64 is an error).
package clickhouse
