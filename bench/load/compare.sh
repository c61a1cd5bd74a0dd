#!/usr/bin/env bash
# bench/load/compare.sh - cudis (CPU engine) vs redis-server 7 vs memcached,
# side by side, with one client (cudis-bench) and one command.
#
# Starts the three servers on loopback ports with equal memory limits,
# servers pinned to one core and the load to another, runs every workload
# point against each server in turn, stops them, and writes to $OUT:
#   compare.csv          one row per (workload, point, server) from cudis-bench
#   summary.md           the side-by-side tables (also printed)
#   lat_<wl>_<srv>.csv   latency percentile spectra; *.png plots (gnuplot)
#
# Usage: bench/load/compare.sh            (full: a few minutes)
#        QUICK=1 bench/load/compare.sh    (smoke test: about a minute)
# Env: BUILD (build dir, default build), OUT (default bench/results/load),
#      MEM (MB per server, default 64; QUICK 16), SERVERS (default
#      "cudis redis memcached"), DUR (seconds per point), SERVER_CPUS,
#      LOAD_CPUS, MC_THREADS (memcached -t, default 1), CUDIS_ARGS (extra
#      cudis-server options), CUDIS_ENGINE (default cpu), WORKLOADS (subset of
#      "zipf90 uniform50 mget100 pressure").
set -euo pipefail
source "$(dirname "$0")/lib.sh"

QUICK=${QUICK:-0}
OUT=${OUT:-$ROOT/bench/results/load}
SERVERS=${SERVERS:-"cudis redis memcached"}
WORKLOADS=${WORKLOADS:-"zipf90 uniform50 mget100 pressure"}
want() { [[ " $WORKLOADS " == *" $1 "* ]]; }
if [[ $QUICK == 1 ]]; then
  MEM=${MEM:-16}; DUR=${DUR:-1}; WARM=${WARM:-0.5}
  CONNS_SWEEP=${CONNS_SWEEP:-"1 16 64"}; PIPE_SWEEP=${PIPE_SWEEP:-"1 16"}
  ZKEYS=${ZKEYS:-50000}
else
  MEM=${MEM:-64}; DUR=${DUR:-4}; WARM=${WARM:-1}
  CONNS_SWEEP=${CONNS_SWEEP:-"1 4 16 64 256"}; PIPE_SWEEP=${PIPE_SWEEP:-"1 4 16 64"}
  ZKEYS=${ZKEYS:-100000}
fi
STD_CONNS=16 # the connection count of the pipeline sweep and the other workloads

mkdir -p "$OUT"
CSV=$OUT/compare.csv
rm -f "$CSV" "$OUT"/lat_*.csv "$OUT"/throughput_*.png "$OUT"/latency_*.png "$OUT"/hit_ratio_*.png "$OUT"/server-*.log
trap stop_all EXIT

[[ -x $BENCH_BIN ]] || { echo "error: $BENCH_BIN not built (cmake --build $BUILD --target cudis-bench)" >&2; exit 1; }
active=()
for s in $SERVERS; do
  case $s in
    cudis) bin=$CUDIS_SERVER ;; redis) bin=$REDIS_SERVER ;; memcached) bin=$MEMCACHED ;;
    *) echo "error: unknown server $s" >&2; exit 1 ;;
  esac
  if [[ -n $bin && -x $bin ]]; then active+=("$s"); else echo "warning: $s not found ($bin); skipped" >&2; fi
done
(( ${#active[@]} )) || { echo "error: no server to measure" >&2; exit 1; }

echo "# machine: $(machine_line)"
echo "# servers: ${active[*]}; memory limit ${MEM} MB each; ${DUR}s per point"

declare -A NEED_LOAD
FAILED=()

start_one() {
  if [[ $1 == cudis ]]; then
    # shellcheck disable=SC2086
    start_server "$1" "$MEM" ${CUDIS_ARGS:-}
  else
    start_server "$1" "$MEM"
  fi
  NEED_LOAD[$1]=1
}

start_all() {
  local s
  for s in "${active[@]}"; do start_one "$s"; done
}

# point WORKLOAD CONNS PIPE LATFILE_TAG [cudis-bench args...]
# runs one workload point against every server in turn; the first point
# after a (re)start loads the keys. A failed run is reported and skipped,
# and a server that died is restarted for the next point.
point() {
  local wl=$1 conns=$2 pipe=$3 lat=$4; shift 4
  local s extra
  for s in "${active[@]}"; do
    extra=()
    [[ ${NEED_LOAD[$s]} == 1 ]] || extra+=(--no-load)
    [[ -z $lat ]] || extra+=(--latency-out "$OUT/lat_${lat}_${s}.csv")
    if run_bench "$s" --workload "$wl" -c "$conns" -d "$pipe" -D "$DUR" -w "$WARM" -q --csv "$CSV" \
      --items "${extra[@]}" "$@"; then
      NEED_LOAD[$s]=0
    else
      echo "warning: $s failed on $wl conns $conns pipeline $pipe" >&2
      FAILED+=("$s:$wl:c$conns:d$pipe")
      if ! kill -0 "${SRV_PID[$s]}" 2>/dev/null; then
        echo "warning: $s died (log: $OUT/server-$s.log); restarting it" >&2
        tail -3 "$OUT/server-$s.log" >&2 || true
        start_one "$s"
      fi
    fi
  done
}

t_start=$(date +%s)

# 1. 90/10 get/set, Zipf 0.99, 32-byte values: sweep connections, then pipeline depth.
ZIPF=(-k "$ZKEYS" --zipf 0.99 -v 32 -r 0.9)
if want zipf90; then
echo "== zipf90: 90/10 get/set, Zipf 0.99, 32 B values, $ZKEYS keys =="
start_all
for c in $CONNS_SWEEP; do
  tag=""; [[ $c == "$STD_CONNS" ]] && tag=zipf90
  point zipf90 "$c" 1 "$tag" "${ZIPF[@]}"
done
for d in $PIPE_SWEEP; do
  [[ $d == 1 ]] && continue
  tag=""; [[ $d == 16 ]] && tag=zipf90_pipe16
  point zipf90 "$STD_CONNS" "$d" "$tag" "${ZIPF[@]}"
done
stop_all
fi

# 2. 50/50 get/set, uniform keys.
if want uniform50; then
echo "== uniform50: 50/50 get/set, uniform, 32 B values, $ZKEYS keys =="
start_all
point uniform50 "$STD_CONNS" 1 uniform50 -k "$ZKEYS" --dist uniform -v 32 -r 0.5
point uniform50 "$STD_CONNS" 16 "" -k "$ZKEYS" --dist uniform -v 32 -r 0.5
stop_all
fi

# 3. Feature cache: MGET of 100 keys, 512-byte values (keys sized to fit in memory).
FKEYS=$(( MEM * 1024 * 1024 / 2 / 1024 ))  # ~half the limit at ~1 KiB per item incl. overhead
if want mget100; then
echo "== mget100: MGET of 100 keys, 512 B values, $FKEYS keys, Zipf 0.99, reads only =="
start_all
point mget100 "$STD_CONNS" 1 mget100 -k "$FKEYS" --zipf 0.99 -v 512 -r 1.0 -m 100
stop_all
fi

# 4. Memory pressure: the key range is 4x what fits in the memory limit (raw key+value
#    bytes); Zipf 0.99 reads with cache-aside fill on miss, 10% writes. Warm-up and
#    measurement are request counts (8x and 4x the items that fit), so every server
#    reaches its steady state and serves the same work whatever its speed.
PVAL=${PVAL:-480}
PFIT=$(( MEM * 1024 * 1024 / (PVAL + 16) ))
PKEYS=$(( 4 * PFIT ))
if want pressure; then
echo "== pressure: $PKEYS keys x $((PVAL + 16)) B = 4x the ${MEM} MB limit, Zipf 0.99, 90/10 + fill on miss," \
  "warm-up $((8 * PFIT)) requests, measure $((4 * PFIT)) =="
# every server with its defaults: cudis's index follows the stored item
# size (engine-index-resize), no item-size option is passed
start_all
point pressure "$STD_CONNS" 4 "" -k "$PKEYS" --zipf 0.99 -v "$PVAL" -r 0.9 --fill-on-miss \
  -w 0 -W $((8 * PFIT)) -n $((4 * PFIT))
stop_all
fi
trap - EXIT

t_end=$(date +%s)
echo "# ran in $((t_end - t_start)) s"
if (( ${#FAILED[@]} )); then echo "# FAILED runs (no row in the CSV): ${FAILED[*]}"; fi
python3 "$LOAD_DIR/summarize.py" "$CSV" --machine "$(machine_line)" --mem "$MEM" \
  --plots "$OUT" | tee "$OUT/summary.md"
if (( ${#FAILED[@]} )); then
  echo "FAILED runs (no row above): ${FAILED[*]}" | tee -a "$OUT/summary.md"
fi
