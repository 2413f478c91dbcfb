#!/usr/bin/env bash
# clickhouse.sh starts and stops a single-node ClickHouse server (Debian's
# 18.16) on 127.0.0.1 for the warehouse/clickhouse tests and the
# bench/clickhouse-ingest benchmark.
#
#   eval "$(scripts/testenv/clickhouse.sh start DIR)"   # install if missing, start, print exports
#   scripts/testenv/clickhouse.sh env DIR               # print the exports of a running server
#   scripts/testenv/clickhouse.sh stop DIR              # stop the server started in DIR
#
# DIR holds the server's own configuration (DIR/config.xml, DIR/users.xml),
# its data (DIR/data), logs (DIR/log), the pid (DIR/clickhouse.pid) and the
# exports (DIR/env). The `default` user has no password and may connect from
# 127.0.0.1 only; the server listens on 127.0.0.1 only. A one-shard,
# one-replica cluster `perfwh_cluster` pointing at the server itself and the
# macros {shard} and {replica} let ON CLUSTER DDL be parsed; there is no
# ZooKeeper, so replicated tables cannot be created here. Only export lines
# go to stdout; progress goes to stderr, so the output can be eval'd.
set -euo pipefail

NAME=clickhouse.sh
SERVICE=ClickHouse
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

server_bin() {
	local bin
	for bin in clickhouse-server /usr/sbin/clickhouse-server /usr/bin/clickhouse-server; do
		if command -v "$bin" >/dev/null 2>&1; then
			command -v "$bin"
			return
		fi
	done
	return 1
}

client_bin() { command -v clickhouse-client 2>/dev/null || true; }

install() {
	if server_bin >/dev/null && [[ -n $(client_bin) ]]; then
		return
	fi
	[[ $(id -u) -eq 0 ]] || die "clickhouse-server/clickhouse-client missing; install them: apt-get install clickhouse-server clickhouse-client"
	log "installing clickhouse-server clickhouse-client with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q clickhouse-server clickhouse-client >&2; then
		log "apt-get install failed; running apt-get update and retrying"
		apt-get update -q >&2 || die "apt-get update failed"
		apt-get install -y -q clickhouse-server clickhouse-client >&2 || die "apt-get install clickhouse-server clickhouse-client failed"
	fi
	server_bin >/dev/null || die "clickhouse-server not found after installing it"
}

# write_config writes DIR/config.xml and DIR/users.xml for the given ports.
write_config() {
	local tcp=$1 http=$2
	mkdir -p "$dir/data/tmp" "$dir/data/user_files" "$dir/data/format_schemas" "$dir/log"
	cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Written by scripts/testenv/clickhouse.sh; rewritten on every start. -->
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/log/clickhouse-server.log</log>
        <errorlog>$dir/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$tcp</tcp_port>
    <http_port>$http</http_port>
    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>64</max_concurrent_queries>
    <!-- A 2-core, few-GiB test box: small caches. -->
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/data/tmp/</tmp_path>
    <user_files_path>$dir/data/user_files/</user_files_path>
    <format_schema_path>$dir/data/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
    <!-- One shard, one replica: this server. Enough for ON CLUSTER DDL to
         parse and for Distributed tables over non-replicated ones. -->
    <remote_servers>
        <perfwh_cluster>
            <shard>
                <replica>
                    <host>127.0.0.1</host>
                    <port>$tcp</port>
                </replica>
            </shard>
        </perfwh_cluster>
    </remote_servers>
    <macros>
        <shard>01</shard>
        <replica>r1</replica>
    </macros>
    <!-- Allow the tests to drop tables of any size. -->
    <max_table_size_to_drop>0</max_table_size_to_drop>
    <max_partition_size_to_drop>0</max_partition_size_to_drop>
</yandex>
EOF
	cat >"$dir/users.xml" <<EOF
<?xml version="1.0"?>
<!-- Written by scripts/testenv/clickhouse.sh; rewritten on every start. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <max_threads>2</max_threads>
            <background_pool_size>4</background_pool_size>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks replace="replace">
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

ready() {
	local port=$1
	"$(client_bin)" --host 127.0.0.1 --port "$port" --query 'SELECT 1' >/dev/null 2>&1
}

start() {
	if running >/dev/null; then
		log "already running in $dir"
		cat "$envfile"
		return
	fi
	install
	local bin
	bin=$(server_bin)
	local run_as=()
	if [[ $(id -u) -eq 0 ]] && id clickhouse >/dev/null 2>&1; then
		# setpriv execs the server, so the pid we keep is the server's.
		run_as=(setpriv --reuid=clickhouse --regid=clickhouse --init-groups)
		chown -R clickhouse: "$dir"
		if ! "${run_as[@]}" test -w "$dir"; then
			# A parent directory is private (mktemp -d makes 0700 ones).
			log "user clickhouse cannot reach $dir; running the server as root"
			chown -R root: "$dir"
			run_as=()
		fi
	fi
	local attempt
	for attempt in 1 2 3; do
		local tcp http pid
		tcp=$(free_port)
		http=$(free_port)
		[[ $tcp != "$http" ]] || continue
		write_config "$tcp" "$http"
		if [[ ${#run_as[@]} -gt 0 ]]; then
			chown -R clickhouse: "$dir"
		fi
		# The server's working directory must be writable by it (core files).
		(cd "$dir" && exec nohup "${run_as[@]}" "$bin" --config-file="$dir/config.xml" \
			>"$dir/log/stdout.log" 2>&1 </dev/null) &
		pid=$!
		echo "$pid" >"$pidfile"
		local i
		for i in $(seq 1 300); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if ready "$tcp"; then
				cat >"$envfile" <<EOF
export PERFWH_TEST_CLICKHOUSE=clickhouse://127.0.0.1:$tcp/perfwh_test
EOF
				log "ClickHouse $("$(client_bin)" --host 127.0.0.1 --port "$tcp" --query 'SELECT version()') ready at 127.0.0.1:$tcp (http $http, pid $pid, data $dir/data, log $dir/log)"
				cat "$envfile"
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		rm -f "$pidfile"
		log "attempt $attempt: ClickHouse did not become ready on port $tcp; log:"
		tail -n 20 "$dir/log/clickhouse-server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
	done
	die "could not start ClickHouse"
}


testenv_main
