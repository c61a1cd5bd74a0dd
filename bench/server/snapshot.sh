#!/usr/bin/env bash
# bench/server/snapshot.sh - BGSAVE while serving and loading dump.rdb at
# start (issue 15's targets), cudis-server (cpu engine) beside Debian's
# redis-server 7 in one run, both pinned to SERVER_CPU, the load on LOAD_CPU:
#   1. each server gets KEYS keys of VALUE bytes (cudis-bench's load phase),
#      then cudis-bench (-c 50 -d 16, 90% GET, uniform keys) runs against it
#      while a probe client sends one GET every 0.5 ms on its own connection:
#      commands/s (the server's total_commands_processed) and the probe's
#      p99 over WINDOW seconds before the BGSAVE ("idle") and over the
#      whole BGSAVE ("during"), and how long the BGSAVE took;
#   2. reload: redis-server's dump.rdb of those keys (written with
#      rdbcompression no, so the file is the data's size) copied into an
#      empty dir for each server, which is started on it: the load's
#      seconds as each logs them ("DB loaded from disk: X seconds") and
#      the seconds from exec to the first PING answered (redis-server
#      answers LOADING until done);
#   3. the same with LOAD_KEYS keys of LOAD_VALUE bytes (about 1 GB): MB/s.
# Redis's BGSAVE child inherits the pin to SERVER_CPU (taskset): it shares
# the core with the server, as cudis's walk thread does; with BGSAVE_CPU
# set, both servers get --bgsave_cpulist BGSAVE_CPU (Redis's child and
# cudis's walk and writer threads run there instead). BGSAVE_NICE (0)
# renices that child and those threads once BGSAVE starts: with
# BGSAVE_CPU=LOAD_CPU BGSAVE_NICE=19 the load keeps its core and the
# snapshot gets what it leaves, so the loss is what the server itself
# pays (its core untouched), as on a machine with a core to spare.
# Prints a table, writes CSV, and says which targets were met.
#
# Usage: bench/server/snapshot.sh   (KEYS=10000000 VALUE=32 LOAD_KEYS=250000 LOAD_VALUE=4096)
# Env: KEYS, VALUE, WINDOW (3), LOAD_KEYS, LOAD_VALUE, MAXMEMORY (4gb),
#      CUDIS, REDIS, SERVER_CPU, LOAD_CPU, BGSAVE_CPU (unset), BGSAVE_NICE (0),
#      OUT (bench/results/server).
set -euo pipefail
TMP_PREFIX=cudis-bench-snapshot
source "$(dirname "$0")/lib.sh"
KEYS=${KEYS:-10000000}
BGSAVE_NICE=${BGSAVE_NICE:-0}
VALUE=${VALUE:-32}
WINDOW=${WINDOW:-3}
LOAD_KEYS=${LOAD_KEYS:-250000}
LOAD_VALUE=${LOAD_VALUE:-4096}
MAXMEMORY=${MAXMEMORY:-4gb}
LOADGEN=${LOADGEN:-$BUILD/bench/load/cudis-bench}
need_bins "$CUDIS" "$REDIS" "$LOADGEN"
CSV=$OUT/snapshot-$STAMP.csv

# during.py port keys loadgen load_cpu window pid nice
#   -> "rate_idle rate_during p99_idle_ms p99_during_ms save_s"
cat >"$TMP/during.py" <<'PY'
import os, subprocess, sys, threading, time
import redis
port, keys, loadgen, load_cpu, window = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
pid, nice = int(sys.argv[6]), int(sys.argv[7])
def renice_snapshot():
    # cudis's walk and writer threads, redis-server's forked child
    tids = [int(t) for t in os.listdir("/proc/%d/task" % pid)
            if open("/proc/%d/task/%s/comm" % (pid, t)).read().startswith("cudis-bgsave")]
    kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for t in tids + [int(k) for k in kids]:
        os.setpriority(os.PRIO_PROCESS, t, nice)
r = redis.Redis(port=int(port))
load = subprocess.Popen(["taskset", "-c", load_cpu, loadgen, "-p", port, "-c", "50", "-d", "16",
                         "-k", str(keys), "--dist", "uniform", "-r", "0.9", "--no-load", "-D", "100000",
                         "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
lat = []  # (time, seconds)
stop = False
def probe():
    c = redis.Redis(port=int(port))
    while not stop:
        t0 = time.monotonic()
        c.get("key:000000000001")
        t1 = time.monotonic()
        lat.append((t1, t1 - t0))
        time.sleep(0.0005)
th = threading.Thread(target=probe)
time.sleep(1.0)  # the load reaches its pace
th.start()
def cmds():
    return int(r.info("stats")["total_commands_processed"])
t0, c0 = time.monotonic(), cmds()
time.sleep(window)
t1, c1 = time.monotonic(), cmds()
r.bgsave()
if nice:
    renice_snapshot()
t2, c2 = time.monotonic(), cmds()
while int(r.info("persistence")["rdb_bgsave_in_progress"]):
    time.sleep(0.02)
t3, c3 = time.monotonic(), cmds()
stop = True
th.join()
load.terminate()
load.wait()
def p99(a, b):
    xs = sorted(s for t, s in lat if a <= t <= b)
    return xs[int(len(xs) * 0.99)] * 1000 if xs else float("nan")
print("%.0f %.0f %.3f %.3f %.2f" % ((c1 - c0) / (t1 - t0), (c3 - c2) / max(t3 - t2, 1e-9),
                                     p99(t0, t1), p99(t2, t3), t3 - t2))
PY

fill() { # fill name keys value
  taskset -c "$LOAD_CPU" "$LOADGEN" -p "${PORT[$1]}" -k "$2" -v "$3" -c 50 -d 16 -n 1 -q >/dev/null
}

wait_saved() { # port
  while [[ $(redis-cli -p "$1" info persistence | tr -d '\r' | awk -F: '$1=="rdb_bgsave_in_progress"{print $2}') != 0 ]]; do
    sleep 0.05
  done
}

machine_line
echo "keys: $KEYS x $VALUE B; reload also $LOAD_KEYS x $LOAD_VALUE B; BGSAVE on CPU ${BGSAVE_CPU:-$SERVER_CPU}, nice $BGSAVE_NICE"
echo "server,metric,value" >"$CSV"
declare -A RES
for name in cudis redis; do
  if [[ $name == cudis ]]; then
    start_server cudis --maxmemory "$MAXMEMORY" --dir "$TMP" ${BGSAVE_CPU:+--bgsave_cpulist "$BGSAVE_CPU"}
  else # (rdbcompression no: the file's size is the data's, for MB/s below)
    start_server redis --rdbcompression no ${BGSAVE_CPU:+--bgsave_cpulist "$BGSAVE_CPU"}
  fi
  fill "$name" "$KEYS" "$VALUE"
  read -r ri rd pi pd ss < <(taskset -c "$LOAD_CPU" /usr/bin/python3 "$TMP/during.py" "${PORT[$name]}" \
                              "$KEYS" "$LOADGEN" "$LOAD_CPU" "$WINDOW" "${PID[$name]}" "$BGSAVE_NICE")
  RES[$name]="$ri $rd $pi $pd $ss"
  for m in "rate_idle $ri" "rate_during $rd" "p99_idle_ms $pi" "p99_during_ms $pd" "bgsave_s $ss"; do
    echo "$name,${m% *},${m#* }" >>"$CSV"
  done
  if [[ $name == redis ]]; then
    redis-cli -p "${PORT[redis]}" save >/dev/null
    cp "$TMP/redis-dir/dump.rdb" "$TMP/small.rdb"
    redis-cli -p "${PORT[redis]}" flushall >/dev/null
    fill redis "$LOAD_KEYS" "$LOAD_VALUE"
    redis-cli -p "${PORT[redis]}" save >/dev/null
    cp "$TMP/redis-dir/dump.rdb" "$TMP/large.rdb"
  fi
  kill -TERM "${PID[$name]}"
  wait "${PID[$name]}" 2>/dev/null || true
done

declare -A LOADS
for f in small large; do
  bytes=$(stat -c %s "$TMP/$f.rdb")
  for name in cudis redis; do
    read -r wall n secs < <(reload "$name" "$TMP/$f.rdb")
    LOADS[$name-$f]="$secs $n $bytes $wall"
    echo "$name,reload_${f}_wall_s,$wall" >>"$CSV"
    echo "$name,reload_${f}_load_s,$secs" >>"$CSV"
    echo "$name,reload_${f}_keys,$n" >>"$CSV"
    echo "$name,reload_${f}_mb_per_s,$(echo "$bytes / $secs / 1000000" | bc -l)" >>"$CSV"
  done
done

printf '\n%-28s %14s %14s %8s\n' "" cudis redis-server ratio
row() { printf '%-28s %14.2f %14.2f %8.2f\n' "$1" "$2" "$3" "$(echo "$2 / $3" | bc -l)"; }
read -r cri crd cpi cpd css <<<"${RES[cudis]}"
read -r rri rrd rpi rpd rss <<<"${RES[redis]}"
row "cmds/s, no BGSAVE" "$cri" "$rri"
row "cmds/s, during BGSAVE" "$crd" "$rrd"
row "probe p99 ms, no BGSAVE" "$cpi" "$rpi"
row "probe p99 ms, during BGSAVE" "$cpd" "$rpd"
row "BGSAVE seconds" "$css" "$rss"
for f in small large; do
  read -r cs cn cb cw <<<"${LOADS[cudis-$f]}"
  read -r rs rn rb rw <<<"${LOADS[redis-$f]}"
  row "start to PING, $f s" "$cw" "$rw"
  row "load $f s ($cn/$rn keys)" "$cs" "$rs"
  row "reload $f MB/s (${cb} B)" "$(echo "$cb / $cs / 1000000" | bc -l)" "$(echo "$rb / $rs / 1000000" | bc -l)"
done
loss=$(echo "100 * (1 - $crd / $cri)" | bc -l)
p99x=$(echo "$cpd / $cpi" | bc -l)
read -r cs _ _ _ <<<"${LOADS[cudis-small]}"
read -r rs _ _ _ <<<"${LOADS[redis-small]}"
read -r cl _ cb _ <<<"${LOADS[cudis-large]}"
echo
printf 'target: BGSAVE throughput loss < 5%%: cudis %.1f%% -> %s\n' "$loss" \
  "$( (( $(echo "$loss < 5" | bc -l) )) && echo met || echo NOT met)"
printf 'target: p99 during BGSAVE within 2x idle: cudis %.2fx -> %s\n' "$p99x" \
  "$( (( $(echo "$p99x <= 2" | bc -l) )) && echo met || echo NOT met)"
printf 'target: reload faster than redis-server (%s keys): %.2fs vs %.2fs -> %s\n' "$KEYS" "$cs" "$rs" \
  "$( (( $(echo "$cs < $rs" | bc -l) )) && echo met || echo NOT met)"
printf 'target: load >= 1 GB/s into the cpu engine (%s B values): %.0f MB/s -> %s\n' "$LOAD_VALUE" \
  "$(echo "$cb / $cl / 1000000" | bc -l)" "$( (( $(echo "$cb / $cl >= 1000000000" | bc -l) )) && echo met || echo NOT met)"
echo "csv: $CSV"
