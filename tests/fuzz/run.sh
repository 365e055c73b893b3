#!/usr/bin/env bash
# Builds the libFuzzer targets of the input layer with clang (ASan + UBSan, BIRKHOFF_FUZZ=ON)
# and runs each one for SECONDS on its seed corpus in tests/fuzz/corpus/<target>.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     default: 60 seconds, all targets
#
# Targets: npy npz png graph_dir. FUZZ_PARALLEL targets (default 2, one per core of the CI
# machine) run at a time, so the four take about 2 x SECONDS. The seed corpus is read, never
# written: new inputs go to a scratch folder. Any crash, leak, sanitizer report, timeout (10 s
# per input) or allocation above the limits below stops that target; the failing input is
# saved as build/fuzz/artifacts/<target>/crash-* (or leak-*, timeout-*, oom-*) and the script
# exits 1 after the remaining targets ran. JOBS (default 2) is the build parallelism.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=(npy npz png graph_dir); fi
BUILD=build/fuzz

CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S . -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBIRKHOFF_FUZZ=ON -DBIRKHOFF_BUILD_CLI=OFF \
  -DBIRKHOFF_BUILD_TESTS=OFF -DBIRKHOFF_BUILD_BENCH=OFF -DBIRKHOFF_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build "$BUILD" -j "${JOBS:-2}" --target "${TARGETS[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# Runs one target; its exit status goes to artifacts/<target>/status (0 = no finding).
fuzz_target() {
  local target=$1 scratch artifacts="$BUILD/artifacts/$1"
  scratch=$(mktemp -d)
  mkdir -p "$artifacts"
  rm -f "$artifacts/status"
  # A seed of a few KB may legitimately expand ~1000-fold (deflate), and a 1-bit PNG 24-fold
  # again into RGB: 512 MB per allocation, 2 GB in all.
  local rc=0
  "$BUILD/tests/fuzz/fuzz_$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$scratch" "tests/fuzz/corpus/$target" \
    >"$artifacts/log.txt" 2>&1 || rc=$?
  rm -rf "$scratch"
  echo "$rc" >"$artifacts/status"
}

echo "== fuzzing ${TARGETS[*]}: ${SECONDS_PER_TARGET} s each, ${FUZZ_PARALLEL:-2} at a time"
running=0
for target in "${TARGETS[@]}"; do
  if [ "$running" -ge "${FUZZ_PARALLEL:-2}" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_target "$target" &
  running=$((running + 1))
done
wait

status=0
for target in "${TARGETS[@]}"; do
  artifacts="$BUILD/artifacts/$target"
  log="$artifacts/log.txt"
  rc=$(cat "$artifacts/status" 2>/dev/null || echo missing)
  echo "== fuzz_$target: ${SECONDS_PER_TARGET} s on tests/fuzz/corpus/$target"
  if [ "$rc" = 0 ]; then
    grep -E "^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true
  else
    tail -n 60 "$log" >&2
    echo "== fuzz_$target FAILED (exit status $rc; the input is saved in $artifacts)" >&2
    status=1
  fi
done
exit $status
