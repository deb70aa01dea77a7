#!/usr/bin/env bash
# The main job: runs the local cluster from conf/ on 127.0.0.1 until Ctrl-C.
set -euo pipefail
BUILD_DIR=${1:-build/release}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
echo "run-local: nothing to run yet" >&2
exit 1
