#!/usr/bin/env bash
# Replication benchmark (issue 6, "Benchmark to report"): in ONE run, mqbench against
#   (a) a single master, ASYNC_MASTER
#   (b) 1 master + 2 slaves, SYNC_MASTER, inSyncReplicas=2
#   (c) 1 master + 2 slaves, SYNC_MASTER, inSyncReplicas=3
#   (d) (b) with added latency on both master<->slave HA links: each slave's haMasterAddress
#       points at its own comet_faultproxy (--delay-ms, default 2, applied in EACH direction,
#       so the ack round trip grows by twice that) in front of the master's HA port
# each with two loads: 4 threads x window 64 (throughput) and 1 thread synchronous (latency).
# Prints a markdown table: msgs/s, p50/p99, ratios to (a) (and (d) to (b)) from the same run.
#
# Builds nothing. Usage:
#   bench/replication/run.sh BUILD_DIR [--duration SEC] [--size BYTES] [--delay-ms MS]
#                            [--scenarios a,b,c,d] [--out FILE] [--keep]
#                            [--broker-conf KEY=VALUE]...   (added to every broker's config)
# BUILD_DIR must hold apps/{mqnamesrv,mqbroker,mqbench,mqadmin} and, for (d),
# tests/it/comet_faultproxy (build them Release:
#   cmake --build BUILD_DIR -j2 --target mqnamesrv mqbroker mqbench mqadmin comet_faultproxy).
# Every process runs on 127.0.0.1 with ports that were free when the scenario started, under a
# temp dir that is removed at the end (--keep leaves it, with every log). Every process this
# script started is stopped on exit, error, Ctrl-C or SIGTERM (TERM, then KILL after 10 s).
# Exit status: 0 when every measurement ran with zero failed sends, 1 when some sends failed
# (table still printed), 2 on usage / missing binaries, 3 when a setup step failed (a process
# exited or never listened — its log tail is printed; a port taken between choosing and binding
# shows up this way: just rerun — or slaves never connected), 130/143 on SIGINT/SIGTERM.
# Needs python3 (free ports, table). The machine's load average is printed: measure when low.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

BUILD=""
DURATION=15
SIZE=1024
DELAY_MS=2
SCENARIOS="a,b,c,d"
OUT=""
KEEP=0
EXTRA_CONF=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --duration) DURATION="${2:?}"; shift 2 ;;
        --size) SIZE="${2:?}"; shift 2 ;;
        --delay-ms) DELAY_MS="${2:?}"; shift 2 ;;
        --scenarios) SCENARIOS="${2:?}"; shift 2 ;;
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
for v in DURATION SIZE DELAY_MS; do
    [[ "${!v}" =~ ^[0-9]+$ && "${!v}" -gt 0 ]] || { echo "run.sh: bad ${v,,}: ${!v}" >&2; exit 2; }
done
[[ "$SCENARIOS" =~ ^[abcd](,[abcd])*$ ]] || { echo "run.sh: bad --scenarios $SCENARIOS" >&2; exit 2; }

NAMESRV_BIN="$BUILD/apps/mqnamesrv/mqnamesrv"
BROKER_BIN="$BUILD/apps/mqbroker/mqbroker"
BENCH_BIN="$BUILD/apps/mqbench/mqbench"
ADMIN_BIN="$BUILD/apps/mqadmin/mqadmin"
PROXY_BIN="$BUILD/tests/it/comet_faultproxy"
missing=()
for b in "$NAMESRV_BIN" "$BROKER_BIN" "$BENCH_BIN" "$ADMIN_BIN"; do
    [[ -x "$b" ]] || missing+=("$b")
done
if [[ ",$SCENARIOS," == *",d,"* && ! -x "$PROXY_BIN" ]]; then
    missing+=("$PROXY_BIN (needed by scenario d; or run --scenarios a,b,c)")
fi
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "run.sh: missing binaries:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    echo "build them: cmake --build $BUILD -j2 --target mqnamesrv mqbroker mqbench mqadmin" \
         "comet_faultproxy" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "run.sh: python3 is required (ports, JSON)" >&2; exit 2; }
if grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "run.sh: WARNING: $BUILD is a Debug build; figures will be far below Release" >&2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/comet-replbench.XXXXXX")"
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
PIDS=()       # every process started and not yet stopped
STATUS=0

# log, stop_pids, die, free_ports, start, forget, wait_port, cpu_ticks, ...
# shellcheck source=bench/lib/proc.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"

install_cleanup '*/master/store' '*/slave*/store'

CLK_TCK="$(getconf CLK_TCK)"
# idle_ticks : the machine's idle time so far (all cores), in clock ticks.
idle_ticks() {
    awk '$1 == "cpu" { print $5 + $6; exit }' /proc/stat
}

# status_key FILE KEY : the value of KEY in saved `mqadmin brokerStatus` output ("?" if absent).
status_key() {
    awk -v k="$2" -F': ' '{ n=$1; sub(/ +$/, "", n); if (n == k) { v=$2; exit } }
                          END { print (v == "" ? "?" : v) }' "$1"
}

# Runs one scenario. Args: ID LABEL ROLE SLAVES ISR PROXY(0|1)
run_scenario() {
    local id="$1" label="$2" role="$3" slaves="$4" isr="$5" proxy="$6"
    local dir="$WORK/$id" group_pids=() broker_pids=() ports ns_port
    mkdir -p "$dir"
    log "scenario ($id) $label"
    # namesrv, master listen+ha, per slave listen+ha(+proxy)
    read -r -a ports <<<"$(free_ports $((3 + 3 * slaves)))"
    ns_port="${ports[0]}"
    local m_port="${ports[1]}" m_ha="${ports[2]}" ns="127.0.0.1:${ports[0]}"
    local name="bench-$id" cluster="BenchCluster"

    write_conf "$dir/namesrv.conf" "listenPort=$ns_port" "listenHost=127.0.0.1" \
        "kvConfigPath=$dir/namesrv/kvConfig.json" "logDir=$dir/namesrv/logs"
    start "$dir/namesrv.log" "$NAMESRV_BIN" -c "$dir/namesrv.conf"
    group_pids+=("${PIDS[-1]}")
    wait_port "mqnamesrv" "${PIDS[-1]}" "$ns_port" "$dir/namesrv.log"

    local common=("brokerClusterName=$cluster" "brokerName=$name" "namesrvAddr=$ns"
                  "brokerIP1=127.0.0.1" "listenHost=127.0.0.1" "flushDiskType=ASYNC_FLUSH"
                  "autoCreateTopicEnable=true" "mappedFileSizeCommitLog=1073741824"
                  ${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"})
    local repl=()
    if [[ $slaves -gt 0 ]]; then
        repl=("totalReplicas=$((slaves + 1))" "inSyncReplicas=$isr")
    fi
    write_conf "$dir/master.conf" "${common[@]}" "${repl[@]}" "brokerId=0" \
        "brokerRole=$role" "listenPort=$m_port" "haListenPort=$m_ha" \
        "storePathRootDir=$dir/master/store" "logDir=$dir/master/logs"
    start "$dir/master.log" "$BROKER_BIN" -c "$dir/master.conf"
    group_pids+=("${PIDS[-1]}")
    broker_pids=("${PIDS[-1]}")
    wait_port "master" "${PIDS[-1]}" "$m_port" "$dir/master.log"
    if [[ $slaves -gt 0 ]]; then
        wait_port "master HA" "${PIDS[-1]}" "$m_ha" "$dir/master.log"
    fi

    local i s_port s_ha p_port target
    for ((i = 1; i <= slaves; i++)); do
        s_port="${ports[$((3 * i))]}"
        s_ha="${ports[$((3 * i + 1))]}"
        p_port="${ports[$((3 * i + 2))]}"
        target="127.0.0.1:$m_ha"
        if [[ $proxy -eq 1 ]]; then
            start "$dir/proxy$i.log" "$PROXY_BIN" \
                --listen "127.0.0.1:$p_port" --target "127.0.0.1:$m_ha" --delay-ms "$DELAY_MS"
            group_pids+=("${PIDS[-1]}")
            wait_port "comet_faultproxy $i" "${PIDS[-1]}" "$p_port" "$dir/proxy$i.log"
            target="127.0.0.1:$p_port"
        fi
        write_conf "$dir/slave$i.conf" "${common[@]}" "${repl[@]}" "brokerId=$i" \
            "brokerRole=SLAVE" "listenPort=$s_port" "haListenPort=$s_ha" \
            "haMasterAddress=$target" \
            "storePathRootDir=$dir/slave$i/store" "logDir=$dir/slave$i/logs"
        start "$dir/slave$i.log" "$BROKER_BIN" -c "$dir/slave$i.conf"
        group_pids+=("${PIDS[-1]}")
        broker_pids+=("${PIDS[-1]}")
        wait_port "slave $i" "${PIDS[-1]}" "$s_port" "$dir/slave$i.log"
    done

    # Until every slave's HA connection is up (runtime info haConnectionCount), 30 s max.
    if [[ $slaves -gt 0 ]]; then
        local deadline=$((SECONDS + 30)) conns="?"
        while [[ $SECONDS -lt $deadline ]]; do
            run "$dir/status.txt" "$ADMIN_BIN" brokerStatus -n "$ns" -b "127.0.0.1:$m_port" || true
            conns="$(status_key "$dir/status.txt" haConnectionCount)"
            [[ "$conns" =~ ^[0-9]+$ && $conns -ge $slaves ]] && break
            sleep 0.5
        done
        [[ "$conns" =~ ^[0-9]+$ && $conns -ge $slaves ]] ||
            die "master reports haConnectionCount=$conns, want $slaves (logs: $dir/slave*.log)"
        rm -f "$dir/status.txt"
    fi

    local topic="Bench$id"
    run "$dir/updateTopic.log" "$ADMIN_BIN" updateTopic -n "$ns" -b "127.0.0.1:$m_port" \
        -t "$topic" -r 4 -w 4 || { cat "$dir/updateTopic.log" >&2; die "updateTopic failed"; }

    # Warm-up until a short run succeeds completely: the route is known and, for SYNC_MASTER,
    # enough slaves are connected (else SLAVE_NOT_AVAILABLE / FLUSH_SLAVE_TIMEOUT). 60 s max.
    local ok=0
    local deadline=$((SECONDS + 60))
    while [[ $SECONDS -lt $deadline ]]; do
        if run "$dir/warmup.log" "$BENCH_BIN" producer -n "$ns" -t "$topic" -s "$SIZE" \
            --threads 2 --window 16 --count 4000 --send-timeout 3000; then
            ok=1
            break
        fi
        sleep 1
    done
    [[ $ok -eq 1 ]] || { tail -n 20 "$dir/warmup.log" >&2; die "warm-up never succeeded"; }

    local load threads window json
    for load in throughput latency; do
        if [[ $load == throughput ]]; then threads=4; window=64; else threads=1; window=1; fi
        local la
        la="$(cut -d' ' -f1 /proc/loadavg)"
        log "  ($id) $load: $threads thread(s) x window $window, ${DURATION} s (load $la)"
        local before=() after=() k
        for k in "${broker_pids[@]}"; do before+=("$(cpu_ticks "$k")"); done
        local idle0 child0
        idle0="$(idle_ticks)"
        child_cpu
        child0="$CHILD_CPU"
        if ! run "$dir/$load.log" "$BENCH_BIN" producer -n "$ns" -t "$topic" -s "$SIZE" \
            --threads "$threads" --window "$window" --duration "$DURATION" --json; then
            log "  ($id) $load: mqbench reported failed sends (see table)"
            STATUS=1
        fi
        json="$(grep '^{' "$dir/$load.log" | tail -n 1 || true)"
        [[ -n "$json" ]] || { tail -n 20 "$dir/$load.log" >&2; die "no mqbench summary"; }
        local idle=$(($(idle_ticks) - idle0)) child1
        child_cpu
        child1="$CHILD_CPU"
        for k in "${broker_pids[@]}"; do after+=("$(cpu_ticks "$k")"); done
        # CPU seconds during the run: client (mqbench), master, each slave; machine idle.
        local cpu
        cpu="$(awk -v a="$child0" -v b="$child1" 'BEGIN { printf "%.2f", b - a }')"
        for ((k = 0; k < ${#broker_pids[@]}; k++)); do
            cpu+=" $(awk -v a="${before[$k]}" -v b="${after[$k]}" -v t="$CLK_TCK" \
                     'BEGIN { printf "%.2f", (b - a) / t }')"
        done
        cpu+=" idle=$(awk -v i="$idle" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", i / t }')"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$label" "$load" "$la" "$cpu" "$json" \
            >>"$RESULTS"
    done

    # Evidence that the group replicated: runtime info of the master, and each slave's max
    # CommitLog offset next to the master's.
    "$ADMIN_BIN" brokerStatus -n "$ns" -b "127.0.0.1:$m_port" >"$dir/master-status.txt" 2>&1 || true
    for ((i = 1; i <= slaves; i++)); do
        "$ADMIN_BIN" brokerStatus -n "$ns" -b "127.0.0.1:${ports[$((3 * i))]}" \
            >"$dir/slave$i-status.txt" 2>&1 || true
    done
    local line
    line="  ($id) commitLogMaxOffset master=$(status_key "$dir/master-status.txt" commitLogMaxOffset)"
    for ((i = 1; i <= slaves; i++)); do
        line+=" slave$i=$(status_key "$dir/slave$i-status.txt" commitLogMaxOffset)"
    done
    log "$line"

    local t0=$SECONDS
    stop_pids "${group_pids[@]}"
    forget "${group_pids[@]}"
    log "  ($id) stopped ${#group_pids[@]} processes in $((SECONDS - t0)) s"
    if [[ $proxy -eq 1 ]]; then  # proves the HA streams went through the proxies
        for ((i = 1; i <= slaves; i++)); do
            log "  ($id) proxy $i $(grep '^stopped:' "$dir/proxy$i.log" || echo 'no stats')"
        done
    fi
    if [[ -n "$OUT" ]]; then
        mkdir -p "$OUT.d/$id"
        cp "$dir"/*.txt "$dir"/*.log "$dir"/*.conf "$OUT.d/$id/" 2>/dev/null || true
    fi
    # Free the disk (3 x up to ~1 GiB of CommitLog) but keep logs when asked to.
    t0=$SECONDS
    rm -rf "$dir"/master/store "$dir"/slave*/store
    log "  ($id) stores removed in $((SECONDS - t0)) s"
}

START_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"
log "build $BUILD, $(nproc) cores, load average $START_LOAD, work dir $WORK"
IFS=',' read -r -a wanted <<<"$SCENARIOS"
for id in "${wanted[@]}"; do
    case "$id" in
        a) run_scenario a "1 master, ASYNC_MASTER" ASYNC_MASTER 0 1 0 ;;
        b) run_scenario b "1+2, SYNC_MASTER, inSyncReplicas=2" SYNC_MASTER 2 2 0 ;;
        c) run_scenario c "1+2, SYNC_MASTER, inSyncReplicas=3" SYNC_MASTER 2 3 0 ;;
        d) run_scenario d "(b) + ${DELAY_MS} ms one-way on HA links" SYNC_MASTER 2 2 1 ;;
    esac
done
END_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"

python3 - "$RESULTS" "$(nproc)" "$START_LOAD" "$END_LOAD" "$SIZE" "$DURATION" \
    "$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$(uname -r)" >"$WORK/table.md" <<'EOF'
import json, sys
path, cores, start_load, end_load, size, duration, commit, kernel = sys.argv[1:]
rows = []
for line in open(path):
    sid, label, load, la, cpu, js = line.rstrip("\n").split("\t", 5)
    rows.append((sid, label, load, la, json.loads(js), cpu.split()))
by = {(r[0], r[2]): r[4] for r in rows}

def ratio(sid, load, base):
    if (base, load) not in by or sid == base:
        return ""
    b = by[(base, load)]["tps"]
    return f"{by[(sid, load)]['tps'] / b:.2f}" if b > 0 else "n/a"

print(f"{size}-byte bodies, {duration} s per measurement, commit {commit}, Linux {kernel}, "
      f"{cores} cores; /proc/loadavg at start: {start_load}; at end: {end_load}")
print()
print("| setup | load | msgs/s | p50 ms | p99 ms | p99.9 ms | failed | vs (a) | vs (b) "
      "| load avg |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for sid, label, load, la, j, _ in rows:
    name = "4 thr × 64 async" if load == "throughput" else "1 thr sync"
    failed = str(j["failed"])
    bad = j.get("not_send_ok") or {}
    if bad:
        failed += " (" + ", ".join(f"{k} {v}" for k, v in bad.items()) + ")"
    vs_b = ratio(sid, load, "b") if sid == "d" else ""
    print(f"| ({sid}) {label} | {name} | {j['tps']:,.0f} | {j['p50_ms']:.3f} | "
          f"{j['p99_ms']:.3f} | {j['p999_ms']:.3f} | {failed} | {ratio(sid, load, 'a')} | "
          f"{vs_b} | {la} |")
print()
print("CPU seconds used during each measurement (utime+stime; client = mqbench) and per 1000 "
      "messages sent; machine idle = idle CPU-seconds of all cores over the run (other users' "
      "work included):")
print()
print("| setup | load | client s | master s | slaves s | total µs/msg | of which slaves "
      "| machine idle s |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for sid, label, load, la, j, cpu in rows:
    name = "4 thr × 64 async" if load == "throughput" else "1 thr sync"
    idle = cpu[-1].split("=", 1)[1]
    vals = [float(x) for x in cpu[:-1]]
    client, master, slaves = vals[0], vals[1], sum(vals[2:])
    n = max(1, j["ok"] + j["failed"])
    total = (client + master + slaves) / n * 1e6
    print(f"| ({sid}) | {name} | {client:.2f} | {master:.2f} | {slaves:.2f} | {total:.0f} | "
          f"{slaves / n * 1e6:.0f} | {idle} |")
print()
def target(desc, sid, base, need):
    k, b = (sid, "throughput"), (base, "throughput")
    if k in by and b in by and by[b]["tps"] > 0:
        r = by[k]["tps"] / by[b]["tps"]
        print(f"- {desc}: {r:.2f} (target ≥ {need:.2f}) → {'met' if r >= need else 'NOT met'}")
target("throughput (b)/(a), inSyncReplicas=2 vs single master", "b", "a", 0.60)
target(f"throughput (d)/(b), added HA-link latency vs none", "d", "b", 0.50)
EOF
cat "$WORK/table.md"
if [[ -n "$OUT" ]]; then
    cp "$WORK/table.md" "$OUT"
    log "table written to $OUT (per-scenario logs in $OUT.d/)"
fi
exit "$STATUS"
