#!/usr/bin/env bash
# Runs the given unit-test binaries of a ThreadSanitizer build (make build-tsan); any data race
# report fails the run (halt_on_error), as does a binary that ran no test.
# Usage: scripts/run-tsan.sh build/tsan unit_store unit_ha ...
set -euo pipefail
DIR=${1:?build dir}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# Fork-based crash tests kill children mid-put by design; they test recovery, not races, and
# TSan's fork handling makes them slow: they run in the ASan and release stages instead.
FILTER='-*Crash*'
pass=0
fail=0
for t in "$@"; do
  bin=$(find "$DIR/tests" -type f -name "$t" -perm -u+x | head -1)
  if [[ -z "$bin" ]]; then
    echo "run-tsan: $t not built in $DIR" >&2
    exit 1
  fi
  echo "== tsan: $t"
  if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$bin" --gtest_filter="$FILTER" \
      --gtest_brief=1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
  fi
done
echo "tsan: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
