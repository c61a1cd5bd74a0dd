#!/usr/bin/env bash
# bench/server/index.sh - what resizing the index online costs the clients
# (issue 12, deliver 4: "without blocking clients for more than a few
# milliseconds"), cudis-server (cpu engine) with engine-index-resize yes
# (the default) and no, side by side, under the load that makes it resize:
#   shrink: 1000-byte values SET and GET (50/50, uniform over KEYS_BIG keys,
#           no load phase) into MAXMEM_BIG: the index, sized for 64-byte
#           items, halves four times while the store fills;
#   grow:   4-byte values SET (uniform over KEYS_SMALL keys) into
#           MAXMEM_SMALL: the index doubles once it is half full.
# Prints and writes ($OUT/index-<stamp>.csv) req/s, latency percentiles
# and the largest latency, the resizes done, the longest resize step the
# server measured (INFO ccht_index_resize_step_max_us), items held and
# engine_index_bytes at the end.
#
# Usage: bench/server/index.sh     (about a minute)
# Env: CUDIS, SERVER_CPU, LOAD_CPU, OUT (default bench/results/server), DUR (10),
#      MAXMEM_BIG (1gb), KEYS_BIG (400000), MAXMEM_SMALL (64mb), KEYS_SMALL (3000000).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
BENCH_BIN=${BENCH_BIN:-$BUILD/bench/load/cudis-bench}
DUR=${DUR:-10}
MAXMEM_BIG=${MAXMEM_BIG:-1gb}
KEYS_BIG=${KEYS_BIG:-400000}
MAXMEM_SMALL=${MAXMEM_SMALL:-64mb}
KEYS_SMALL=${KEYS_SMALL:-3000000}
need_bins "$CUDIS" "$BENCH_BIN"
CSV=$OUT/index-$STAMP.csv
RUNS=$TMP/runs.csv

field() { # field PORT NAME: an INFO engine field
  redis-cli -p "$1" INFO engine | tr -d '\r' | sed -n "s/^$2://p"
}

echo "workload,resize,rps,p50_us,p99_us,p999_us,max_us,resizes,step_max_us,items,index_bytes" >"$CSV"
printf '\n| workload | engine-index-resize | req/s | p50 us | p99 us | p99.9 us | max us | resizes | longest step us | items | index bytes |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n'
for wl in shrink grow; do
  for rs in yes no; do
    if [[ $wl == shrink ]]; then
      mem=$MAXMEM_BIG
      args=(-k "$KEYS_BIG" --dist uniform -v 1000 -r 0.5)
    else
      mem=$MAXMEM_SMALL
      args=(-k "$KEYS_SMALL" --dist uniform -v 4 -r 0)
    fi
    start_server cudis --maxmemory "$mem" --engine-index-resize "$rs"
    port=${PORT[cudis]}
    rm -f "$RUNS"
    taskset -c "$LOAD_CPU" "$BENCH_BIN" -p "$port" -c 16 -d 4 --no-load -D "$DUR" -q \
      --csv "$RUNS" "${args[@]}" >/dev/null
    sleep 1
    read -r rps p50 p99 p999 pmax < <(/usr/bin/python3 -c '
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[-1]
print(r["rps"], r["p50_us"], r["p99_us"], r["p999_us"], r["max_us"])' "$RUNS")
    res=$(field "$port" ccht_index_resizes)
    step=$(field "$port" ccht_index_resize_step_max_us)
    items=$(field "$port" engine_items)
    ib=$(field "$port" engine_index_bytes)
    echo "$wl,$rs,$rps,$p50,$p99,$p999,$pmax,$res,$step,$items,$ib" >>"$CSV"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$wl" "$rs" "$rps" "$p50" "$p99" \
      "$p999" "$pmax" "$res" "$step" "$items" "$ib"
    kill -TERM "${PID[cudis]}"
    wait "${PID[cudis]}" 2>/dev/null || true
    unset 'PID[cudis]'
  done
done
echo
echo "CSV: $CSV"
