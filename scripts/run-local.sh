#!/usr/bin/env bash
# The main job (`make run`): a name server and brokers on 127.0.0.1, data under ./data/. By
# default (CLUSTER=dev) one process, mqbrokercontainer --dev; the other topologies run each server
# as its own process with the configs in conf/, logs on the console (and ./data/logs/). Ctrl-C (or
# SIGTERM) stops them cleanly: each broker unregisters, flushes and removes its abort marker, then
# the name server stops.
#   scripts/run-local.sh [build-dir]        (default build/release)
# CLUSTER selects the topology:
#   CLUSTER=dev (default)     one process (mqbrokercontainer --dev): a name server and a 3-peer
#                             DLedger group broker-dev on 127.0.0.1, stores and generated configs
#                             under ./data/dev; it prints a banner (name server address,
#                             durability contract, commands to try) once a leader is registered.
#                             DEV_PORT (default 9876) is the base of its ports: name server
#                             DEV_PORT, container admin DEV_PORT+1, peers DEV_PORT+10/+20/+30
#                             (DLedger ports 2 above each). docs/container.md "Dev mode".
#   CLUSTER=single            one ASYNC_MASTER broker, conf/broker.conf
#   CLUSTER=1m2s              one SYNC_MASTER + two slaves of group broker-a with quorum write
#                             (inSyncReplicas=2 of 3), conf/1m-2s-sync/*.properties
#   CLUSTER=dledger           a 3-peer DLedger group broker-d (Raft: elected leader, majority
#                             commit), conf/dledger/*.properties
#   CLUSTER=controller        controller mode: 3 controllers (mqcontroller,
#                             conf/controller/controller-n*.conf) elect the master of broker
#                             group broker-c (conf/controller/broker-n*.conf, 3 replicas)
#   CLUSTER=controller-in-namesrv  the same, with the controllers inside 3 name servers
#                             (enableControllerInNamesrv, conf/controller/namesrv-embedded-n*.conf:
#                             name servers 9876/9866/9856, controller peers 9878/9868/9858)
# Point any RocketMQ client at the name server 127.0.0.1:9876 (e.g. NAMESRV_ADDR=127.0.0.1:9876).
set -euo pipefail
BUILD_DIR=${1:-build/release}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

DATA=$ROOT/data
CLUSTER=${CLUSTER:-dev}
if [[ $CLUSTER == dev ]]; then
    CONTAINER_BIN=$BUILD_DIR/apps/mqbrokercontainer/mqbrokercontainer
    if [[ ! -x $CONTAINER_BIN ]]; then
        echo "run-local: $CONTAINER_BIN is not built (cmake --build $BUILD_DIR --target" \
            "mqbrokercontainer mqadmin mqbench)" >&2
        exit 1
    fi
    # One process: it stops everything itself on Ctrl-C / SIGTERM (brokers, then name server).
    exec "$CONTAINER_BIN" --dev --dev-dir "$DATA/dev" --dev-port "${DEV_PORT:-9876}"
fi

NAMESRV_BIN=$BUILD_DIR/apps/mqnamesrv/mqnamesrv
BROKER_BIN=$BUILD_DIR/apps/mqbroker/mqbroker
CONTROLLER_BIN=$BUILD_DIR/apps/mqcontroller/mqcontroller
for bin in "$NAMESRV_BIN" "$BROKER_BIN" "$CONTROLLER_BIN"; do
    if [[ ! -x $bin ]]; then
        echo "run-local: $bin is not built (cmake --build $BUILD_DIR --target mqnamesrv mqbroker mqcontroller)" >&2
        exit 1
    fi
done

mkdir -p "$DATA/logs" "$DATA/namesrv"
NAMESRV_CONF=conf/namesrv.conf
CONTROLLERS=()
case $CLUSTER in
    single) BROKERS=("conf/broker.conf:broker-a") ;;
    1m2s) BROKERS=("conf/1m-2s-sync/broker-a.properties:broker-a-m"
                   "conf/1m-2s-sync/broker-a-s1.properties:broker-a-s1"
                   "conf/1m-2s-sync/broker-a-s2.properties:broker-a-s2") ;;
    dledger) BROKERS=("conf/dledger/broker-n0.properties:broker-d-n0"
                      "conf/dledger/broker-n1.properties:broker-d-n1"
                      "conf/dledger/broker-n2.properties:broker-d-n2") ;;
    controller) BROKERS=("conf/controller/broker-n0.conf:broker-c-n0"
                         "conf/controller/broker-n1.conf:broker-c-n1"
                         "conf/controller/broker-n2.conf:broker-c-n2")
                CONTROLLERS=(conf/controller/controller-n0.conf conf/controller/controller-n1.conf
                             conf/controller/controller-n2.conf) ;;
    controller-in-namesrv)
        BROKERS=("conf/controller/broker-n0.conf:broker-c-n0"
                 "conf/controller/broker-n1.conf:broker-c-n1"
                 "conf/controller/broker-n2.conf:broker-c-n2")
        # n0 is the name server below; n1 and n2 run where the controllers would.
        NAMESRV_CONF=conf/controller/namesrv-embedded-n0.conf
        CONTROLLER_BIN=$NAMESRV_BIN
        CONTROLLERS=(conf/controller/namesrv-embedded-n1.conf
                     conf/controller/namesrv-embedded-n2.conf) ;;
    *) echo "run-local: unknown CLUSTER=$CLUSTER (dev, single, 1m2s, dledger, controller or" \
            "controller-in-namesrv)" >&2
       exit 2 ;;
esac
NAMESRV_PORT=$(sed -n 's/^listenPort=//p' "$NAMESRV_CONF" | tail -1)
NAMESRV_PORT=${NAMESRV_PORT:-9876}
NAMESRV_ADDR=127.0.0.1:$NAMESRV_PORT
if [[ $CLUSTER == controller-in-namesrv ]]; then
    NAMESRV_ADDR="127.0.0.1:9876;127.0.0.1:9866;127.0.0.1:9856"
fi

NS_PID=""
BROKER_PIDS=()
STORES=()
stop() {
    trap - INT TERM EXIT
    local pid store
    # Slaves first, master last (the master then has no slave to wait for while it stops).
    for ((i = ${#BROKER_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${BROKER_PIDS[$i]}
        if kill -0 "$pid" 2>/dev/null; then
            echo "run-local: stopping mqbroker ($pid)"
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ -n $NS_PID ]] && kill -0 "$NS_PID" 2>/dev/null; then
        echo "run-local: stopping mqnamesrv ($NS_PID)"
        kill -TERM "$NS_PID" 2>/dev/null || true
        wait "$NS_PID" 2>/dev/null || true
    fi
    for store in "${STORES[@]}"; do
        if [[ -e $store/abort ]]; then
            echo "run-local: WARNING: abort marker left in $store (unclean broker shutdown)" >&2
        fi
    done
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

"$NAMESRV_BIN" -c "$NAMESRV_CONF" --kvConfigPath="$DATA/namesrv/kvConfig.json" \
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

for conf in "${CONTROLLERS[@]}"; do
    logs=$DATA/logs
    if [[ $CLUSTER == controller-in-namesrv ]]; then
        logs=$DATA/logs/$(basename "$conf" .conf)  # name servers all log to namesrv.log
    fi
    "$CONTROLLER_BIN" -c "$conf" --logDir="$logs" &
    BROKER_PIDS+=($!)
done

for entry in "${BROKERS[@]}"; do
    conf=${entry%%:*}
    store=$DATA/${entry##*:}
    STORES+=("$store")
    "$BROKER_BIN" -c "$conf" -n "$NAMESRV_ADDR" \
        --storePathRootDir="$store" --logDir="$DATA/logs" &
    BROKER_PIDS+=($!)
done

echo "run-local: CLUSTER=$CLUSTER, name server 127.0.0.1:$NAMESRV_PORT," \
    "server pids ${BROKER_PIDS[*]}; Ctrl-C to stop"
echo "run-local: live dashboard: $BUILD_DIR/apps/mqdashboard/mqdashboard -n '$NAMESRV_ADDR'" \
    "(then open http://127.0.0.1:8089/)"
all_alive() {
    kill -0 "$NS_PID" 2>/dev/null || return 1
    for pid in "${BROKER_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null || return 1
    done
}
# Wait until any process exits (or a signal arrives: the trap stops them all).
while all_alive; do
    wait -n "$NS_PID" "${BROKER_PIDS[@]}" 2>/dev/null || true
done
echo "run-local: a server exited; stopping the others" >&2
