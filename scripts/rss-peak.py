#!/usr/bin/env python3
"""Where a command's peak resident memory goes, by mapping.

    scripts/rss-peak.py [--interval SECONDS] -- COMMAND [ARGS...]
        Runs COMMAND (its stdout discarded), reads /proc/PID/smaps every INTERVAL (default
        0.002 s) and prints the peak RSS seen, the mappings that made it up (the binary's code,
        its read-only data, the heap, anonymous maps) and the RSS over time in MiB. A command
        that execs another (a shell script ending in `exec python ...`) is followed, since the
        PID stays the same. Sampling misses peaks shorter than the interval; GNU time's %M is
        the exact high-water mark.

    scripts/rss-peak.py --fault-around FILE
        Maps FILE read-only, touches one byte in each of its first 64 MiB (one a MiB) and
        prints how much RSS that cost, with no advice and with MADV_RANDOM and
        MADV_SEQUENTIAL. 64 touches costing 4 MiB means each fault maps 64 KiB of the
        file's cached pages (the kernel's fault-around), so a program's code costs
        RSS in 64 KiB pieces whatever it advises.

Linux only; the standard library only. Its figures are the peaks docs/performance.md states.
"""

from __future__ import annotations

import collections
import mmap
import re
import subprocess
import sys
import time

MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def smaps_by_mapping(pid: int) -> collections.Counter[str] | None:
    """RSS in KiB of each mapping (named by its path, or [anon], and its permissions)."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            text = f.read()
    except OSError:
        return None
    rss: collections.Counter[str] = collections.Counter()
    name = ""
    for line in text.splitlines():
        if MAPPING.match(line):
            parts = line.split()
            name = (parts[5] if len(parts) > 5 else "[anon]") + " " + parts[1]
        elif line.startswith("Rss:"):
            rss[name] += int(line.split()[1])
    return rss


def peak(command: list[str], interval: float) -> int:
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    best = 0
    best_map: collections.Counter[str] = collections.Counter()
    series: list[int] = []
    while child.poll() is None:
        rss = smaps_by_mapping(child.pid)
        if rss is None:
            break
        total = sum(rss.values())
        series.append(total // 1024)
        if total > best:
            best, best_map = total, rss
        time.sleep(interval)
    code = child.wait()
    print(f"peak RSS {best // 1024} MiB over {len(series)} samples (exit {code})")
    for name, kib in best_map.most_common(8):
        print(f"  {kib // 1024:5d} MiB  {name}")
    step = max(1, len(series) // 100)
    print("MiB over time:", " ".join(str(s) for s in series[::step]))
    return code


def resident_file_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssFile:"):
                return int(line.split()[1])
    return 0


def fault_around(path: str) -> None:
    with open(path, "rb") as f:
        advice: list[tuple[str, int | None]] = [
            ("none", None),
            ("MADV_RANDOM", mmap.MADV_RANDOM),
            ("MADV_SEQUENTIAL", mmap.MADV_SEQUENTIAL),
        ]
        for label, advise in advice:
            m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
            if advise is not None:
                m.madvise(advise)
            before = resident_file_kib()
            touched = 0
            for offset in range(0, min(len(m), 64 << 20), 1 << 20):
                touched += 1
                _ = m[offset]
            print(f"{label:16s} {resident_file_kib() - before:6d} KiB for {touched} touches")
            m.close()


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--fault-around":
        fault_around(argv[1])
        return 0
    interval = 0.002
    if argv[:1] == ["--interval"] and len(argv) > 1:
        interval = float(argv[1])
        argv = argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    return peak(argv, interval)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
