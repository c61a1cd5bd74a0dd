#!/usr/bin/env bash
# gpu-check.sh - the GPU engine's device check, sized for 8 minutes on one
# H200 (issue 4). Run from the repository root on a machine with a GPU:
#
#   bash bench/gpu/gpu-check.sh            # everything below
#   QUICK=1 bash bench/gpu/gpu-check.sh    # reduced benchmark matrix
#
# Steps (each under its own time limit; the script goes on after a failure
# and exits non-zero if any step failed):
#   1. device and toolchain (nvidia-smi, nvcc)
#   2. build for sm_90 (+ compute_90 PTX): the standalone build of the GPU
#      engine, its checks and benchmark (bench/gpu/standalone: needs only
#      nvcc, CMake and a C compiler); when libevent, hiredis and Criterion
#      are present too, also the project's GPU test suites (ctest -L gpu)
#   3. gpu_selftest: the gold test (gpu vs cpu on random streams), eviction
#      model, device-pointer API
#   4. compute-sanitizer memcheck and racecheck on a small batch stream
#   5. gpu_bench: throughput table + 512-byte fetch vs copy bandwidth, CSV
#
# Results: bench/results/gpu/ (RESULTS=dir to change); when $OUT is set (the
# device tool), the CSVs and the log summary are copied there as well.
set -uo pipefail
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-/tmp/cudis-gpu}
RESULTS=${RESULTS:-bench/results/gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$RESULTS"
status=0
t_start=$(date +%s)

step() { printf '\n== [%4ss] %s ==\n' "$(( $(date +%s) - t_start ))" "$*"; }
fail() { echo "!! FAILED: $*"; status=1; }

step "device and toolchain"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | head -5 \
  || echo "nvidia-smi not available"
nvcc --version | tail -2
cmake --version | head -1

step "build (sm_90 + compute_90 PTX), standalone"
if timeout 240 cmake -S bench/gpu/standalone -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_ARCHITECTURES=90 -DCUDIS_WERROR=OFF >"$BUILD.configure.log" 2>&1 &&
   timeout 300 cmake --build "$BUILD" -j"$JOBS" >"$BUILD.build.log" 2>&1; then
  echo "built: $BUILD/gpu_selftest $BUILD/gpu_bench"
  command -v cuobjdump >/dev/null && cuobjdump --list-elf "$BUILD/gpu_bench" 2>/dev/null | head -3
else
  tail -30 "$BUILD.configure.log" "$BUILD.build.log" 2>/dev/null
  fail "build"
  exit 1
fi

step "project GPU test suites (ctest -L gpu), if the project's dependencies are here"
if pkg-config --exists libevent hiredis criterion 2>/dev/null; then
  PBUILD=${PBUILD:-/tmp/cudis-gpu-project}
  if timeout 300 cmake -S . -B "$PBUILD" -DCMAKE_BUILD_TYPE=Release -DCUDIS_WERROR=OFF >/dev/null 2>&1 &&
     timeout 300 cmake --build "$PBUILD" -j"$JOBS" --target test_gpu_engine test_gpu_gold \
       test_gpu_api test_gpu_exec_host engine_conformance >"$PBUILD.log" 2>&1; then
    (cd "$PBUILD" && timeout 240 ctest --output-on-failure -R 'test_gpu|engine_conformance') ||
      fail "project GPU tests"
  else
    tail -20 "$PBUILD.log" 2>/dev/null
    fail "project build"
  fi
else
  echo "libevent/hiredis/criterion not found: skipping the Criterion suites;"
  echo "gpu_selftest below runs the same gold, eviction and device-API checks."
fi

step "gpu_selftest (gold: gpu vs cpu; eviction model; device-pointer API)"
timeout 180 "$BUILD/gpu_selftest" || fail "gpu_selftest"

if command -v compute-sanitizer >/dev/null; then
  step "compute-sanitizer memcheck (small batch stream)"
  timeout 180 compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
    "$BUILD/gpu_selftest" --small || fail "memcheck"
  step "compute-sanitizer racecheck (small batch stream)"
  timeout 180 compute-sanitizer --tool racecheck --error-exitcode 3 --racecheck-report hazard \
    "$BUILD/gpu_selftest" --small || fail "racecheck"
else
  echo "compute-sanitizer not found: memcheck/racecheck not run"
  status=1
fi

step "gpu_bench (throughput table, 512-byte fetch vs copy)"
bench_args=(--out "$RESULTS")
[ -n "${QUICK:-}" ] && bench_args+=(--quick)
timeout 300 "$BUILD/gpu_bench" "${bench_args[@]}" | tee "$RESULTS/gpu_bench.txt" || fail "gpu_bench"

if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  cp "$RESULTS"/gpu_bench.csv "$RESULTS"/gpu_fetch.csv "$RESULTS"/gpu_bench.txt "$OUT"/ 2>/dev/null
fi

step "done (status $status)"
exit $status
