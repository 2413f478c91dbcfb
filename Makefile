# perfwh: the commands people use. `make help` lists them.
GO       ?= go
BIN      ?= bin/perfwh
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X github.com/perfwh/perfwh/internal/buildinfo.version=$(VERSION) \
            -X github.com/perfwh/perfwh/internal/buildinfo.revision=$(REVISION)

.PHONY: help build demo test vet bench bench-hash bench-fileio bench-lineage bench-clickhouse clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

build: ## build bin/perfwh
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/perfwh

demo: build ## build, run examples/quickstart.yaml, ingest it and query it, on the embedded defaults
	./$(BIN) run examples/quickstart.yaml
	./$(BIN) ingest
	./$(BIN) sql "SELECT r.run_id, o.params, o.op, o.repetitions, round(o.mb_per_s, 1) AS mb_per_s, round(o.ops_per_s) AS ops_per_s, round(o.latency_p99_ms, 4) AS p99_ms FROM benchmark_run_fact r JOIN storage_outcome_fact o ON o.run_id = r.run_id WHERE r.run_id = (SELECT max(run_id) FROM benchmark_run_fact) ORDER BY o.point, o.op"

test: ## install and start the services the tests need (127.0.0.1), then vet and run every test
	./scripts/test.sh

vet: ## go vet and gofmt check
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

bench: bench-hash bench-fileio bench-lineage bench-clickhouse ## every benchmark against its peer tool

bench-hash: ## bundle hashing + local store vs sha256sum and openssl
	./bench/hashstore/run.sh

bench-fileio: ## fileio driver vs fio
	./bench/fileio/run.sh

bench-clickhouse: ## ClickHouse ingest (WriteRun) vs clickhouse-client, 1M rows
	./bench/clickhouse-ingest/run.sh -reps 5

bench-lineage: ## lineage of 1,000 runs; --verify=deep vs sha256sum and openssl
	./bench/lineage/run.sh

clean: ## remove build output
	rm -rf bin
