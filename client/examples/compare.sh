#!/usr/bin/env bash
# compare.sh - the inference example (cudis-inference) against cudis-server
# and redis-server as the cache, same maxmemory, one after the other in this
# run; prints both and appends to CSV (default
# bench/results/client/inference.csv, override with CSV=...).
# Usage: client/examples/compare.sh [extra cudis-inference args]
#   e.g. client/examples/compare.sh --requests 3000 --policy fill
# Env: BUILD, CUDIS_SERVER, REDIS_SERVER, MAXMEMORY (default 64mb), ENGINE.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/client/servers.sh
start_servers
CSV=${CSV:-bench/results/client/inference.csv}
mkdir -p "$(dirname "$CSV")"
rm -f "$CSV"
for t in cudis redis; do
    port=CUDIS_PORT; [ $t = redis ] && port=REDIS_PORT
    "${CLI_PIN[@]}" "$BUILD/client/examples/cudis-inference" --port "${!port}" --label "$t" --csv "$CSV" "$@"
    echo
done
echo "csv: $CSV"
