#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan+UBSan) in build-fuzz
# and runs each for a bounded time. Usage: scripts/fuzz.sh [seconds] [target...]
#   seconds  per target (default 60); targets default to all of tests/fuzz.
# Each run reads the checked-in seeds (tests/fuzz/corpus/<target>, never
# written) and writes what it finds to a scratch corpus of its own; a crash,
# leak, timeout or out-of-memory stops it, leaves the input in
# build-fuzz/fuzz-artifacts/<target>/, and makes this script fail. Add such
# an input to the target's corpus once fixed: ctest then replays it in every
# build. FUZZ_KEEP=<dir> keeps each scratch corpus in <dir>/<target>.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    t=${f#tests/fuzz/fuzz_}
    targets+=("${t%.c}")
  done
fi

cmake -S . -B build-fuzz -DCUDIS_WERROR=ON -DCMAKE_C_COMPILER=clang -DCUDIS_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz

# libFuzzer symbolizes reports with llvm-symbolizer; Debian names it by version
if ! command -v llvm-symbolizer >/dev/null 2>&1; then
  for s in /usr/lib/llvm-*/bin/llvm-symbolizer; do
    [ -x "$s" ] && export ASAN_SYMBOLIZER_PATH=$s
  done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

max_len() {
  case $1 in
    resp | reply) echo 65536 ;; # RESP_INLINE_MAX: fuzz_resp's two feeds agree within it
    dispatch) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-corpus-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failed=()
for t in "${targets[@]}"; do
  bin=build-fuzz/tests/fuzz/fuzz_$t
  seeds=tests/fuzz/corpus/$t
  art=build-fuzz/fuzz-artifacts/$t
  mkdir -p "$scratch/$t" "$art"
  dict=()
  d=tests/fuzz/$t.dict
  [ "$t" = inline ] && d=tests/fuzz/resp.dict # the same quoting and framing
  [ -f "$d" ] && dict=(-dict="$d")
  echo "== fuzz $t: ${secs}s =="
  log=$art/fuzz.log
  rc=0
  "$bin" "$scratch/$t" "$seeds" -max_total_time="$secs" -rss_limit_mb=2048 \
    -max_len="$(max_len "$t")" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$art/" "${dict[@]}" >"$log" 2>&1 || rc=$?
  grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb' "$log" || true
  if [ $rc -ne 0 ]; then
    echo "fuzz $t FAILED (exit $rc); the input is in $art/, the report in $log:"
    grep -v '^#\|^INFO' "$log" | tail -40
    failed+=("$t")
  fi
  if [ -n "${FUZZ_KEEP:-}" ]; then
    mkdir -p "$FUZZ_KEEP/$t"
    cp -r "$scratch/$t/." "$FUZZ_KEEP/$t/"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]}"
  exit 1
fi
echo "fuzz: ${targets[*]}: no finding in ${secs}s each"
