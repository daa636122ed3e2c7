"""tap.py - the few TAP helpers the Python binding's tests share."""
import sys

n = 0
failed = 0


def ok(cond, desc):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + f" {n} - {desc}", flush=True)
    return bool(cond)


def skip(count, reason):
    global n
    for _ in range(count):
        n += 1
        print(f"ok {n} # SKIP {reason}", flush=True)


def diag(msg):
    print("# " + str(msg).replace("\n", "\n# "), flush=True)


def raises(exc, fn, *a, **kw):
    """The exception fn(*a, **kw) raised if it is an `exc`, else None."""
    try:
        fn(*a, **kw)
    except exc as e:
        return e
    return None


def done():
    print(f"1..{n}", flush=True)
    sys.exit(1 if failed else 0)
