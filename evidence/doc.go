// Package evidence provides perfwh's unit of record: content-addressed
// evidence bundles in write-once object storage.
//
// A Digest (sha256) names every blob and manifest. A Backend is a flat
// namespace of write-once objects with two implementations (evidence/local,
// evidence/s3) held to one conformance suite (evidence/storetest). A
// Repository lays blobs, manifests and run pointers out on a Backend and
// verifies every read; a BundleWriter stages a run's files and commits them,
// writing the run pointer last. The format is specified in
// docs/format/bundle.md.
package evidence
