#!/usr/bin/env bash
# Where a 3-peer DLedger group spends its CPU, per thread: starts a name server and a durable
# group, drives it with mqbench, and prints each thread's CPU (utime+stime from
# /proc/PID/task/*/stat) and context switches (voluntary + nonvoluntary) per acknowledged
# message over the timed run, by role (L = leader, F = both followers summed) and thread name,
# and the leader's mean wait from a put's append to its commit (GET_BROKER_RUNTIME_INFO).
# Usage: bench/dledger/threads.sh BUILD_DIR [--duration SEC] [--via-ns] [--perf FILE]
#                                 [--load "MQBENCH LOAD FLAGS"] [-- EXTRA BROKER FLAGS...]
#   --via-ns   mqbench through the name server and the client library (default: -b to the leader)
#   --perf F   also `perf record -g` the three peers into F while the load runs
#   --load     default "--threads 4 --window 64"
# The stores live under $TMPDIR (default /tmp; /dev/shm takes the block device out).
# Builds nothing; every process it starts is stopped on exit (bench/lib/proc.sh). Needs python3.
set -euo pipefail
BUILD=${1:?usage: bench/dledger/threads.sh BUILD_DIR [--duration SEC] [--via-ns] [--perf FILE] [--load FLAGS] [-- BROKER FLAGS]}
shift
DURATION=8
VIA_NS=0
PERF_OUT=""
LOAD="--threads 4 --window 64"
EXTRA=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --duration) DURATION=$2; shift 2 ;;
        --via-ns) VIA_NS=1; shift ;;
        --perf) PERF_OUT=$2; shift 2 ;;
        --load) LOAD=$2; shift 2 ;;
        --) shift; EXTRA=("$@"); break ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=bench/lib/proc.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"
comet_apps "$BUILD"
WORK=$(mktemp -d "${TMPDIR:-/tmp}"/comet_bench_dlthreads.XXXXXX)
PIDS=()
cleanup() {
    stop_pids "${PIDS[@]+"${PIDS[@]}"}"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

read -r NSP D0 D1 D2 B0 B1 B2 <<< "$(free_ports 7)"
dp=("$D0" "$D1" "$D2")
bp=("$B0" "$B1" "$B2")
start "$WORK/ns.log" "$NS" --listenPort="$NSP" --kvConfigPath="$WORK/kv.json" --logDir="$WORK/logs"
wait_port mqnamesrv "${PIDS[-1]}" "$NSP" "$WORK/ns.log"
PEERS="n0-127.0.0.1:${dp[0]};n1-127.0.0.1:${dp[1]};n2-127.0.0.1:${dp[2]}"
BROKERS=()
for i in 0 1 2; do
    start "$WORK/peer$i.log" "$BR" -n "127.0.0.1:$NSP" --brokerName=bench-threads \
        --listenPort="${bp[$i]}" --listenHost=127.0.0.1 --brokerIP1=127.0.0.1 \
        --storePathRootDir="$WORK/peer$i" --logDir="$WORK/logs" --enableDLegerCommitLog=true \
        --dLegerGroup=threads --dLegerPeers="$PEERS" --dLegerSelfId=n$i "${EXTRA[@]}"
    BROKERS+=("${PIDS[-1]}")
done
for i in 0 1 2; do wait_port "peer n$i" "${BROKERS[$i]}" "${bp[$i]}" "$WORK/peer$i.log"; done
sleep 2
"$MB" producer -n "127.0.0.1:$NSP" -t BenchDl --threads 1 --window 1 -s 1024 --count 200 > /dev/null 2>&1 || true
MASTER=$(master_addr "$NSP") || die "no leader registered within 10 s"
LEADER_PID=""
for i in 0 1 2; do [[ "127.0.0.1:${bp[$i]}" == "$MASTER" ]] && LEADER_PID=${BROKERS[$i]}; done
TARGET=(-b "$MASTER" --queues 4)
[[ $VIA_NS == 1 ]] && TARGET=(-n "127.0.0.1:$NSP")

# commit_waits: the leader's puts answered by a commit and the sum of their waits, append to
# commit (GET_BROKER_RUNTIME_INFO dledgerCommitWaits / dledgerCommitWaitUsTotal).
commit_waits() {
    "$ADMIN" brokerStatus -n "127.0.0.1:$NSP" -b "$MASTER" 2>/dev/null | awk -F': *' '
        $1 ~ /dledgerCommitWaits *$/ { n = $2 } $1 ~ /dledgerCommitWaitUsTotal *$/ { us = $2 }
        END { print n + 0, us + 0 }'
}
read -r W0 U0 <<< "$(commit_waits)"
thread_snapshot "$WORK/before" "${BROKERS[@]}"
PERF_PID=""
if [[ -n $PERF_OUT ]]; then
    perf record -e cpu-clock -F 1999 -g -o "$PERF_OUT" -p "$(IFS=,; echo "${BROKERS[*]}")" \
        -- sleep $((DURATION > 2 ? DURATION - 1 : 1)) > /dev/null 2>&1 &
    PERF_PID=$!
fi
# shellcheck disable=SC2086 # LOAD is a list of flags
"$MB" producer "${TARGET[@]}" -t BenchDl $LOAD -s 1024 --duration "$DURATION" --json \
    2> "$WORK/mqbench.err" | tail -1 > "$WORK/result.json"
thread_snapshot "$WORK/after" "${BROKERS[@]}"
read -r W1 U1 <<< "$(commit_waits)"
[[ -n $PERF_PID ]] && wait "$PERF_PID" || true
grep -h "syncing on the flush thread" "$WORK"/peer*.log 2>/dev/null | head -3 || true
if ((W1 > W0)); then
    # The rest of a send's latency (the client's mean, in-flight / msgs/s, minus this) is spent
    # in the client, on the way in to the append and on the way out of the reply.
    python3 -c 'import sys; n, us = int(sys.argv[1]), int(sys.argv[2]); print(f"leader: {n} puts waited {us / n / 1000:.3f} ms on average from their append to their commit")' \
        "$((W1 - W0))" "$((U1 - U0))"
fi
python3 - "$WORK/before" "$WORK/after" "$WORK/result.json" "$LEADER_PID" "$(getconf CLK_TCK)" <<'PY'
import json, sys
def load(path):
    rows = {}
    for line in open(path):
        pid, tid, ticks, switches, name = line.rstrip("\n").split(" ", 4)
        rows[(pid, tid)] = (name, int(ticks), int(switches))
    return rows
before, after = load(sys.argv[1]), load(sys.argv[2])
result = json.load(open(sys.argv[3]))
ok = max(int(result.get("ok", 0)), 1)
leader, tck = sys.argv[4], int(sys.argv[5])
print(f"msgs/s {result.get('tps')}  acked {ok}  p50 {result.get('p50_ms')} ms  p99 {result.get('p99_ms')} ms")
by = {}
for key, (name, ticks, switches) in after.items():
    _, t0, s0 = before.get(key, (name, 0, 0))
    role = "L" if key[0] == leader else "F"
    acc = by.setdefault((role, name), [0, 0])
    acc[0] += ticks - t0
    acc[1] += switches - s0
total = 0.0
print("| role | thread | CPU µs/msg | ctx sw/msg |\n|---|---|---:|---:|")
for (role, name), (ticks, switches) in sorted(by.items(), key=lambda kv: -kv[1][0]):
    us = ticks / tck * 1e6 / ok
    total += us
    if us >= 0.05 or switches / ok >= 0.01:
        print(f"| {role} | {name} | {us:.2f} | {switches / ok:.3f} |")
print(f"group total {total:.1f} µs per message (L = leader, F = both followers summed)")
PY
