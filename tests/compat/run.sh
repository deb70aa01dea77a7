#!/usr/bin/env bash
# Runs the ali-ons compatibility tests against the built mqnamesrv + mqbroker.
#   tests/compat/run.sh [test files...]               (default: every scenario file)
#   tests/compat/run.sh --self-test [test files...]   the same tests against selftest/fake_cluster.js,
#                                                     to check the suite itself without a Comet build
#   tests/compat/run.sh --group MODE [test files...]  against a broker group instead of one broker:
#                                                     MODE 1m2s (SYNC_MASTER inSyncReplicas=2 + 2 slaves)
#                                                     or 1m2s-stopped (the same, one slave SIGSTOPped)
#                                                     or dledger (3 DLedger peers, n0 preferred leader)
#                                                     or controller (3 mqcontroller + 3 controller-mode
#                                                     brokers; adds failover.test.js: kill -9 of the
#                                                     elected master under live clients)
#                                                     or container (the tests' broker inside one
#                                                     mqbrokercontainer with the slave of a second
#                                                     group, whose master is a separate mqbroker;
#                                                     adds container.test.js: mqadmin removeBroker /
#                                                     addBroker of the tests' broker under live clients)
# Env: COMET_BUILD_DIR (default build/release, relative to the repository root), plus the COMPAT_*
# knobs documented in harness.js. COMPAT_TIMEOUT bounds the whole run (seconds, default 420),
# COMPAT_FILE_TIMEOUT each file (default 240).
# Exit status: non-zero if npm ci or any test fails.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"

command -v node >/dev/null || { echo "compat: node is not installed" >&2; exit 2; }
command -v npm >/dev/null || { echo "compat: npm is not installed" >&2; exit 2; }
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
if (( NODE_MAJOR < 18 )); then
    echo "compat: Node >= 18 is required (found $(node --version))" >&2
    exit 2
fi

# Install ali-ons exactly as locked when node_modules is missing or was installed from another lockfile.
STAMP=node_modules/.comet-lock.sha256
WANT=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [[ ! -d node_modules/ali-ons || ! -f $STAMP || "$(cat "$STAMP")" != "$WANT" ]]; then
    echo "compat: installing locked dependencies (npm ci)"
    timeout 300 npm ci --no-audit --no-fund --ignore-scripts
    echo "$WANT" > "$STAMP"
fi

if [[ "${1:-}" == "--group" ]]; then
    case "${2:-}" in
        1m2s|1m2s-stopped|dledger|controller|container) export COMPAT_GROUP=$2 ;;
        *) echo "compat: --group needs 1m2s, 1m2s-stopped, dledger, controller or container (got '${2:-}')" >&2; exit 2 ;;
    esac
    shift 2
    if [[ $COMPAT_GROUP == controller ]]; then
        echo "compat: broker group mode controller (3 controllers, 3 replicas: the elected master + 2 slaves)"
    elif [[ $COMPAT_GROUP == container ]]; then
        echo "compat: broker container mode (mqbrokercontainer: the tests' master + the slave of a second group)"
    else
        echo "compat: broker group mode $COMPAT_GROUP (master + 2 slaves)"
    fi
fi

if [[ "${1:-}" == "--self-test" ]]; then
    shift
    FAKE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/comet-compat-fake.XXXXXX")
    trap 'rm -rf "$FAKE_DIR"' EXIT
    for role in namesrv broker; do
        mkdir -p "$FAKE_DIR/apps/mq$role"
        printf '#!/bin/sh\nexec node "%s" %s "$@"\n' "$HERE/selftest/fake_cluster.js" "$role" \
            > "$FAKE_DIR/apps/mq$role/mq$role"
        chmod +x "$FAKE_DIR/apps/mq$role/mq$role"
    done
    export COMET_BUILD_DIR=$FAKE_DIR
    echo "compat: SELF-TEST against the JS stand-in in selftest/ (this does not test Comet)"
fi

if (( $# > 0 )); then
    FILES=("$@")
elif [[ -n "${FAKE_DIR:-}" ]]; then
    # The stand-in keeps everything in memory, so a broker restart loses data by design: no restart test.
    FILES=(send.test.js consume.test.js retry.test.js resume.test.js rebalance.test.js namesrv.test.js)
else
    FILES=(send.test.js consume.test.js retry.test.js resume.test.js rebalance.test.js restart.test.js
           namesrv.test.js)
    # Only controller mode can lose its master for good and elect another one.
    [[ ${COMPAT_GROUP:-} == controller ]] && FILES+=(failover.test.js)
    # Only a broker container can remove and add back one of its brokers.
    [[ ${COMPAT_GROUP:-} == container ]] && FILES+=(container.test.js)
fi

# One file at a time (each starts its own cluster; the machine is small), each bounded by timeout(1).
# --test-force-exit (Node >= 20.14) ends a file's process even if a client left a timer behind.
NODE_FLAGS=(--test)
node --help | grep -q -- '--test-force-exit' && NODE_FLAGS+=(--test-force-exit)
node --help | grep -q -- '--test-reporter=' && NODE_FLAGS+=(--test-reporter=spec)
PER_FILE_TIMEOUT=${COMPAT_FILE_TIMEOUT:-240}
DEADLINE=$(( $(date +%s) + ${COMPAT_TIMEOUT:-420} ))
failed=()
for f in "${FILES[@]}"; do
    left=$(( DEADLINE - $(date +%s) ))
    if (( left <= 0 )); then
        echo "compat: COMPAT_TIMEOUT reached before $f" >&2
        failed+=("$f (not run: time budget exhausted)")
        continue
    fi
    (( left < PER_FILE_TIMEOUT )) || left=$PER_FILE_TIMEOUT
    echo "== compat: $f"
    if ! timeout --kill-after=15 "$left" node "${NODE_FLAGS[@]}" "$f"; then
        failed+=("$f")
    fi
done
if (( ${#failed[@]} > 0 )); then
    echo "compat: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "compat: all ${#FILES[@]} files passed"
