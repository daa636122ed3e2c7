"""bindings.py - Python's share of bench/bindings: ns per mark, disabled and enabled."""
import os
import time

import uevent

lib, ffi = uevent.lib, uevent.ffi


def measure(n, fn):
    best = 1e30
    for _ in range(5):
        t0 = time.perf_counter_ns()
        fn(n)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def loop(call, *args):
    def run(n):
        for _ in range(n):
            call(*args)
    return run


mark = uevent.mark
uevent.open("none", ignore_env=True)
print("python disabled uevent.mark %.2f" % measure(1000000, loop(mark, "x")))
print("python disabled cffi-noop %.2f" % measure(1000000, loop(lib.uevent_enabled)))
print("python disabled empty-loop %.2f" % measure(1000000, loop(lambda: None)))
uevent.open("file", path=os.environ.get("UEVENT_BENCH_FILE", "bench.uev"), ignore_env=True)
print("python enabled uevent.mark %.2f" % measure(100000, loop(mark, "x")))
print("python enabled cffi-uevent_mark %.2f" % measure(100000, loop(lib.uevent_mark, b"x")))
fd = os.open("/dev/null", os.O_WRONLY | os.O_APPEND)
print("python enabled os.write %.2f" % measure(100000, loop(os.write, fd, b"x\n")))
