#!/usr/bin/env bash
# bench/server/multi.sh - transactions (issue 11's target): the same 16
# GET/SET commands (50/50, uniform over 100k keys, 32 B values) sent by
# cudis-bench either as a plain pipeline (-d 16) or as one MULTI ... EXEC
# (--multi 16 -d 1), against cudis-server (cpu engine) and Debian's
# redis-server, side by side in one run. Both servers are pinned to one
# core (SERVER_CPU), the load generator to another (LOAD_CPU); every point
# alternates the servers, REPEAT times, and keeps the median.
#
# Reports commands/s and commands per server CPU-second (utime+stime from
# /proc/<pid>/stat): on a 2-core machine one client core may not saturate
# the server, and then the server's CPU per command is what tells them
# apart. Targets: cudis MULTI >= 0.8x cudis plain; cudis MULTI >= 1.2x
# redis MULTI (judged on commands per CPU-second, both shown).
#
# Usage: bench/server/multi.sh              (D=5 s per run, REPEAT=3)
# Env: D, REPEAT, N_TX (commands per transaction, 16), CONNS (50), CUDIS,
#      REDIS, BENCH (cudis-bench), SERVER_CPU (0), LOAD_CPU (1), OUT (CSV
#      folder, default bench/results/server).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
D=${D:-5}
REPEAT=${REPEAT:-3}
N_TX=${N_TX:-16}
CONNS=${CONNS:-50}
BENCH=${BENCH:-$BUILD/bench/load/cudis-bench}
need_bins "$CUDIS" "$REDIS" "$BENCH"
CSV=$OUT/multi-$STAMP.csv

# run_one name mode -> "cmds_per_s p99_us cpu_s cmds"
run_one() {
  local name=$1 mode=$2 t0 t1 args csv=$TMP/one.csv
  if [[ $mode == multi ]]; then args=(-d 1 --multi "$N_TX"); else args=(-d "$N_TX"); fi
  rm -f "$csv"
  t0=$(cpu_ticks "${PID[$name]}")
  taskset -c "$LOAD_CPU" "$BENCH" -p "${PORT[$name]}" -c "$CONNS" -k 100000 --dist uniform -r 0.5 \
    -v 32 -D "$D" -q --no-load --label "$name" --workload "$mode" --csv "$csv" "${args[@]}" \
    >"$TMP/bench.out" 2>&1 || { cat "$TMP/bench.out" >&2; exit 1; }
  t1=$(cpu_ticks "${PID[$name]}")
  # the CSV's last two columns are multi and commands_per_s; duration_s is 13th
  awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" 'NR == 2 {
    cps = $NF; printf "%s %s %.3f %.0f\n", cps, $27, cpu / hz, cps * $13 }' "$csv"
}

machine_line
echo "cudis-bench -c $CONNS, $N_TX commands per pipeline / transaction, GET/SET 50/50, 100k keys, 32 B, ${D}s x $REPEAT; servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU"
start_server cudis --maxmemory 1gb
start_server redis --maxmemory 1gb --maxmemory-policy allkeys-lru
# every key once, so GETs hit
for name in cudis redis; do
  taskset -c "$LOAD_CPU" "$BENCH" -p "${PORT[$name]}" -c 8 -k 100000 -n 1 -q >/dev/null 2>&1
done

echo "mode,server,cmds_per_s,p99_us,server_cpu_s,cmds_per_cpu_s" >"$CSV"
declare -A R
for mode in plain multi; do
  : >"$TMP/rows.cudis"
  : >"$TMP/rows.redis"
  for _ in $(seq "$REPEAT"); do
    for name in cudis redis; do
      run_one "$name" "$mode" >>"$TMP/rows.$name"
    done
  done
  for name in cudis redis; do
    rows=$TMP/rows.$name
    cps=$(awk '{ print $1 }' "$rows" | median)
    p99=$(awk '{ print $2 }' "$rows" | median)
    per=$(awk '{ printf "%.0f\n", ($3 > 0) ? $4 / $3 : 0 }' "$rows" | median)
    cpu=$(awk '{ print $3 }' "$rows" | median)
    R[$mode,$name]="$cps $p99 $cpu $per"
    echo "$mode,$name,$cps,$p99,$cpu,$per" >>"$CSV"
  done
done

printf '\n| mode | server | commands/s | p99 us | server CPU s | commands per CPU-s |\n'
printf '|------|--------|-----------:|-------:|-------------:|-------------------:|\n'
for mode in plain multi; do
  for name in cudis redis; do
    read -r cps p99 cpu per <<<"${R[$mode,$name]}"
    printf '| %s | %s | %s | %s | %s | %s |\n' "$mode" "$name" "$cps" "$p99" "$cpu" "$per"
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
read -r pc _ _ ppc <<<"${R[plain,cudis]}"
read -r mc _ _ mpc <<<"${R[multi,cudis]}"
read -r mr _ _ mpr <<<"${R[multi,redis]}"
r1=$(ratio "$mc" "$pc"); r1c=$(ratio "$mpc" "$ppc")
r2=$(ratio "$mc" "$mr"); r2c=$(ratio "$mpc" "$mpr")
ok1=$(awk -v r="$r1c" 'BEGIN { print (r >= 0.8) ? "yes" : "NO" }')
ok2=$(awk -v r="$r2c" 'BEGIN { print (r >= 1.2) ? "yes" : "NO" }')
printf '\n| ratio | commands/s | per CPU-s | target | met |\n|---|---:|---:|---|---|\n'
printf '| cudis MULTI / cudis plain | %s | %s | >= 0.8x | %s |\n' "$r1" "$r1c" "$ok1"
printf '| cudis MULTI / redis MULTI | %s | %s | >= 1.2x | %s |\n' "$r2" "$r2c" "$ok2"
echo "ratio,multi/plain,cudis,$r1,,,$r1c" >>"$CSV"
echo "ratio,multi,cudis/redis,$r2,,,$r2c" >>"$CSV"
echo
echo "CSV: $CSV"
