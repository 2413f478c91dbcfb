// Package lineage walks a published number back to the raw evidence that
// produced it, and refuses numbers that cannot be walked back.
//
// A Publication is the immutable record of a registered query's result:
// the query's text and query_spec_digest, the parameters, every result row
// with the run ids it came from, the runs' manifest digests, who published
// it and when, and the verdicts of the publication gates (Gates). Publish
// runs the query, traces every row to runs, checks the evidence and the
// gates, and stores the publication write-once in the evidence store under
// the sha256 of its canonical JSON (publications/sha256/<hex>), so a
// publication is as tamper-evident as the evidence it points to.
//
// Resolve answers a reference — a publication ("pub:ID", optionally one row
// and column) or a warehouse cell named by a Selector
// (`table.column{label="value",...}`) — with a Report: number → publication
// → query → rows → runs → manifest → blobs, with the dimensions each run
// used. Every link is checked (Checker: pointer, manifest digest, blob
// existence and size, or every blob re-hashed at LevelDeep) and every
// broken one is a Problem naming the object. docs/lineage.md describes the
// format and the checks.
package lineage
