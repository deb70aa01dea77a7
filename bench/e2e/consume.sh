#!/usr/bin/env bash
# End-to-end consume benchmark (issue 16): one broker, mqbench's push consumer.
#   drain  a backlog of --count messages (sent first by mqbench producer -b, 4 x 64) is read by a
#          new consumer group from the first offset; msgs/s over the drain, the broker's CPU
#          and the consumer's CPU per message.
#   floor  bench/e2e/drain_floor after the drain: the same number of records of the same stored
#          size (the broker's commitLogMaxOffset / messages), interleaved over the same queues,
#          sent from a mapped file over loopback with no protocol at all; the broker's CPU per
#          message over the drain is printed as a ratio to this sender's.
#   live   producer (-b, 4 x 64) and a consumer of another new group run together for
#          --duration s; both rates, consumer/producer, end-to-end p50/p99 (born -> consumed),
#          the broker's CPU per message sent.
# The broker runs ASYNC_MASTER + ASYNC_FLUSH with maxTransferCountOnMessageInMemory and
# maxTransferBytesOnMessageInMemory raised to fit --pull-batch messages (an operator who asks
# for large pulls raises both; the defaults cap a pull at 32 messages / 256 KiB).
#
# --thread-cpu also prints the broker's CPU per message by thread for each run. --wrap 'CMD'
# runs the draining consumer under CMD (split on spaces), e.g. --wrap 'valgrind
# --tool=callgrind --callgrind-out-file=/tmp/cg.out' to count its instructions per message.
#
# Builds nothing. Usage:
#   bench/e2e/consume.sh BUILD_DIR [--count N] [--duration SEC] [--size BYTES] [--queues N]
#                        [--pull-batch N] [--modes drain,live] [--thread-cpu] [--wrap CMD] [--out FILE]
#                        [--keep] [--broker-conf KEY=VALUE]...
# BUILD_DIR must hold apps/{mqnamesrv,mqbroker,mqbench,mqadmin} and bench/drain_floor, Release. Every process started
# is stopped on exit (TERM, then KILL after 10 s); the temp dir is removed unless --keep.
# Exit status: 0 when every run completed, 1 when a run fell short (table still printed), 2 on
# usage or missing binaries, 3 when a setup step failed, 130/143 on signals.
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

BUILD=""
COUNT=1000000
DURATION=10
SIZE=1024
QUEUES=4
PULL_BATCH=1024
MODES="drain,live"
OUT=""
KEEP=0
THREAD_CPU=0
WRAP=()
EXTRA_CONF=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --count) COUNT="${2:?}"; shift 2 ;;
        --duration) DURATION="${2:?}"; shift 2 ;;
        --size) SIZE="${2:?}"; shift 2 ;;
        --queues) QUEUES="${2:?}"; shift 2 ;;
        --pull-batch) PULL_BATCH="${2:?}"; shift 2 ;;
        --modes) MODES="${2:?}"; shift 2 ;;
        --out) OUT="${2:?}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --thread-cpu) THREAD_CPU=1; shift ;;
        --wrap) read -r -a WRAP <<<"${2:?}"; shift 2 ;;
        --broker-conf) EXTRA_CONF+=("${2:?}"); shift 2 ;;
        -h|--help) usage ;;
        -*) echo "consume.sh: unknown option $1" >&2; usage ;;
        *) [[ -z "$BUILD" ]] || { echo "consume.sh: one BUILD_DIR only" >&2; usage; }
           BUILD="$1"; shift ;;
    esac
done
[[ -n "$BUILD" ]] || { echo "consume.sh: BUILD_DIR is required" >&2; usage; }
[[ -d "$BUILD" ]] || { echo "consume.sh: $BUILD is not a directory" >&2; exit 2; }
BUILD="$(cd "$BUILD" && pwd)"
for v in COUNT DURATION SIZE QUEUES PULL_BATCH; do
    [[ "${!v}" =~ ^[0-9]+$ && "${!v}" -gt 0 ]] || { echo "consume.sh: bad ${v,,}: ${!v}" >&2; exit 2; }
done
[[ "$MODES" =~ ^(drain|live)(,(drain|live))*$ ]] || { echo "consume.sh: bad --modes $MODES" >&2; exit 2; }

# shellcheck source=bench/lib/proc.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"
comet_apps "$BUILD"  # NS BR MB ADMIN
FLOOR="$BUILD/bench/drain_floor"
[[ -x "$FLOOR" ]] || { echo "missing $FLOOR" >&2; exit 2; }
command -v python3 >/dev/null || { echo "consume.sh: python3 is required (ports)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/comet-consumebench.XXXXXX")"
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
PIDS=()
STATUS=0
install_cleanup broker/store

CLK_TCK="$(getconf CLK_TCK)"
DIR="$WORK/broker"
mkdir -p "$DIR"
read -r -a ports <<<"$(free_ports 3)"
NS_ADDR="127.0.0.1:${ports[0]}"
BROKER="127.0.0.1:${ports[1]}"
TOPIC=BenchConsume
LIVE_TOPIC=BenchLive
write_conf "$DIR/namesrv.conf" "listenPort=${ports[0]}" "listenHost=127.0.0.1" \
    "kvConfigPath=$DIR/namesrv/kvConfig.json" "logDir=$DIR/namesrv/logs"
start "$DIR/namesrv.log" "$NS" -c "$DIR/namesrv.conf"
NS_PID="${PIDS[-1]}"
wait_port "mqnamesrv" "$NS_PID" "${ports[0]}" "$DIR/namesrv.log"
PULL_BYTES=$(( (SIZE + 256) * PULL_BATCH ))
[[ $PULL_BYTES -ge 262144 ]] || PULL_BYTES=262144
write_conf "$DIR/broker.conf" "brokerClusterName=BenchCluster" "brokerName=bench-consume" \
    "namesrvAddr=$NS_ADDR" "brokerIP1=127.0.0.1" "listenHost=127.0.0.1" "brokerId=0" \
    "brokerRole=ASYNC_MASTER" "flushDiskType=ASYNC_FLUSH" "autoCreateTopicEnable=false" \
    "listenPort=${ports[1]}" "haListenPort=${ports[2]}" \
    "maxTransferCountOnMessageInMemory=$PULL_BATCH" "maxTransferBytesOnMessageInMemory=$PULL_BYTES" \
    "storePathRootDir=$DIR/store" "logDir=$DIR/logs" ${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}
start "$DIR/broker.log" "$BR" -c "$DIR/broker.conf"
B_PID="${PIDS[-1]}"
wait_port "mqbroker" "$B_PID" "${ports[1]}" "$DIR/broker.log"
for t in "$TOPIC" "$LIVE_TOPIC"; do
    run "$DIR/topic.log" "$ADMIN" updateTopic -n "$NS_ADDR" -b "$BROKER" -t "$t" \
        -r "$QUEUES" -w "$QUEUES" || { tail -n 20 "$DIR/topic.log" >&2; die "updateTopic failed"; }
    # The consumer finds the topic through the name server: wait until the route is there.
    deadline=$((SECONDS + 30))
    until run "$DIR/route.log" "$ADMIN" topicRoute -n "$NS_ADDR" -t "$t"; do
        [[ $SECONDS -lt $deadline ]] || { tail -n 20 "$DIR/route.log" >&2; die "no route for $t"; }
        sleep 1
    done
done
log "broker pid $B_PID on $BROKER, topic $TOPIC with $QUEUES queues, load $(cut -d' ' -f1 /proc/loadavg)"

producer() {  # producer LOG EXTRA... : mqbench -b, 4 x 64
    run "$1" "$MB" producer -b "$BROKER" -t "$TOPIC" -s "$SIZE" --queues "$QUEUES" \
        --threads 4 --window 64 --connections 1 --send-timeout 10000 --json "${@:2}"
}
summary() { grep '^{' "$1" | tail -n 1 || true; }
# thread_report LABEL BEFORE AFTER MSGS : broker CPU us/msg by thread (>= 0.01), largest first,
# from two thread_snapshot files.
thread_report() {
    [[ $THREAD_CPU -eq 1 ]] || return 0
    log "$1: broker CPU by thread, us per message"
    awk -v n="$4" -v t="$CLK_TCK" '
        NR == FNR { before[$1 " " $2] = $3; next }
        ($1 " " $2) in before {
            name = $5; for (i = 6; i <= NF; i++) name = name " " $i
            us = ($3 - before[$1 " " $2]) * 1e6 / t / n
            if (us >= 0.01) printf "    %-18s %6.2f\n", name, us
        }' "$2" "$3" | sort -k2 -rn >&2
}

drain() {
    log "filling a backlog of $COUNT messages"
    producer "$DIR/fill.log" --count "$COUNT" || { tail -n 20 "$DIR/fill.log" >&2; die "fill failed"; }
    sleep 2  # let the reput thread dispatch the tail and the flush settle
    local la cpu0 cpu1 child0 child1 rc=0
    la="$(cut -d' ' -f1 /proc/loadavg)"
    log "draining (pull batch $PULL_BATCH, load $la)"
    cpu0="$(cpu_ticks "$B_PID")"
    thread_snapshot "$DIR/threads0" "$B_PID"
    child_cpu
    child0="$CHILD_CPU"
    run "$DIR/drain.log" ${WRAP[@]+"${WRAP[@]}"} "$MB" consumer -n "$NS_ADDR" -t "$TOPIC" -g "drain_$RANDOM" \
        --from-first --count "$COUNT" --pull-batch "$PULL_BATCH" --threads 4 --json || rc=$?
    cpu1="$(cpu_ticks "$B_PID")"
    thread_snapshot "$DIR/threads1" "$B_PID"
    child_cpu
    child1="$CHILD_CPU"
    [[ $rc -eq 0 ]] || { log "drain: consumer exited $rc"; STATUS=1; }
    thread_report drain "$DIR/threads0" "$DIR/threads1" "$COUNT"
    printf 'drain\t%s\t%s\t%s\t%s\t%s\t\n' "$la" \
        "$(awk -v a="$cpu0" -v b="$cpu1" -v t="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) / t }')" \
        "$(awk -v a="$child0" -v b="$child1" 'BEGIN { printf "%.3f", b - a }')" \
        "$(summary "$DIR/drain.log")" "" >>"$RESULTS"
    # The floor: records of the size the broker stored, the same count and interleaving.
    local max_offset record_bytes
    max_offset="$("$ADMIN" brokerStatus -n "$NS_ADDR" -b "$BROKER" 2>/dev/null |
        awk '$1 == "commitLogMaxOffset" { print $NF }' | tr -dc '0-9')"
    if [[ -n "$max_offset" && "$max_offset" -gt 0 ]]; then
        record_bytes=$((max_offset / COUNT))
    else
        record_bytes=$((SIZE + 230))
        log "brokerStatus gave no commitLogMaxOffset: floor records of $record_bytes B (estimate)"
    fi
    la="$(cut -d' ' -f1 /proc/loadavg)"
    log "drain floor: $COUNT records of $record_bytes B over $QUEUES queues (load $la)"
    run "$DIR/floor.log" "$FLOOR" --records "$COUNT" --record-bytes "$record_bytes" \
        --queues "$QUEUES" --batch "$PULL_BATCH" --dir "$DIR" --json ||
        { tail -n 5 "$DIR/floor.log" >&2; die "drain_floor failed"; }
    printf 'floor\t%s\t\t\t%s\t\n' "$la" "$(summary "$DIR/floor.log")" >>"$RESULTS"
}

live() {
    local la cpu0 cpu1 child0 child1 cpid rc=0
    la="$(cut -d' ' -f1 /proc/loadavg)"
    log "live: producer and consumer together for $DURATION s (load $la)"
    # Its own topic, empty: a new group starts at offset 0 while a queue's first message is
    # still in memory (RocketMQ's rule for CONSUME_FROM_LAST_OFFSET), so the drain's backlog
    # would be read again.
    "$MB" consumer -n "$NS_ADDR" -t "$LIVE_TOPIC" -g "live_$RANDOM" --duration $((DURATION + 60)) \
        --pull-batch "$PULL_BATCH" --threads 4 --json >"$DIR/live-consumer.log" 2>&1 &
    cpid=$!
    PIDS+=("$cpid")
    sleep 4  # the consumer owns its queues (a rebalance) before the first send
    cpu0="$(cpu_ticks "$B_PID")"
    thread_snapshot "$DIR/threads0" "$B_PID"
    child_cpu
    child0="$CHILD_CPU"
    run "$DIR/live-producer.log" "$MB" producer -b "$BROKER" -t "$LIVE_TOPIC" -s "$SIZE" \
        --queues "$QUEUES" --threads 4 --window 64 --connections 1 --send-timeout 10000 \
        --duration "$DURATION" --json || { log "live: failed sends"; STATUS=1; }
    # What the consumer has not received when the producer stops is what it fell behind.
    kill -INT "$cpid" 2>/dev/null || true
    wait "$cpid" || rc=$?
    forget "$cpid"
    cpu1="$(cpu_ticks "$B_PID")"
    thread_snapshot "$DIR/threads1" "$B_PID"
    thread_report live "$DIR/threads0" "$DIR/threads1" \
        "$(grep '^{' "$DIR/live-producer.log" | tail -n 1 | python3 -c 'import json,sys; print(max(json.load(sys.stdin)["ok"], 1))' 2>/dev/null || echo 1)"
    child_cpu
    child1="$CHILD_CPU"
    [[ $rc -eq 0 ]] || { log "live: consumer exited $rc"; STATUS=1; }
    printf 'live\t%s\t%s\t%s\t%s\t%s\n' "$la" \
        "$(awk -v a="$cpu0" -v b="$cpu1" -v t="$CLK_TCK" 'BEGIN { printf "%.3f", (b - a) / t }')" \
        "$(awk -v a="$child0" -v b="$child1" 'BEGIN { printf "%.3f", b - a }')" \
        "$(summary "$DIR/live-consumer.log")" "$(summary "$DIR/live-producer.log")" >>"$RESULTS"
}

START_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"
IFS=',' read -r -a modes <<<"$MODES"
for m in "${modes[@]}"; do
    case "$m" in
        drain) drain ;;
        live) live ;;
    esac
done
END_LOAD="$(cut -d" " -f1-3 /proc/loadavg)"

TABLE="$(python3 - "$RESULTS" "$SIZE" "$PULL_BATCH" "$QUEUES" "$START_LOAD" "$END_LOAD" "$COUNT" <<'EOF'
import json, sys
path, size, batch, queues, la0, la1, count = sys.argv[1:]
print(f"{size} B bodies, {queues} queues, pull batch {batch}, load average {la0} -> {la1}")
print()
print("| run | msgs consumed | consume msgs/s | producer msgs/s | consumer/producer | p50 ms "
      "| p99 ms | broker CPU us/msg | mqbench CPU us/msg | load avg |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
rows = [line.rstrip("\n").split("\t", 5) for line in open(path)]
floor = next((json.loads(r[4]) for r in rows if r[0] == "floor"), None)
for mode, la, cpu, child, cjs, pjs in rows:
    if mode == "floor":
        continue
    c = json.loads(cjs) if cjs else {"ok": 0, "tps": 0, "p50_ms": 0, "p99_ms": 0}
    n = max(c["ok"], 1)
    if mode == "drain":
        print(f"| drain {count} | {c['ok']} | {c['tps']:.0f} | - | - | - | - "
              f"| {float(cpu) * 1e6 / n:.2f} | {float(child) * 1e6 / n:.2f} | {la} |")
    else:
        p = json.loads(pjs) if pjs else {"ok": 0, "tps": 0, "seconds": 1}
        sent = max(p["ok"], 1)
        rate = c["ok"] / max(p.get("seconds", 1), 1e-3)
        print(f"| live {p.get('seconds', 0):.0f} s | {c['ok']} | {rate:.0f} | {p['tps']:.0f} "
              f"| {c['ok'] / sent:.2f} "
              f"| {c['p50_ms']:.2f} | {c['p99_ms']:.2f} | {float(cpu) * 1e6 / sent:.2f} "
              f"| {float(child) * 1e6 / sent:.2f} | {la} |")
if floor:
    drain = next((r for r in rows if r[0] == "drain"), None)
    print()
    print(f"Floor (drain_floor: {floor['records']} records of {floor['record_bytes']} B from a "
          f"mapped file over loopback, {floor['queues']} queues interleaved): "
          f"{floor['rate']:.0f} records/s, sender {floor['sender_us']:.2f} us/record, "
          f"receiver {floor['receiver_us']:.2f} us/record.")
    if drain:
        n = max(json.loads(drain[4])["ok"], 1)
        broker_us = float(drain[2]) * 1e6 / n
        client_us = float(drain[3]) * 1e6 / n
        print(f"Drain / floor: broker CPU {broker_us / floor['sender_us']:.2f}x the sender's, "
              f"mqbench CPU {client_us / floor['receiver_us']:.1f}x the receiver's.")
EOF
)"
printf '%s\n' "$TABLE"
[[ -z "$OUT" ]] || printf '%s\n' "$TABLE" >"$OUT"
exit "$STATUS"
