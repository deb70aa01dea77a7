#!/usr/bin/env bash
# DLedger throughput and latency (issue 12 targets), against a single master in the SAME run:
#   single   mqnamesrv + one mqbroker, ASYNC_MASTER + ASYNC_FLUSH
#   dledger  mqnamesrv + a 3-peer DLedger group (every ack after fsync on a majority)
#   relaxed  the same group with dLegerSyncBeforeAck=false (acks from the page cache)
# Loads: "4x64" (4 threads, window 64) and "1x1" (1 thread, window 1), 1 KiB bodies, mqbench
# producer through the name server. Prints msgs/s, p50/p99, the ratio dledger/single and the
# brokers' CPU per acknowledged message (utime+stime of every broker process of the target over
# the timed run, /proc/PID/stat; for a group the sum over its three peers): the figure that stays
# comparable when the machine is shared.
# --direct: mqbench sends straight to the master / leader (-b, its pre-encoded frame path, 4
# queues) instead of through the name server and the client library: less client CPU on a
# 2-core machine shared with three peers, so the figures say more about the brokers.
# --variant LABEL "FLAGS": one more durable group, started with these extra broker flags (for
# A/B of a DLedger key in the same run), e.g. --variant if1 "--dLegerMaxInflightAppends=1";
# repeatable.
# --segment BYTES: mappedFileSizeCommitLog of every broker (default RocketMQ's 1 GiB). With
# commitLogZeroFill (decision 035) a store's first segment is created inline without zeros; the
# ones after it are zero-filled in the background, so a run shorter than one segment measures
# only the first kind (conf/dledger uses 128 MiB).
# The stores live under $TMPDIR (default /tmp): TMPDIR=/dev/shm puts every target's store on
# tmpfs, which takes the block device (its write bandwidth and flush latency) out of the run.
# --fill-page-cache: before each target, fill memory with clean page cache
# (bench/env/fill_page_cache.sh, removed on exit), a broker host's steady state: new pages then
# come from reclaim instead of free memory that a VM with free page reporting gave back to its
# host (a first touch of 6-10 us per page here, paid once per copy: three times by a group).
# Usage: bench/dledger/run.sh BUILD_DIR [--duration SEC] [--direct] [--segment BYTES]
#        [--fill-page-cache] [--variant LABEL "FLAGS"]...
# Builds nothing; every process it starts is stopped on exit. Needs python3 (free ports).
set -euo pipefail
BUILD=${1:?usage: bench/dledger/run.sh BUILD_DIR [--duration SEC] [--direct]}
shift
DURATION=10
DIRECT=0
FILL=0
SEGMENT_FLAG=()
VARIANTS=()
declare -A VARIANT_FLAGS
while [[ $# -gt 0 ]]; do
    case $1 in
        --duration) DURATION=$2; shift 2 ;;
        --direct) DIRECT=1; shift ;;
        --fill-page-cache) FILL=1; shift ;;
        --segment) SEGMENT_FLAG=(--mappedFileSizeCommitLog="$2"); shift 2 ;;
        --variant) VARIANTS+=("$2"); VARIANT_FLAGS[$2]=$3; shift 3 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=bench/lib/proc.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"  # comet_apps, master_addr (this script keeps its other helpers)
comet_apps "$BUILD"
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/comet_bench_dledger.XXXXXX)
PIDS=()
BROKERS=()  # broker pids of the target being measured
CLK_TCK=$(getconf CLK_TCK)
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    # KEEP_LOGS=DIR: keep the brokers' logs and mqbench's output of the run there.
    if [[ -n ${KEEP_LOGS:-} ]]; then
        mkdir -p "$KEEP_LOGS" && cp -r "$TMP"/*.log "$TMP"/*.err "$TMP"/*.json "$TMP"/logs "$KEEP_LOGS"/ 2>/dev/null || true
    fi
    rm -rf "$TMP"
    if [[ $FILL == 1 ]]; then "$ENV_DIR/fill_page_cache.sh" --remove "$FILL_DIR"; fi
}
trap cleanup EXIT INT TERM
ENV_DIR="$(dirname "${BASH_SOURCE[0]}")/../env"
FILL_DIR=/var/tmp  # on a disk file system (a tmpfs reads holes without caching them)
# settle: before a target starts, the page cache refilled (--fill-page-cache; the previous
# target's store was deleted and its pages freed).
settle() { if [[ $FILL == 1 ]]; then "$ENV_DIR/fill_page_cache.sh" "$FILL_DIR" > /dev/null; fi; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 200); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.05; done; return 1; }
stop_all() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PIDS=()
    BROKERS=()
}
# brokers_cpu : user+system CPU ticks of every broker of the current target.
brokers_cpu() {
    local t=0 p
    for p in "${BROKERS[@]}"; do
        t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}
start_ns() {
    NSP=$(port)
    "$NS" --listenPort="$NSP" --kvConfigPath="$TMP/$1-kv.json" --logDir="$TMP/logs" > "$TMP/$1-ns.log" 2>&1 &
    PIDS+=($!)
    wait_port "$NSP"
}
# The block device under $TMP and its completed writes and cache flushes (/proc/diskstats
# fields 8 and 19; the flush count needs Linux >= 5.5, else 0): device work per message does
# not depend on how busy the CPUs are.
DEV=$(basename "$(df --output=source "$TMP" | tail -1)")
disk_io() { awk -v d="$DEV" '$3 == d { print $8, ($19 == "" ? 0 : $19) }' /proc/diskstats; }
# The machine's idle and I/O-wait jiffies and its total (/proc/stat "cpu" line): a run whose
# cores sit idle is bound by latency (syncs, round trips), not by CPU.
idle_total() { awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, t }' /proc/stat; }
# run LABEL THREADS WINDOW -> "tps p50 p99 failed cpu_us_per_msg writes/1k flushes/1k idle%"
run() {
    local c0 c1 d0 d1 i0 i1
    c0=$(brokers_cpu)
    d0=$(disk_io)
    i0=$(idle_total)
    "$MB" producer "${TARGET[@]}" -t BenchDl --threads "$2" --window "$3" -s 1024 \
        --duration "$DURATION" --json 2> "$TMP/$1.err" | tail -1 > "$TMP/$1.json"
    c1=$(brokers_cpu)
    d1=$(disk_io)
    i1=$(idle_total)
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
ok=max(d.get("ok",0),1)
cpu=(int(sys.argv[2])-int(sys.argv[3]))/int(sys.argv[4])*1e6/ok
w0,f0=map(int,(sys.argv[5] or "0 0").split()); w1,f1=map(int,(sys.argv[6] or "0 0").split())
i0,t0=map(int,sys.argv[7].split()); i1,t1=map(int,sys.argv[8].split())
print(d.get("tps",0),d.get("p50_ms",0),d.get("p99_ms",0),d.get("failed",0),f"{cpu:.1f}",
      f"{(w1-w0)*1000/ok:.0f}",f"{(f1-f0)*1000/ok:.0f}",f"{100*(i1-i0)/max(t1-t0,1):.0f}")' \
        "$TMP/$1.json" "$c1" "$c0" "$CLK_TCK" "$d0" "$d1" "$i0" "$i1"
}
declare -A RES
measure() {  # label
    "$MB" producer -n "127.0.0.1:$NSP" -t BenchDl --threads 1 --window 1 -s 1024 --count 200 > /dev/null 2>&1 || true
    TARGET=(-n "127.0.0.1:$NSP")
    if [[ $DIRECT == 1 ]]; then
        # The master (brokerId 0) of the cluster: the single broker or the group's leader.
        local master
        master=$(master_addr "$NSP") || { echo "no master registered within 10 s" >&2; exit 1; }
        TARGET=(-b "$master" --queues 4)
    fi
    RES[$1-4x64]=$(run "$1-4x64" 4 64)
    RES[$1-1x1]=$(run "$1-1x1" 1 1)
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); client: $([[ $DIRECT == 1 ]] && echo 'direct (-b)' || echo 'name server (-n)')"
# single
settle
start_ns single
P=$(port)
"$BR" -n "127.0.0.1:$NSP" --brokerName=bench-s --listenPort="$P" --listenHost=127.0.0.1 \
    --brokerIP1=127.0.0.1 --haListenPort="$(port)" --storePathRootDir="$TMP/single" --logDir="$TMP/logs" \
    "${SEGMENT_FLAG[@]}" > "$TMP/single.log" 2>&1 &
PIDS+=($!)
BROKERS+=($!)
wait_port "$P"; sleep 1
measure single
stop_all
# start_group LABEL [EXTRA_FLAG...]: a name server and a 3-peer DLedger group
start_group() {
    local label=$1
    shift
    settle
    start_ns "$label"
    local dp=($(port) $(port) $(port)) bp=($(port) $(port) $(port))
    local peers="n0-127.0.0.1:${dp[0]};n1-127.0.0.1:${dp[1]};n2-127.0.0.1:${dp[2]}"
    for i in 0 1 2; do
        "$BR" -n "127.0.0.1:$NSP" --brokerName="bench-$label" --listenPort="${bp[$i]}" \
            --listenHost=127.0.0.1 --brokerIP1=127.0.0.1 --storePathRootDir="$TMP/$label$i" \
            --logDir="$TMP/logs" --enableDLegerCommitLog=true --dLegerGroup="$label" \
            --dLegerPeers="$peers" --dLegerSelfId=n$i "${SEGMENT_FLAG[@]}" "$@" \
            > "$TMP/$label$i.log" 2>&1 &
        PIDS+=($!)
        BROKERS+=($!)
    done
    for i in 0 1 2; do wait_port "${bp[$i]}"; done
    sleep 2
}
start_group dledger
measure dledger
stop_all
start_group relaxed --dLegerSyncBeforeAck=false
measure relaxed
stop_all
for v in "${VARIANTS[@]}"; do
    # shellcheck disable=SC2086 # the flags are words
    start_group "$v" ${VARIANT_FLAGS[$v]}
    measure "$v"
    stop_all
done
printf '| load | target | msgs/s | ratio to single | p50 / p99 ms | brokers CPU µs/msg | %s writes / flushes per 1k msgs | cores idle %% |\n|---|---|---:|---:|---|---:|---:|---:|\n' "$DEV"
for l in 4x64 1x1; do
    read -r st _ _ _ _ _ _ _ <<< "${RES[single-$l]}"
    for t in single dledger relaxed "${VARIANTS[@]}"; do
        read -r tt tp50 tp99 tf tcpu tw tfl tidle <<< "${RES[$t-$l]}"
        ratio=$(python3 -c "print(f'{float($tt)/max(float($st),1):.2f}')")
        printf '| %s | %s | %.0f | %s | %s / %s | %s | %s / %s | %s |\n' "$l" "$t" "$tt" "$ratio" \
            "$tp50" "$tp99" "$tcpu" "$tw" "$tfl" "$tidle"
        if [[ $tf != 0 ]]; then echo "($l $t: $tf failed sends)"; fi
    done
done
