#!/usr/bin/env python3
"""What a new page of page cache costs on this machine (docs/benchmarks-notebook.md, "Where
the group's CPU goes, and what did not help"). Writes N x 128 MiB into one file under DIR with
1 MiB buffered pwrite()s and prints the CPU time each 128 MiB took, then removes the file.

On a VM with free page reporting (a kernel command line with page_reporting.*), free memory is
handed back to the host, and the first touch of such a page faults on the host: here 16-20 ms
per 128 MiB while warm free memory lasts, 180-260 ms after (about 6 us per 4 KiB page). A
broker pays it for every new page of CommitLog, ConsumeQueue and index; a machine whose memory
is already full of page cache (reclaimed pages are warm) does not. Run it before comparing
figures across machines or sessions; benchmarks on the same machine compare within a run.

Usage: bench/env/first_touch.py [--dir DIR] [--segments N]   (defaults /tmp, 6)
"""
import argparse
import os
import resource


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--segments", type=int, default=6)
    args = ap.parse_args()
    chunk = 1 << 20
    seg = 128 << 20
    zeros = bytes(chunk)
    path = os.path.join(args.dir, f"comet_first_touch.{os.getpid()}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for i in range(args.segments):
            before = cpu_seconds()
            for at in range(i * seg, (i + 1) * seg, chunk):
                os.pwrite(fd, zeros, at)
            spent = cpu_seconds() - before
            print(f"128 MiB #{i}: {spent * 1000:.0f} ms CPU, "
                  f"{spent * 1e6 / (seg // 4096):.2f} us per 4 KiB page")
    finally:
        os.close(fd)
        os.unlink(path)
    try:
        cmdline = open("/proc/cmdline").read()
        reporting = [w for w in cmdline.split() if w.startswith("page_reporting")]
        print("free page reporting:", " ".join(reporting) if reporting else "not on the command line")
    except OSError:
        pass


if __name__ == "__main__":
    main()
