#!/usr/bin/env bash
# The README's test command (make test): installs what is missing, starts
# the real services the tests need on 127.0.0.1 with their own data under a
# temporary directory, runs vet and every test, and stops the services.
# In CI (CI=true) a test whose service is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."

testenv=$(mktemp -d "${TMPDIR:-/tmp}/perfwh-testenv.XXXXXX")
chmod 0711 "$testenv" # traversable, not listable: ClickHouse runs as user clickhouse below it
cleanup() {
  scripts/testenv/minio.sh stop "$testenv/minio" >/dev/null 2>&1 || true
  scripts/testenv/clickhouse.sh stop "$testenv/clickhouse" >/dev/null 2>&1 || true
  rm -rf "$testenv"
}
trap cleanup EXIT

echo "== services (data under $testenv)"
eval "$(scripts/testenv/minio.sh start "$testenv/minio")"
eval "$(scripts/testenv/clickhouse.sh start "$testenv/clickhouse")"

echo "== vet"
make --no-print-directory vet

echo "== test"
go test -count=1 ./... 2>&1
