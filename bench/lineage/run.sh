#!/usr/bin/env bash
# perfwh lineage of a publication with 1,000 contributing runs on the
# embedded default: manifest level, and --verify=deep vs sha256sum and
# openssl dgst -sha256 over the same blobs.
# Usage: bench/lineage/run.sh [flags for bench/lineage, e.g. -runs 1000 -reps 9 -dir /tmp/lineage-bench]
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v sha256sum >/dev/null || { echo "sha256sum (coreutils) is required" >&2; exit 1; }
go build -o bin/perfwh ./cmd/perfwh
go run ./bench/lineage -perfwh bin/perfwh "$@"
