# bench/server/lib.sh - what the side-by-side scripts here share (compare.sh,
# multi.sh, pubsub.sh, script.sh; also bench/soak/soak.sh): binaries, a
# scratch folder, starting the two servers pinned to SERVER_CPU and stopping
# them on exit, a process's CPU time, the median. Sourced, not run; the
# caller sets `set -euo pipefail` first (and may set TMP_PREFIX, the scratch
# folder's name in /tmp).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
CUDIS=${CUDIS:-$BUILD/server/cudis-server}
REDIS=${REDIS:-/usr/bin/redis-server}
CUDIS_ENGINE=${CUDIS_ENGINE-cpu} # empty: no --engine option
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
OUT=${OUT:-$ROOT/bench/results/server}
CLK_TCK=$(getconf CLK_TCK)
STAMP=$(date -u +%Y%m%d-%H%M%S)
TMP=$(mktemp -d "/tmp/${TMP_PREFIX:-cudis-bench-server}-XXXXXX")
mkdir -p "$OUT"

need_bins() { # need_bins BIN...: exit unless each is an executable
  for b in "$@"; do
    [[ -n $b && -x $b ]] || { echo "$(basename "$0"): missing binary: '$b'" >&2; exit 1; }
  done
}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

declare -A PID PORT
# start_server cudis|redis [extra server options...]: pinned to SERVER_CPU on
# a free port; cudis with --engine $CUDIS_ENGINE, redis without persistence
# in an empty --dir. Waits until it answers PING.
start_server() {
  local name=$1 port
  shift
  port=$(free_port)
  if [[ $name == cudis* ]]; then # cudis, cudis_b (CUDIS=... start_server cudis_b)
    taskset -c "$SERVER_CPU" "$CUDIS" --port "$port" --bind 127.0.0.1 \
      ${CUDIS_ENGINE:+--engine "$CUDIS_ENGINE"} "$@" >"$TMP/$name.log" 2>&1 &
  else
    mkdir -p "$TMP/redis-dir"
    taskset -c "$SERVER_CPU" "$REDIS" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$TMP/redis-dir" "$@" >"$TMP/$name.log" 2>&1 &
  fi
  PID[$name]=$!
  PORT[$name]=$port
  for _ in $(seq 200); do
    if redis-cli -p "$port" ping >/dev/null 2>&1; then return 0; fi
    sleep 0.05
  done
  echo "$(basename "$0"): $name did not start; log:" >&2
  tail -20 "$TMP/$name.log" >&2
  exit 1
}

stop_all() {
  for name in "${!PID[@]}"; do
    if kill -0 "${PID[$name]}" 2>/dev/null; then
      kill -TERM "${PID[$name]}" 2>/dev/null || true
      wait "${PID[$name]}" 2>/dev/null || true
    fi
  done
  rm -rf "$TMP"
}
trap stop_all EXIT

cpu_ticks() { # pid -> utime+stime in clock ticks (fields 14 and 15)
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# how reload pins a server: to SERVER_CPU, or not at all with PIN=none
if [[ ${PIN:-} == none ]]; then PIN_CMD=(); else PIN_CMD=(taskset -c "$SERVER_CPU"); fi

# reload cudis|redis file [binary] -> "wall_s n load_s" (binary: $CUDIS or
# $REDIS; any name but redis is a cudis): seconds from exec to the first PING
# answered, the keys, and the load alone as the server logs it (both say
# "DB loaded from disk: X seconds")
reload() {
  local name=$1 file=$2 bin=${3:-} dir=$TMP/reload-$1 port t0 t1
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$file" "$dir/dump.rdb"
  sync
  port=$(free_port)
  t0=$(date +%s.%N)
  if [[ $name != redis ]]; then
    "${PIN_CMD[@]}" "${bin:-$CUDIS}" --port "$port" --bind 127.0.0.1 --engine "${CUDIS_ENGINE:-cpu}" \
      --maxmemory "${MAXMEMORY:-4gb}" --dir "$dir" >"$TMP/reload-$name.log" 2>&1 &
  else
    "${PIN_CMD[@]}" "${bin:-$REDIS}" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$dir" >"$TMP/reload-$name.log" 2>&1 &
  fi
  local pid=$!
  until [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]]; do sleep 0.005; done
  t1=$(date +%s.%N)
  local n
  n=$(redis-cli -p "$port" dbsize)
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  local ls
  ls=$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$TMP/reload-$name.log" | tail -1)
  echo "$(echo "$t1 - $t0" | bc -l) $n ${ls:-nan}"
}

machine_line() {
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
}
