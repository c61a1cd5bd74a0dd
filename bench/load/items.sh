#!/usr/bin/env bash
# bench/load/items.sh - items held in the same memory limit: cudis (cpu
# engine, default options) vs redis-server (allkeys-lru) vs memcached, with
# 16-byte keys and values of each size in SIZES.
#
# For each size every server is started with MEM MB, gets 3x the keys that
# fit in raw key+value bytes SET twice over (cudis-bench's load phase, a
# pause of PAUSE s between the passes: cudis's index follows what is
# stored, a slice per expiry tick), then DBSIZE / curr_items is read.
# Writes $OUT/items.csv (one row per server and size) and $OUT/items.md
# (the table, with ratios to memcached and redis-server).
#
# Usage: bench/load/items.sh            (about a minute per size)
# Env: BUILD, OUT (default bench/results/load), MEM (64), SIZES
#      ("32 480 1000 4000"), SERVERS ("cudis redis memcached"), PAUSE (3),
#      CUDIS_ARGS (extra cudis-server options: none by default).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

OUT=${OUT:-$ROOT/bench/results/load}
MEM=${MEM:-64}
SIZES=${SIZES:-"32 480 1000 4000"}
SERVERS=${SERVERS:-"cudis redis memcached"}
PAUSE=${PAUSE:-3}
mkdir -p "$OUT"
CSV=$OUT/items.csv
TMP=$OUT/items-runs.csv
rm -f "$CSV" "$TMP"
trap stop_all EXIT
[[ -x $BENCH_BIN ]] || { echo "error: $BENCH_BIN not built" >&2; exit 1; }

echo "# machine: $(machine_line)"
echo "# ${MEM} MB per server; 16-byte keys; values: $SIZES"
echo "server,value_size,keys,items,index_buckets" >"$CSV"
for v in $SIZES; do
  keys=$(( 3 * MEM * 1024 * 1024 / (16 + v) ))
  for s in $SERVERS; do
    case $s in
      cudis) bin=$CUDIS_SERVER ;; redis) bin=$REDIS_SERVER ;; memcached) bin=$MEMCACHED ;;
      *) echo "error: unknown server $s" >&2; exit 1 ;;
    esac
    if [[ -z $bin || ! -x $bin ]]; then
      # a ratio without its other side is no figure: leave it out by SERVERS
      echo "error: $s not found ($bin); install it or set SERVERS without it" >&2
      exit 1
    fi
    if [[ $s == cudis ]]; then
      # shellcheck disable=SC2086
      start_server cudis "$MEM" ${CUDIS_ARGS:-}
    else
      start_server "$s" "$MEM"
    fi
    run_bench "$s" -k "$keys" -v "$v" -c 16 -d 16 -n 1 -q >/dev/null
    sleep "$PAUSE"
    rm -f "$TMP"
    run_bench "$s" -k "$keys" -v "$v" -c 16 -d 16 -n 1 -q --items --csv "$TMP" >/dev/null
    items=$(python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[-1]["items"])' "$TMP")
    buckets=""
    if [[ $s == cudis ]]; then
      buckets=$(redis-cli -p "${SRV_PORT[cudis]}" INFO engine | tr -d '\r' |
        sed -n 's/^ccht_buckets://p' || true)
    fi
    echo "$s,$v,$keys,$items,$buckets" >>"$CSV"
    echo "  $s value $v: $items items${buckets:+ (index $buckets buckets)}"
    stop_server "$s"
  done
done
rm -f "$TMP"
trap - EXIT
python3 - "$CSV" "$MEM" <<'EOF' | tee "$OUT/items.md"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sizes = sorted({int(r["value_size"]) for r in rows})
held = {(r["server"], int(r["value_size"])): int(r["items"]) for r in rows}
print(f"### Items held in {sys.argv[2]} MB, 16-byte keys (bench/load/items.sh)\n")
print("| value bytes | cudis | redis-server | memcached | cudis / memcached | cudis / redis |")
print("|---|---|---|---|---|---|")
for v in sizes:
    c, r, m = (held.get((s, v)) for s in ("cudis", "redis", "memcached"))
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    fmt = lambda x: f"{x:,}" if x is not None else "-"
    print(f"| {v} | {fmt(c)} | {fmt(r)} | {fmt(m)} | {ratio(c, m)} | {ratio(c, r)} |")
EOF
