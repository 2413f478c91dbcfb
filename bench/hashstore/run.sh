#!/usr/bin/env bash
# Bundle hashing + local store vs sha256sum over the same files.
# Usage: bench/hashstore/run.sh [flags for bench/hashstore, e.g. -reps 7 -dirty]
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v sha256sum >/dev/null || { echo "sha256sum (coreutils) is required" >&2; exit 1; }
go run ./bench/hashstore "$@"
