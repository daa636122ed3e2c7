"""numba_app.py - a Numba program for the hook's tests: several jitted functions, one
compiled again for a second signature, an object-mode fallback with a lifted loop, and a
hot @njit loop that runs for SECONDS (argv[1], default 0.5). Unchanged by the hook: the
test turns it on from outside (UEVENT_JIT_NUMBA=1, or -c 'import uevent.jit.numba').
Prints "hot ITERATIONS" and the jitted functions' names as the hook should announce them.
"""
import os
import sys
import time
import warnings

import numba
import numpy as np

warnings.simplefilter("ignore")   # 0.56 warns that object-mode fallback is deprecated


@numba.njit
def scale(x):
    return x * 3 + 1


@numba.njit
def total(n):
    s = 0
    for i in range(n):
        s += scale(i)
    return s


@numba.njit
def dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


class Opaque:           # numba cannot type this: objmode() falls back to object mode
    k = 2


@numba.jit(forceobj=False)
def objmode(n):
    o = Opaque()
    t = 0
    for i in range(n):  # lifted out of the object-mode function and compiled on its own
        t += i * 2
    return t * o.k


@numba.njit
def hot(n, x):          # the hot loop: a chain the optimiser cannot fold
    for i in range(n):
        x = (x * 1103515245 + 12345) % 2147483648
    return x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    print("pid", os.getpid(), flush=True)
    assert total(10) == 145
    assert total(10.0) == 145          # a second signature: total(float64), scale(int64)
    a = np.arange(4, dtype=np.float64)
    assert dot(a, a) == 14.0
    assert objmode(10) == 180
    hot(10, 1)
    n, x, end = 0, 1, time.monotonic() + seconds
    while time.monotonic() < end:
        x = hot(2000000, x)
        n += 1
    print("hot", n)
    for d in (scale, total, dot, objmode, hot):
        for sig in d.signatures:
            print("func %s.%s(%s)" % (d.py_func.__module__, d.py_func.__qualname__,
                                      ", ".join(str(a) for a in sig)))


if __name__ == "__main__":
    main()
