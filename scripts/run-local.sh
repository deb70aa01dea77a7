#!/usr/bin/env bash
# The main job (`make run`): a name server and one broker on 127.0.0.1 with the configs in conf/,
# data under ./data/, logs on the console (and ./data/logs/). Ctrl-C (or SIGTERM) stops both
# cleanly: the broker unregisters, flushes and removes its abort marker, then the name server stops.
#   scripts/run-local.sh [build-dir]        (default build/release)
# Point any RocketMQ client at the name server 127.0.0.1:9876 (e.g. NAMESRV_ADDR=127.0.0.1:9876).
set -euo pipefail
BUILD_DIR=${1:-build/release}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

NAMESRV_BIN=$BUILD_DIR/apps/mqnamesrv/mqnamesrv
BROKER_BIN=$BUILD_DIR/apps/mqbroker/mqbroker
for bin in "$NAMESRV_BIN" "$BROKER_BIN"; do
    if [[ ! -x $bin ]]; then
        echo "run-local: $bin is not built (cmake --build $BUILD_DIR --target mqnamesrv mqbroker)" >&2
        exit 1
    fi
done

DATA=$ROOT/data
mkdir -p "$DATA/logs" "$DATA/namesrv"
NAMESRV_PORT=$(sed -n 's/^listenPort=//p' conf/namesrv.conf | tail -1)
NAMESRV_PORT=${NAMESRV_PORT:-9876}

NS_PID=""
BROKER_PID=""
stop() {
    trap - INT TERM EXIT
    if [[ -n $BROKER_PID ]] && kill -0 "$BROKER_PID" 2>/dev/null; then
        echo "run-local: stopping mqbroker ($BROKER_PID)"
        kill -TERM "$BROKER_PID" 2>/dev/null || true
        wait "$BROKER_PID" 2>/dev/null || true
    fi
    if [[ -n $NS_PID ]] && kill -0 "$NS_PID" 2>/dev/null; then
        echo "run-local: stopping mqnamesrv ($NS_PID)"
        kill -TERM "$NS_PID" 2>/dev/null || true
        wait "$NS_PID" 2>/dev/null || true
    fi
    if [[ -e $DATA/broker-a/abort ]]; then
        echo "run-local: WARNING: abort marker left in $DATA/broker-a (unclean broker shutdown)" >&2
    fi
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

"$NAMESRV_BIN" -c conf/namesrv.conf --kvConfigPath="$DATA/namesrv/kvConfig.json" \
    --logDir="$DATA/logs" &
NS_PID=$!
for _ in $(seq 1 100); do
    if (echo > "/dev/tcp/127.0.0.1/$NAMESRV_PORT") 2>/dev/null; then
        break
    fi
    if ! kill -0 "$NS_PID" 2>/dev/null; then
        echo "run-local: mqnamesrv exited during start-up" >&2
        exit 1
    fi
    sleep 0.1
done

"$BROKER_BIN" -c conf/broker.conf -n "127.0.0.1:$NAMESRV_PORT" \
    --storePathRootDir="$DATA/broker-a" --logDir="$DATA/logs" &
BROKER_PID=$!

echo "run-local: name server 127.0.0.1:$NAMESRV_PORT, broker pid $BROKER_PID; Ctrl-C to stop"
# Wait until either process exits (or a signal arrives: the trap stops both).
while kill -0 "$NS_PID" 2>/dev/null && kill -0 "$BROKER_PID" 2>/dev/null; do
    wait -n "$NS_PID" "$BROKER_PID" 2>/dev/null || true
done
echo "run-local: a server exited; stopping the other" >&2
