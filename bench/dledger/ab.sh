#!/usr/bin/env bash
# Two builds of a durable 3-peer DLedger group compared in alternated runs of threads.sh (A, B,
# A, B, ...): on a shared 2-core VM single runs vary by ±30 %, and a change worth 5 % only shows
# as a median over rounds taken in the same minutes. Prints one row per run and, per build, the
# medians of throughput, p50, p99 and group CPU per message, and how many runs had a follower
# fall back to syncing on its flush thread.
# Usage: bench/dledger/ab.sh BUILD_A BUILD_B [--rounds N] [--duration SEC] [-- THREADS.SH FLAGS]
#   default 3 rounds; threads.sh flags default to
#   "--via-ns -- --mappedFileSizeCommitLog=134217728" (the issue's setup, 128 MiB segments).
# A build is a directory holding apps/<tool>/<tool> (a build tree, or a copy of one with the
# binaries under test). Builds nothing; threads.sh stops every process it starts.
set -euo pipefail
A=${1:?usage: bench/dledger/ab.sh BUILD_A BUILD_B [--rounds N] [--duration SEC] [-- FLAGS]}
B=${2:?usage: bench/dledger/ab.sh BUILD_A BUILD_B [--rounds N] [--duration SEC] [-- FLAGS]}
shift 2
ROUNDS=3
DURATION=8
FLAGS=(--via-ns -- --mappedFileSizeCommitLog=134217728)
while [[ $# -gt 0 ]]; do
    case $1 in
        --rounds) ROUNDS=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --) shift; FLAGS=("$@"); break ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
HERE=$(dirname "${BASH_SOURCE[0]}")
OUT=$(mktemp -d /tmp/comet_bench_dlab.XXXXXX)
trap 'rm -rf "$OUT"' EXIT INT TERM

echo "| round | build | msgs/s | p50 ms | p99 ms | group CPU µs/msg | flush-thread fallbacks |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for round in $(seq 1 "$ROUNDS"); do
    for side in A B; do
        build=$A
        [[ $side == B ]] && build=$B
        log_file="$OUT/$side.$round"
        "$HERE/threads.sh" "$build" --duration "$DURATION" "${FLAGS[@]}" > "$log_file" 2>&1 || true
        python3 - "$log_file" "$round" "$side" >> "$OUT/rows" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"msgs/s (\S+)\s+acked \d+\s+p50 (\S+) ms\s+p99 (\S+) ms", text)
g = re.search(r"group total (\S+) µs", text)
falls = text.count("syncing on the flush thread")
if m and g:
    print(sys.argv[2], sys.argv[3], m.group(1), m.group(2), m.group(3), g.group(1), falls)
else:
    print(sys.argv[2], sys.argv[3], "failed", "-", "-", "-", falls)
PY
        tail -1 "$OUT/rows" | awk -v a="$A" -v b="$B" '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, ($2 == "A" ? a : b), $3, $4, $5, $6, $7 }'
    done
done
python3 - "$OUT/rows" "$A" "$B" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print()
print("| build | runs | median msgs/s | median p50 ms | median p99 ms | median group CPU µs/msg | runs with a fallback |")
print("|---|---:|---:|---:|---:|---:|---:|")
for side, name in (("A", sys.argv[2]), ("B", sys.argv[3])):
    ok = [r for r in rows if r[1] == side and r[2] != "failed"]
    if not ok:
        print(f"| {name} | 0 | - | - | - | - | - |")
        continue
    med = lambda i: statistics.median(float(r[i]) for r in ok)
    falls = sum(1 for r in rows if r[1] == side and int(r[6]) > 0)
    print(f"| {name} | {len(ok)} | {med(2):.0f} | {med(3):.3f} | {med(4):.1f} | {med(5):.1f} | {falls} |")
PY
