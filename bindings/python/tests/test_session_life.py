"""test_session_life.py - a Session closed from another thread while next() waits (in a
child interpreter, whose crash would be the finding), no use after close, and the memory
200 sessions leave behind."""
import gc
import os
import subprocess
import sys
import threading
import time

from tap import ok, skip, diag, done, raises

ROUNDS = 25


def events_left():
    """Lines of uprobe_events that are this process's sessions' (-1: unreadable)."""
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            with open(os.path.join(d, "uprobe_events")) as f:
                return sum(ln.startswith(f"p:libuevent_{os.getpid()}_") for ln in f)
        except OSError:
            continue
    return -1


def child(how):
    """ROUNDS times: a thread waits in next(-1) (or read_batch, or iteration) while this
    one closes the session; prints what the reader got, how long close took, events left."""
    import uevent
    if how == "batch":
        try:
            import numpy  # noqa: F401
        except ImportError:
            print("skip read_batch needs NumPy", flush=True)
            return
    got, worst, left = [], 0.0, 0
    # one session open throughout, as a profiler's would be: the others share its
    # uprobe events, so their open and close skip making and removing them (fast)
    anchor = uevent.Session(transports="usdt")
    for i in range(ROUNDS):
        s = uevent.Session(transports="usdt")
        out = []

        def reader():
            try:
                if how == "next":
                    out.append(repr(s.next(-1)))
                elif how == "batch":
                    out.append(repr(s.read_batch(16, -1)))
                else:
                    out.append(repr(list(s)))
            except ValueError as e:
                out.append("closed" if "closed" in str(e) else repr(e))
            except Exception as e:      # noqa: BLE001 - what it was is the finding
                out.append(repr(e))
        t = threading.Thread(target=reader)
        t.start()
        time.sleep(i % 5 * 0.003)       # before it waits, and while it does
        t0 = time.monotonic()
        s.close()
        t.join(10)
        worst = max(worst, time.monotonic() - t0)
        got.append(out[0] if out else "still waiting")
    anchor.close()
    left = events_left()
    closed = sum(g == "closed" for g in got)
    others = sorted(set(g for g in got if g != "closed"))
    print(f"{closed} {worst:.3f} {left} {others}", flush=True)


if len(sys.argv) > 1:
    child(sys.argv[1])
    sys.exit(0)

import uevent  # noqa: E402

try:
    uevent.Session(transports="usdt").close()
    why = None
except uevent.Error as e:
    why = f"no usdt session here: {e}"

if why:
    skip(5, why)
    done()

def interpreter(how):
    """This interpreter; for read_batch one with NumPy: Debian's /usr/bin/python3
    (python3-numpy) where this one lacks it, as arrays.test does."""
    if how != "batch":
        return sys.executable
    try:
        import numpy  # noqa: F401
        return sys.executable
    except ImportError:
        pass
    deb = "/usr/bin/python3"
    if os.access(deb, os.X_OK) and subprocess.run(
            [deb, "-c", "import numpy, uevent"], capture_output=True).returncode == 0:
        return deb
    return sys.executable


for how in ("next", "batch", "iteration"):
    p = subprocess.run([interpreter(how), __file__, how], capture_output=True, text=True,
                       timeout=300)
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if line.startswith("skip "):
        skip(1, line[5:])
        continue
    parts = line.split(" ", 3)
    fine = (p.returncode == 0 and len(parts) == 4 and parts[0] == str(ROUNDS)
            and float(parts[1]) < 10 and parts[2] == "0")
    ok(fine, f"close() from another thread while {how} waits, {ROUNDS} times: the reader "
       f"raises ValueError (closed), the interpreter lives (exit {p.returncode}), "
       f"close took at most {parts[1] if len(parts) > 1 else '?'} s, uprobe events left "
       f"{parts[2] if len(parts) > 2 else '?'}")
    if not fine:
        diag(f"child: {line!r}; stderr: {p.stderr[-800:]}")

s = uevent.Session(transports="usdt")
s.close()
errs = [raises(ValueError, f) for f in (lambda: s.next(0), lambda: s.stats,
                                        lambda: s.read_batch(4, 0), s.fileno, s.enable)]
ok(all(e is not None and "closed" in str(e) for e in errs) and s.closed and repr(s) ==
   "<uevent.Session closed>", "a closed Session's next(), stats, read_batch(), fileno(), "
   "enable() raise ValueError (closed)")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one():
    with uevent.Session(transports="usdt") as s:
        for i in range(200):
            uevent.mark(f"mark {i}")
        s.next(10)                      # the others wait (held) in the session


anchor = uevent.Session(transports="usdt")     # fast opens and closes, as above
for _ in range(20):
    one()
gc.collect()
r0 = rss()
for _ in range(200):
    one()
gc.collect()
grown = rss() - r0
anchor.close()
ok(grown < 200 * 1024, f"200 sessions opened, read and closed: RSS grew {grown // 1024} KiB "
   f"(under 200 KiB: nothing kept per session)")
done()
