#!/usr/bin/env bash
# bench/server/pubsub.sh - PUBLISH fan-out (issue 11's target): 100
# subscribers on one channel, 4 publishers with 32 PUBLISH in flight each,
# 32-byte messages, measured by pubsub-bench against cudis-server (cpu
# engine) and Debian's redis-server, side by side: both servers pinned to
# one core (SERVER_CPU), the client to another (LOAD_CPU); the servers
# alternate REPEAT times and the median is kept. Reports messages
# delivered per second, publishes per second, server CPU seconds and
# messages per CPU-second, and the target: cudis >= 1.0x redis messages/s.
#
# Usage: bench/server/pubsub.sh          (D=5 s per run, REPEAT=3: about a minute)
# Env: D, REPEAT, SUBS (100), PUBS (4), DEPTH (32), VSIZE (32), CUDIS, REDIS,
#      BENCH, SERVER_CPU (0), LOAD_CPU (1), OUT (default bench/results/server).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
D=${D:-5}
REPEAT=${REPEAT:-3}
SUBS=${SUBS:-100}
PUBS=${PUBS:-4}
DEPTH=${DEPTH:-32}
VSIZE=${VSIZE:-32}
BENCH=${BENCH:-$BUILD/bench/server/pubsub-bench}
need_bins "$CUDIS" "$REDIS" "$BENCH"
CSV=$OUT/pubsub-$STAMP.csv

# run_one name -> "messages_per_s publishes_per_s cpu_s delivered"
run_one() {
  local name=$1 t0 t1 csv=$TMP/one.csv
  rm -f "$csv"
  t0=$(cpu_ticks "${PID[$name]}")
  taskset -c "$LOAD_CPU" "$BENCH" -p "${PORT[$name]}" -s "$SUBS" -P "$PUBS" -d "$DEPTH" \
    -v "$VSIZE" -D "$D" --label "$name" --csv "$csv" >"$TMP/bench.out" 2>&1 ||
    { cat "$TMP/bench.out" >&2; exit 1; }
  t1=$(cpu_ticks "${PID[$name]}")
  # label,subs,pubs,depth,vsize,elapsed,delivered,mps,pps,receivers
  awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" '{ printf "%s %s %.3f %s\n", $8, $9, cpu / hz, $7 }' "$csv"
}

machine_line
echo "pubsub-bench: $SUBS subscribers, $PUBS publishers x $DEPTH in flight, ${VSIZE} B messages, ${D}s x $REPEAT; servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU"
start_server cudis
start_server redis
echo "server,messages_per_s,publishes_per_s,server_cpu_s,messages_per_cpu_s" >"$CSV"
: >"$TMP/rows.cudis"
: >"$TMP/rows.redis"
for _ in $(seq "$REPEAT"); do
  for name in cudis redis; do
    run_one "$name" >>"$TMP/rows.$name"
  done
done
declare -A R
for name in cudis redis; do
  rows=$TMP/rows.$name
  mps=$(awk '{ print $1 }' "$rows" | median)
  pps=$(awk '{ print $2 }' "$rows" | median)
  cpu=$(awk '{ print $3 }' "$rows" | median)
  per=$(awk '{ printf "%.0f\n", ($3 > 0) ? $4 / $3 : 0 }' "$rows" | median)
  R[$name]="$mps $pps $cpu $per"
  echo "$name,$mps,$pps,$cpu,$per" >>"$CSV"
done
printf '\n| server | messages/s | publishes/s | server CPU s | messages per CPU-s |\n'
printf '|--------|-----------:|------------:|-------------:|-------------------:|\n'
for name in cudis redis; do
  read -r mps pps cpu per <<<"${R[$name]}"
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$mps" "$pps" "$cpu" "$per"
done
read -r mc _ _ pc <<<"${R[cudis]}"
read -r mr _ _ pr <<<"${R[redis]}"
r=$(awk -v a="$mc" -v b="$mr" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
rc=$(awk -v a="$pc" -v b="$pr" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
ok=$(awk -v r="$r" 'BEGIN { print (r >= 1.0) ? "yes" : "NO" }')
printf '\n| ratio | messages/s | per CPU-s | target | met |\n|---|---:|---:|---|---|\n'
printf '| cudis / redis | %s | %s | >= 1.0x | %s |\n' "$r" "$rc" "$ok"
echo "ratio,$r,,,$rc" >>"$CSV"
echo
echo "CSV: $CSV"
