// Package spec loads benchmark case files (YAML), applies --set overrides,
// validates them against the driver's and collectors' schemas (every error
// names file, line and field), computes the canonical workload spec and its
// digests (workload_spec_digest, benchmark_case_id), and expands sweeps into
// trials. The case format is documented in docs/cases.md.
package spec
