#!/usr/bin/env bash
# Installs the Debian packages cudis needs to build, test and benchmark, and
# the npm packages of the e2e tests (tests/e2e/node).
# Idempotent: does nothing (and needs no network) when all are present.
set -euo pipefail
PKGS=(build-essential cmake pkg-config libevent-dev libhiredis-dev libcriterion-dev
      liblua5.1-0-dev libssl-dev openssl lua-cjson-dev lua-bitop-dev prometheus-redis-exporter
      redis-server redis-tools memcached python3-redis python3-yaml gnuplot-nox procps nutcracker
      clang libclang-rt-14-dev llvm) # libFuzzer (its runtime) and llvm-symbolizer: scripts/fuzz.sh
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian starts redis-server and memcached as services on install; the tests
# and benchmarks start their own on free ports, so stop those if running.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl stop redis-server memcached prometheus-redis-exporter nutcracker >/dev/null 2>&1 || true
fi
# Node.js clients the e2e tests drive (tests/e2e/node: ioredis), from the npm
# registry at the versions package-lock.json pins; Debian's nodejs and npm
# when the machine has no node/npm of its own.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "deps: installing nodejs npm"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
NODE_DIR="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/node"
if ! cmp -s "$NODE_DIR/package-lock.json" "$NODE_DIR/node_modules/.cudis-lock"; then
  echo "deps: npm ci in tests/e2e/node"
  npm ci --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error >/dev/null
  cp "$NODE_DIR/package-lock.json" "$NODE_DIR/node_modules/.cudis-lock"
fi
