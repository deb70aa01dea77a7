#!/usr/bin/env bash
# Store put benchmark driver (issue 3): runs bench_store's BM_PutAsync REPS times, each run in
# a fresh process after `sync` and a pause (so the kernel's write-back of the previous run's
# bytes does not land in the next one), and prints the median of every figure per
# configuration: puts/s, the write() ceilings measured in the same iteration, their ratios, and
# CPU per message. Medians because this machine is small and shared: single runs swing by
# +-30 %.
#
# Builds nothing. Usage:
#   bench/store/run.sh BUILD_DIR [--reps N] [--filter REGEX] [--dir DIR] [--out FILE]
# BUILD_DIR must hold bench/bench_store (cmake --build BUILD_DIR --target bench_store, Release).
# --filter defaults to 'BM_PutAsync/body:1024' (1 KiB, 1 and 4 threads, both write paths);
# --dir is where the bench writes (default ./comet-bench-store; the store's file system
# matters), removed afterwards. Exit status: 0 ok, 2 usage / missing binary, 3 a run failed.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

BUILD=""
REPS=5
FILTER='BM_PutAsync/body:1024'
DIR="$PWD/comet-bench-store"
OUT=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --reps) REPS="${2:?}"; shift 2 ;;
        --filter) FILTER="${2:?}"; shift 2 ;;
        --dir) DIR="${2:?}"; shift 2 ;;
        --out) OUT="${2:?}"; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run.sh: unknown option $1" >&2; usage ;;
        *) [[ -z "$BUILD" ]] || { echo "run.sh: one BUILD_DIR only" >&2; usage; }
           BUILD="$1"; shift ;;
    esac
done
[[ -n "$BUILD" ]] || { echo "run.sh: BUILD_DIR is required" >&2; usage; }
BIN="$BUILD/bench/bench_store"
[[ -x "$BIN" ]] || { echo "run.sh: $BIN missing (cmake --build $BUILD --target bench_store)" >&2; exit 2; }
[[ "$REPS" =~ ^[0-9]+$ && "$REPS" -gt 0 && "$REPS" -le 50 ]] || { echo "run.sh: bad --reps $REPS" >&2; exit 2; }

TMP="$(mktemp -d)"
cleanup() { rm -rf "$TMP" "$DIR"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "bench_store $FILTER, $REPS runs, dir $DIR, load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((i = 1; i <= REPS; i++)); do
    sync
    sleep 2
    if ! COMET_BENCH_DIR="$DIR" "$BIN" --benchmark_filter="$FILTER" \
        --benchmark_out="$TMP/run$i.json" --benchmark_out_format=json >"$TMP/run$i.log" 2>&1; then
        echo "run.sh: run $i failed; last log lines:" >&2
        tail -5 "$TMP/run$i.log" >&2
        exit 3
    fi
    echo "run $i/$REPS done, load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

python3 - "$TMP" "$REPS" >"$TMP/table.md" <<'PY'
import json, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
runs = {}
for i in range(1, reps + 1):
    for b in json.load(open(f"{tmp}/run{i}.json"))["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"run {i}: {b['name']}: {b.get('error_message')}")
        runs.setdefault(b["name"].split("/iterations")[0], []).append(b)
cols = [("put_msgs_per_s", "puts/s", "{:,.0f}"), ("write4M_msgs_per_s", "write4M/s", "{:,.0f}"),
        ("ratio_vs_write4M", "ratio vs write4M", "{:.2f}"),
        ("ratio_vs_write1rec", "ratio vs write1rec", "{:.2f}"),
        ("cpu_ns_put_writers", "CPU ns/msg writers", "{:.0f}"),
        ("cpu_ns_put_all", "CPU ns/msg all", "{:.0f}"), ("cpu_ns_write4M", "CPU ns/msg write4M", "{:.0f}")]
print("| config | " + " | ".join(c[1] for c in cols) + " | ratio min..max |")
print("|---|" + "---:|" * (len(cols) + 1))
for name, bs in runs.items():
    cells = []
    for key, _, fmt in cols:
        vals = [b[key] for b in bs if key in b]
        cells.append(fmt.format(statistics.median(vals)) if vals else "-")
    r = [b["ratio_vs_write4M"] for b in bs if "ratio_vs_write4M" in b]
    spread = f"{min(r):.2f}..{max(r):.2f}" if r else "-"
    print(f"| {name.replace('BM_PutAsync/', '')} | " + " | ".join(cells) + f" | {spread} |")
print(f"\nmedians of {reps} runs (each run: 3 iterations, ceilings measured in every iteration)")
PY
cat "$TMP/table.md"
if [[ -n "$OUT" ]]; then
    cp "$TMP/table.md" "$OUT"
fi
