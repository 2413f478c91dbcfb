#!/usr/bin/env bash
# minio.sh starts and stops a single-drive MinIO server on 127.0.0.1 for the
# evidence/s3 tests (conditional writes and Object Lock need a real server).
#
#   eval "$(scripts/testenv/minio.sh start DIR)"   # install if missing, start, print exports
#   scripts/testenv/minio.sh env DIR               # print the exports of a running server
#   scripts/testenv/minio.sh stop DIR              # stop the server started in DIR
#
# DIR holds the data directory (DIR/data), the log (DIR/minio.log), the pid
# (DIR/minio.pid) and the exports (DIR/env, mode 0600). Credentials are
# generated per start and never written anywhere else. Only export lines go
# to stdout; progress goes to stderr, so the output can be eval'd.
set -euo pipefail

MINIO_MODULE="github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"

NAME=minio.sh
SERVICE=MinIO
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

minio_bin() {
	if command -v minio >/dev/null 2>&1; then
		command -v minio
		return
	fi
	local bin
	bin="$(go env GOPATH)/bin/minio"
	if [[ ! -x $bin ]]; then
		log "installing $MINIO_MODULE (a few minutes)"
		go install "$MINIO_MODULE" >&2 || die "go install $MINIO_MODULE failed"
	fi
	echo "$bin"
}

random_token() { head -c 64 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c "$1"; }

ready() {
	local url=$1
	if command -v curl >/dev/null 2>&1; then
		curl -fs -o /dev/null --max-time 2 "$url/minio/health/ready" 2>/dev/null
	else
		(exec 3<>"/dev/tcp/${url#http://}") 2>/dev/null
	fi
}

start() {
	if running >/dev/null; then
		log "already running in $dir"
		cat "$envfile"
		return
	fi
	local bin
	bin=$(minio_bin)
	mkdir -p "$dir/data" "$dir/certs"
	local user pass attempt
	user="perfwh$(random_token 12)"
	pass=$(random_token 32)
	for attempt in 1 2 3; do
		local port cport endpoint pid
		port=$(free_port)
		cport=$(free_port)
		endpoint="http://127.0.0.1:$port"
		MINIO_ROOT_USER=$user MINIO_ROOT_PASSWORD=$pass MINIO_BROWSER=off MINIO_UPDATE=off \
			nohup "$bin" server --quiet --anonymous \
			--address "127.0.0.1:$port" --console-address "127.0.0.1:$cport" \
			--certs-dir "$dir/certs" "$dir/data" >"$dir/minio.log" 2>&1 </dev/null &
		pid=$!
		echo "$pid" >"$pidfile"
		local i
		for i in $(seq 1 300); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if ready "$endpoint"; then
				(
					umask 077
					cat >"$envfile" <<EOF
export PERFWH_TEST_S3_ENDPOINT=$endpoint
export AWS_ACCESS_KEY_ID=$user
export AWS_SECRET_ACCESS_KEY=$pass
EOF
				)
				log "MinIO ready at $endpoint (pid $pid, data $dir/data, log $dir/minio.log)"
				cat "$envfile"
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		rm -f "$pidfile"
		log "attempt $attempt: MinIO did not become ready on port $port; log:"
		tail -n 20 "$dir/minio.log" >&2 || true
	done
	die "could not start MinIO"
}


testenv_main
