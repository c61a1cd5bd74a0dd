#!/usr/bin/env bash
# bench/load/batch-sweep.sh - cudis's batching trade-off: throughput and
# latency over batch-max-ops x batch-max-wait-us, at a light load (few
# requests in flight: what a lone client feels) and a heavy one (many
# connections, deep pipelines: what batching is for), so the defaults in
# the server's option table are chosen from data.
#
# Usage: bench/load/batch-sweep.sh          (full: a few minutes)
#        QUICK=1 bench/load/batch-sweep.sh  (smoke test)
# Env: BUILD, OUT (default bench/results/load), OPS, WAITS (lists), DUR,
#      MEM (MB, default 64), LOADS ("conns:pipeline ..."), CUDIS_ARGS,
#      CUDIS_ENGINE (default cpu), SERVER_CPUS, LOAD_CPUS.
# Writes $OUT/batch_sweep.csv, $OUT/batch_sweep.md, $OUT/batch_sweep_*.png.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

QUICK=${QUICK:-0}
OUT=${OUT:-$ROOT/bench/results/load}
MEM=${MEM:-64}
if [[ $QUICK == 1 ]]; then
  OPS=${OPS:-"64 1024"}; WAITS=${WAITS:-"0 200"}; DUR=${DUR:-1}
else
  OPS=${OPS:-"16 64 256 1024 4096"}; WAITS=${WAITS:-"0 50 200 1000"}; DUR=${DUR:-3}
fi
LOADS=${LOADS:-"4:1 64:16"}
mkdir -p "$OUT"
CSV=$OUT/batch_sweep.csv
TMP=$OUT/.batch_point.csv
rm -f "$CSV" "$TMP" "$OUT"/batch_sweep_*.png
trap stop_all EXIT
[[ -x $BENCH_BIN ]] || { echo "error: $BENCH_BIN not built" >&2; exit 1; }
[[ -x $CUDIS_SERVER ]] || { echo "error: $CUDIS_SERVER not built" >&2; exit 1; }

echo "# machine: $(machine_line)"
WL=(-k 100000 --zipf 0.99 -v 32 -r 0.9)

config_set() { # CONFIG SET through a raw RESP exchange; 0 when the server said +OK
  python3 - "${SRV_PORT[cudis]}" "$1" "$2" <<'PY'
import socket, sys
port, name, val = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port), timeout=5)
args = [b"CONFIG", b"SET", name.encode(), val.encode()]
s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
r = s.recv(4096)
sys.exit(0 if r.startswith(b"+OK") else 1)
PY
}

start_server cudis "$MEM" ${CUDIS_ARGS:-}
live_set=1
first=1
for ops in $OPS; do
  for wait in $WAITS; do
    if (( live_set )) && config_set batch-max-ops "$ops" && config_set batch-max-wait-us "$wait"; then
      :
    else # the server does not take CONFIG SET: restart it with the options
      live_set=0
      stop_server cudis
      # shellcheck disable=SC2086
      start_server cudis "$MEM" ${CUDIS_ARGS:-} --batch-max-ops "$ops" --batch-max-wait-us "$wait"
      first=1
    fi
    for l in $LOADS; do
      c=${l%%:*}; p=${l##*:}
      rm -f "$TMP"
      load=(--no-load); (( first )) && load=()
      first=0
      run_bench cudis --workload "batch_${ops}_${wait}" -c "$c" -d "$p" -D "$DUR" -w 0.5 -q \
        --csv "$TMP" "${load[@]}" "${WL[@]}"
      if [[ ! -s $CSV ]]; then echo "batch_max_ops,batch_max_wait_us,$(head -1 "$TMP")" >"$CSV"; fi
      echo "$ops,$wait,$(tail -1 "$TMP")" >>"$CSV"
    done
  done
done
rm -f "$TMP"
stop_all
trap - EXIT
python3 "$LOAD_DIR/summarize.py" "$CSV" --sweep --machine "$(machine_line)" --plots "$OUT" \
  | tee "$OUT/batch_sweep.md"
