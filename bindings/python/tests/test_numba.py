"""test_numba.py - TAP tests of the Numba hook (uevent.jit.numba), no perf needed.
usage: python3 test_numba.py TMPDIR JIT-DUMP   (a python with numba; the binding and
bindings/python/tests (tap.py) on PYTHONPATH; JIT-DUMP: t/jit-dump, the jitdump parser)"""
import atexit
import errno
import gc
import os
import subprocess
import sys
import warnings

import tap
from tap import ok

tmp, jit_dump = sys.argv[1], sys.argv[2]
# The session test 2 opens (the hook's defaults) writes perf's /tmp/perf-PID.map: removed
# at exit, also when a test raises, unless it was there before (not ours then).
MAP = "/tmp/perf-%d.map" % os.getpid()
if not os.path.lexists(MAP):
    atexit.register(lambda: os.path.lexists(MAP) and os.remove(MAP))
warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


def dump(path):
    """[(name, addr, size, code, line-entry or None)] of the loads, and whether the file
    is whole and ends in JIT_CODE_CLOSE."""
    p = subprocess.run([jit_dump, path], capture_output=True, text=True)
    out, last, entry = [], None, None
    for line in p.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "debug":
            entry = None
        elif line.startswith("  entry"):
            f = dict(kv.split("=", 1) for kv in line.split()[1:])
            entry = (f["file"], int(f["line"]))
        elif kind == "load":
            head, _, name = rest.partition(" name=")
            f = dict(kv.split("=", 1) for kv in head.split() if "=" in kv)
            out.append((name, int(f["addr"], 16), int(f["size"]), bytes.fromhex(f.get("code", "").rstrip(".")),
                        entry))
            entry = None
        if not line.startswith(" "):
            last = kind
    return out, p.returncode == 0 and last == "close"


print("1..18")
import uevent.jit.numba as hook  # noqa: E402
from uevent.jit.numba import demangle  # noqa: E402

ok(demangle("_ZN8__main__3hotB2v1B38c8tJTIcFHzwl2ILiXkcBV0KBSgP9CGZpAgA_3dExd") ==
   "__main__.hot(int64, float64)" and
   demangle("_ZN7cpython8__main__1fB2v3B38c8tJTIcFHzwl2ILiXkcBV0KBSgP9CGZpAgA_3dEd") ==
   "__main__.f(float64) [cpython wrapper]" and
   demangle("cfunc._ZN5numba7cpython7unicode11unicode_len12_3clocals_3e8len_implB2v9B4"
            "2c8tJTIcFHzwl2ILiXkcBV0KBSmNGHkyiCKJEEwA_3dE12unicode_type") ==
   "numba.cpython.unicode.unicode_len.<locals>.len_impl(unicode_type) [cfunc wrapper]" and
   demangle("_ZN3app3dotB2v5B2xxE5ArrayIdLi1E1C7mutable7alignedE") ==
   "app.dot(Array<float64, 1, C, mutable, aligned>)" and
   demangle("NRT_incref") == "NRT_incref" and demangle("_Zbroken9") == "_Zbroken9",
   "demangle: numba's names, wrappers, escapes and templates; others as they are")

import numba  # noqa: E402  (after the hook: it goes on when numba is imported)
ok(hook.enabled() and hook.session() is not None and
   not any(type(f).__name__ == "_AfterNumba" for f in sys.meta_path) and
   type(numba.__loader__).__name__ != "_Loader",
   "import uevent.jit.numba before numba: on once numba is imported, no trace left")
hook.disable()
ok(not hook.enabled(), "disable() turns it off")


@numba.njit
def early(x):
    return x + 1


early(1)            # compiled while off: announced when the hook goes on
jit = hook.enable(dir=os.path.join(tmp, "jd"), perf_map_path=os.path.join(tmp, "n.map"))
path = jit.dump_path
ok(path.endswith("/jd/jit-%d.dump" % os.getpid()), "enable(dir=...) opens DIR/jit-PID.dump")
ok(hook.enable() is jit, "enable() while on is a no-op returning the session")


@numba.njit
def poly(x, y):
    return x * y + 3


poly.compile("int64(int64, int64)")          # compiled, never called
loads, _ = dump(path)
names = [r[0] for r in loads]
ok("__main__.poly(int64, int64)" in names and
   "__main__.poly(int64, int64) [cpython wrapper]" in names,
   "a compile is announced when compile() returns, before any call")
cres = poly.overloads[(numba.int64, numba.int64)]
addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
rec = [r for r in loads if r[0] == "__main__.poly(int64, int64)"][0]
import ctypes  # noqa: E402
ok(rec[1] == addr and rec[2] > 0 and len(rec[3]) > 0 and
   rec[3] == ctypes.string_at(addr, rec[2])[:len(rec[3])],
   "its address is Numba's entry point, and the size's bytes are the code there")
ok(rec[4] == (__file__, poly.py_func.__code__.co_firstlineno),
   "its line entry is the source file and first line (%s)" % (rec[4],))
ok("__main__.early(int64)" in names, "code compiled before enable() is announced then")

poly(2.5, 1.0)                              # a new signature: compiled again
loads, _ = dump(path)
names = [r[0] for r in loads]
ok("__main__.poly(float64, float64)" in names, "a recompilation for a new signature is announced")


class Opaque:
    pass


@numba.jit
def fallback(n):
    o = Opaque()
    t = 0
    for i in range(n):
        t += i
    return t, o


fallback(5)
loads, _ = dump(path)
names = [r[0] for r in loads]
objm = fallback.overloads[(numba.int64,)].objectmode
ok(objm and "__main__.fallback(int64)" in names and
   any(n.startswith("__main__.fallback(") and "[lifted loop]" in n for n in names),
   "object-mode fallback: the function and its lifted loop are announced")


# Numba 0.56 keeps every library (LLVM's list only grows), so an object leaving the list
# is staged: one the hook announced that is no longer there is unloaded at the next look.
st = hook._state
gone = [r[1] for r in loads if r[0] == "__main__.early(int64)"]
st.seen[(1, 2, 3)] = gone
st.head = None
before = hook.stats()["unloads"]
st.drain()
ok(hook.stats()["unloads"] == before + 1 and (1, 2, 3) not in st.seen,
   "an object gone from LLVM's list has its code unloaded")

# A failure while announcing (here the session closed under the hook: EBADF) does not
# fail the program's compile: counted, said once on stderr.
hook.session().close()
import contextlib, io  # noqa: E401,E402
err = io.StringIO()
with contextlib.redirect_stderr(err):
    v = poly(True, 7)                   # a new signature: compiled, announcing fails
ok(v == 10 and hook.stats()["errors"] >= 1 and
   "uevent.jit session is closed" in err.getvalue(),
   "a failure to announce is counted and said, and the compile goes on (%s)"
   % err.getvalue().strip()[:90])

n_loads = len(loads)
hook.disable()
loads, closed = dump(path)
ok(closed and hook.session() is None, "disable() closes the session: the dump ends in CLOSE")
poly(1, 2.0)
ok(len(dump(path)[0]) == len(loads), "nothing is announced while off")

# A directory that is a symlink: enable() raises (uevent.jit's OSError) and stays off.
os.symlink(tmp, os.path.join(tmp, "link"))
try:
    hook.enable(dir=os.path.join(tmp, "link"))
    ok(False, "enable(dir=symlink) raises")
except OSError as e:
    ok(e.errno == errno.ELOOP and not hook.enabled(),
       "enable(dir=symlink) raises OSError(ELOOP) and leaves the hook off")

# LLVM's descriptor through the ELF symbol table (an llvmlite linking LLVM statically
# need not export it), in a fresh interpreter.
env = dict(os.environ, UEVENT_JIT_NUMBA_SYMTAB="1")
code = ("import uevent.jit.numba as h\n"
        "j = h.enable(dir=%r, perf_map=False)\nimport numba\n"
        "f = numba.njit(lambda x: x * 2)\nf(3)\n"
        "print(h.stats()['loads'], h._state.desc.version)\n" % os.path.join(tmp, "sym"))
p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
ok(p.returncode == 0 and int(p.stdout.split()[0]) >= 3 and p.stdout.split()[1] == "1",
   "LLVM's descriptor is found through the ELF symbol table too (%s)"
   % (p.stdout.strip() or p.stderr.strip()[-200:]))
# A disk-cache load (cache=True, second run) compiles nothing: no numba:compile event, the
# code is named by demangling its symbols.
mod = os.path.join(tmp, "cachemod.py")
with open(mod, "w") as f:
    f.write("import numba\n@numba.njit(cache=True)\ndef cached_fn(x):\n    return x * 7 + 1\n")
code = ("import sys, uevent.jit.numba as h\nsys.path.insert(0, %r)\n"
        "j = h.enable(dir=sys.argv[1], perf_map=False)\nimport cachemod\ncachemod.cached_fn(3)\n"
        "print(sum(cachemod.cached_fn.stats.cache_hits.values()), j.dump_path)\n" % tmp)
env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba-cache"))
runs = [subprocess.run([sys.executable, "-c", code, os.path.join(tmp, "c%d" % i)], env=env,
                       capture_output=True, text=True) for i in (1, 2)]
hits = [r.stdout.split() for r in runs]
cached = dump(hits[1][1])[0] if len(hits[1]) == 2 else []
ok([h[0] for h in hits] == ["0", "1"] and hits[1][1].startswith(os.path.join(tmp, "c2", "jit-")) and
   [r[4] for r in cached if r[0] == "cachemod.cached_fn(int64)"] == [None] and
   any(r[0] == "cachemod.cached_fn(int64) [cpython wrapper]" for r in cached),
   "enable(dir) before numba's import; a function loaded from Numba's disk cache is "
   "announced, by its demangled name (%s)"
   % (hits,))
sys.exit(1 if tap.failed else 0)
