# servers.sh - sourced by client/examples/compare.sh and bench/client/run.sh:
# start cudis-server and redis-server on free loopback ports with the same
# maxmemory, stop them on exit. Sets CUDIS_PORT and REDIS_PORT.
#   BUILD         build directory (default build)
#   CUDIS_SERVER  cudis-server binary (default $BUILD/server/cudis-server)
#   REDIS_SERVER  redis-server binary (default /usr/bin/redis-server)
#   MAXMEMORY     e.g. 64mb (default)
#   ENGINE        cudis engine (default cpu)
BUILD=${BUILD:-build}
CUDIS_SERVER=${CUDIS_SERVER:-$BUILD/server/cudis-server}
REDIS_SERVER=${REDIS_SERVER:-/usr/bin/redis-server}
MAXMEMORY=${MAXMEMORY:-64mb}
ENGINE=${ENGINE:-cpu}
# PIN=1: servers on CPU 0, the client on CPU 1 (same placement for both
# targets). Default 0: on a shared machine a pinned CPU 0 queues behind
# everyone else's work, and letting the scheduler place them measured better.
PIN=${PIN:-0}
SRV_PIN=(); CLI_PIN=()
if [ "$PIN" = 1 ] && command -v taskset >/dev/null; then SRV_PIN=(taskset -c 0); CLI_PIN=(taskset -c 1); fi
_srv_pids=()

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

stop_servers() {
    for p in "${_srv_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${_srv_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_servers EXIT

wait_port() { # port pid name
    for _ in $(seq 200); do
        if redis-cli -p "$1" ping >/dev/null 2>&1; then return 0; fi
        kill -0 "$2" 2>/dev/null || { echo "$3 exited at start" >&2; return 1; }
        sleep 0.05
    done
    echo "$3 did not answer on port $1" >&2; return 1
}

start_one() { # name binary -> prints nothing, sets _port
    local name=$1 bin=$2 extra
    _port=$(free_port)
    case "$(basename "$bin")" in
        *redis*) extra=(--save "" --appendonly no --maxmemory-policy allkeys-lru
                        --dir "${TMPDIR:-/tmp}" --dbfilename cudis-client-bench-none.rdb) ;;
        *) extra=(--engine "$ENGINE") ;;
    esac
    "${SRV_PIN[@]}" "$bin" --port "$_port" --bind 127.0.0.1 --maxmemory "$MAXMEMORY" "${extra[@]}" \
        >"${TMPDIR:-/tmp}/cudis-client-bench-$name.log" 2>&1 &
    _srv_pids+=($!)
    wait_port "$_port" $! "$name"
}

start_servers() {
    [ -x "$CUDIS_SERVER" ] || { echo "no $CUDIS_SERVER (build the cudis-server target or set CUDIS_SERVER)" >&2; exit 1; }
    start_one cudis "$CUDIS_SERVER"; CUDIS_PORT=$_port
    start_one redis "$REDIS_SERVER"; REDIS_PORT=$_port
}
