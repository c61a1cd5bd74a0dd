#!/usr/bin/env bash
# run.sh - the client benchmark: vector get of ROWS rows of ROW_BYTES bytes
# through libcudis against cudis-server (CPU engine) and redis-server with
# the same maxmemory, side by side in one run (rounds alternate targets).
# Writes bench/results/client/vbench.csv (or $CSV). Extra args go to the
# program (e.g. --chunk 1000 --seconds 20). See servers.sh for the env.
set -euo pipefail
cd "$(dirname "$0")/../.."
MAXMEMORY=${MAXMEMORY:-256mb}
. bench/client/servers.sh
start_servers
"${CLI_PIN[@]}" "$BUILD/bench/client/cudis-client-vbench" --target cudis="$CUDIS_PORT" --target redis="$REDIS_PORT" \
    --rows "${ROWS:-1000}" --row-bytes "${ROW_BYTES:-256}" --csv "${CSV:-bench/results/client/vbench.csv}" "$@"
