"""arrays.py - records/s of the Python readers over one perf.data: the per-record objects
(PerfData iteration) and the batch path (uevent.read_arrays into NumPy), the best of
ROUNDS runs (five times as many for the batch path, which takes milliseconds).
Prints `per_record ROWS SECONDS` and `batch ROWS SECONDS`, rows = samples + uevents."""
import os
import sys
import time

import uevent


def per_record(path):
    n = 0
    with uevent.PerfData(path) as f:
        for r in f:
            if isinstance(r, (uevent.Sample, uevent.UEvent)):
                n += 1
    return n


def batch(path):
    a = uevent.read_arrays(path)
    return len(a.samples) + len(a.uevents)


# ARRAYS_CPU=1: the process's CPU time instead of the wall's (bench/cpus-read.sh)
clock = time.process_time if os.environ.get("ARRAYS_CPU") else time.perf_counter


def best(fn, path, rounds):
    b, n = None, 0
    for _ in range(rounds):
        t0 = clock()
        n = fn(path)
        dt = clock() - t0
        b = dt if b is None or dt < b else b
    return n, b


path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
batch(path)                             # NumPy's first-use costs and the page cache, once
for name, fn, k in (("per_record", per_record, 1), ("batch", batch, 5)):
    n, s = best(fn, path, rounds * k)
    print(f"{name} {n} {s:.6f}")
