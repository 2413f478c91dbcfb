// Package stores opens an evidence.Backend from a store URL, the form the
// --store flag and PERFWH_STORE take: "file:///abs/path" or a plain
// filesystem path for the local backend (evidence/local), and
// "s3://bucket/prefix?…" for S3-compatible storage (evidence/s3).
package stores
