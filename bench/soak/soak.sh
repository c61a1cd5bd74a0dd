#!/usr/bin/env bash
# bench/soak/soak.sh - the soak benchmark (issue 12, deliver 5): starts its own
# cudis-server (cpu engine, 64 MB maxmemory so that eviction runs all along),
# optionally redis-server beside it with the same workload, runs soak.py's
# mixed load against each for DURATION seconds (connects/disconnects, expiry,
# eviction, CONFIG SET, FLUSHDB, pub/sub, MULTI, EVAL, big values), samples
# RSS, INFO, latency and errors, writes CSV + summary + PNG under
# bench/results/soak/ and exits 0 only if cudis passed: no unexpected error,
# alive at the end and shut down cleanly by SIGTERM, flat RSS.
#
#   bench/soak/soak.sh                   # 1 hour, 5 s samples
#   bench/soak/soak.sh --ci              # ~2 minutes, 2 s samples (the ctest "soak_ci")
#   DURATION=600 bench/soak/soak.sh --redis   # 10 minutes, redis-server side by side
#
# Environment: DURATION, INTERVAL, WORKERS, CHURN, KEYS, MAXMEMORY, SEED,
# CONFIG_EVERY, FLUSH_EVERY, OUT, CUDIS, REDIS (a path, or 1 / 0 for --redis),
# SERVER_CPU, LOAD_CPU, CUDIS_ARGS (more cudis-server options), TAG (added to
# the output files' names); arguments after
# "--" go to soak.py (soak.py --help). Fails without the python3 redis module (scripts/deps.sh installs it).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

CI=${CI:-0}
WITH_REDIS=${WITH_REDIS:-0}
if [[ ${REDIS:-} == 0 || ${REDIS:-} == 1 ]]; then
  WITH_REDIS=$REDIS
  unset REDIS
fi
PASS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ci) CI=1 ;;
    --redis) WITH_REDIS=1 ;;
    --duration) DURATION=$2; shift ;;
    --) shift; PASS=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ $CI == 1 ]]; then
  DURATION=${DURATION:-120} INTERVAL=${INTERVAL:-2} WORKERS=${WORKERS:-3}
  CONFIG_EVERY=${CONFIG_EVERY:-5} FLUSH_EVERY=${FLUSH_EVERY:-40}
else
  DURATION=${DURATION:-3600} INTERVAL=${INTERVAL:-5} WORKERS=${WORKERS:-4}
  CONFIG_EVERY=${CONFIG_EVERY:-15} FLUSH_EVERY=${FLUSH_EVERY:-120}
fi
CHURN=${CHURN:-200} KEYS=${KEYS:-300000} SEED=${SEED:-1} MAXMEMORY=${MAXMEMORY:-64mb}
if [[ $(nproc) -lt 2 ]]; then
  SERVER_CPU=${SERVER_CPU:-0} LOAD_CPU=${LOAD_CPU:-0}
fi
OUT=${OUT:-$(cd "$HERE/.." && pwd)/results/soak}
TMP_PREFIX=soak
source "$HERE/../server/lib.sh"

PY=${PY:-/usr/bin/python3}
if ! "$PY" -c 'import redis' 2>/dev/null; then
  echo "soak.sh: $PY has no redis module (Debian: python3-redis; scripts/deps.sh installs it)" >&2
  exit 1
fi
need_bins "$CUDIS"
[[ $WITH_REDIS == 1 ]] && need_bins "$REDIS"

# shellcheck disable=SC2086 # CUDIS_ARGS is a list of options
start_server cudis --maxmemory "$MAXMEMORY" ${CUDIS_ARGS:-}
servers=(--server "cudis=${PORT[cudis]},${PID[cudis]}")
if [[ $WITH_REDIS == 1 ]]; then
  start_server redis --maxmemory "$MAXMEMORY" --maxmemory-policy allkeys-lru
  servers+=(--reference "redis=${PORT[redis]},${PID[redis]}")
fi

name=soak-$STAMP
[[ $CI == 1 ]] && name+=-ci
[[ -n ${TAG:-} ]] && name+=-$TAG
rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
vs=""
[[ $WITH_REDIS == 1 ]] && vs=" vs redis-server"
echo "soak: ${DURATION} s, samples every ${INTERVAL} s, $WORKERS workers per server, maxmemory $MAXMEMORY"
echo "cudis: $CUDIS (engine ${CUDIS_ENGINE:-auto}, tree $rev) on cpu $SERVER_CPU, port ${PORT[cudis]}"
[[ $WITH_REDIS == 1 ]] && echo "redis: $REDIS ($("$REDIS" --version | cut -d' ' -f3)) on cpu $SERVER_CPU, port ${PORT[redis]}"
echo "load: $PY on cpu $LOAD_CPU; $(machine_line); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "csv: $OUT/$name.csv"

rc=0
taskset -c "$LOAD_CPU" "$PY" "$HERE/soak.py" "${servers[@]}" --duration "$DURATION" \
  --interval "$INTERVAL" --workers "$WORKERS" --churn "$CHURN" --keys "$KEYS" --seed "$SEED" \
  --config-every "$CONFIG_EVERY" --flush-every "$FLUSH_EVERY" --csv "$OUT/$name.csv" \
  --title "soak $STAMP: cudis $rev${CUDIS_ARGS:+ ($CUDIS_ARGS)}$vs, maxmemory $MAXMEMORY, ${DURATION} s" \
  "${PASS[@]}" || rc=$?

# A clean stop is part of the pass line: SIGTERM, and exit status 0.
for s in "${!PID[@]}"; do
  kill -TERM "${PID[$s]}" 2>/dev/null || true
  st=0
  wait "${PID[$s]}" 2>/dev/null || st=$?
  if [[ $st != 0 ]]; then
    echo "$s exited with status $st after SIGTERM; its log ends:"
    tail -20 "$TMP/$s.log"
    [[ $s == cudis ]] && rc=1
  fi
done
echo "soak: $([[ $rc == 0 ]] && echo PASS || echo FAIL) (exit $rc)"
exit $rc
