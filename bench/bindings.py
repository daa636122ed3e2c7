"""bindings.py - Python's share of bench/bindings: ns per mark, disabled and enabled; ns per
record read back through PerfData and a live usdt Session."""
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
uevent.open("file", path=os.environ.get("UEVENT_BENCH_FILE", "bench.perf.data"), ignore_env=True)
print("python enabled uevent.mark %.2f" % measure(100000, loop(mark, "x")))
print("python enabled cffi-uevent_mark %.2f" % measure(100000, loop(lib.uevent_mark, b"x")))
fd = os.open("/dev/null", os.O_WRONLY | os.O_APPEND)
print("python enabled os.write %.2f" % measure(100000, loop(os.write, fd, b"x\n")))

uevent.open("none", ignore_env=True)

# Reading: ns per record decoded into Python objects.
top = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
golden = os.path.join(top, "t", "data", "usdt.perf.data")
if os.path.exists(golden):
    nrec = sum(1 for _ in uevent.PerfData(golden))

    def read_files(n):
        for _ in range(n // nrec):
            for _ in uevent.PerfData(golden):
                pass
    print("python read PerfData-record %.2f" % measure(nrec * 100, read_files))
try:
    s = uevent.Session(transports="usdt", usdt_max_payload=64)
except uevent.Error as e:
    print("# python session: skipped (%s)" % e)
else:
    uevent.open("usdt", ignore_env=True)

    def marks_read(n):
        done = 0
        while done < n:
            for _ in range(1000):
                mark("x")
            for _ in range(1000):
                s.next(1000)
            done += 1000
    print("python read usdt-mark+Session.next %.2f" % measure(20000, marks_read))
    if s.stats.lost:
        print("# python session: %d lost" % s.stats.lost)
    s.close()
    uevent.open("none", ignore_env=True)
