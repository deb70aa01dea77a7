#!/usr/bin/env bash
# Runs the whole suite: every ctest test of the release build, the unit tests under ASan+UBSan,
# and each libFuzzer target for a bounded time. Exits non-zero on the first failing stage.
#
# A suite that passes by not running is a failure: every GoogleTest binary writes an XML report
# (GTEST_OUTPUT), and a stage fails when ctest ran no test, when a GoogleTest case was skipped
# under CI (CI=true: the machine has everything a test needs, so a skip hides a broken feature),
# or when a report is missing. Outside CI skipped cases are listed with their reasons.
set -euo pipefail
BUILD_DIR=${1:-build/release}
SAN_DIR=${2:-build/sanitize}
FUZZ_SECONDS=${3:-60}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
JOBS=$(nproc)

LOG=$(mktemp)
XML_ROOT=$(mktemp -d)
trap 'rm -rf "$LOG" "$XML_ROOT"' EXIT
# Number of tests ctest ran in its last run (from "100% tests passed, 0 tests failed out of N").
ran() { sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$LOG" | tail -1; }

# check_stage NAME XML_DIR: counts GoogleTest cases in the stage's reports, lists skipped ones,
# fails under CI when any was skipped. Prints "<cases> <skipped>".
check_stage() {
  python3 - "$1" "$2" "${CI:-}" <<'EOF'
import glob, sys, xml.etree.ElementTree as ET
name, d, ci = sys.argv[1], sys.argv[2], sys.argv[3]
cases = skipped = 0
lines = []
for f in sorted(glob.glob(d + "/*.xml")):
    for tc in ET.parse(f).getroot().iter("testcase"):
        if tc.get("status") == "notrun":
            continue
        cases += 1
        sk = tc.find("skipped")
        if sk is not None or tc.get("result") == "skipped":
            skipped += 1
            why = (sk.get("message") if sk is not None else "") or ""
            lines.append(f"  skipped: {tc.get('classname')}.{tc.get('name')}: {why.strip()}")
for l in lines:
    print(l, file=sys.stderr)
if cases == 0:
    print(f"{name}: no GoogleTest case ran", file=sys.stderr)
    sys.exit(1)
if skipped and ci:
    print(f"{name}: {skipped} GoogleTest case(s) skipped under CI: a skip in CI is a failure",
          file=sys.stderr)
    sys.exit(1)
print(cases, skipped)
EOF
}

need_count() {  # need_count STAGE COUNT
  if [[ -z "$2" || "$2" == "0" ]]; then
    echo "$1: ctest ran no test" >&2
    exit 1
  fi
}

# The house rule (../shared/STYLE.md): a function reads as its algorithm, none past ~100 lines.
echo "== the ten longest functions of src/ and apps/"
scripts/longest-functions.sh --top 10 --max 100

echo "== release build: all tests"
mkdir -p "$XML_ROOT/release"
GTEST_OUTPUT="xml:$XML_ROOT/release/" \
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" | tee "$LOG"
release_count=$(ran)
need_count release "$release_count"
summary=$(check_stage release "$XML_ROOT/release")
read -r release_cases release_skipped <<<"$summary"
echo "release: $release_count ctest tests, $release_cases GoogleTest cases, $release_skipped skipped"

echo "== sanitizer build (ASan+UBSan): unit tests"
mkdir -p "$XML_ROOT/sanitize"
GTEST_OUTPUT="xml:$XML_ROOT/sanitize/" \
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$SAN_DIR" --output-on-failure -j "$JOBS" -L unit | tee "$LOG"
sanitize_count=$(ran)
need_count sanitize "$sanitize_count"
summary=$(check_stage sanitize "$XML_ROOT/sanitize")
read -r san_cases san_skipped <<<"$summary"
echo "sanitize: $sanitize_count ctest tests, $san_cases GoogleTest cases, $san_skipped skipped"
fuzz_count=0

if [[ "$FUZZ_SECONDS" != "0" ]]; then
  echo "== fuzzing (${FUZZ_SECONDS}s per target)"
  make --no-print-directory build-fuzz
  scripts/run-fuzz.sh build/fuzz "$FUZZ_SECONDS"
  fuzz_count=1
fi
echo "== all test stages passed"
echo "$((release_count + sanitize_count + fuzz_count)) passed, 0 failed"
