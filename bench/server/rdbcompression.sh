#!/usr/bin/env bash
# bench/server/rdbcompression.sh - what rdbcompression costs and saves:
# cudis-server (cpu engine) beside Debian's redis-server 7 in one run, both
# pinned to SERVER_CPU. Each gets KEYS keys of about VALUE bytes, of the
# kind KIND names: "json" (records with repeated field names: compresses)
# or "random" (os.urandom: does not). Then, for rdbcompression yes and no,
# SAVE runs REPEAT times: the median wall seconds of the SAVE command and
# the size of dump.rdb. Prints a table and writes CSV.
#
# Usage: bench/server/rdbcompression.sh   (KEYS=500000 VALUE=200 KIND=json REPEAT=3)
# Env: KEYS, VALUE, KIND, REPEAT, CUDIS, REDIS, SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
TMP_PREFIX=cudis-bench-rdbcompression
source "$(dirname "$0")/lib.sh"
KEYS=${KEYS:-500000}
VALUE=${VALUE:-200}
KIND=${KIND:-json}
REPEAT=${REPEAT:-3}
need_bins "$CUDIS" "$REDIS"
CSV=$OUT/rdbcompression-$KIND-$STAMP.csv

# fill.py port keys value kind: SETs in pipelines of 1000
cat >"$TMP/fill.py" <<'PY'
import os, random, sys
import redis
port, keys, value, kind = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = redis.Redis(port=port)
rng = random.Random(1)
p = r.pipeline(transaction=False)
for i in range(keys):
    if kind == "random":
        v = os.urandom(value)
    else:
        v, n = "", 0
        while len(v) < value:
            v += '{"user_id":%d,"score":%d,"country":"%s","flag":true},' % (
                rng.randrange(10**6), rng.randrange(1000), rng.choice(["de", "fr", "us", "jp"]))
        v = v[:value]
    p.set("object:%09d" % i, v)
    if i % 1000 == 999:
        p.execute()
p.execute()
PY

# save_once port -> wall seconds of one SAVE
save_once() {
  local t0 t1
  t0=$(date +%s.%N)
  redis-cli -p "$1" save >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

echo "server,rdbcompression,keys,value_bytes,kind,save_s,file_bytes" >"$CSV"
declare -A SAVE_S BYTES
for name in cudis redis; do
  if [[ $name == cudis ]]; then
    mkdir -p "$TMP/cudis-dir"
    start_server cudis --dir "$TMP/cudis-dir" --maxmemory 4gb
    file=$TMP/cudis-dir/dump.rdb
  else
    start_server redis
    file=$TMP/redis-dir/dump.rdb
  fi
  port=${PORT[$name]}
  taskset -c "$LOAD_CPU" /usr/bin/python3 "$TMP/fill.py" "$port" "$KEYS" "$VALUE" "$KIND"
  for comp in yes no; do
    redis-cli -p "$port" config set rdbcompression "$comp" >/dev/null
    s=$(for _ in $(seq "$REPEAT"); do save_once "$port"; done | median)
    SAVE_S[$name-$comp]=$s
    BYTES[$name-$comp]=$(stat -c %s "$file")
    echo "$name,$comp,$KEYS,$VALUE,$KIND,$s,${BYTES[$name-$comp]}" >>"$CSV"
  done
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "${PID[$name]}" 2>/dev/null || true
done

machine_line
echo "keys: $KEYS x about $VALUE B ($KIND), SAVE median of $REPEAT"
printf '%-7s %-15s %10s %14s\n' server rdbcompression save_s file_bytes
for name in cudis redis; do
  for comp in yes no; do
    printf '%-7s %-15s %10.3f %14d\n' "$name" "$comp" "${SAVE_S[$name-$comp]}" "${BYTES[$name-$comp]}"
  done
done
awk -v c="${SAVE_S[cudis-yes]}" -v r="${SAVE_S[redis-yes]}" -v cb="${BYTES[cudis-yes]}" \
  -v rb="${BYTES[redis-yes]}" -v cn="${SAVE_S[cudis-no]}" \
  'BEGIN { printf "rdbcompression yes: cudis/redis SAVE time %.2fx, file size %.3fx; cudis yes/no SAVE time %.2fx\n", c / r, cb / rb, c / cn }'
echo "csv: $CSV"
