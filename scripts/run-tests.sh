#!/usr/bin/env bash
# Runs the whole suite: every ctest test of the release build, the unit tests under ASan+UBSan,
# and each libFuzzer target for a bounded time. Exits non-zero on the first failing stage.
set -euo pipefail
BUILD_DIR=${1:-build/release}
SAN_DIR=${2:-build/sanitize}
FUZZ_SECONDS=${3:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
JOBS=$(nproc)

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
# Number of tests ctest ran in its last run (from "100% tests passed, 0 tests failed out of N").
ran() { sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$LOG" | tail -1; }

echo "== release build: all tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" | tee "$LOG"
release_count=$(ran)

echo "== sanitizer build (ASan+UBSan): unit tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$SAN_DIR" --output-on-failure -j "$JOBS" -L unit | tee "$LOG"
sanitize_count=$(ran)
fuzz_count=0

if [[ "$FUZZ_SECONDS" != "0" ]]; then
  echo "== fuzzing (${FUZZ_SECONDS}s per target)"
  make --no-print-directory build-fuzz
  scripts/run-fuzz.sh build/fuzz "$FUZZ_SECONDS"
  fuzz_count=1
fi
echo "== all test stages passed"
echo "$((release_count + sanitize_count + fuzz_count)) passed, 0 failed"
