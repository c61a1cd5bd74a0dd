#!/usr/bin/env bash
# Builds the fault-injection test server (CUDIS_FAULTS, with ASan+UBSan) in
# build-fault/ and runs tests/e2e/test_faults.py against it: for many N,
# the N-th query-buffer growth, engine batch or socket write fails
# (common/cudis_fault.h). Usage: scripts/faults.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-fault -DCUDIS_WERROR=ON -DCUDIS_FAULTS=ON -DCUDIS_SANITIZE=address \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fault -j"$(nproc)" --target cudis-server
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  /usr/bin/python3 tests/e2e/test_faults.py --server build-fault/server/cudis-server
