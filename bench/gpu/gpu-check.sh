#!/usr/bin/env bash
# gpu-check.sh - the GPU engine's device check, sized for 8 minutes on one
# H200. Run from the repository root on a machine with a GPU:
#
#   bash bench/gpu/gpu-check.sh            # everything below
#   QUICK=1 bash bench/gpu/gpu-check.sh    # reduced benchmark matrix
#
# Every step runs as its own process under its own time limit; its output
# goes, as it is written, into gpu-check.log and the verdicts into
# gpu-check.summary, in $OUT when set (the device tool brings back at most
# 8 files: these two, gpu_bench.csv, gpu_fetch.csv, gpu_bench.txt), else in
# bench/results/gpu/. The script goes on after a failure and exits non-zero
# if any step failed. A step that reports SKIPPED (exit 77: "no usable
# device") is a FAILURE here: this script is only run where a device is.
#
# Steps, the most important first (TIME_BUDGET, default 450 s, leaves
# later ones out, each reported as a failure):
#   1. device and toolchain (nvidia-smi; nvcc, compute-sanitizer and ncu are
#      looked up in the CUDA install directories, not only on PATH)
#   2. build for sm_90 + compute_90 PTX (bench/gpu/standalone: needs only
#      nvcc, CMake and a C compiler)
#   3. gpu_bench: target rows first (kernel get/set 1M at 90% load, 512-byte
#      fetch against copy bandwidth, each met/MISSED), then the matrix (1 GiB
#      index), CSV
#   4. gpu_selftest: gold gpu vs cpu, the 1M-op stream with eviction on the
#      device (each side against its model), device-pointer API, eviction
#      model, and an audit of the device table (E_FULL count, pages per class)
#   5. compute-sanitizer memcheck, synccheck and initcheck on a short run
#   6. gpu_selftest --host-sim on this machine's CPUs (as CI runs it)
#   7. ASan+UBSan over the host side (gpu_selftest --small, gpu_bench --profile)
#   8. one profiler pass of the get kernel (ncu), when a profiler is present
#   9. the project's Criterion GPU suites, when libevent/hiredis/Criterion exist
set -uo pipefail
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-/tmp/cudis-gpu}
RESULTS=${RESULTS:-bench/results/gpu}
LOGS=${OUT:-$RESULTS}
JOBS=${JOBS:-$(nproc)}
TIME_BUDGET=${TIME_BUDGET:-450} # seconds after which later steps are left out
STEPLOGS=${STEPLOGS:-/tmp/cudis-gpu-logs} # one log per step (grepped below)
mkdir -p "$RESULTS" "$LOGS" "$STEPLOGS"
SUMMARY="$LOGS/gpu-check.summary"  # the verdicts
FULLLOG="$LOGS/gpu-check.log"      # every step's output, written as it goes
: >"$SUMMARY"
: >"$FULLLOG"
status=0
t_start=$(date +%s)

say() { echo "$*" | tee -a "$SUMMARY"; }
step() { printf '\n== [%4ss] %s ==\n' "$(( $(date +%s) - t_start ))" "$*" | tee -a "$SUMMARY"; }

# run [-q] NAME LIMIT CMD...: one step as its own process, its output kept
# in $STEPLOGS/NAME.log and gpu-check.log as it is written (and shown,
# unless -q); SKIPPED (77) and timeouts are failures.
run() {
  local quiet=0
  if [ "$1" = -q ]; then quiet=1; shift; fi
  local name=$1 limit=$2
  shift 2
  local log="$STEPLOGS/$name.log"
  echo "---- $name: $*" >>"$FULLLOG"
  if [ $quiet = 1 ]; then
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log" >>"$FULLLOG"
  else
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log" | tee -a "$FULLLOG"
  fi
  local rc=${PIPESTATUS[0]}
  case $rc in
    0) say "ok: $name" ;;
    77) say "FAILED: $name reported SKIPPED on a device machine"; status=1 ;;
    124|137) say "FAILED: $name ran past its ${limit}s limit"; status=1 ;;
    *) say "FAILED: $name (exit $rc)"; status=1 ;;
  esac
  return $rc
}

# find TOOL: PATH first, then the usual CUDA install directories.
find_tool() {
  local t=$1 d
  if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/cuda/bin /usr/lib/nvidia-cuda-toolkit/bin \
           /usr/local/cuda/compute-sanitizer /usr/local/cuda-*/compute-sanitizer \
           /opt/nvidia/nsight-compute/* /usr/local/NVIDIA-Nsight-Compute*; do
    if [ -x "$d/$t" ]; then echo "$d/$t"; return 0; fi
  done
  return 1
}

step "device and toolchain"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 |
  head -5 | tee -a "$SUMMARY" || say "nvidia-smi not available"
NVCC=$(find_tool nvcc) || { say "FAILED: nvcc not found"; exit 1; }
SANITIZER=$(find_tool compute-sanitizer) || SANITIZER=""
NCU=$(find_tool ncu) || NCU=""
say "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
say "compute-sanitizer: ${SANITIZER:-not found}"
say "ncu: ${NCU:-not found}"
cmake --version | head -1

step "build (sm_90 + compute_90 PTX), standalone"
if run -q configure 240 cmake -S bench/gpu/standalone -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES=90 -DCUDIS_WERROR=OFF &&
   run -q build 300 cmake --build "$BUILD" -j"$JOBS"; then
  say "built: $BUILD/gpu_selftest $BUILD/gpu_bench"
  command -v cuobjdump >/dev/null && cuobjdump --list-elf "$BUILD/gpu_bench" 2>/dev/null | head -3
else
  tail -30 "$STEPLOGS/configure.log" "$STEPLOGS/build.log" 2>/dev/null
  exit 1
fi

bench_args=(--out "$RESULTS")
[ -n "${QUICK:-}" ] && bench_args+=(--quick)

# in_time NAME: whether a later step still fits the run's budget (the most
# important steps come first); a step left out is a failure of the check.
in_time() {
  if [ $(( $(date +%s) - t_start )) -lt "$TIME_BUDGET" ]; then return 0; fi
  say "FAILED: $1 not run (the ${TIME_BUDGET}s budget is spent)"
  status=1
  return 1
}

step "gpu_bench (target rows first, then fetch512 and the matrix)"
run bench 240 "$BUILD/gpu_bench" "${bench_args[@]}"
grep '^TARGET' "$STEPLOGS/bench.log" | tee -a "$SUMMARY"
cp "$STEPLOGS/bench.log" "$RESULTS/gpu_bench.txt"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
  cp "$RESULTS"/gpu_bench.csv "$RESULTS"/gpu_fetch.csv "$RESULTS"/gpu_bench.txt "$OUT"/ 2>/dev/null
fi

step "gpu_selftest (gold, 1M-op stream with eviction, device API, audit)"
run selftest 180 "$BUILD/gpu_selftest" --ops 1000000 --seed 1
grep -E '^(PASS|FAIL|audit:)' "$STEPLOGS/selftest.log" >>"$SUMMARY"

if [ -n "$SANITIZER" ]; then
  for tool in memcheck synccheck initcheck; do
    in_time "compute-sanitizer $tool" || continue
    step "compute-sanitizer $tool (short run)"
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check no)
    run "sanitizer-$tool" 120 "$SANITIZER" --tool "$tool" --error-exitcode 3 "${extra[@]}" \
      "$BUILD/gpu_selftest" --small
  done
else
  say "FAILED: compute-sanitizer not found"
  status=1
fi

if in_time "host simulation"; then
  step "host simulation of the kernels (this machine's CPUs)"
  run hostsim 90 "$BUILD/gpu_selftest" --host-sim --threads 16 --seed 2 --ops 1000000
fi

if in_time "ASan+UBSan"; then
  step "ASan+UBSan over the host side of the GPU programs (short runs)"
  ABUILD=${ABUILD:-/tmp/cudis-gpu-asan}
  if run -q asan-configure 120 cmake -S bench/gpu/standalone -B "$ABUILD" -DCMAKE_BUILD_TYPE=Debug \
       -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES=90 \
       -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
       -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" &&
     run -q asan-build 240 cmake --build "$ABUILD" -j"$JOBS"; then
    export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:abort_on_error=1
    run asan-selftest 120 "$ABUILD/gpu_selftest" --small
    run asan-bench 120 "$ABUILD/gpu_bench" --profile --slots $((1 << 20))
    unset ASAN_OPTIONS
  fi
fi

if [ -z "$NCU" ]; then
  say "profiler: ncu not found, no profile"
elif in_time "profiler"; then
  step "profiler: one pass of the get kernel (ncu)"
  run profile 120 "$NCU" --kernel-name k_get_fixed --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    "$BUILD/gpu_bench" --profile --slots $((1 << 24))
fi

step "project GPU test suites (ctest -L gpu), if the project's dependencies are here"
if pkg-config --exists libevent hiredis criterion 2>/dev/null && in_time "project suites"; then
  PBUILD=${PBUILD:-/tmp/cudis-gpu-project}
  if run -q project-configure 200 cmake -S . -B "$PBUILD" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_COMPILER="$NVCC" -DCUDIS_WERROR=OFF &&
     run -q project-build 300 cmake --build "$PBUILD" -j"$JOBS" --target test_gpu_engine \
       test_gpu_gold test_gpu_api test_gpu_exec_host engine_conformance; then
    run project-tests 240 ctest --test-dir "$PBUILD" --output-on-failure -R 'test_gpu|engine_conformance'
  fi
else
  say "libevent/hiredis/criterion not found: the Criterion suites are not run here;"
  say "gpu_selftest above runs the same gold, eviction and device-API checks."
fi

step "done (status $status)"
exit $status
