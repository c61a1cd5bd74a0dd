#!/usr/bin/env bash
# bench/cluster/throughput.sh - a three-node cluster of cudis beside one of
# redis-server, driven by the same cluster client (redis-benchmark
# --cluster, which sends each key to the node serving its slot), and one
# standalone node of each for the scaling ratio. Every server is pinned to
# SERVER_CPUS (a list: with as many cores as nodes each node gets its own;
# on this 2-core machine they share core 0 and the client runs on LOAD_CPU),
# so the figure that compares is requests per server CPU-second (the
# servers' utime+stime over the run), beside plain requests/s.
# Prints a table (per server, per test: req/s, req per server CPU-second),
# the ratios cudis/redis, cluster/one node, and writes CSV.
#
# Usage: bench/cluster/throughput.sh
# Env: REQUESTS (2000000), PIPELINE (16), CLIENTS (50), KEYSPACE (1000000),
#      VALUE (64), TESTS (set,get), SERVER_CPUS (0), LOAD_CPU (1), CUDIS, REDIS.
set -euo pipefail
TMP_PREFIX=cudis-cluster-tp
source "$(dirname "$0")/lib.sh"
REQUESTS=${REQUESTS:-2000000}
PIPELINE=${PIPELINE:-16}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-1000000}
VALUE=${VALUE:-64}
TESTS=${TESTS:-set,get}
SERVER_CPUS=${SERVER_CPUS:-0}
need_bins "$CUDIS" "$REDIS" /usr/bin/redis-cli /usr/bin/redis-benchmark
CSV=$OUT/throughput-$STAMP.csv
IFS=, read -r -a CPUS <<<"$SERVER_CPUS"

NODES=() # the names of the nodes started for the current run
start_node() { # start_node cudis|redis NAME INDEX [cluster]
  local kind=$1 name=$2 idx=$3 cluster=${4:-} port dir cpu opts=()
  port=$(port_pair)
  dir=$TMP/$name
  mkdir -p "$dir"
  cpu=${CPUS[$((idx % ${#CPUS[@]}))]}
  [[ -n $cluster ]] && opts=(--cluster-enabled yes --cluster-config-file nodes.conf)
  if [[ $kind == cudis ]]; then
    (cd "$dir" && exec taskset -c "$cpu" "$CUDIS" --port "$port" --bind 127.0.0.1 \
      --engine cpu --maxmemory 2gb "${opts[@]}" >"$dir/log" 2>&1) &
  else
    (cd "$dir" && exec taskset -c "$cpu" "$REDIS" --port "$port" --bind 127.0.0.1 \
      --save '' --appendonly no "${opts[@]}" >"$dir/log" 2>&1) &
  fi
  PID[$name]=$!
  PORT[$name]=$port
  NODES+=("$name")
  for _ in $(seq 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$name did not start" >&2
  exit 1
}

stop_nodes() {
  for n in "${NODES[@]}"; do
    kill -TERM "${PID[$n]}" 2>/dev/null || true
    wait "${PID[$n]}" 2>/dev/null || true
    unset "PID[$n]"
  done
  NODES=()
}

# run_bench LABEL KIND NODES PORT [--cluster]: one redis-benchmark per test,
# the servers' CPU time around it, after an unmeasured pass of SETs over the
# key space (a fresh cudis store first touches its memory: on this VM
# zeroing a 2 MB page took ~6 ms, 98% of a cold node's SET time)
run_bench() {
  local label=$1 kind=$2 nodes=$3 port=$4 flag=${5:-}
  taskset -c "$LOAD_CPU" redis-benchmark $flag -h 127.0.0.1 -p "$port" -t set \
    -n $((KEYSPACE * 3)) -P "$PIPELINE" -c "$CLIENTS" -r "$KEYSPACE" -d "$VALUE" -q >/dev/null 2>&1
  IFS=, read -r -a tests <<<"$TESTS"
  for t in "${tests[@]}"; do
    local t0=0 t1=0 n
    for n in "${NODES[@]}"; do t0=$((t0 + $(cpu_ticks "${PID[$n]}"))); done
    local line
    line=$(taskset -c "$LOAD_CPU" redis-benchmark $flag -h 127.0.0.1 -p "$port" -t "$t" \
      -n "$REQUESTS" -P "$PIPELINE" -c "$CLIENTS" -r "$KEYSPACE" -d "$VALUE" --csv 2>/dev/null |
      grep -i "^\"$t\"" | head -1)
    for n in "${NODES[@]}"; do t1=$((t1 + $(cpu_ticks "${PID[$n]}"))); done
    local rps cpu_s per_cpu
    rps=$(echo "$line" | cut -d, -f2 | tr -d '"')
    cpu_s=$(echo "($t1 - $t0) / $CLK_TCK" | bc -l)
    per_cpu=$(echo "$REQUESTS / $cpu_s" | bc -l)
    printf '%s,%s,%d,%s,%.0f,%.2f,%.0f\n' "$label" "$kind" "$nodes" "$t" "$rps" "$cpu_s" "$per_cpu" >>"$CSV"
    RES["$label/$kind/$t/rps"]=$rps
    RES["$label/$kind/$t/cpu"]=$per_cpu
  done
}

declare -A RES
echo "setup,server,nodes,test,req_per_s,server_cpu_s,req_per_server_cpu_s" >"$CSV"
for kind in cudis redis; do
  # three nodes, made a cluster by redis-cli as an operator would
  addrs=()
  for i in 0 1 2; do
    start_node "$kind" "$kind-c$i" "$i" cluster
    addrs+=("127.0.0.1:${PORT[$kind-c$i]}")
  done
  redis-cli --cluster create "${addrs[@]}" --cluster-yes >"$TMP/create-$kind.log" 2>&1
  wait_ok "${PORT[$kind-c0]}" "${PORT[$kind-c1]}" "${PORT[$kind-c2]}"
  run_bench "cluster3" "$kind" 3 "${PORT[$kind-c0]}" --cluster
  stop_nodes
  # one standalone node
  start_node "$kind" "$kind-s0" 0
  run_bench "single" "$kind" 1 "${PORT[$kind-s0]}"
  stop_nodes
done

machine_line
echo "servers on cpus $SERVER_CPUS, client on cpu $LOAD_CPU; $REQUESTS requests of $VALUE bytes, -P $PIPELINE, $CLIENTS clients, $KEYSPACE keys"
echo "| setup | test | cudis req/s | redis req/s | cudis req/server-CPU-s | redis req/server-CPU-s | cudis/redis (per CPU-s) |"
echo "|---|---|---:|---:|---:|---:|---:|"
IFS=, read -r -a tests <<<"$TESTS"
for setup in cluster3 single; do
  for t in "${tests[@]}"; do
    printf '| %s | %s | %.0f | %.0f | %.0f | %.0f | %.2fx |\n' "$setup" "$t" \
      "${RES[$setup/cudis/$t/rps]}" "${RES[$setup/redis/$t/rps]}" \
      "${RES[$setup/cudis/$t/cpu]}" "${RES[$setup/redis/$t/cpu]}" \
      "$(echo "${RES[$setup/cudis/$t/cpu]} / ${RES[$setup/redis/$t/cpu]}" | bc -l)"
  done
done
for t in "${tests[@]}"; do
  for kind in cudis redis; do
    printf '%s %s: three nodes / one node = %.2fx req/s, %.2fx req per server CPU-s\n' "$kind" "$t" \
      "$(echo "${RES[cluster3/$kind/$t/rps]} / ${RES[single/$kind/$t/rps]}" | bc -l)" \
      "$(echo "${RES[cluster3/$kind/$t/cpu]} / ${RES[single/$kind/$t/cpu]}" | bc -l)"
  done
done
echo "CSV: $CSV"
