#!/usr/bin/env python3
"""How long a write takes to become durable on this machine's disk when N processes share it, as
the N peers of a DLedger group on one host do (docs/benchmarks-notebook.md, DLedger,
"The group's commit wait, decomposed").

Each of N processes appends CHUNK KiB every millisecond to its own pre-zeroed file under DIR (so
no sync commits metadata, as a zero-filled CommitLog segment) while one syncer thread per
process makes them durable: each fdatasync covers everything written before it started, the
next starts as soon as it returns and new data exists (a follower's group commit). Prints, per
process, the syncs done and the latency from each write to the end of the first sync that covers
it: mean, p50, p99. A closed-loop load (mqbench with a fixed window) is governed by the mean.

Usage: bench/env/shared_disk_sync.py [--dir DIR] [--procs N] [--chunk KIB] [--seconds S]
       (defaults: the current directory, 3, 32 (32 MB/s per process: a 1 KiB-message group at
       about 32k msgs/s), 6)
"""
import argparse
import bisect
import os
import threading
import time
from multiprocessing import Process


def one(path, chunk, seconds, label):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    size = chunk * 1000 * (seconds + 1)
    step = 8 << 20
    zeros = b"\0" * step
    for off in range(0, size, step):
        os.pwrite(fd, zeros, off)
    os.fsync(fd)
    buf = b"x" * chunk
    cv = threading.Condition()
    state = {"seq": 0, "started": 0, "stop": False}
    writes = []  # (seq, time written)
    done = []  # (seq covered, time durable)

    def syncer():
        while True:
            with cv:
                while not state["stop"] and state["seq"] <= state["started"]:
                    cv.wait()
                if state["stop"]:
                    return
                target = state["started"] = state["seq"]
            os.fdatasync(fd)
            done.append((target, time.perf_counter()))

    t = threading.Thread(target=syncer)
    t.start()
    off = 0
    end = time.perf_counter() + seconds
    nxt = time.perf_counter()
    while time.perf_counter() < end:
        os.pwrite(fd, buf, off)
        off += chunk
        with cv:
            state["seq"] += 1
            writes.append((state["seq"], time.perf_counter()))
            cv.notify()
        nxt += 0.001
        pause = nxt - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
    with cv:
        state["stop"] = True
        cv.notify()
    t.join()
    os.close(fd)
    os.unlink(path)
    covered = [d[0] for d in done]
    lat = []
    for seq, at in writes:
        i = bisect.bisect_left(covered, seq)
        if i < len(done):
            lat.append((done[i][1] - at) * 1000)
    lat.sort()
    n = max(len(lat), 1)
    print(f"process {label}: {len(done)} syncs, write -> durable mean {sum(lat) / n:.2f} ms, "
          f"p50 {lat[n // 2]:.2f}, p99 {lat[n * 99 // 100]:.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=".")
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=32, help="KiB written per millisecond")
    ap.add_argument("--seconds", type=int, default=6)
    args = ap.parse_args()
    procs = [Process(target=one, args=(os.path.join(args.dir, f"comet_sync_probe_{i}"),
                                       args.chunk << 10, args.seconds, i))
             for i in range(args.procs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()


if __name__ == "__main__":
    main()
