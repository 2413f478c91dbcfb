#!/usr/bin/env bash
# Runs perfwh's fileio driver and fio side by side on the same file with the
# same settings (see bench/README.md). Arguments go to the Go program; -h
# lists them. Data lives in a temporary directory that is removed afterwards.
#
#   bench/fileio/run.sh                       # defaults: 1 GiB file, 5 s runs, 5 reps
#   bench/fileio/run.sh -cases randread -reps 9
#   bench/fileio/run.sh -direct -dir /mnt/nvme
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v fio >/dev/null; then
	echo "run.sh: fio not found; install it (apt-get install fio)" >&2
	exit 2
fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/fileio-bench" ./bench/fileio
"$bin/fileio-bench" "$@"
