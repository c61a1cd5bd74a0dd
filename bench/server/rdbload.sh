#!/usr/bin/env bash
# bench/server/rdbload.sh - loading dump.rdb at start (issue 15's "load
# speed >= 1 GB/s into the cpu engine"): Debian's redis-server writes two
# files (rdbcompression no, so a file's size is its data's: KEYS keys of
# VALUE bytes, LOAD_KEYS of LOAD_VALUE), then cudis-server (cpu engine,
# --maxmemory MAXMEMORY), optionally a second cudis build (CUDIS_B, e.g. a
# build of an earlier commit) and redis-server each start on a copy of
# each file REPEAT times, alternated; the load's seconds as each server
# logs it ("DB loaded from disk: X seconds"), medians, MB/s.
# Servers are pinned to SERVER_CPU (0); PIN=none lets them use every core
# (cudis reads, sums the CRC and parses on one thread).
# A load's first touches of memory the VM has not backed yet cost the
# kernel's page zeroing (this machine: about 0.7 GB/s on fresh 2 MB pages,
# 18 GB/s on reused ones), so runs vary with what the machine ran before.
#
# Usage: bench/server/rdbload.sh   (KEYS=10000000 VALUE=32 LOAD_KEYS=250000 LOAD_VALUE=4096)
# Env: KEYS, VALUE, LOAD_KEYS, LOAD_VALUE, REPEAT (3), MAXMEMORY (4gb), PIN,
#      CUDIS, CUDIS_B, REDIS, SERVER_CPU, LOAD_CPU, OUT (bench/results/server).
set -euo pipefail
TMP_PREFIX=cudis-bench-rdbload
source "$(dirname "$0")/lib.sh"
KEYS=${KEYS:-10000000}
VALUE=${VALUE:-32}
LOAD_KEYS=${LOAD_KEYS:-250000}
LOAD_VALUE=${LOAD_VALUE:-4096}
REPEAT=${REPEAT:-3}
MAXMEMORY=${MAXMEMORY:-4gb}
CUDIS_B=${CUDIS_B:-}
LOADGEN=${LOADGEN:-$BUILD/bench/load/cudis-bench}
need_bins "$CUDIS" "$REDIS" "$LOADGEN" ${CUDIS_B:+"$CUDIS_B"}
CSV=$OUT/rdbload-$STAMP.csv

machine_line
echo "files: $KEYS x $VALUE B and $LOAD_KEYS x $LOAD_VALUE B; maxmemory $MAXMEMORY;" \
  "pin: ${PIN:-core $SERVER_CPU}; repeat $REPEAT"
start_server redis --rdbcompression no
for f in small large; do
  if [[ $f == small ]]; then k=$KEYS v=$VALUE; else k=$LOAD_KEYS v=$LOAD_VALUE; fi
  redis-cli -p "${PORT[redis]}" flushall >/dev/null
  taskset -c "$LOAD_CPU" "$LOADGEN" -p "${PORT[redis]}" -k "$k" -v "$v" -c 50 -d 16 -n 1 -q >/dev/null
  redis-cli -p "${PORT[redis]}" save >/dev/null
  cp "$TMP/redis-dir/dump.rdb" "$TMP/$f.rdb"
done
kill -TERM "${PID[redis]}"
wait "${PID[redis]}" 2>/dev/null || true
unset 'PID[redis]'

NAMES=(cudis ${CUDIS_B:+cudis_b} redis)
declare -A BIN=([cudis]=$CUDIS [cudis_b]=$CUDIS_B [redis]=$REDIS)
echo "server,file,bytes,run,keys,load_s,mb_per_s" >"$CSV"
declare -A MED
for f in small large; do
  bytes=$(stat -c %s "$TMP/$f.rdb")
  for run in $(seq "$REPEAT"); do
    for name in "${NAMES[@]}"; do
      read -r _ n secs < <(reload "$name" "$TMP/$f.rdb" "${BIN[$name]}")
      echo "$name,$f,$bytes,$run,$n,$secs,$(echo "$bytes / $secs / 1000000" | bc -l)" >>"$CSV"
    done
  done
  for name in "${NAMES[@]}"; do
    MED[$name-$f]=$(awk -F, -v s="$name" -v f="$f" '$1 == s && $2 == f { print $6 }' "$CSV" | median)
  done
done

printf '\n%-8s %-6s %12s %10s %9s %12s\n' file server "bytes" "load s" "MB/s" "vs redis"
for f in small large; do
  bytes=$(stat -c %s "$TMP/$f.rdb")
  for name in "${NAMES[@]}"; do
    s=${MED[$name-$f]}
    printf '%-8s %-6s %12s %10.3f %9.0f %11.2fx\n' "$f" "$name" "$bytes" "$s" \
      "$(echo "$bytes / $s / 1000000" | bc -l)" "$(echo "${MED[redis-$f]} / $s" | bc -l)"
  done
done
cl=${MED[cudis-large]}
bytes=$(stat -c %s "$TMP/large.rdb")
echo
printf 'target: load >= 1 GB/s into the cpu engine (%s B values, median of %s): %.0f MB/s -> %s\n' \
  "$LOAD_VALUE" "$REPEAT" "$(echo "$bytes / $cl / 1000000" | bc -l)" \
  "$( (( $(echo "$bytes / $cl >= 1000000000" | bc -l) )) && echo met || echo NOT met)"
echo "csv: $CSV"
