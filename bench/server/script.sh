#!/usr/bin/env bash
# bench/server/script.sh - EVALSHA of a script of 3 redis.call (INCR, GET,
# SET on keys from a 100k range) with redis-benchmark -c 50 at -P 1 and
# -P 16, against cudis-server (cpu engine) and Debian's redis-server side
# by side (both pinned to SERVER_CPU, the load to LOAD_CPU; the servers
# alternate REPEAT times, the median is kept). Reports requests/s, p50/p99,
# server CPU seconds and requests per CPU-second; target: cudis >= 0.8x
# redis requests/s (issue 11).
#
# Usage: bench/server/script.sh             (N=300000 per run, REPEAT=3)
# Env: N, REPEAT, PIPES ("1 16"), CUDIS, REDIS, SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
N=${N:-300000}
REPEAT=${REPEAT:-3}
PIPES=${PIPES:-"1 16"}
need_bins "$CUDIS" "$REDIS" "$(command -v redis-benchmark || true)"
CSV=$OUT/script-$STAMP.csv
BODY="redis.call('incr', KEYS[1]) redis.call('get', KEYS[1]) return redis.call('set', KEYS[1] .. ':s', 'v')"

# run_one name pipe -> "rps p50 p99 cpu_s"
run_one() {
  local name=$1 pipe=$2 t0 t1 line
  t0=$(cpu_ticks "${PID[$name]}")
  line=$(taskset -c "$LOAD_CPU" redis-benchmark -h 127.0.0.1 -p "${PORT[$name]}" -c 50 -n "$N" \
           -r 100000 -P "$pipe" --csv evalsha "$SHA" 1 key:__rand_int__ 2>"$TMP/err" | tail -1)
  t1=$(cpu_ticks "${PID[$name]}")
  if [[ -z $line ]] || grep -q "ERR\|rror" "$TMP/err"; then
    echo "script.sh: redis-benchmark against $name failed:" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  echo "$line" | tr -d '"' | awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" \
    '{ printf "%s %s %s %.3f\n", $2, $5, $7, cpu / hz }'
}

machine_line
echo "redis-benchmark -c 50 -n $N -r 100000 EVALSHA <3 calls> 1 key:__rand_int__, servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU"
start_server cudis
start_server redis
SHA=$(redis-cli -p "${PORT[cudis]}" script load "$BODY")
[[ $(redis-cli -p "${PORT[redis]}" script load "$BODY") == "$SHA" ]] || { echo "script.sh: SHA differs" >&2; exit 1; }
echo "pipeline,server,rps,p50_ms,p99_ms,server_cpu_s,rps_per_cpu_s" >"$CSV"
declare -A R
for pipe in $PIPES; do
  : >"$TMP/rows.cudis"
  : >"$TMP/rows.redis"
  for _ in $(seq "$REPEAT"); do
    for name in cudis redis; do
      run_one "$name" "$pipe" >>"$TMP/rows.$name"
    done
  done
  for name in cudis redis; do
    rows=$TMP/rows.$name
    rps=$(awk '{ print $1 }' "$rows" | median)
    p50=$(awk '{ print $2 }' "$rows" | median)
    p99=$(awk '{ print $3 }' "$rows" | median)
    cpu=$(awk '{ print $4 }' "$rows" | median)
    per=$(awk -v c="$cpu" -v n="$N" 'BEGIN { printf "%.0f", (c > 0) ? n / c : 0 }')
    R[$pipe,$name]="$rps $p50 $p99 $cpu $per"
    echo "$pipe,$name,$rps,$p50,$p99,$cpu,$per" >>"$CSV"
  done
done
printf '\n| -P | server | requests/s | p50 ms | p99 ms | server CPU s | requests per CPU-s |\n'
printf '|---:|--------|-----------:|-------:|-------:|-------------:|-------------------:|\n'
for pipe in $PIPES; do
  for name in cudis redis; do
    read -r rps p50 p99 cpu per <<<"${R[$pipe,$name]}"
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$pipe" "$name" "$rps" "$p50" "$p99" "$cpu" "$per"
  done
done
printf '\n| -P | rps cudis/redis | per CPU-s | target | met |\n|---:|---:|---:|---|---|\n'
for pipe in $PIPES; do
  read -r rc _ _ _ pc <<<"${R[$pipe,cudis]}"
  read -r rr _ _ _ pr <<<"${R[$pipe,redis]}"
  r=$(awk -v a="$rc" -v b="$rr" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  e=$(awk -v a="$pc" -v b="$pr" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
  ok=$(awk -v r="$r" 'BEGIN { print (r >= 0.8) ? "yes" : "NO" }')
  printf '| %s | %s | %s | >= 0.8x | %s |\n' "$pipe" "$r" "$e" "$ok"
  echo "ratio,$pipe,cudis/redis,$r,,,$e" >>"$CSV"
done
echo
echo "CSV: $CSV"
