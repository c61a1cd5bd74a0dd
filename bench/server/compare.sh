#!/usr/bin/env bash
# bench/server/compare.sh - cudis-server (CPU engine) vs Debian's
# redis-server 7, side by side in one run, with redis-benchmark (the issue 5
# "Targets"):
#   redis-benchmark -c 50 -n $N -r 1000000 -d 32 -t set|get -P 16 and -P 1
# Both servers are pinned to the same single core (taskset -c $SERVER_CPU),
# the load generator to another ($LOAD_CPU); equal maxmemory. For every
# (pipeline, command) the two servers run back to back. Reports requests/s,
# p50/p99 latency (redis-benchmark --csv), requests per server CPU-second
# (utime+stime from /proc/<pid>/stat before/after), the cudis/redis ratios,
# and checks the targets: -P 16 cudis >= 1.2x redis for SET and GET;
# -P 1 >= 0.9x and p99 <= 1.2x.
#
# Usage: bench/server/compare.sh             (N=2000000: a few minutes)
#        N=200000 bench/server/compare.sh    (quick)
# Env: N (requests per run), PIPES (default "16 1"), TESTS (default
#      "set get"), REPEAT (runs per point, the median is kept, default 1),
#      CUDIS (binary, default $BUILD/server/cudis-server, BUILD default
#      build), REDIS (default /usr/bin/redis-server), MAXMEMORY (default
#      1gb), CUDIS_ENGINE (default cpu), CUDIS_ARGS (extra cudis options),
#      SERVER_CPU (default 0), LOAD_CPU (default 1), OUT (CSV folder,
#      default bench/results/server).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
N=${N:-2000000}
PIPES=${PIPES:-"16 1"}
TESTS=${TESTS:-"set get"}
REPEAT=${REPEAT:-1}
MAXMEMORY=${MAXMEMORY:-1gb}
CUDIS_ARGS=${CUDIS_ARGS:-}
need_bins "$CUDIS" "$REDIS" "$(command -v redis-benchmark || true)"
CSV=$OUT/compare-$STAMP.csv

# run_one name pipe test -> "rps p50 p99 cpu_s"
run_one() {
  local name=$1 pipe=$2 test=$3 t0 t1 line
  t0=$(cpu_ticks "${PID[$name]}")
  line=$(taskset -c "$LOAD_CPU" redis-benchmark -h 127.0.0.1 -p "${PORT[$name]}" -c 50 -n "$N" -r 1000000 \
           -d 32 -t "$test" -P "$pipe" --csv 2>"$TMP/err" | grep -i "^\"$test\"" | tail -1)
  t1=$(cpu_ticks "${PID[$name]}")
  if [[ -z $line ]] || grep -q "ERR\|rror" "$TMP/err"; then
    echo "compare.sh: redis-benchmark against $name failed:" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  # "test","rps","avg","min","p50","p95","p99","max"
  echo "$line" | tr -d '"' | awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" \
    '{ printf "%s %s %s %.3f\n", $2, $5, $7, cpu / hz }'
}

machine_line
echo "redis-benchmark -c 50 -n $N -r 1000000 -d 32, servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU, maxmemory $MAXMEMORY"
# shellcheck disable=SC2086
start_server cudis --maxmemory "$MAXMEMORY" $CUDIS_ARGS
start_server redis --maxmemory "$MAXMEMORY" --maxmemory-policy allkeys-lru
echo "cudis: $CUDIS --engine $CUDIS_ENGINE $CUDIS_ARGS (port ${PORT[cudis]}); redis: $($REDIS --version | cut -d' ' -f1-3) (port ${PORT[redis]})"

echo "pipeline,test,server,rps,p50_ms,p99_ms,server_cpu_s,rps_per_cpu_s" >"$CSV"
declare -A R
for pipe in $PIPES; do
  for test in $TESTS; do
    : >"$TMP/rows.cudis"
    : >"$TMP/rows.redis"
    for _ in $(seq "$REPEAT"); do # alternate the servers: noise hits both
      for name in cudis redis; do
        run_one "$name" "$pipe" "$test" >>"$TMP/rows.$name"
      done
    done
    for name in cudis redis; do
      rows=$TMP/rows.$name
      rps=$(awk '{ print $1 }' "$rows" | median)
      p50=$(awk '{ print $2 }' "$rows" | median)
      p99=$(awk '{ print $3 }' "$rows" | median)
      cpu=$(awk '{ print $4 }' "$rows" | median)
      per=$(awk -v c="$cpu" -v n="$N" 'BEGIN { printf "%.0f", (c > 0) ? n / c : 0 }')
      R[$pipe,$test,$name]="$rps $p50 $p99 $cpu $per"
      echo "$pipe,$test,$name,$rps,$p50,$p99,$cpu,$per" >>"$CSV"
    done
  done
done

printf '\n| -P | test | server | requests/s | p50 ms | p99 ms | server CPU s | requests per CPU-s |\n'
printf '|---:|------|--------|-----------:|-------:|-------:|-------------:|-------------------:|\n'
for pipe in $PIPES; do
  for test in $TESTS; do
    for name in cudis redis; do
      read -r rps p50 p99 cpu per <<<"${R[$pipe,$test,$name]}"
      printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$pipe" "${test^^}" "$name" "$rps" "$p50" "$p99" "$cpu" "$per"
    done
  done
done

printf '\n| -P | test | rps cudis/redis | p99 cudis/redis | rps-per-CPU-s cudis/redis | target | met |\n'
printf '|---:|------|----:|----:|----:|--------|-----|\n'
fail=0
for pipe in $PIPES; do
  for test in $TESTS; do
    read -r rc _ pc _ cc <<<"${R[$pipe,$test,cudis]}"
    read -r rr _ pr _ cr <<<"${R[$pipe,$test,redis]}"
    line=$(awk -v rc="$rc" -v rr="$rr" -v pc="$pc" -v pr="$pr" -v cc="$cc" -v cr="$cr" -v pipe="$pipe" 'BEGIN {
      t = rc / rr; l = ((pr > 0) ? pc / pr : 0); e = ((cr > 0) ? cc / cr : 0)
      if (pipe == 16) { target = "rps >= 1.2x"; ok = (t >= 1.2) }
      else if (pipe == 1) { target = "rps >= 0.9x, p99 <= 1.2x"; ok = (t >= 0.9 && l <= 1.2) }
      else { target = "-"; ok = 1 }
      printf "%.2f|%.2f|%.2f|%s|%s", t, l, e, target, ok ? "yes" : "NO" }')
    IFS='|' read -r t l e target met <<<"$line"
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$pipe" "${test^^}" "$t" "$l" "$e" "$target" "$met"
    echo "ratio,$pipe,$test,cudis/redis,$t,,$l,,$e" >>"$CSV"
    [[ $met == yes ]] || fail=1
  done
done
echo
echo "CSV: $CSV"
if [[ $fail == 1 ]]; then
  echo "targets: NOT all met"
else
  echo "targets: all met"
fi
