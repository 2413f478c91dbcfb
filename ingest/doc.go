// Package ingest will verify evidence bundles and normalise them into the
// warehouse's fact and dimension tables, deriving outcomes (exact
// percentiles, throughput, error rates) from the raw samples, idempotently.
// It reads bundles only through evidence.Repository. Not implemented yet:
// see the warehouse issue and docs/design.md.
package ingest
