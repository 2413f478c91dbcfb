// Package sql holds the warehouse's SQL that is not code: the generated DDL
// for each engine (sql/ddl, golden-tested by package warehouse) and the
// registered queries (sql/queries/*.sql), which this package loads, checks,
// digests and renders.
//
// A registered query is a file whose leading comment block names it and
// types its parameters:
//
//	-- name: storage_outcomes_by_point
//	-- description: Storage outcomes per run, workload point and operation.
//	-- owner: perfwh
//	-- param: run_id String = ""   only this run; empty for every run
//	-- param: min_samples Int64 = 0
//	SELECT run_id, point, op, ops_per_s
//	FROM {{from storage_outcome_fact}}
//	WHERE ({{param run_id}} = '' OR run_id = {{param run_id}})
//
// The body is portable between DuckDB 1.4 and ClickHouse 18.16; two
// placeholders carry what differs: {{from TABLE}} (ClickHouse adds FINAL so
// ReplacingMergeTree rows read collapsed) and {{param NAME}} (a typed value
// rendered as a literal quoted for the engine). The query_spec_digest is
// the sha256 of the canonical body and parameter schema (Query.Digest), so
// a published number names exactly the SQL that computed it. The format is
// specified in docs/lineage.md.
package sql
