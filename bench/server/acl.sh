#!/usr/bin/env bash
# bench/server/acl.sh - what ACL checks cost: redis-benchmark GET and SET
# at -P 16 (-c 50, keys key:__rand_int__ from a 100k range) as the default
# user (every permission: the check's fast path) and as a user holding 10
# key patterns (~p0:* .. ~p8:* then ~key:*, so every key is tried against
# all ten) and +@all, on the same server, alternating REPEAT times (the
# median is kept). cudis-server (cpu engine) and Debian's redis-server side
# by side, both pinned to SERVER_CPU, the load to LOAD_CPU. Reports
# requests/s and requests per server CPU-second; target (issue 16): the
# ACL user at >= 0.97x the default user's throughput on cudis.
#
# Usage: bench/server/acl.sh            (N=1000000 per run, REPEAT=3)
# Env: N, REPEAT, TESTS ("get,set"), CUDIS, REDIS, SERVER_CPU, LOAD_CPU, OUT.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
N=${N:-1000000}
REPEAT=${REPEAT:-3}
TESTS=${TESTS:-get,set}
need_bins "$CUDIS" "$REDIS" "$(command -v redis-benchmark || true)"
CSV=$OUT/acl-$STAMP.csv
RULES=(on '>benchpw' '~p0:*' '~p1:*' '~p2:*' '~p3:*' '~p4:*' '~p5:*' '~p6:*' '~p7:*' '~p8:*'
       '~key:*' '+@all')

# run_one server user test -> "rps cpu_s"
run_one() {
  local name=$1 user=$2 test=$3 t0 t1 line auth=()
  [[ $user == bench ]] && auth=(--user bench -a benchpw)
  t0=$(cpu_ticks "${PID[$name]}")
  line=$(taskset -c "$LOAD_CPU" redis-benchmark -h 127.0.0.1 -p "${PORT[$name]}" "${auth[@]}" \
           -c 50 -n "$N" -r 100000 -P 16 -t "$test" --csv 2>"$TMP/err" | tail -1)
  t1=$(cpu_ticks "${PID[$name]}")
  if [[ -z $line ]] || grep -q "ERR\|NOPERM\|rror" "$TMP/err"; then
    echo "acl.sh: redis-benchmark ($name, $user, $test) failed:" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  echo "$line" | tr -d '"' | awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" \
    '{ printf "%s %.3f\n", $2, cpu / hz }'
}

machine_line
echo "redis-benchmark -c 50 -n $N -r 100000 -P 16 -t $TESTS, default user vs a user with 10 key patterns; servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU"
start_server cudis
start_server redis
for name in cudis redis; do
  [[ $(redis-cli -p "${PORT[$name]}" acl setuser bench "${RULES[@]}") == OK ]] ||
    { echo "acl.sh: ACL SETUSER failed on $name" >&2; exit 1; }
done
echo "test,server,user,rps,server_cpu_s,rps_per_cpu_s" >"$CSV"
declare -A R
for test in ${TESTS//,/ }; do
  for name in cudis redis; do
    : >"$TMP/rows.default"
    : >"$TMP/rows.bench"
    for _ in $(seq "$REPEAT"); do
      for user in default bench; do
        run_one "$name" "$user" "$test" >>"$TMP/rows.$user"
      done
    done
    for user in default bench; do
      rps=$(awk '{ print $1 }' "$TMP/rows.$user" | median)
      cpu=$(awk '{ print $2 }' "$TMP/rows.$user" | median)
      per=$(awk -v c="$cpu" -v n="$N" 'BEGIN { printf "%.0f", (c > 0) ? n / c : 0 }')
      R[$test,$name,$user]="$rps $cpu $per"
      echo "$test,$name,$user,$rps,$cpu,$per" >>"$CSV"
    done
  done
done
printf '\n| test | server | user | requests/s | server CPU s | requests per CPU-s |\n'
printf '|------|--------|------|-----------:|-------------:|-------------------:|\n'
for test in ${TESTS//,/ }; do
  for name in cudis redis; do
    for user in default bench; do
      read -r rps cpu per <<<"${R[$test,$name,$user]}"
      printf '| %s | %s | %s | %s | %s | %s |\n' "$test" "$name" "$user" "$rps" "$cpu" "$per"
    done
  done
done
printf '\n| test | server | ACL user / default (rps) | per CPU-s | target | met |\n'
printf '|------|--------|---:|---:|---|---|\n'
for test in ${TESTS//,/ }; do
  for name in cudis redis; do
    read -r rd _ pd <<<"${R[$test,$name,default]}"
    read -r rb _ pb <<<"${R[$test,$name,bench]}"
    r=$(awk -v a="$rb" -v b="$rd" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
    e=$(awk -v a="$pb" -v b="$pd" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
    if [[ $name == cudis ]]; then
      ok=$(awk -v r="$r" 'BEGIN { print (r >= 0.97) ? "yes" : "NO" }')
      tgt=">= 0.97x"
    else
      ok="(reference)"
      tgt=""
    fi
    printf '| %s | %s | %s | %s | %s | %s |\n' "$test" "$name" "$r" "$e" "$tgt" "$ok"
    echo "ratio,$test,$name,$r,,$e" >>"$CSV"
  done
done
echo
echo "CSV: $CSV"
