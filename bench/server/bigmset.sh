#!/usr/bin/env bash
# bench/server/bigmset.sh - filling KEYS keys with MSETs of PAIRS pairs each
# (issue 12's finding 7: 1M keys by MSET of 10,000 pairs took 11.1 s on
# cudis against 1.7 s on redis-server), cudis-server (cpu engine) and
# Debian's redis-server side by side: both pinned to one core
# (SERVER_CPU), the client to another (LOAD_CPU); the commands are built
# before the clock starts and sent one at a time (each reply read before
# the next); the servers alternate REPEAT times and the median is kept.
# Reports seconds, keys per second, server CPU seconds, and the ratio.
#
# Usage: bench/server/bigmset.sh       (KEYS=1000000 PAIRS=10000 REPEAT=3)
# Env: KEYS, PAIRS, VSIZE (32), REPEAT, MAXMEMORY (1gb), CUDIS, REDIS,
#      SERVER_CPU, LOAD_CPU, OUT (default bench/results/server).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
KEYS=${KEYS:-1000000}
PAIRS=${PAIRS:-10000}
VSIZE=${VSIZE:-32}
REPEAT=${REPEAT:-3}
MAXMEMORY=${MAXMEMORY:-1gb}
need_bins "$CUDIS" "$REDIS"
CSV=$OUT/bigmset-$STAMP.csv

# run_one name -> "seconds cpu_s"
run_one() {
  local name=$1 t0 t1 secs
  redis-cli -p "${PORT[$name]}" flushall >/dev/null
  t0=$(cpu_ticks "${PID[$name]}")
  secs=$(taskset -c "$LOAD_CPU" /usr/bin/python3 - "${PORT[$name]}" "$KEYS" "$PAIRS" "$VSIZE" <<'PY'
import socket, sys, time
port, keys, pairs, vsize = (int(a) for a in sys.argv[1:])
val = b"v" * vsize
cmds = []
for start in range(0, keys, pairs):
    n = min(pairs, keys - start)
    parts = [b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * n)]
    for k in range(start, start + n):
        key = b"key:%d" % k
        parts.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, vsize, val))
    cmds.append(b"".join(parts))
s = socket.create_connection(("127.0.0.1", port))
t = time.time()
for c in cmds:
    s.sendall(c)
    r = b""
    while not r.endswith(b"\r\n"):
        r += s.recv(64)
    assert r == b"+OK\r\n", r
print("%.3f" % (time.time() - t))
PY
)
  t1=$(cpu_ticks "${PID[$name]}")
  echo "$secs $(awk -v a="$t0" -v b="$t1" -v h="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / h }')"
}

machine_line
echo "filling $KEYS keys by MSET of $PAIRS pairs, $VSIZE-byte values; servers on cpu $SERVER_CPU, client on cpu $LOAD_CPU"
start_server cudis --maxmemory "$MAXMEMORY"
start_server redis --maxmemory "$MAXMEMORY"
declare -A SECS CPUS
for name in cudis redis; do SECS[$name]=""; CPUS[$name]=""; done
for _ in $(seq "$REPEAT"); do
  for name in cudis redis; do
    read -r s c < <(run_one "$name")
    SECS[$name]+="$s "$'\n'
    CPUS[$name]+="$c "$'\n'
  done
done
echo "server,seconds,keys_per_s,server_cpu_s" >"$CSV"
echo
echo "| server | seconds | keys/s | server CPU s |"
echo "|--------|--------:|-------:|-------------:|"
for name in cudis redis; do
  s=$(echo -n "${SECS[$name]}" | tr -d ' ' | median)
  c=$(echo -n "${CPUS[$name]}" | tr -d ' ' | median)
  kps=$(awk -v k="$KEYS" -v s="$s" 'BEGIN { printf "%.0f", k / s }')
  echo "| $name | $s | $kps | $c |"
  echo "$name,$s,$kps,$c" >>"$CSV"
  eval "S_$name=$s"
done
echo
awk -v c="$S_cudis" -v r="$S_redis" 'BEGIN { printf "time cudis/redis: %.2fx (lower is better)\n", c / r }'
echo "CSV: $CSV"
