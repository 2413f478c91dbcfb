// Package warehouse will define the analytical schema once and implement it
// on DuckDB (embedded default) and ClickHouse (teams), held to one
// conformance suite. Not implemented yet: see docs/design.md.
package warehouse
