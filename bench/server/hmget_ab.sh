#!/usr/bin/env bash
# bench/server/hmget_ab.sh - the HPS read ratio of cudis builds side by
# side: for each cudis-server binary given, one server (pinned to
# SERVER_CPU, cpu engine) holds a hash of FIELDS fields ("key:<12 digits>",
# 256-byte values, HSETs of 1,000 fields) and the same names as string keys
# (MSETs of 1,000); cudis-bench (on LOAD_CPU) then alternates HMGET of
# 1,000 random fields and MGET of 1,000 random keys, SECS seconds each,
# REPEAT times. Prints HMGET/MGET rows/s per binary (the mean of the runs,
# and the lowest and highest run) and writes CSV. The binaries run one
# after another, so compare them over more than one invocation on a noisy
# machine. Used to choose server/bighash.c's BH_FIELDS.
#
# Usage: bench/server/hmget_ab.sh BIN [BIN...]   (default: the build's)
# Env: FIELDS (1000000), SECS (3), REPEAT (4), CONNS (8), DEPTH (4),
#      SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
TMP_PREFIX=cudis-hmget-ab
source "$(dirname "$0")/lib.sh"
FIELDS=${FIELDS:-1000000}
SECS=${SECS:-3}
REPEAT=${REPEAT:-4}
CONNS=${CONNS:-8}
DEPTH=${DEPTH:-4}
LOADGEN=${LOADGEN:-$BUILD/bench/load/cudis-bench}
BINS=("$@")
[[ ${#BINS[@]} -gt 0 ]] || BINS=("$CUDIS")
need_bins "$LOADGEN" "${BINS[@]}"
CSV=$OUT/hmget-ab-$STAMP.csv

cat >"$TMP/load.py" <<'PY'
import socket, sys
port, fields = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
val = b"v" * 256
def cmd(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)
sent = 0
for b in range(0, fields, 1000):
    names = [b"key:%012d" % i for i in range(b, min(fields, b + 1000))]
    s.sendall(cmd([b"HSET", b"hps"] + [x for n in names for x in (n, val)]))
    s.sendall(cmd([b"MSET"] + [x for n in names for x in (n, val)]))
    sent += 2
buf = b""
while buf.count(b"\r\n") < sent:
    buf += s.recv(1 << 20)
if b"-" in [l[:1] for l in buf.split(b"\r\n")]:
    sys.exit("load failed: " + buf[:200].decode())
PY

echo "bin,run,test,rows_per_s" >"$CSV"
echo "| binary | HMGET/MGET (mean) | lowest | highest | HMGET rows/s | MGET rows/s |"
echo "|---|---:|---:|---:|---:|---:|"
for bin in "${BINS[@]}"; do
  CUDIS=$bin start_server cudis --maxmemory 3gb
  taskset -c "$LOAD_CPU" /usr/bin/python3 "$TMP/load.py" "${PORT[cudis]}" "$FIELDS"
  : >"$TMP/runs"
  for r in $(seq "$REPEAT"); do
    for test in hmget mget; do
      opt=()
      [[ $test == hmget ]] && opt=(--hash hps)
      kps=$(taskset -c "$LOAD_CPU" "$LOADGEN" -p "${PORT[cudis]}" "${opt[@]}" --no-load -k "$FIELDS" \
        -v 256 -m 1000 -r 1 --dist uniform -c "$CONNS" -d "$DEPTH" -D "$SECS" -q |
        grep -o '[0-9]* keys/s' | awk '{ print $1 }')
      echo "$bin,$r,$test,$kps" >>"$CSV"
      echo "$r $test $kps" >>"$TMP/runs"
    done
  done
  kill -TERM "${PID[cudis]}" && wait "${PID[cudis]}" || true
  unset 'PID[cudis]'
  awk -v bin="$bin" '
    { v[$1, $2] = $3; n = $1 > n ? $1 : n }
    END {
      lo = 1e9; hi = 0
      for (r = 1; r <= n; r++) {
        q = v[r, "hmget"] / v[r, "mget"]; h += v[r, "hmget"]; m += v[r, "mget"]
        lo = q < lo ? q : lo; hi = q > hi ? q : hi
      }
      printf "| %s | %.3f | %.3f | %.3f | %.0f | %.0f |\n", bin, h / m, lo, hi, h / n, m / n
    }' "$TMP/runs"
done
echo
echo "CSV: $CSV"
