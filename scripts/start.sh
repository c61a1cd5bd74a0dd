#!/usr/bin/env bash
# Installs what is needed, builds, and starts cudis-server in the foreground
# with conf/cudis.conf (engine auto: the GPU when one is usable, else the CPU
# CCHT). Extra arguments are passed on, e.g. scripts/start.sh --port 7000
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build >/dev/null
exec build/server/cudis-server conf/cudis.conf "$@"
