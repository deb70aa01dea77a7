#!/usr/bin/env bash
# Broker instructions per send, counted by valgrind's callgrind (issue 16). Deterministic where
# CPU time on a shared 2-core VM is not: two builds compared this way differ by what their code
# does, not by what the machine did meanwhile. User-space instructions only (the kernel's share,
# system calls and copies, is not counted), all broker threads.
#
# Usage: bench/e2e/instructions.sh BUILD_DIR [--count N] [--size BYTES] [--threads T] [--window W]
#                                  [--keep DIR]
# Starts BUILD_DIR/apps/mqbroker/mqbroker (ASYNC_MASTER, ASYNC_FLUSH, no name server, ephemeral
# ports, temp dir) under callgrind, warms it up with N sends of mqbench -b, zeroes the counters,
# sends N more, dumps, prints "instructions per send: X" and the 25 functions with the largest
# self cost per send. Default N 20000, 1 KiB, 4 threads x window 64 (load (a) of run.sh). Every
# process it started is stopped on exit. Needs valgrind and python3.
set -euo pipefail
BUILD=${1:?usage: bench/e2e/instructions.sh BUILD_DIR [--count N] [--size B] [--threads T] [--window W] [--keep DIR]}
shift
COUNT=20000 SIZE=1024 THREADS=4 WINDOW=64 KEEP=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --count) COUNT=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --window) WINDOW=$2; shift 2 ;;
        --keep) KEEP=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
BROKER=$BUILD/apps/mqbroker/mqbroker
BENCH=$BUILD/apps/mqbench/mqbench
for b in "$BROKER" "$BENCH"; do
    [[ -x $b ]] || { echo "missing $b (build mqbroker and mqbench)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/comet-instr.XXXXXX)
VG_PID=""
cleanup() {
    if [[ -n $VG_PID ]] && kill -0 "$VG_PID" 2>/dev/null; then
        kill "$VG_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$VG_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$VG_PID" 2>/dev/null || true
    fi
    if [[ -n $KEEP ]]; then
        mkdir -p "$KEEP" && cp "$WORK"/cg.* "$WORK"/broker.log "$KEEP"/ 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
read -r PORT HA_PORT <<<"$(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')"
cat >"$WORK/broker.conf" <<CONF
brokerClusterName=InstrCluster
brokerName=instr
brokerIP1=127.0.0.1
listenHost=127.0.0.1
brokerId=0
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
listenPort=$PORT
haListenPort=$HA_PORT
storePathRootDir=$WORK/store
logDir=$WORK/logs
CONF
valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" "$BROKER" -c "$WORK/broker.conf" \
    >"$WORK/broker.log" 2>&1 &
VG_PID=$!
send() {
    "$BENCH" producer -b "127.0.0.1:$PORT" -t InstrTopic -s "$SIZE" --threads "$THREADS" \
        --window "$WINDOW" --count "$COUNT" --send-timeout 60000 >"$WORK/bench.log" 2>&1
}
ok=0
for _ in $(seq 1 60); do
    if send; then ok=1; break; fi  # the first success is the warm-up (topic auto-created)
    kill -0 "$VG_PID" 2>/dev/null || break
    sleep 1
done
[[ $ok -eq 1 ]] || { tail -n 20 "$WORK/broker.log" "$WORK/bench.log" >&2; exit 3; }
callgrind_control -z "$VG_PID" >/dev/null
send || { tail -n 20 "$WORK/bench.log" >&2; exit 1; }
callgrind_control -d "$VG_PID" >/dev/null
sleep 1
DUMP=$(ls -t "$WORK"/cg.*.* 2>/dev/null | head -n 1)
[[ -n $DUMP ]] || { echo "no callgrind dump" >&2; exit 3; }
python3 - "$DUMP" "$COUNT" <<'PY'
import collections, re, sys
path, count = sys.argv[1], int(sys.argv[2])
names, cost, fn, skip = {}, collections.Counter(), None, False
for line in open(path):
    line = line.rstrip("\n")
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "fn":
            fn = names.get(m.group(2), m.group(2))
        continue
    if line.startswith("calls="):
        skip = True  # the next cost line is the call's inclusive cost
        continue
    if line[:1].isdigit() or line[:1] in "+-*":
        parts = line.split()
        if len(parts) >= 2:
            if skip:
                skip = False
                continue
            cost[fn] += int(parts[1])
total = sum(cost.values())
print(f"instructions per send: {total / count:.0f}  ({total} over {count} sends)")
for name, c in cost.most_common(25):
    short = re.sub(r"\(.*", "", name.replace("(anonymous namespace)", "{anon}"))
    print(f"  {c / count:8.0f}  {100 * c / total:5.1f}%  {short[:110]}")
PY
