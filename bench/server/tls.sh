#!/usr/bin/env bash
# bench/server/tls.sh - TLS (issue "TLS"): cudis-server over TLS vs cudis
# plaintext vs Debian's redis-server 7 over TLS, side by side in one run:
#   redis-benchmark [--tls --cacert --cert --key] -c 50 -n $N -r 1000000 -d 32 -t set|get -P 16
# One cudis process listens on both a plaintext port and tls-port; redis on
# both too (only its TLS port is measured). Certificates (a CA, a server and
# a client certificate, RSA 2048) are made in the scratch folder with the
# openssl tool; clients present theirs (tls-auth-clients yes, the default).
# Both servers are pinned to the same single core (taskset -c $SERVER_CPU),
# the load generator to another ($LOAD_CPU); equal maxmemory; an untimed
# SET run on each first (warm stores). For each
# command the three run back to back (REPEAT=k alternates them k times, the
# median is kept). Reports requests/s, p50/p99, the server's CPU time (utime+
# stime from /proc/<pid>/stat before/after) and requests per server
# CPU-second, and checks the targets per CPU-second: cudis TLS >= 0.9x cudis
# plaintext and >= 1.2x redis TLS.
#
# Usage: bench/server/tls.sh                (N=1000000)
#        N=200000 bench/server/tls.sh       (quick)
# Env: N, PIPE (default 16), TESTS (default "set get"), REPEAT (default 1),
#      CUDIS, REDIS, MAXMEMORY (default 1gb), CUDIS_ENGINE (default cpu),
#      SERVER_CPU (0), LOAD_CPU (1), OUT (CSV folder, bench/results/server).
set -euo pipefail
TMP_PREFIX=cudis-bench-tls
source "$(dirname "$0")/lib.sh"
N=${N:-1000000}
PIPE=${PIPE:-16}
TESTS=${TESTS:-"set get"}
REPEAT=${REPEAT:-1}
MAXMEMORY=${MAXMEMORY:-1gb}
need_bins "$CUDIS" "$REDIS" "$(command -v redis-benchmark || true)" "$(command -v openssl || true)"
CSV=$OUT/tls-$STAMP.csv

C=$TMP/certs
mkdir -p "$C"
openssl req -x509 -new -nodes -newkey rsa:2048 -days 2 -keyout "$C/ca.key" -out "$C/ca.crt" \
  -subj "/CN=bench CA" >/dev/null 2>&1
for n in server client; do
  openssl req -new -nodes -newkey rsa:2048 -keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$n" \
    >/dev/null 2>&1
  openssl x509 -req -in "$C/$n.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial -days 2 \
    -out "$C/$n.crt" >/dev/null 2>&1
done
TLS_SRV=(--tls-cert-file "$C/server.crt" --tls-key-file "$C/server.key" --tls-ca-cert-file "$C/ca.crt")
TLS_CLI=(--tls --cacert "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key")

CUDIS_TLS_PORT=$(free_port)
REDIS_TLS_PORT=$(free_port)
start_server cudis --maxmemory "$MAXMEMORY" --tls-port "$CUDIS_TLS_PORT" "${TLS_SRV[@]}"
start_server redis --maxmemory "$MAXMEMORY" --maxmemory-policy allkeys-lru \
  --tls-port "$REDIS_TLS_PORT" "${TLS_SRV[@]}"

# run_one proc port tls(0|1) test -> "rps p50 p99 cpu_s"
run_one() {
  local proc=$1 port=$2 tls=$3 test=$4 t0 t1 line extra=()
  [[ $tls == 1 ]] && extra=("${TLS_CLI[@]}")
  t0=$(cpu_ticks "${PID[$proc]}")
  line=$(taskset -c "$LOAD_CPU" redis-benchmark -h 127.0.0.1 -p "$port" "${extra[@]}" -c 50 -n "$N" \
           -r 1000000 -d 32 -t "$test" -P "$PIPE" --csv 2>"$TMP/err" | grep -i "^\"$test\"" | tail -1)
  t1=$(cpu_ticks "${PID[$proc]}")
  if [[ -z $line ]] || grep -q "ERR\|rror" "$TMP/err"; then
    echo "tls.sh: redis-benchmark against $proc:$port failed:" >&2
    cat "$TMP/err" >&2
    exit 1
  fi
  echo "$line" | tr -d '"' | awk -F, -v cpu="$(( t1 - t0 ))" -v hz="$CLK_TCK" \
    '{ printf "%s %s %s %.3f\n", $2, $5, $7, cpu / hz }'
}

# warm-up, untimed: the keys SET will overwrite are created first on both
# servers (a fresh store's first writes pay the kernel's first touch of its
# pages, which would fall on whichever run came first)
for p in "${PORT[cudis]}" "${PORT[redis]}"; do
  taskset -c "$LOAD_CPU" redis-benchmark -h 127.0.0.1 -p "$p" -c 50 -n "$N" -r 1000000 -d 32 -t set \
    -P "$PIPE" -q >/dev/null 2>&1
done

machine_line
echo "redis-benchmark -c 50 -n $N -r 1000000 -d 32 -P $PIPE (TLS: ${TLS_CLI[*]/$C\//}), servers on cpu $SERVER_CPU, load on cpu $LOAD_CPU"
echo "cudis: $CUDIS --engine $CUDIS_ENGINE (port ${PORT[cudis]}, tls-port $CUDIS_TLS_PORT); redis: $($REDIS --version | cut -d' ' -f1-3) (tls-port $REDIS_TLS_PORT)"
echo "test,server,rps,p50_ms,p99_ms,server_cpu_s,rps_per_cpu_s" >"$CSV"

SERVERS="cudis-tls cudis-plain redis-tls"
declare -A R
for test in $TESTS; do
  for s in $SERVERS; do : >"$TMP/rows.$s"; done
  for _ in $(seq "$REPEAT"); do
    run_one cudis "$CUDIS_TLS_PORT" 1 "$test" >>"$TMP/rows.cudis-tls"
    run_one cudis "${PORT[cudis]}" 0 "$test" >>"$TMP/rows.cudis-plain"
    run_one redis "$REDIS_TLS_PORT" 1 "$test" >>"$TMP/rows.redis-tls"
  done
  for s in $SERVERS; do
    rows=$TMP/rows.$s
    rps=$(awk '{ print $1 }' "$rows" | median)
    p50=$(awk '{ print $2 }' "$rows" | median)
    p99=$(awk '{ print $3 }' "$rows" | median)
    cpu=$(awk '{ print $4 }' "$rows" | median)
    per=$(awk -v c="$cpu" -v n="$N" 'BEGIN { printf "%.0f", (c > 0) ? n / c : 0 }')
    R[$test,$s]="$rps $p50 $p99 $cpu $per"
    echo "$test,$s,$rps,$p50,$p99,$cpu,$per" >>"$CSV"
  done
done

printf '\n| test | server | requests/s | p50 ms | p99 ms | server CPU s | requests per CPU-s |\n'
printf '|------|--------|-----------:|-------:|-------:|-------------:|-------------------:|\n'
for test in $TESTS; do
  for s in $SERVERS; do
    read -r rps p50 p99 cpu per <<<"${R[$test,$s]}"
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${test^^}" "$s" "$rps" "$p50" "$p99" "$cpu" "$per"
  done
done

printf '\n| test | per CPU-s: cudis TLS / plaintext | target >= 0.9 | per CPU-s: cudis TLS / redis TLS | target >= 1.2 | rps: cudis TLS / redis TLS |\n'
printf '|------|----:|----|----:|----|----:|\n'
fail=0
for test in $TESTS; do
  read -r rt _ _ _ ct <<<"${R[$test,cudis-tls]}"
  read -r _ _ _ _ cp <<<"${R[$test,cudis-plain]}"
  read -r rr _ _ _ cr <<<"${R[$test,redis-tls]}"
  line=$(awk -v ct="$ct" -v cp="$cp" -v cr="$cr" -v rt="$rt" -v rr="$rr" 'BEGIN {
    a = (cp > 0) ? ct / cp : 0; b = (cr > 0) ? ct / cr : 0; r = (rr > 0) ? rt / rr : 0
    printf "%.2f|%s|%.2f|%s|%.2f", a, (a >= 0.9) ? "yes" : "NO", b, (b >= 1.2) ? "yes" : "NO", r }')
  IFS='|' read -r a oka b okb r <<<"$line"
  printf '| %s | %s | %s | %s | %s | %s |\n' "${test^^}" "$a" "$oka" "$b" "$okb" "$r"
  echo "ratio,$test,tls/plain per cpu,$a,tls/redis-tls per cpu,$b,rps tls/redis-tls,$r" >>"$CSV"
  [[ $oka == yes && $okb == yes ]] || fail=1
done
echo
echo "CSV: $CSV"
if [[ $fail == 1 ]]; then
  echo "targets: NOT all met"
else
  echo "targets: all met"
fi
