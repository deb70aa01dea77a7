#!/usr/bin/env bash
# End-to-end send benchmark (issue 16): what one send costs the server, against a floor.
# In ONE run, mqbench producer (-b: SEND_MESSAGE_V2 straight to the server, no name server)
# drives each load against
#   broker  mqnamesrv + one mqbroker, ASYNC_MASTER, ASYNC_FLUSH (ephemeral ports, temp dir)
#   floor   bench/e2e/floor_server: epoll, answers every frame with a canned SEND_OK (no store)
#   store   the same with --store: the frames of each read appended to a file with one pwrite()
#           before the replies (what persisting the bytes in the page cache costs, no broker)
# loads (--loads):
#   a  4 threads x window 64, 1 connection (throughput)
#   b  1 thread x window 1 (latency)
#   c  16 threads x window 16, 16 connections (many connections)
# For each: msgs/s, p50/p99, server CPU us/msg (utime+stime of the server process over the
# timed run, /proc/PID/stat), its ratio to the floor's, server context switches per message
# (voluntary + nonvoluntary over /proc/PID/task/*/status), and mqbench's own CPU us/msg.
# Prints a markdown table (and writes it to --out FILE when given).
#
# Builds nothing. Usage:
#   bench/e2e/run.sh BUILD_DIR [--duration SEC] [--size BYTES] [--loads a,b,c]
#                    [--targets broker,floor,store] [--floor-threads N] [--out FILE] [--keep]
#                    [--broker-conf KEY=VALUE]...   (added to the broker's config)
# BUILD_DIR must hold apps/{mqnamesrv,mqbroker,mqbench} and bench/floor_server, Release:
#   cmake --build BUILD_DIR -j2 --target mqnamesrv mqbroker mqbench floor_server
# Every process this script started is stopped on exit, error, Ctrl-C or SIGTERM (TERM, then
# KILL after 10 s); the temp dir is removed unless --keep. Exit status: 0 when every
# measurement ran with zero failed sends, 1 when some failed (table still printed), 2 on usage
# or missing binaries, 3 when a setup step failed (log tail printed), 130/143 on signals.
# Needs python3 (free ports). The machine's load average is printed: measure when low.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

BUILD=""
DURATION=10
SIZE=1024
LOADS="a,b,c"
TARGETS="broker,floor"
FLOOR_THREADS="$(nproc)"
OUT=""
KEEP=0
EXTRA_CONF=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --duration) DURATION="${2:?}"; shift 2 ;;
        --size) SIZE="${2:?}"; shift 2 ;;
        --loads) LOADS="${2:?}"; shift 2 ;;
        --targets) TARGETS="${2:?}"; shift 2 ;;
        --floor-threads) FLOOR_THREADS="${2:?}"; shift 2 ;;
        --out) OUT="${2:?}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --broker-conf) EXTRA_CONF+=("${2:?}"); shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run.sh: unknown option $1" >&2; usage ;;
        *) [[ -z "$BUILD" ]] || { echo "run.sh: one BUILD_DIR only" >&2; usage; }
           BUILD="$1"; shift ;;
    esac
done
[[ -n "$BUILD" ]] || { echo "run.sh: BUILD_DIR is required" >&2; usage; }
[[ -d "$BUILD" ]] || { echo "run.sh: $BUILD is not a directory" >&2; exit 2; }
BUILD="$(cd "$BUILD" && pwd)"
for v in DURATION SIZE FLOOR_THREADS; do
    [[ "${!v}" =~ ^[0-9]+$ && "${!v}" -gt 0 ]] || { echo "run.sh: bad ${v,,}: ${!v}" >&2; exit 2; }
done
[[ "$LOADS" =~ ^[abc](,[abc])*$ ]] || { echo "run.sh: bad --loads $LOADS" >&2; exit 2; }
[[ "$TARGETS" =~ ^(broker|floor|store)(,(broker|floor|store))*$ ]] ||
    { echo "run.sh: bad --targets $TARGETS" >&2; exit 2; }

NAMESRV_BIN="$BUILD/apps/mqnamesrv/mqnamesrv"
BROKER_BIN="$BUILD/apps/mqbroker/mqbroker"
BENCH_BIN="$BUILD/apps/mqbench/mqbench"
FLOOR_BIN="$BUILD/bench/floor_server"
missing=()
for b in "$NAMESRV_BIN" "$BROKER_BIN" "$BENCH_BIN" "$FLOOR_BIN"; do
    [[ -x "$b" ]] || missing+=("$b")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "run.sh: missing binaries:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    echo "build them: cmake --build $BUILD -j2 --target mqnamesrv mqbroker mqbench floor_server" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "run.sh: python3 is required (ports)" >&2; exit 2; }
if grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "run.sh: WARNING: $BUILD is a Debug build; figures will be far below Release" >&2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/comet-e2ebench.XXXXXX")"
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
PIDS=()  # every process started and not yet stopped
STATUS=0

# log, stop_pids, die, free_ports, start, forget, wait_port, cpu_ticks, ...
# shellcheck source=bench/lib/proc.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"

install_cleanup broker/store

CLK_TCK="$(getconf CLK_TCK)"
# load_args ID : sets LOAD_LABEL and LOAD_ARGS (mqbench options) for load ID.
load_args() {
    case "$1" in
        a) LOAD_LABEL="4 thr x win 64, 1 conn"; LOAD_ARGS=(--threads 4 --window 64 --connections 1) ;;
        b) LOAD_LABEL="1 thr x win 1, 1 conn"; LOAD_ARGS=(--threads 1 --window 1 --connections 1) ;;
        c) LOAD_LABEL="16 thr x win 16, 16 conn"
           LOAD_ARGS=(--threads 16 --window 16 --connections 16) ;;
    esac
}

# measure TARGET PID ADDR TOPIC : runs every load against ADDR, appends rows to RESULTS.
measure() {
    local target="$1" pid="$2" addr="$3" topic="$4" dir="$WORK/$1" id
    # Warm-up until a short run succeeds (the topic is auto-created on the broker). 30 s max.
    local ok=0 deadline=$((SECONDS + 30))
    while [[ $SECONDS -lt $deadline ]]; do
        if run "$dir/warmup.log" "$BENCH_BIN" producer -b "$addr" -t "$topic" -s "$SIZE" \
            --threads 2 --window 16 --count 20000 --send-timeout 3000; then
            ok=1
            break
        fi
        sleep 1
    done
    [[ $ok -eq 1 ]] || { tail -n 20 "$dir/warmup.log" >&2; die "$target: warm-up never succeeded"; }
    IFS=',' read -r -a ids <<<"$LOADS"
    for id in "${ids[@]}"; do
        load_args "$id"
        local la cpu0 cpu1 cs0 cs1 child0 child1 json
        la="$(cut -d' ' -f1 /proc/loadavg)"
        log "  $target ($id) $LOAD_LABEL, ${DURATION} s (load $la)"
        cpu0="$(cpu_ticks "$pid")"
        cs0="$(ctx_switches "$pid")"
        child_cpu
        child0="$CHILD_CPU"
        if ! run "$dir/load-$id.log" "$BENCH_BIN" producer -b "$addr" -t "$topic" -s "$SIZE" \
            "${LOAD_ARGS[@]}" --duration "$DURATION" --json; then
            log "  $target ($id): mqbench reported failed sends (see its log)"
            STATUS=1
        fi
        cpu1="$(cpu_ticks "$pid")"
        cs1="$(ctx_switches "$pid")"
        child_cpu
        child1="$CHILD_CPU"
        json="$(grep '^{' "$dir/load-$id.log" | tail -n 1 || true)"
        [[ -n "$json" ]] || { tail -n 20 "$dir/load-$id.log" >&2; die "no mqbench summary"; }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$id" "$LOAD_LABEL" "$la" \
            "$(awk -v a="$cpu0" -v b="$cpu1" -v t="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) / t }')" \
            "$((cs1 - cs0))" \
            "$(awk -v a="$child0" -v b="$child1" 'BEGIN { printf "%.3f", b - a }')" \
            "$json" >>"$RESULTS"
    done
}

run_broker() {
    local dir="$WORK/broker" ports
    mkdir -p "$dir"
    read -r -a ports <<<"$(free_ports 3)"
    local ns="127.0.0.1:${ports[0]}" b_port="${ports[1]}"
    write_conf "$dir/namesrv.conf" "listenPort=${ports[0]}" "listenHost=127.0.0.1" \
        "kvConfigPath=$dir/namesrv/kvConfig.json" "logDir=$dir/namesrv/logs"
    start "$dir/namesrv.log" "$NAMESRV_BIN" -c "$dir/namesrv.conf"
    local ns_pid="${PIDS[-1]}"
    wait_port "mqnamesrv" "$ns_pid" "${ports[0]}" "$dir/namesrv.log"
    write_conf "$dir/broker.conf" "brokerClusterName=BenchCluster" "brokerName=bench-e2e" \
        "namesrvAddr=$ns" "brokerIP1=127.0.0.1" "listenHost=127.0.0.1" "brokerId=0" \
        "brokerRole=ASYNC_MASTER" "flushDiskType=ASYNC_FLUSH" "autoCreateTopicEnable=true" \
        "listenPort=$b_port" "haListenPort=${ports[2]}" \
        "storePathRootDir=$dir/store" "logDir=$dir/logs" ${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}
    start "$dir/broker.log" "$BROKER_BIN" -c "$dir/broker.conf"
    local b_pid="${PIDS[-1]}"
    wait_port "mqbroker" "$b_pid" "$b_port" "$dir/broker.log"
    log "broker pid $b_pid on 127.0.0.1:$b_port ($(ls /proc/"$b_pid"/task | wc -l) threads)"
    measure broker "$b_pid" "127.0.0.1:$b_port" BenchE2e
    stop_pids "$b_pid" "$ns_pid"
    forget "$b_pid" "$ns_pid"
    rm -rf "$dir/store"
}

# run_floor TARGET : floor_server as the network floor (floor) or the store floor (store).
run_floor() {
    local target="$1" dir="$WORK/$1" port store=()
    mkdir -p "$dir"
    if [[ "$target" == store ]]; then
        mkdir -p "$dir/files"
        store=(--store "$dir/files")
    fi
    port="$(free_ports 1)"
    start "$dir/floor.log" "$FLOOR_BIN" --host 127.0.0.1 --port "$port" \
        --threads "$FLOOR_THREADS" ${store[@]+"${store[@]}"}
    local f_pid="${PIDS[-1]}"
    wait_port "floor_server" "$f_pid" "$port" "$dir/floor.log"
    measure "$target" "$f_pid" "127.0.0.1:$port" BenchE2e
    stop_pids "$f_pid"
    forget "$f_pid"
    rm -rf "$dir/files"
}

START_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"
log "build $BUILD, $(nproc) cores, load average $START_LOAD, work dir $WORK"
IFS=',' read -r -a wanted <<<"$TARGETS"
for t in "${wanted[@]}"; do
    case "$t" in
        broker) run_broker ;;
        floor) run_floor floor ;;
        store) run_floor store ;;
    esac
done
END_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"

TABLE="$(python3 - "$RESULTS" "$CLK_TCK" "$SIZE" "$DURATION" "$START_LOAD" "$END_LOAD" <<'EOF'
import json, sys
path, _, size, duration, la0, la1 = sys.argv[1:]
rows = []
for line in open(path):
    target, lid, label, la, cpu, cs, client, js = line.rstrip("\n").split("\t", 7)
    j = json.loads(js)
    ok = max(j["ok"], 1)
    rows.append(dict(target=target, id=lid, label=label, la=la, ok=j["ok"], failed=j["failed"],
                     tps=j["tps"], p50=j["p50_ms"], p99=j["p99_ms"],
                     cpu_us=float(cpu) * 1e6 / ok, cs=int(cs) / ok,
                     client_us=float(client) * 1e6 / ok))
floor = {r["id"]: r for r in rows if r["target"] == "floor"}
store = {r["id"]: r for r in rows if r["target"] == "store"}
def times(r, base):
    b = base.get(r["id"])
    return f"{r['cpu_us'] / b['cpu_us']:.1f}" if b and b["cpu_us"] > 0 else "-"
print(f"{size} B bodies, {duration} s per load, load average {la0} -> {la1}")
print()
print("| server | load | msgs/s | p50 ms | p99 ms | server CPU us/msg | x floor | x store "
      "| ctx sw/msg | mqbench CPU us/msg | failed | load avg |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['target']} | ({r['id']}) {r['label']} | {r['tps']:.0f} | {r['p50']:.3f} "
          f"| {r['p99']:.3f} | {r['cpu_us']:.1f} | {times(r, floor)} | {times(r, store)} "
          f"| {r['cs']:.2f} | {r['client_us']:.1f} | {r['failed']} | {r['la']} |")
EOF
)"
printf '%s\n' "$TABLE"
if [[ -n "$OUT" ]]; then
    printf '%s\n' "$TABLE" >"$OUT"
fi
exit "$STATUS"
