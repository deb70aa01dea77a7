#!/usr/bin/env bash
# Process plumbing shared by the benchmark scripts (bench/*/run.sh), sourced after they set
# PIDS=() (every process started and not yet stopped) and WORK (their scratch directory).
# Nothing here runs on its own; every function is the one the scripts used to copy.

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# Stops the given pids: TERM, then KILL whatever is left after 10 s. Reaps them.
stop_pids() {
    local pid deadline
    [[ $# -gt 0 ]] || return 0
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
    deadline=$((SECONDS + 10))
    for pid in "$@"; do
        while kill -0 "$pid" 2>/dev/null && [[ $SECONDS -lt $deadline ]]; do sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            log "pid $pid did not stop on TERM; KILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
}

die() {
    log "ERROR: $*"
    exit 3
}

# N ports free on 127.0.0.1 right now, held together while choosing so they are distinct.
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# start LOGFILE CMD... : runs CMD in the background; its pid is appended to PIDS.
start() {
    local logf="$1"
    shift
    "$@" >"$logf" 2>&1 &
    PIDS+=("$!")
}

# forget PID... : drops stopped pids from PIDS.
forget() {
    local keep=() p q gone
    for p in "${PIDS[@]}"; do
        gone=0
        for q in "$@"; do [[ $p == "$q" ]] && gone=1; done
        [[ $gone -eq 1 ]] || keep+=("$p")
    done
    PIDS=("${keep[@]+"${keep[@]}"}")
}

# wait_port NAME PID PORT LOGFILE : until 127.0.0.1:PORT accepts (20 s), or the process died.
wait_port() {
    local name="$1" pid="$2" port="$3" logf="$4" deadline=$((SECONDS + 20))
    while ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$logf" >&2 || true
            die "$name exited before listening on $port (log above: $logf)"
        fi
        [[ $SECONDS -lt $deadline ]] || { tail -n 20 "$logf" >&2 || true;
                                          die "$name not listening on $port after 20 s"; }
        sleep 0.1
    done
}

# cpu_ticks PID : user+system CPU of a running process (all its threads), in clock ticks.
cpu_ticks() {
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# ctx_switches PID : voluntary + nonvoluntary context switches summed over the live threads.
ctx_switches() {
    cat "/proc/$1"/task/*/status 2>/dev/null |
        awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}

# child_cpu : sets CHILD_CPU to the user+system seconds of this shell's reaped children so far.
# `times` must run in this shell, not in a pipe or $(...) subshell, so it goes to a file.
child_cpu() {
    times >"$WORK/times.txt"
    tail -n 1 "$WORK/times.txt" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m");
                                 s += p[1] * 60 + substr(p[2], 1, length(p[2]) - 1) }
                               printf "%.3f", s }' >"$WORK/times.sum"
    # shellcheck disable=SC2034  # read by the sourcing script
    CHILD_CPU="$(cat "$WORK/times.sum")"
}

write_conf() {
    local f="$1"
    shift
    printf '%s\n' "$@" >"$f"
}

# comet_apps BUILD_DIR: sets NS, BR, MB and ADMIN to the Comet binaries under BUILD_DIR; exits 2
# naming the first one missing.
comet_apps() {
    NS=$1/apps/mqnamesrv/mqnamesrv
    BR=$1/apps/mqbroker/mqbroker
    MB=$1/apps/mqbench/mqbench
    ADMIN=$1/apps/mqadmin/mqadmin
    local b
    for b in "$NS" "$BR" "$MB" "$ADMIN"; do [[ -x $b ]] || { echo "missing $b" >&2; exit 2; }; done
}

# master_addr NS_PORT: the address of the cluster's master (brokerId 0) as the name server at
# 127.0.0.1:NS_PORT lists it (mqadmin clusterList; needs ADMIN, comet_apps), asking for up to
# 10 s: a DLedger leader registers within a register interval of its election, and a busy
# start-up could miss a single look. Prints nothing and fails when none registered.
master_addr() {
    local master=""
    for _ in $(seq 1 50); do
        master=$("$ADMIN" clusterList -n "127.0.0.1:$1" | awk '$3 == "0" { print $4; exit }')
        [[ -n $master ]] && { echo "$master"; return 0; }
        sleep 0.2
    done
    return 1
}

# install_cleanup GLOB... : on exit (and on INT / TERM, exit 130 / 143) stops every process in
# PIDS, then removes WORK, or keeps it when KEEP=1 or the script failed other than with status
# 1 ("a measurement fell short"), removing only the stores matched by the GLOBs (relative to
# WORK) so that logs and configs stay for reading.
install_cleanup() {
    CLEANUP_STORES=("$@")
    trap cleanup_on_exit EXIT
    trap 'log "interrupted"; exit 130' INT
    trap 'log "terminated"; exit 143' TERM
}
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup_on_exit() {
    local rc=$? g
    trap - EXIT INT TERM
    if [[ ${#PIDS[@]} -gt 0 ]]; then
        stop_pids "${PIDS[@]}"
        PIDS=()
    fi
    if [[ ${KEEP:-0} -eq 1 || $rc -ne 0 && $rc -ne 1 ]]; then
        for g in "${CLEANUP_STORES[@]}"; do
            # shellcheck disable=SC2086  # the glob is meant to expand
            rm -rf "${WORK:?}"/$g
        done
        log "kept $WORK (logs, configs; stores removed)"
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}

# run LOGFILE CMD... : runs CMD to completion in the background so that a signal to the script
# is handled at once (the trap stops CMD too). Returns CMD's exit status.
run() {
    local logf="$1" pid rc=0
    shift
    "$@" >"$logf" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait "$pid" || rc=$?
    forget "$pid"
    return "$rc"
}

# thread_snapshot FILE PID... : "pid tid cpu-ticks context-switches name" for every thread of
# the given processes (utime + stime from /proc/PID/task/TID/stat, read past the name, which
# may hold spaces; voluntary + nonvoluntary switches from .../status).
thread_snapshot() {
    local out="$1" p t
    shift
    for p in "$@"; do
        for t in /proc/"$p"/task/*; do
            printf '%s %s %s %s %s\n' "$p" "${t##*/}" \
                "$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$t/stat" 2>/dev/null || echo 0)" \
                "$(awk '/ctxt_switches/ { s += $2 } END { print s + 0 }' "$t/status" 2>/dev/null || echo 0)" \
                "$(cat "$t/comm" 2>/dev/null || echo '?')"
        done
    done >"$out"
}
