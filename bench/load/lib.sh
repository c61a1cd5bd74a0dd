# bench/load/lib.sh - shared shell helpers of compare.sh and batch-sweep.sh:
# locating binaries, free ports, starting/stopping servers pinned to cores,
# and running cudis-bench pinned to the load core. Sourced, not run.

LOAD_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$LOAD_DIR/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BENCH_BIN=${BENCH_BIN:-$BUILD/bench/load/cudis-bench}
CUDIS_SERVER=${CUDIS_SERVER:-$BUILD/server/cudis-server}
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
MEMCACHED=${MEMCACHED:-$(command -v memcached || true)}
MC_THREADS=${MC_THREADS:-1}

# Servers on one core, load on another (2 cores here: 0 and 1).
if [[ -z ${SERVER_CPUS+x} ]]; then
  if (( $(nproc) >= 2 )); then SERVER_CPUS=0; LOAD_CPUS=${LOAD_CPUS:-1}; else SERVER_CPUS=""; LOAD_CPUS=""; fi
fi
LOAD_CPUS=${LOAD_CPUS:-}

pin() { # pin CPUS cmd... (no pinning when CPUS is empty); foreground use only
  local cpus=$1; shift
  if [[ -n $cpus ]] && command -v taskset >/dev/null; then taskset -c "$cpus" "$@"; else "$@"; fi
}

# The command prefix that pins to the server CPUs. Servers are started as
# "${SERVER_PIN[@]}" binary ... & (not through a shell function, which would
# put a subshell between $! and the server: killing $! would orphan it).
SERVER_PIN=(env)
if [[ -n $SERVER_CPUS ]] && command -v taskset >/dev/null; then SERVER_PIN=(taskset -c "$SERVER_CPUS"); fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_port() { # wait_port PORT PID: until the port accepts or the process died
  local port=$1 pid=$2 i
  for ((i = 0; i < 300; i++)); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

declare -A SRV_PID SRV_PORT SRV_PROTO
STARTED_PIDS=()

# start_server NAME MEM_MB [extra args...]: NAME is cudis, redis or memcached.
start_server() {
  local name=$1 mem=$2; shift 2
  local port; port=$(free_port)
  local log=$OUT/server-$name.log
  case $name in
    cudis)
      "${SERVER_PIN[@]}" "$CUDIS_SERVER" --port "$port" --bind 127.0.0.1 --maxmemory "${mem}mb" \
        --engine "${CUDIS_ENGINE:-cpu}" "$@" >"$log" 2>&1 &
      SRV_PROTO[$name]=resp ;;
    redis)
      # a private, empty --dir: redis-server loads any dump.rdb found in its directory
      rm -rf "$OUT/redis-dir"; mkdir -p "$OUT/redis-dir"
      "${SERVER_PIN[@]}" "$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --maxmemory "${mem}mb" \
        --maxmemory-policy allkeys-lru --save '' --appendonly no --dir "$OUT/redis-dir" "$@" >"$log" 2>&1 &
      SRV_PROTO[$name]=resp ;;
    memcached)
      "${SERVER_PIN[@]}" "$MEMCACHED" -u "$(id -un)" -l 127.0.0.1 -p "$port" -m "$mem" \
        -t "$MC_THREADS" -c 4096 "$@" >"$log" 2>&1 &
      SRV_PROTO[$name]=memcache ;;
  esac
  local pid=$!
  SRV_PID[$name]=$pid
  SRV_PORT[$name]=$port
  STARTED_PIDS+=("$pid")
  if ! wait_port "$port" "$pid"; then
    echo "error: $name did not start (see $log)" >&2
    tail -5 "$log" >&2
    return 1
  fi
}

stop_server() {
  local name=$1 pid=${SRV_PID[$1]:-}
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "SRV_PID[$name]"
}

stop_all() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${STARTED_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  STARTED_PIDS=()
}

# run_bench NAME [cudis-bench args...]: runs the load against server NAME.
run_bench() {
  local name=$1; shift
  pin "$LOAD_CPUS" "$BENCH_BIN" -p "${SRV_PORT[$name]}" -P "${SRV_PROTO[$name]}" --label "$name" "$@"
}

machine_line() {
  echo "$(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(free -g | awk '/Mem:/{print $2}') GiB RAM," \
       "$(uname -r); shared with other jobs (noisy: load average $(cut -d' ' -f1-3 /proc/loadavg) at start);" \
       "servers on CPU ${SERVER_CPUS:-any}, load on CPU ${LOAD_CPUS:-any}"
}
