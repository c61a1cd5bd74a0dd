#!/usr/bin/env bash
# bench/server/save_ab.sh - what SAVE and BGSAVE cost in cudis builds side
# by side: for each cudis-server binary given, a server (pinned to
# SERVER_CPU, cpu engine, allkeys-lru) gets KEYS keys of VALUE bytes
# (cudis-bench's load phase, on LOAD_CPU), then a SAVE (the seconds its
# reply took) and a BGSAVE on an otherwise idle server (the seconds until
# INFO's rdb_bgsave_in_progress reads 0), and the file's size. The binaries
# take turns, REPEAT rounds, so noise spreads over all of them. Prints the
# median per binary and writes CSV. Used to price the IDLE records SAVE
# writes beside each key (stop 42).
#
# Usage: bench/server/save_ab.sh BIN [BIN...]   (default: the build's)
# Env: KEYS (10000000), VALUE (32), REPEAT (3), MAXMEMORY (4gb),
#      SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
TMP_PREFIX=cudis-save-ab
source "$(dirname "$0")/lib.sh"
KEYS=${KEYS:-10000000}
VALUE=${VALUE:-32}
REPEAT=${REPEAT:-3}
MAXMEMORY=${MAXMEMORY:-4gb}
LOADGEN=${LOADGEN:-$BUILD/bench/load/cudis-bench}
BINS=("$@")
[[ ${#BINS[@]} -gt 0 ]] || BINS=("$CUDIS")
need_bins "$LOADGEN" "${BINS[@]}"
CSV=$OUT/save-ab-$STAMP.csv

now() { date +%s.%N; }
echo "bin,round,keys,file_bytes,save_s,bgsave_s" >"$CSV"
for r in $(seq "$REPEAT"); do
  for bin in "${BINS[@]}"; do
    rm -rf "$TMP/dir" && mkdir -p "$TMP/dir"
    CUDIS=$bin start_server cudis --maxmemory "$MAXMEMORY" --maxmemory-policy allkeys-lru \
      --dir "$TMP/dir" --save ''
    port=${PORT[cudis]}
    taskset -c "$LOAD_CPU" "$LOADGEN" -p "$port" -k "$KEYS" -v "$VALUE" -c 50 -d 16 -n 1 -q >/dev/null
    n=$(redis-cli -p "$port" dbsize)
    t0=$(now)
    [[ $(redis-cli -p "$port" save) == OK ]] || { echo "SAVE failed" >&2; exit 1; }
    t1=$(now)
    size=$(stat -c %s "$TMP/dir/dump.rdb")
    redis-cli -p "$port" bgsave >/dev/null
    b0=$(now)
    while redis-cli -p "$port" info persistence | grep -q '^rdb_bgsave_in_progress:1'; do
      sleep 0.05
    done
    b1=$(now)
    redis-cli -p "$port" info persistence | grep -q '^rdb_last_bgsave_status:ok' ||
      { echo "BGSAVE failed" >&2; exit 1; }
    kill -TERM "${PID[cudis]}" && wait "${PID[cudis]}" || true
    unset 'PID[cudis]'
    echo "$bin,$r,$n,$size,$(echo "$t1 - $t0" | bc),$(echo "$b1 - $b0" | bc)" >>"$CSV"
  done
done

echo "| binary | keys | file bytes | SAVE s (median) | BGSAVE s (median) |"
echo "|---|---:|---:|---:|---:|"
for bin in "${BINS[@]}"; do
  rows=$(grep "^$bin," "$CSV")
  printf "| %s | %s | %s | %.2f | %.2f |\n" "$bin" "$(cut -d, -f3 <<<"$rows" | median)" \
    "$(cut -d, -f4 <<<"$rows" | median)" "$(cut -d, -f5 <<<"$rows" | median)" \
    "$(cut -d, -f6 <<<"$rows" | median)"
done
echo
echo "CSV: $CSV"
