# lib.sh: what the test-service scripts (minio.sh, clickhouse.sh) share.
# Source it after setting NAME (the script's name, for messages) and
# SERVICE (the service's name); it parses "start|env|stop DIR" and sets
# cmd, dir, pidfile and envfile. The script defines start(), then calls
# testenv_main.

die() { echo "$NAME: $*" >&2; exit 1; }
log() { echo "$NAME: $*" >&2; }
usage() { die "usage: $NAME start|env|stop DIR"; }

[[ $# -eq 2 ]] || usage
cmd=$1
dir=$2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
pidfile=$dir/${SERVICE,,}.pid
envfile=$dir/env

# running prints the pid of the server started in dir, if it is alive.
running() {
	[[ -f $pidfile ]] || return 1
	local pid
	pid=$(<"$pidfile")
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# free_port prints a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	local port i
	for i in $(seq 1 100); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return
		fi
	done
	die "no free port found"
}

# stop ends the server started in dir: TERM, then KILL after 20 s.
stop() {
	local pid
	if ! pid=$(running); then
		log "not running in $dir"
		rm -f "$pidfile" "$envfile"
		return
	fi
	kill "$pid"
	local i
	for i in $(seq 1 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$SERVICE (pid $pid) did not stop; killing it"
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile" "$envfile"
	log "stopped $SERVICE (pid $pid)"
}

testenv_main() {
	case $cmd in
	start) start ;;
	env)
		running >/dev/null || die "not running in $dir"
		cat "$envfile"
		;;
	stop) stop ;;
	*) usage ;;
	esac
}
