#!/usr/bin/env bash
# Broker container benchmark (issue 18): in ONE run, the same load against
#   (a) two brokers (two groups, ASYNC_MASTER, ASYNC_FLUSH) as two separate mqbroker processes
#   (b) the same two broker files inside one mqbrokercontainer process (its default
#       serverSelectorThreads: one shared I/O thread per core for both brokers)
#   (c) as (b) with serverSelectorThreads = 2 x cores, as many I/O threads as the two mqbroker
#       processes of (a) have together (each runs one per core): separates "one process" from
#       "fewer I/O threads"
# Load: one mqbench per broker at the same time, each sending SEND_MESSAGE_V2 straight to its
# broker (-b, no name server in the path; the topic is auto-created from TBW102 by the warm-up),
# --threads T x --window W, --size bytes, --duration s. The setups rotate over --rounds rounds
# ((a) (b) (c), then (b) (c) (a), then (c) (a) (b), ...: use a multiple of the number of setups),
# each round on fresh ports and empty stores, so that the ratios compare measurements taken
# minutes apart on the same noisy machine, every setup in every position.
# Prints, per round and as medians over the rounds: msgs/s (both brokers together), broker CPU
# microseconds per message (utime+stime of the broker processes from /proc/PID/stat over the
# timed part, divided by the messages acknowledged), the brokers' context switches per message
# (voluntary + involuntary, all threads), the CPU seconds of each I/O thread (BrokerServer*,
# busiest first: shows how the client connections were spread over them), mqbench CPU, threads
# and idle RSS (VmRSS once the brokers are registered, before any load: the sum of the two
# mqbroker processes vs the container) and idle PSS (smaps_rollup: the two processes' common
# library pages counted once), and the ratios container / processes.
#
# Builds nothing. Usage:
#   bench/container/run.sh BUILD_DIR [--duration SEC] [--rounds N] [--size BYTES]
#                          [--threads T] [--window W] [--setups a,b,c] [--out FILE] [--keep]
#                          [--broker-conf KEY=VALUE]...   (added to both broker files)
#                          [--container-conf KEY=VALUE]...   (added to the container's file)
# Defaults: --duration 5 --rounds 3 --size 1024 --threads 2 --window 64 --setups a,b,c.
# BUILD_DIR must hold apps/{mqnamesrv,mqbroker,mqbrokercontainer,mqbench} (Release:
#   cmake --build BUILD_DIR -j2 --target mqnamesrv mqbroker mqbrokercontainer mqbench).
# Every process runs on 127.0.0.1 under a temp dir. Stores are removed after each setup (they
# grow by ~1 GiB a broker: 1 GiB CommitLog segments are fallocate'd) and the temp dir at the
# end (--keep leaves logs and configs, never the stores). Every process this script started is
# stopped on exit, error, Ctrl-C or SIGTERM (TERM, then KILL after 10 s).
# Exit status: 0 when every measurement ran with zero failed sends, 1 when some sends failed
# (table still printed), 2 on usage / missing binaries, 3 when a setup step failed (a process
# exited or never listened: its log tail is printed), 130/143 on SIGINT/SIGTERM.
# Needs python3 (free ports, table). The machine's load average is printed: measure when low.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

BUILD=""
DURATION=5
ROUNDS=3
SIZE=1024
THREADS=2
WINDOW=64
OUT=""
KEEP=0
SETUPS="a,b,c"
EXTRA_CONF=()
CONTAINER_CONF=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --duration) DURATION="${2:?}"; shift 2 ;;
        --rounds) ROUNDS="${2:?}"; shift 2 ;;
        --size) SIZE="${2:?}"; shift 2 ;;
        --threads) THREADS="${2:?}"; shift 2 ;;
        --window) WINDOW="${2:?}"; shift 2 ;;
        --out) OUT="${2:?}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --broker-conf) EXTRA_CONF+=("${2:?}"); shift 2 ;;
        --container-conf) CONTAINER_CONF+=("${2:?}"); shift 2 ;;
        --setups) SETUPS="${2:?}"; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run.sh: unknown option $1" >&2; usage ;;
        *) [[ -z "$BUILD" ]] || { echo "run.sh: one BUILD_DIR only" >&2; usage; }
           BUILD="$1"; shift ;;
    esac
done
[[ -n "$BUILD" ]] || { echo "run.sh: BUILD_DIR is required" >&2; usage; }
[[ -d "$BUILD" ]] || { echo "run.sh: $BUILD is not a directory" >&2; exit 2; }
BUILD="$(cd "$BUILD" && pwd)"
for v in DURATION ROUNDS SIZE THREADS WINDOW; do
    [[ "${!v}" =~ ^[0-9]+$ && "${!v}" -gt 0 ]] || { echo "run.sh: bad ${v,,}: ${!v}" >&2; exit 2; }
done
[[ "$SETUPS" =~ ^[abc](,[abc])*$ && ",$SETUPS," == *",a,"* ]] ||
    { echo "run.sh: bad --setups $SETUPS (a list of a, b, c that includes a)" >&2; exit 2; }

NAMESRV_BIN="$BUILD/apps/mqnamesrv/mqnamesrv"
BROKER_BIN="$BUILD/apps/mqbroker/mqbroker"
CONTAINER_BIN="$BUILD/apps/mqbrokercontainer/mqbrokercontainer"
BENCH_BIN="$BUILD/apps/mqbench/mqbench"
missing=()
for b in "$NAMESRV_BIN" "$BROKER_BIN" "$CONTAINER_BIN" "$BENCH_BIN"; do
    [[ -x "$b" ]] || missing+=("$b")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "run.sh: missing binaries:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    echo "build them: cmake --build $BUILD -j2 --target mqnamesrv mqbroker mqbrokercontainer mqbench" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "run.sh: python3 is required (ports, table)" >&2; exit 2; }
if grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "run.sh: WARNING: $BUILD is a Debug build; figures will be far below Release" >&2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/comet-containerbench.XXXXXX")"
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
PIDS=()       # every process started and not yet stopped
STATUS=0

# log, stop_pids, die, free_ports, start, forget, wait_port, cpu_ticks, ...
# shellcheck source=bench/lib/proc.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ ${#PIDS[@]} -gt 0 ]]; then
        stop_pids "${PIDS[@]}"
        PIDS=()
    fi
    # Stores never survive the script (they are large); logs and configs only with --keep or
    # after a setup failure.
    find "$WORK" -depth -type d -name store -exec rm -rf {} + 2>/dev/null || true
    if [[ $KEEP -eq 1 || $rc -ne 0 && $rc -ne 1 ]]; then
        log "kept $WORK (logs, configs; stores removed)"
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

# wait_pids PID... : waits for each (started with `start`); returns non-zero if any failed.
wait_pids() {
    local p rc=0
    for p in "$@"; do wait "$p" || rc=1; done
    forget "$@"
    return "$rc"
}

# wait_log NAME PID LOGFILE PATTERN COUNT : until PATTERN occurs COUNT times in LOGFILE (20 s).
wait_log() {
    local name="$1" pid="$2" logf="$3" pattern="$4" count="$5" deadline=$((SECONDS + 20)) n
    for (( ; ; )); do
        n="$(grep -c -- "$pattern" "$logf" 2>/dev/null || true)"
        [[ ${n:-0} -ge $count ]] && return 0
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$logf" >&2 || true; die "$name exited"; }
        [[ $SECONDS -lt $deadline ]] || { tail -n 20 "$logf" >&2 || true;
                                          die "$name: no '$pattern' x$count after 20 s"; }
        sleep 0.1
    done
}

CLK_TCK="$(getconf CLK_TCK)"
# io_ticks PID... : "tid=ticks" for every I/O thread (name BrokerServer*) of the given processes.
io_ticks() {
    local p t
    for p in "$@"; do
        for t in /proc/"$p"/task/*; do
            [[ "$(cat "$t/comm" 2>/dev/null)" == BrokerServer* ]] || continue
            awk -v id="${t##*/}" '{ sub(/^.*\) /, ""); printf "%s=%d\n", id, $12 + $13 }' "$t/stat" \
                2>/dev/null || true
        done
    done
}
# rss_kib PID : VmRSS in KiB.
rss_kib() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}
# pss_kib PID : proportional set size in KiB (shared pages split between the processes sharing
# them, so the sum over two mqbroker processes does not count their common library pages twice).
pss_kib() {
    awk '/^Pss:/ { print $2; exit }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0
}
# threads_of PID : number of threads.
threads_of() {
    awk '/^Threads:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}
# One name server for the whole run (it carries no load: mqbench sends with -b).
NS_DIR="$WORK/namesrv"
mkdir -p "$NS_DIR"
read -r NS_PORT <<<"$(free_ports 1)"
NS="127.0.0.1:$NS_PORT"
write_conf "$NS_DIR/namesrv.conf" "listenPort=$NS_PORT" "listenHost=127.0.0.1" \
    "kvConfigPath=$NS_DIR/kvConfig.json" "logDir=$NS_DIR/logs"
start "$NS_DIR/namesrv.log" "$NAMESRV_BIN" -c "$NS_DIR/namesrv.conf"
NS_PID="${PIDS[-1]}"
wait_port "mqnamesrv" "$NS_PID" "$NS_PORT" "$NS_DIR/namesrv.log"

# broker_conf FILE NAME PORT HAPORT STORE [extra key=value...] : one broker file (same keys for
# both setups; (a) adds namesrvAddr and logDir, the container supplies both itself).
broker_conf() {
    local f="$1" name="$2" port="$3" ha="$4" store="$5"
    shift 5
    write_conf "$f" "brokerClusterName=BenchCluster" "brokerName=$name" "brokerId=0" \
        "brokerRole=ASYNC_MASTER" "flushDiskType=ASYNC_FLUSH" "brokerIP1=127.0.0.1" \
        "listenHost=127.0.0.1" "listenPort=$port" "haListenPort=$ha" \
        "autoCreateTopicEnable=true" "mappedFileSizeCommitLog=1073741824" \
        "storePathRootDir=$store" ${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"} "$@"
}

# run_setup ROUND SETUP(a|b|c) : starts the setup, records idle RSS, warms up, measures, stops,
# removes the stores. Appends one row to RESULTS.
run_setup() {
    local round="$1" setup="$2" dir="$WORK/r$1-$2" ports
    mkdir -p "$dir"
    read -r -a ports <<<"$(free_ports 5)"
    local p1="${ports[0]}" p2="${ports[2]}" broker_pids=() label
    if [[ $setup == a ]]; then
        label="2 mqbroker processes"
        local i p
        for i in 1 2; do
            p="${ports[$((2 * i - 2))]}"
            broker_conf "$dir/broker$i.conf" "bench-ct-$i" "$p" "${ports[$((2 * i - 1))]}" \
                "$dir/broker$i/store" "namesrvAddr=$NS" "logDir=$dir/broker$i/logs"
            start "$dir/broker$i.log" "$BROKER_BIN" -c "$dir/broker$i.conf"
            broker_pids+=("${PIDS[-1]}")
            wait_port "mqbroker $i" "${PIDS[-1]}" "$p" "$dir/broker$i.log"
        done
        for i in 1 2; do
            wait_log "mqbroker $i" "${broker_pids[$((i - 1))]}" "$dir/broker$i.log" \
                "boot success" 1
        done
    else
        local io=()
        if [[ $setup == c ]]; then
            io=("serverSelectorThreads=$((2 * $(nproc)))")
            label="1 mqbrokercontainer, serverSelectorThreads=$((2 * $(nproc)))"
        else
            label="1 mqbrokercontainer"
        fi
        local i
        for i in 1 2; do
            broker_conf "$dir/broker$i.conf" "bench-ct-$i" "${ports[$((2 * i - 2))]}" \
                "${ports[$((2 * i - 1))]}" "$dir/broker$i/store"
        done
        write_conf "$dir/container.conf" \
            "brokerConfigPaths=$dir/broker1.conf:$dir/broker2.conf" \
            "listenPort=${ports[4]}" "listenHost=127.0.0.1" "namesrvAddr=$NS" \
            "logDir=$dir/container/logs" ${io[@]+"${io[@]}"} \
            ${CONTAINER_CONF[@]+"${CONTAINER_CONF[@]}"}
        start "$dir/container.log" "$CONTAINER_BIN" -c "$dir/container.conf"
        broker_pids=("${PIDS[-1]}")
        wait_port "mqbrokercontainer" "${PIDS[-1]}" "${ports[4]}" "$dir/container.log"
        wait_port "mqbrokercontainer (broker 1)" "${PIDS[-1]}" "$p1" "$dir/container.log"
        wait_port "mqbrokercontainer (broker 2)" "${PIDS[-1]}" "$p2" "$dir/container.log"
        wait_log "mqbrokercontainer" "${PIDS[-1]}" "$dir/container.log" "container: broker .* boot success on port" 2
    fi
    # Idle: registered, nothing sent yet. One second for the first registration round trips.
    sleep 1
    local rss=0 pss=0 threads=0 k
    for k in "${broker_pids[@]}"; do
        rss=$((rss + $(rss_kib "$k")))
        pss=$((pss + $(pss_kib "$k")))
        threads=$((threads + $(threads_of "$k")))
    done

    # Warm-up (auto-creates the topic on each broker, opens the first CommitLog pages).
    local topic="BenchContainer" j pids=()
    for j in 1 2; do
        local addr="127.0.0.1:${ports[$((2 * j - 2))]}"
        start "$dir/warmup$j.log" "$BENCH_BIN" producer -b "$addr" -t "$topic" -s "$SIZE" \
            --threads 2 --window 16 --count 20000 --send-timeout 3000
        pids+=("${PIDS[-1]}")
    done
    wait_pids "${pids[@]}" || { tail -n 20 "$dir"/warmup*.log >&2; die "($setup) warm-up failed"; }

    local la cpu0=0 cpu1=0 cs0=0 cs1=0 child0 child1
    la="$(cut -d' ' -f1 /proc/loadavg)"
    log "  round $round ($setup) $label: 2 x mqbench $THREADS thr x win $WINDOW, ${DURATION} s" \
        "(load $la, idle RSS $((rss / 1024)) MiB, PSS $((pss / 1024)) MiB, $threads threads)"
    for k in "${broker_pids[@]}"; do
        cpu0=$((cpu0 + $(cpu_ticks "$k")))
        cs0=$((cs0 + $(ctx_switches "$k")))
    done
    io_ticks "${broker_pids[@]}" >"$dir/io0.txt"
    child_cpu
    child0="$CHILD_CPU"
    pids=()
    for j in 1 2; do
        local addr="127.0.0.1:${ports[$((2 * j - 2))]}"
        start "$dir/load$j.log" "$BENCH_BIN" producer -b "$addr" -t "$topic" -s "$SIZE" \
            --threads "$THREADS" --window "$WINDOW" --connections 1 --duration "$DURATION" --json
        pids+=("${PIDS[-1]}")
    done
    if ! wait_pids "${pids[@]}"; then
        log "  round $round ($setup): mqbench reported failed sends (see the table)"
        STATUS=1
    fi
    for k in "${broker_pids[@]}"; do
        cpu1=$((cpu1 + $(cpu_ticks "$k")))
        cs1=$((cs1 + $(ctx_switches "$k")))
    done
    io_ticks "${broker_pids[@]}" >"$dir/io1.txt"
    child_cpu
    child1="$CHILD_CPU"
    # CPU seconds of each I/O thread over the timed part, busiest first ("2.10/0.05": one busy).
    local io
    io="$(awk -F= -v t="$CLK_TCK" 'NR == FNR { a[$1] = $2; next }
                                  { d = ($2 - a[$1]) / t; if (d < 0) d = 0; print d }' \
            "$dir/io0.txt" "$dir/io1.txt" | sort -rn | awk '{ printf "%s%.2f", (NR > 1 ? "/" : ""), $1 }')"
    local json1 json2
    json1="$(grep '^{' "$dir/load1.log" | tail -n 1 || true)"
    json2="$(grep '^{' "$dir/load2.log" | tail -n 1 || true)"
    [[ -n "$json1" && -n "$json2" ]] || { tail -n 20 "$dir"/load*.log >&2; die "no mqbench summary"; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$setup" "$label" "$la" "${io:--}" "$rss" "$pss" \
        "$threads" "$((cs1 - cs0))" "$(awk -v a="$cpu0" -v b="$cpu1" -v t="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) / t }')" \
        "$(awk -v a="$child0" -v b="$child1" 'BEGIN { printf "%.3f", b - a }')" \
        "$json1" "$json2" >>"$RESULTS"

    local t0=$SECONDS
    stop_pids "${broker_pids[@]}"
    forget "${broker_pids[@]}"
    rm -rf "$dir"/broker*/store
    log "  round $round ($setup) stopped and stores removed in $((SECONDS - t0)) s"
}

START_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"
log "build $BUILD, $(nproc) cores, load average $START_LOAD, work dir $WORK"
IFS=',' read -r -a ORDER <<<"$SETUPS"
# Round r starts at setup (r - 1) mod n and goes round the list: over n rounds every setup runs
# once in every position. The page cache makes the position matter (a setup that follows
# another's deleted stores paid ~6 % more CPU in its pwritev in one profile,
# docs/benchmarks-notebook.md "BrokerContainer").
N_SETUPS=${#ORDER[@]}
for ((r = 1; r <= ROUNDS; r++)); do
    for ((k = 0; k < N_SETUPS; k++)); do
        run_setup "$r" "${ORDER[$(((r - 1 + k) % N_SETUPS))]}"
    done
done
END_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"

python3 - "$RESULTS" "$(nproc)" "$START_LOAD" "$END_LOAD" "$SIZE" "$DURATION" "$THREADS" \
    "$WINDOW" "$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$(uname -r)" >"$WORK/table.md" <<'EOF'
import json, statistics, sys
path, cores, start_load, end_load, size, duration, threads, window, commit, kernel = sys.argv[1:]
rows = {}
for line in open(path):
    rnd, setup, label, la, io, rss, pss, thr, cs, cpu, client, j1, j2 = line.rstrip("\n").split("\t")
    j1, j2 = json.loads(j1), json.loads(j2)
    ok = j1["ok"] + j2["ok"]
    failed = j1["failed"] + j2["failed"]
    rows[(int(rnd), setup)] = dict(label=label, la=la, io=io, rss=int(rss) / 1024, pss=int(pss) / 1024, threads=int(thr),
        tps=j1["tps"] + j2["tps"], ok=ok, failed=failed, cpu=float(cpu),
        us=float(cpu) / max(1, ok) * 1e6, client_us=float(client) / max(1, ok) * 1e6,
        p99=max(j1["p99_ms"], j2["p99_ms"]), cs=int(cs) / max(1, ok))
print(f"{size}-byte bodies, 2 x mqbench (one per broker, -b) x {threads} threads x window "
      f"{window}, {duration} s per measurement, commit {commit}, Linux {kernel}, {cores} cores; "
      f"/proc/loadavg at start: {start_load}; at end: {end_load}")
print()
print("| round | setup | msgs/s (both) | failed | broker CPU s | broker µs/msg | broker ctx sw/msg "
      "| mqbench µs/msg | worse p99 ms | I/O threads CPU s | idle RSS MiB | idle PSS MiB | threads "
      "| load avg |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
for (rnd, setup), r in sorted(rows.items()):
    print(f"| {rnd} | ({setup}) {r['label']} | {r['tps']:,.0f} | {r['failed']} | {r['cpu']:.2f} | "
          f"{r['us']:.1f} | {r['cs']:.3f} | {r['client_us']:.1f} | {r['p99']:.2f} | {r['io']} | {r['rss']:.1f} | {r['pss']:.1f} | "
          f"{r['threads']} | {r['la']} |")
print()
rounds = sorted({k[0] for k in rows})
present = sorted({k[1] for k in rows})
for x in [s for s in present if s != "a"]:
    ratios = {"tps": [], "us": [], "rss": [], "pss": [], "threads": []}
    print(f"Container / processes, ({x}) / (a):")
    print()
    print(f"| round | msgs/s ({x})/(a) | broker µs/msg ({x})/(a) | idle RSS ({x})/(a) "
          f"| idle PSS ({x})/(a) | threads ({x})/(a) |")
    print("|---|---:|---:|---:|---:|---:|")
    for rnd in rounds:
        a, b = rows.get((rnd, "a")), rows.get((rnd, x))
        if not a or not b:
            continue
        vals = {k: (b[k] / a[k] if a[k] else float("nan")) for k in ratios}
        for k, v in vals.items():
            ratios[k].append(v)
        print(f"| {rnd} | {vals['tps']:.2f} | {vals['us']:.2f} | {vals['rss']:.2f} | {vals['pss']:.2f} | "
              f"{vals['threads']:.2f} |")
    if ratios["tps"]:
        med = {k: statistics.median(v) for k, v in ratios.items()}
        print(f"| median | {med['tps']:.2f} | {med['us']:.2f} | {med['rss']:.2f} | {med['pss']:.2f} | "
              f"{med['threads']:.2f} |")
    print()
if rows:
    for s in present:
        vals = [r for (rnd, setup), r in rows.items() if setup == s]
        print()
        print(f"- ({s}) {vals[0]['label']}: median {statistics.median(v['tps'] for v in vals):,.0f} "
              f"msgs/s, {statistics.median(v['us'] for v in vals):.1f} broker µs/msg, idle RSS "
              f"{statistics.median(v['rss'] for v in vals):.1f} MiB (PSS "
              f"{statistics.median(v['pss'] for v in vals):.1f} MiB), "
              f"{statistics.median(v['threads'] for v in vals):.0f} threads", end="")
    print()
EOF
cat "$WORK/table.md"
if [[ -n "$OUT" ]]; then
    cp "$WORK/table.md" "$OUT"
    log "table written to $OUT"
fi
exit "$STATUS"
