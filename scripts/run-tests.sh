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

echo "== release build: all tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"

echo "== sanitizer build (ASan+UBSan): unit tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$SAN_DIR" --output-on-failure -j "$JOBS" -L unit

if [[ "$FUZZ_SECONDS" != "0" ]]; then
  echo "== fuzzing (${FUZZ_SECONDS}s per target)"
  make --no-print-directory build-fuzz
  scripts/run-fuzz.sh build/fuzz "$FUZZ_SECONDS"
fi
echo "== all test stages passed"
