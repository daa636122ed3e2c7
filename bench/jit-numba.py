"""jit-numba.py - bench/jit-numba: what uevent.jit.numba costs, hook on against hook off in
one run. Each round runs two fresh processes, one with the hook and one without (the order
flips every round); each warms Numba up, then measures, in CPU time:

  compile: compiling N fresh @njit functions (distinct source, nothing cached), with
           the hook announcing each (native function, wrappers, linked helpers);
  steady:  running an already compiled hot loop; the hook acts only when Numba
           compiles, so this row is the null check.

Per row: medians of CPU time, the median of the per-round ratios on/off and its 95%
confidence interval from order statistics (no assumption about the noise's shape), and
the time spent inside the hook per announced function.
usage: python3 jit-numba.py [ROUNDS] [N]   (uevent binding on PYTHONPATH)
"""
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings


def child(on, n, tmp):
    warnings.simplefilter("ignore")
    import uevent.jit.numba as hook
    import numba
    if not on:
        hook.disable()
    else:
        hook.disable()
        hook.enable(dir=tmp, perf_map_path=os.path.join(tmp, "bench.map"))
    spent = [0.0, 0]
    drain = hook._Hook.drain

    def timed_drain(self):
        t = time.process_time()
        before = self.loads
        drain(self)
        spent[0] += time.process_time() - t
        spent[1] += self.loads - before

    hook._Hook.drain = timed_drain

    def fresh(k, tag):
        out = []
        for i in range(k):
            ns = {}
            exec("def f%s%d(a, b):\n    s = 0\n    for j in range(a):\n"
                 "        s += (j * %d + b) %% 7\n    return s\n" % (tag, i, i + 3), ns)
            out.append(numba.njit(ns["f%s%d" % (tag, i)]))
        return out

    for f in fresh(3, "warm"):          # Numba's first compiles load its own code
        f.compile("int64(int64, int64)")

    @numba.njit
    def hot(n, x):
        for i in range(n):
            x = (x * 1103515245 + 12345) % 2147483648
        return x

    hot(10, 1)
    fs = fresh(n, "t")
    spent[:] = [0.0, 0]
    t = time.process_time()
    for f in fs:
        f.compile("int64(int64, int64)")
    c = time.process_time() - t
    t = time.process_time()
    hot(30000000, 1)
    h = time.process_time() - t
    print(c, h, spent[0], spent[1])


def ci(ratios):
    """Median and its 95% interval: order statistics n/2 -+ 0.98 sqrt(n)."""
    r = sorted(ratios)
    n = len(r)
    k = max(int(math.floor(n / 2 - 0.98 * math.sqrt(n))), 0)
    return r[n // 2], r[k], r[n - 1 - k]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    tmp = tempfile.mkdtemp(prefix="uevent-bench-numba.")
    res = {True: [], False: []}
    for r in range(rounds):
        for on in ((True, False) if r % 2 == 0 else (False, True)):
            d = os.path.join(tmp, "r%d%s" % (r, "on" if on else "off"))
            os.mkdir(d)
            out = subprocess.run([sys.executable, __file__, "child", "1" if on else "0",
                                  str(n), d], check=True, capture_output=True, text=True).stdout
            res[on].append([float(x) for x in out.split()])
    subprocess.run(["rm", "-rf", tmp])
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    print("bench/jit-numba: %d rounds, %d functions compiled a process (CPU time)" % (rounds, n))
    for i, name in ((0, "compile"), (1, "steady")):
        on = [x[i] for x in res[True]]
        off = [x[i] for x in res[False]]
        m, lo, hi = ci([a / b - 1 for a, b in zip(on, off)])
        print("  %-8s off %8.2f ms  on %8.2f ms  hook %+6.2f%% [%+.2f, %+.2f]"
              % (name, 1e3 * med(off), 1e3 * med(on), 100 * m, 100 * lo, 100 * hi))
    per = [x[2] / x[3] for x in res[True] if x[3]]
    fn = med([x[3] for x in res[True]])
    print("  inside the hook: %.1f us per announced function (%d a process: %d per @njit "
          "function), %.2f%% of the compile time"
          % (1e6 * med(per), fn, fn // n, 100 * med([x[2] / x[0] for x in res[True]])))


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(sys.argv[2] == "1", int(sys.argv[3]), sys.argv[4])
    else:
        main()
