#!/usr/bin/env bash
# Puts this machine in a broker host's steady state before a benchmark: memory full of clean
# page cache, so that new pages (CommitLog, ConsumeQueue, index) come from reclaimed cache
# instead of free memory. On a VM with free page reporting, free memory has been handed back to
# the host and its first touch faults on the host (bench/env/first_touch.py: 6-10 us per 4 KiB
# page here, against ~1 us once the cache is full): a 3-peer group on one host pays that for
# three copies of every message, a single broker for one.
# It reads a sparse file as large as the machine's memory (holes read as zeros: no disk I/O, a
# few seconds of CPU) and leaves it in DIR so that its pages stay cached; `--remove` deletes it.
# Usage: bench/env/fill_page_cache.sh [--remove] [DIR]    (DIR default /tmp, on the store's disk)
set -euo pipefail
REMOVE=0
if [[ ${1:-} == --remove ]]; then
    REMOVE=1
    shift
fi
FILE="${1:-/tmp}/comet_page_cache_fill"
if [[ $REMOVE == 1 ]]; then
    rm -f "$FILE"
    exit 0
fi
MEM_KIB=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
truncate -s "${MEM_KIB}K" "$FILE"
dd if="$FILE" of=/dev/null bs=1M status=none
awk '$1 == "MemFree:" || $1 == "Cached:" { printf "%s %d MiB  ", $1, $2 / 1024 } END { print "" }' \
    /proc/meminfo
