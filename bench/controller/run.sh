#!/usr/bin/env bash
# Controller mode (issue 13): throughput with allAckInSyncStateSet on and off as ratios to a
# single master measured in the SAME run, and the failover time distribution of 10 master kills.
#   single   mqnamesrv + one mqbroker, ASYNC_MASTER + ASYNC_FLUSH
#   allack   mqnamesrv + 3 mqcontroller + 3 controller-mode brokers, allAckInSyncStateSet=true
#            (a put is acknowledged once every SyncStateSet member holds it)
#   oneack   the same group with allAckInSyncStateSet=false (inSyncReplicas=1: the master alone)
# Loads: "4x64" (4 threads, window 64) and "1x1", 1 KiB bodies, mqbench producer through the
# name server. Failover: it_controller_mode's ten-kill test (Comet's C++ client, synchronous
# sends, Comet's default timings) prints the write gap of every kill; this script collects them.
# Usage: bench/controller/run.sh BUILD_DIR [--duration SEC] [--no-failover]
# Builds nothing; every process it starts is stopped on exit. Needs python3 (free ports).
set -euo pipefail
BUILD=${1:?usage: bench/controller/run.sh BUILD_DIR [--duration SEC] [--no-failover]}
shift
DURATION=10
FAILOVER=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --duration) DURATION=$2; shift 2 ;;
        --no-failover) FAILOVER=0; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
NS=$BUILD/apps/mqnamesrv/mqnamesrv
BR=$BUILD/apps/mqbroker/mqbroker
CT=$BUILD/apps/mqcontroller/mqcontroller
MB=$BUILD/apps/mqbench/mqbench
for b in "$NS" "$BR" "$CT" "$MB"; do [[ -x $b ]] || { echo "missing $b" >&2; exit 2; }; done
TMP=$(mktemp -d /tmp/comet_bench_controller.XXXXXX)
PIDS=()
stop_all() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PIDS=()
}
cleanup() { stop_all; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 200); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.05; done; return 1; }
start_ns() {
    NSP=$(port)
    "$NS" --listenPort="$NSP" --kvConfigPath="$TMP/$1-kv.json" --logDir="$TMP/logs" > "$TMP/$1-ns.log" 2>&1 &
    PIDS+=($!)
    wait_port "$NSP"
}
run() {  # LABEL THREADS WINDOW -> "tps p50 p99 failed"
    "$MB" producer -n "127.0.0.1:$NSP" -t BenchCtl --threads "$2" --window "$3" -s 1024 \
        --duration "$DURATION" --json 2> "$TMP/$1.err" | tail -1 |
        python3 -c 'import json,sys;d=json.loads(sys.stdin.read());print(d.get("tps",0),d.get("p50_ms",0),d.get("p99_ms",0),d.get("failed",0))'
}
declare -A RES
measure() {
    "$MB" producer -n "127.0.0.1:$NSP" -t BenchCtl --threads 1 --window 1 -s 1024 --count 200 > /dev/null 2>&1 || true
    RES[$1-4x64]=$(run "$1-4x64" 4 64)
    RES[$1-1x1]=$(run "$1-1x1" 1 1)
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
start_ns single
P=$(port)
"$BR" -n "127.0.0.1:$NSP" --brokerName=bench-s --listenPort="$P" --listenHost=127.0.0.1 \
    --brokerIP1=127.0.0.1 --haListenPort="$(port)" --storePathRootDir="$TMP/single" --logDir="$TMP/logs" \
    > "$TMP/single.log" 2>&1 &
PIDS+=($!)
wait_port "$P"; sleep 1
measure single
stop_all
start_group() {  # LABEL ALLACK
    local label=$1 allack=$2
    start_ns "$label"
    local cp=($(port) $(port) $(port)) bp=($(port) $(port) $(port))
    local peers="n0-127.0.0.1:${cp[0]};n1-127.0.0.1:${cp[1]};n2-127.0.0.1:${cp[2]}"
    local addrs="127.0.0.1:${cp[0]};127.0.0.1:${cp[1]};127.0.0.1:${cp[2]}"
    for i in 0 1 2; do
        "$CT" --controllerDLegerGroup="$label" --controllerDLegerPeers="$peers" \
            --controllerDLegerSelfId=n$i --controllerStorePath="$TMP/$label-c$i" \
            --logDir="$TMP/logs" > "$TMP/$label-c$i.log" 2>&1 &
        PIDS+=($!)
    done
    for i in 0 1 2; do wait_port "${cp[$i]}"; done
    for i in 0 1 2; do
        "$BR" -n "127.0.0.1:$NSP" --brokerName="bench-$label" --brokerId=-1 --brokerRole=SLAVE \
            --listenPort="${bp[$i]}" --listenHost=127.0.0.1 --brokerIP1=127.0.0.1 \
            --haListenPort="$(port)" --storePathRootDir="$TMP/$label$i" --logDir="$TMP/logs" \
            --enableControllerMode=true --controllerAddr="$addrs" \
            --allAckInSyncStateSet="$allack" > "$TMP/$label$i.log" 2>&1 &
        PIDS+=($!)
    done
    for i in 0 1 2; do wait_port "${bp[$i]}"; done
    sleep 4  # election, SyncStateSet expansion, registration
}
start_group allack true
measure allack
stop_all
start_group oneack false
measure oneack
stop_all
printf '| load | target | msgs/s | ratio to single | p50 / p99 ms |\n|---|---|---:|---:|---|\n'
for l in 4x64 1x1; do
    read -r st sp50 sp99 sf <<< "${RES[single-$l]}"
    for t in single allack oneack; do
        read -r tt tp50 tp99 tf <<< "${RES[$t-$l]}"
        ratio=$(python3 -c "print(f'{float($tt)/max(float($st),1):.2f}')")
        printf '| %s | %s | %.0f | %s | %s / %s |\n' "$l" "$t" "$tt" "$ratio" "$tp50" "$tp99"
        if [[ $tf != 0 ]]; then echo "($l $t: $tf failed sends)"; fi
    done
done
if [[ $FAILOVER == 1 ]]; then
    IT=$BUILD/tests/it/it_controller_mode
    [[ -x $IT ]] || { echo "missing $IT (failover part)" >&2; exit 2; }
    echo
    echo "failover (10 master kills under a synchronous producer, Comet's default timings):"
    "$IT" --gtest_filter='*TenMasterKills*' 2>&1 | grep -E '^controller-mode|^\[  (PASSED|FAILED)' || true
fi
