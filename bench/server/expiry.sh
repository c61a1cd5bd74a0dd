#!/usr/bin/env bash
# bench/server/expiry.sh - active expiry and the memory it gives back (issue
# 12's finding 6: on the default 1 GB store 3 keys with PX 300 were still
# counted 3 s later, 100k took 3.5 s against Redis's 2 s, and used_memory
# stayed up after every key expired), cudis-server (cpu engine) and
# Debian's redis-server side by side, both with maxmemory MAXMEMORY: the
# seconds from a key's expiry until DBSIZE stops counting it, with nothing
# reading the keys (polled every 20 ms), for SPARSE keys among PLAIN keys
# without a TTL and for MANY keys; used_memory before, with and after.
#
# Usage: bench/server/expiry.sh      (PLAIN=10000 SPARSE=3 MANY=100000 MAXMEMORY=1gb)
# A figure of 30 or more means not gone within 30 s (the wait stops there).
# Env: CUDIS, REDIS, SERVER_CPU, LOAD_CPU, OUT (default bench/results/server).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
PLAIN=${PLAIN:-10000}
SPARSE=${SPARSE:-3}
MANY=${MANY:-100000}
MAXMEMORY=${MAXMEMORY:-1gb}
need_bins "$CUDIS" "$REDIS"
CSV=$OUT/expiry-$STAMP.csv

# run_one name -> "sparse_s many_s mem_before mem_with mem_after"
run_one() {
  taskset -c "$LOAD_CPU" /usr/bin/python3 - "${PORT[$1]}" "$PLAIN" "$SPARSE" "$MANY" <<'PY'
import sys, time
import redis
port, plain, sparse, many = (int(a) for a in sys.argv[1:])
r = redis.Redis(port=port)
def fill(prefix, n, px=None):
    for s in range(0, n, 5000):
        p = r.pipeline(transaction=False)
        for i in range(s, min(n, s + 5000)):
            p.set("%s:%d" % (prefix, i), "v" * 32, px=px)
        p.execute()
def gone_after(want, expires_at):  # 30 s at most: then the figure is "30+"
    while r.dbsize() != want and time.monotonic() - expires_at < 30:
        time.sleep(0.02)
    return time.monotonic() - expires_at
fill("plain", plain)
t = time.monotonic()
for i in range(sparse):
    r.set("sparse:%d" % i, "v", px=300)
sparse_s = gone_after(plain, t + 0.3)
r.flushall()
before = r.info("memory")["used_memory"]
fill("many", many, px=3600000)
p = r.pipeline(transaction=False)
for i in range(many):
    p.pexpire("many:%d" % i, 300)
p.execute()
t = time.monotonic()
with_keys = r.info("memory")["used_memory"]
many_s = gone_after(0, t + 0.3)
after = r.info("memory")["used_memory"]
print("%.2f %.2f %d %d %d" % (sparse_s, many_s, before, with_keys, after))
PY
}

machine_line
echo "maxmemory $MAXMEMORY; $SPARSE keys PX 300 among $PLAIN without TTL; $MANY keys PEXPIRE 300; servers on cpu $SERVER_CPU, client on cpu $LOAD_CPU"
start_server cudis --maxmemory "$MAXMEMORY"
start_server redis --maxmemory "$MAXMEMORY"
echo "server,sparse_gone_s,many_gone_s,used_memory_before,used_memory_with_keys,used_memory_after" >"$CSV"
printf '\n| server | %s sparse keys gone (s after expiry) | %s keys gone (s after expiry) | used_memory before | with the keys | after |\n|---|--:|--:|--:|--:|--:|\n' "$SPARSE" "$MANY"
for name in cudis redis; do
  read -r sp mn b w a < <(run_one "$name")
  echo "$name,$sp,$mn,$b,$w,$a" >>"$CSV"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$sp" "$mn" "$b" "$w" "$a"
done
echo
echo "CSV: $CSV"
