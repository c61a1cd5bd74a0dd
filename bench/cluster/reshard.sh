#!/usr/bin/env bash
# bench/cluster/reshard.sh - resharding speed, cudis beside redis-server:
# for each server, a two-node cluster on loopback (both nodes pinned to
# SERVER_CPU) whose first node holds every slot and KEYS keys of VALUE
# bytes; `redis-cli --cluster reshard` (on LOAD_CPU) then moves SLOTS slots
# to the second node, PIPELINE keys a MIGRATE (redis-cli's
# --cluster-pipeline). Prints keys moved per second for both and their
# ratio (the issue's target: cudis >= redis-server), and writes CSV.
#
# Usage: bench/cluster/reshard.sh
# Env: KEYS (1000000), VALUE (100), SLOTS (8192), PIPELINE (100), REPEAT (1), MAXMEM (1gb),
#      CUDIS, REDIS, SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
TMP_PREFIX=cudis-reshard
source "$(dirname "$0")/lib.sh"
NKEYS=${KEYS:-1000000}
VALUE=${VALUE:-100}
SLOTS=${SLOTS:-8192}
PIPELINE=${PIPELINE:-100}
MAXMEM=${MAXMEM:-1gb} # cudis's budget: a fresh node first-touches its index, sized for it
REPEAT=${REPEAT:-1}
need_bins "$CUDIS" "$REDIS" /usr/bin/redis-cli
CSV=$OUT/reshard-$STAMP.csv

start_node() { # start_node cudis|redis NAME: a cluster node, its port in PORT[NAME]
  local kind=$1 name=$2 port dir
  port=$(port_pair)
  dir=$TMP/$name
  mkdir -p "$dir"
  if [[ $kind == cudis ]]; then
    (cd "$dir" && exec taskset -c "$SERVER_CPU" "$CUDIS" --port "$port" --bind 127.0.0.1 \
      --engine cpu --maxmemory "$MAXMEM" --cluster-enabled yes --cluster-config-file nodes.conf \
      >"$dir/log" 2>&1) &
  else
    (cd "$dir" && exec taskset -c "$SERVER_CPU" "$REDIS" --port "$port" --bind 127.0.0.1 \
      --save '' --appendonly no --cluster-enabled yes --cluster-config-file nodes.conf \
      >"$dir/log" 2>&1) &
  fi
  PID[$name]=$!
  PORT[$name]=$port
  for _ in $(seq 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$name did not start" >&2
  exit 1
}

echo "kind,run,keys,slots,seconds,keys_per_s" >"$CSV"
declare -A RATE
for kind in cudis redis; do
  for r in $(seq "$REPEAT"); do
    a=$kind-a-$r b=$kind-b-$r
    start_node "$kind" "$a"
    start_node "$kind" "$b"
    pa=${PORT[$a]} pb=${PORT[$b]}
    redis-cli -p "$pa" cluster addslotsrange 0 16383 >/dev/null
    redis-cli -p "$pa" cluster set-config-epoch 1 >/dev/null
    redis-cli -p "$pb" cluster set-config-epoch 2 >/dev/null
    redis-cli -p "$pb" cluster meet 127.0.0.1 "$pa" >/dev/null
    wait_ok "$pa" "$pb"
    # KEYS SETs, pipelined (an MSET must stay in one slot in cluster mode)
    /usr/bin/python3 - "$pa" "$NKEYS" "$VALUE" <<'PY'
import socket, sys
port, n, vlen = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
val = b"v" * vlen
chunk = []
for i in range(n):
    k = b"key:%d" % i
    chunk.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, vlen, val))
    if len(chunk) == 10000 or i == n - 1:
        s.sendall(b"".join(chunk))
        want = len(chunk) * 5
        got = 0
        while got < want:
            d = s.recv(1 << 20)
            if not d:
                sys.exit("connection closed")
            if b"-" in d:
                sys.exit("load failed: " + d[:200].decode())
            got += len(d)
        chunk = []
PY
    ida=$(redis-cli -p "$pa" cluster myid)
    idb=$(redis-cli -p "$pb" cluster myid)
    t0=$(date +%s.%N)
    taskset -c "$LOAD_CPU" redis-cli --cluster reshard "127.0.0.1:$pa" --cluster-from "$ida" \
      --cluster-to "$idb" --cluster-slots "$SLOTS" --cluster-pipeline "$PIPELINE" --cluster-yes \
      >"$TMP/reshard-$kind-$r.log" 2>&1 || { echo "reshard failed:" >&2; tail -5 "$TMP/reshard-$kind-$r.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    moved=$(redis-cli -p "$pb" dbsize)
    left=$(redis-cli -p "$pa" dbsize)
    [[ $((moved + left)) == "$NKEYS" ]] || { echo "$kind: $moved + $left keys, not $NKEYS" >&2; exit 1; }
    secs=$(echo "$t1 - $t0" | bc -l)
    rate=$(echo "$moved / $secs" | bc -l)
    printf '%s,%d,%d,%d,%.2f,%.0f\n' "$kind" "$r" "$moved" "$SLOTS" "$secs" "$rate" >>"$CSV"
    RATE[$kind]="${RATE[$kind]:-} $rate"
    for n in "$a" "$b"; do kill -TERM "${PID[$n]}"; wait "${PID[$n]}" 2>/dev/null || true; unset "PID[$n]"; done
  done
done
med() { tr ' ' '\n' | grep -v '^$' | median; }
c=$(echo "${RATE[cudis]}" | med)
rd=$(echo "${RATE[redis]}" | med)
machine_line
echo "| server | keys moved/s (median of $REPEAT) |"
echo "|---|---:|"
printf '| cudis | %.0f |\n| redis-server | %.0f |\n' "$c" "$rd"
printf 'cudis/redis: %.2fx  (%d keys of %d bytes, %d slots, pipeline %d; CSV %s)\n' \
  "$(echo "$c / $rd" | bc -l)" "$NKEYS" "$VALUE" "$SLOTS" "$PIPELINE" "$CSV"
