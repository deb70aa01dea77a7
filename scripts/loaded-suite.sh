#!/usr/bin/env bash
# Runs the release build's whole ctest suite N times in a row while every core is kept busy by a
# CPU burner of our own (one shell loop per core, niced like any other process), the way a
# shared CI machine can be. Every run must pass; prints one line per run and a closing summary.
# Usage: scripts/loaded-suite.sh [BUILD_DIR] [RUNS]
# Each burner stops by itself after MAX_BURN_SECONDS (default 3 h) and is killed on exit.
set -uo pipefail
BUILD_DIR=${1:-build/release}
RUNS=${2:-3}
MAX_BURN_SECONDS=${MAX_BURN_SECONDS:-10800}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CORES=$(nproc)

burners=()
cleanup() {
  for p in "${burners[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
for _ in $(seq "$CORES"); do
  ( end=$((SECONDS + MAX_BURN_SECONDS)); while ((SECONDS < end)); do :; done ) &
  burners+=("$!")
done
echo "loaded-suite: $CORES CPU burners running (pids ${burners[*]})"

pass=0
fail=0
for run in $(seq "$RUNS"); do
  log="$BUILD_DIR/loaded-run-$run.log"
  start=$SECONDS
  if ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$CORES" >"$log" 2>&1; then
    pass=$((pass + 1)); verdict=passed
  else
    fail=$((fail + 1)); verdict=FAILED
  fi
  summary=$(grep -E "tests passed|tests failed out of" "$log" | tail -1)
  echo "loaded run $run: $verdict in $((SECONDS - start)) s: $summary (log: $log)"
  grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted)\)" "$log" || true
done
echo "loaded-suite: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
