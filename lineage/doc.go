// Package lineage will resolve a published number back through its query,
// runs and manifest to the raw blobs in the evidence store, and refuse
// numbers that cannot be walked back. Not implemented yet: see
// docs/design.md.
package lineage
