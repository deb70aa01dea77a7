#!/usr/bin/env bash
# Runs every libFuzzer target in <fuzz build dir>/tests/fuzz for <seconds>, starting from its
# seed corpus in tests/fuzz/corpus/<target>/ (copied, so the checked-in corpus stays small).
set -euo pipefail
FUZZ_DIR=${1:-build/fuzz}
SECONDS_PER=${2:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
found=0
for bin in "$FUZZ_DIR"/tests/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  found=1
  name=$(basename "$bin")
  work=$(mktemp -d)
  if [[ -d "$ROOT/tests/fuzz/corpus/$name" ]]; then
    cp -r "$ROOT/tests/fuzz/corpus/$name/." "$work/"
  fi
  echo "-- $name for ${SECONDS_PER}s"
  "$bin" -max_total_time="$SECONDS_PER" -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>&1 | tail -n 15
  rm -rf "$work"
done
if [[ $found -eq 0 ]]; then
  echo "run-fuzz: no fuzz targets found in $FUZZ_DIR/tests/fuzz" >&2
  exit 1
fi
