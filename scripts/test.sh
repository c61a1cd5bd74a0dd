#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test:
#   1. the normal build (with the CUDA code compiled when nvcc exists; GPU
#      tests skip themselves without a device) - all tests;
#      then the Debian package built from it, installed, run and purged
#      (scripts/package-test.sh);
#   2. an ASan+UBSan build - all tests;
#   3. a TSan build - the concurrency stress tests (label "stress");
#   4. the fault-injection build (scripts/faults.sh);
#   5. the fuzz targets (tests/fuzz: libFuzzer, clang, ASan+UBSan), each
#      for FUZZ_SECONDS (default 60) from its checked-in corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc)

echo "== build (warnings are errors) =="
scripts/build.sh build
echo "== tests =="
(cd build && ctest --output-on-failure -j"$jobs")

echo "== Debian package: built, installed, run as its unit would, purged =="
scripts/package-test.sh build

echo "== ASan+UBSan build =="
scripts/build.sh build-asan -DCUDIS_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug
echo "== tests under ASan+UBSan =="
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs" -LE slow)

echo "== TSan build =="
scripts/build.sh build-tsan -DCUDIS_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== stress tests under TSan =="
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -L stress)

echo "== fault injection (CUDIS_FAULTS, ASan+UBSan) =="
scripts/faults.sh

echo "== fuzz targets, ${FUZZ_SECONDS:-60}s each =="
scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
