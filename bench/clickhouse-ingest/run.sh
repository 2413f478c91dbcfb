#!/usr/bin/env bash
# WriteRun into ClickHouse vs clickhouse-client (TabSeparated) over the same
# ~1M rows, alternating, in fresh tables each repetition.
# Usage: bench/clickhouse-ingest/run.sh [flags for bench/clickhouse-ingest, e.g. -reps 5 -ledger=false]
# Uses the server in $PERFWH_TEST_CLICKHOUSE, or starts one with
# scripts/testenv/clickhouse.sh in a temporary directory and stops it after.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${PERFWH_TEST_CLICKHOUSE:-} ]]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/perfwh-chbench.XXXXXX")
	chmod 0711 "$dir" # traversable: the server runs as user clickhouse when it can reach its directory
	trap 'scripts/testenv/clickhouse.sh stop "$dir/clickhouse" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
	eval "$(scripts/testenv/clickhouse.sh start "$dir/clickhouse")"
fi
command -v clickhouse-client >/dev/null || { echo "clickhouse-client is required (apt-get install clickhouse-client)" >&2; exit 1; }
go run ./bench/clickhouse-ingest "$@"
