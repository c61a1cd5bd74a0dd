#!/usr/bin/env bash
# bench/server/keyspace.sh - what INFO keyspace costs (it is also every
# /metrics scrape's keyspace part) and whether its expires= is exact:
# cudis-server (cpu engine, its default 1 GB budget: an index of about 200
# MB), optionally a second cudis build (CUDIS_B) and redis-server side by
# side. Each gets the same steps: 2 keys (1 with a TTL), then 30,000 and
# 230,000 keys with a TTL in all; after each, CALLS INFO keyspace requests
# on one connection, timed; the ms a request and expires= against the keys
# with a TTL written.
#
# Usage: bench/server/keyspace.sh   (CALLS=50)
# Env: CALLS, CUDIS, CUDIS_B, REDIS, SERVER_CPU, OUT (bench/results/server).
set -euo pipefail
TMP_PREFIX=cudis-bench-keyspace
source "$(dirname "$0")/lib.sh"
CALLS=${CALLS:-50}
CUDIS_B=${CUDIS_B:-}
need_bins "$CUDIS" "$REDIS" ${CUDIS_B:+"$CUDIS_B"}
CSV=$OUT/keyspace-$STAMP.csv

start_server cudis
start_server redis
if [[ -n $CUDIS_B ]]; then CUDIS=$CUDIS_B start_server cudis_b; fi
machine_line
echo "server,step,keys,ttl_keys_written,expires_reported,ms_per_info" >"$CSV"
for name in cudis ${CUDIS_B:+cudis_b} redis; do
  /usr/bin/python3 - "$name" "${PORT[$name]}" "$CALLS" >>"$CSV" <<'PY'
import sys, time
import redis
name, port, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = redis.Redis(port=port, socket_timeout=600)
r.flushall()
r.set("a", 1)
r.set("b", 1, ex=100)
ttl = 1
def step(label):
    t0 = time.perf_counter()
    for _ in range(calls):
        ks = r.info("keyspace")
    ms = (time.perf_counter() - t0) * 1000 / calls
    print("%s,%s,%d,%d,%d,%.3f" % (name, label, ks["db0"]["keys"], ttl, ks["db0"]["expires"], ms))
step("2 keys")
for target in (30000, 230000):
    p = r.pipeline(transaction=False)
    for i in range(ttl, target):
        p.set("v%d" % i, "x", ex=1000)
        if i % 10000 == 0:
            p.execute()
    p.execute()
    ttl = target
    step("%dk ttl" % (target // 1000))
PY
done
column -s, -t "$CSV"
echo "csv: $CSV"
