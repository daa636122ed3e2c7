"""test_uevent_jit.py - TAP tests of the Python JIT hook (no perf needed).
usage: python3 test_uevent_jit.py TMPDIR JIT-DUMP  (JIT-DUMP: t/jit-dump, the jitdump parser;
bindings/python/tests on PYTHONPATH for tap.py)"""
import errno
import os
import subprocess
import sys

import uevent.jit
import tap
from tap import ok
from tinyjit import CODE, compile_code

tmp, jit_dump = sys.argv[1], sys.argv[2]


def loads(path):
    """(name, addr, size, code) of each JIT_CODE_LOAD as the jitdump parser reads them, and
    whether the file is whole and ends in JIT_CODE_CLOSE."""
    p = subprocess.run([jit_dump, path], capture_output=True, text=True)
    out, last = [], None
    for line in p.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "load":
            head, _, name = rest.partition(" name=")
            f = dict(kv.split("=", 1) for kv in head.split())
            out.append((name, int(f["addr"], 16), int(f["size"]), bytes.fromhex(f["code"])))
        if not line.startswith(" "):
            last = kind
    return out, p.returncode == 0 and last == "close"


print("1..11")
mapf = os.path.join(tmp, "py.map")
with uevent.jit.session(dir=os.path.join(tmp, "jd"), perf_map_path=mapf) as jit:
    dump = jit.dump_path
    ok(dump.endswith("/jd/jit-%d.dump" % os.getpid()), "session() opens DIR/jit-PID.dump")
    mem, addr, fn = compile_code()
    jit.debug_info(addr, [(addr, 3, "tiny.py")])
    jit.code_load("py_fn", addr, len(CODE), CODE)
    ok(fn(12345) == 0, "the JIT-compiled function runs (returns 0 after 12345 iterations)")
    jit.code_load("py_fn_from_memory", addr + 16, 4)      # bytes read at addr
    jit.flush()                 # nothing batched here: a no-op that succeeds
    try:
        jit.code_unload(addr + 4096)
        ok(False, "unload of unknown code raises")
    except OSError as e:
        ok(e.errno == errno.ENOENT, "unload of unknown code raises OSError(ENOENT)")
recs, closed = loads(dump)
ok(closed, "leaving the with-block wrote JIT_CODE_CLOSE, records whole")
ok(len(recs) == 2 and recs[0][:3] == ("py_fn", addr, len(CODE)) and recs[0][3] == CODE,
   "JIT_CODE_LOAD carries name, address, size and the code bytes")
ok(recs[1][0] == "py_fn_from_memory" and recs[1][3] == bytes(4),
   "code=None copies the bytes from the address")
lines = open(mapf).read().splitlines()
ok(lines[:1] == ["%x %x py_fn" % (addr, len(CODE))], "perf-map line 'START SIZE name'")
try:
    jit.code_load("late", addr, 4)
    ok(False, "a closed session raises")
except OSError as e:
    ok(e.errno == errno.EBADF, "a closed session raises OSError(EBADF)")
try:
    jit.flush()
    ok(False, "flush() of a closed session raises")
except OSError as e:
    ok(e.errno == errno.EBADF, "flush() succeeds while open, raises OSError(EBADF) once closed")
s = uevent.jit.session(jitdump=False, perf_map=False)
ok(s.dump_path is None and s.perf_map_path is None, "jitdump and perf map can be turned off")
s.close()
import uevent.jit  # noqa: E402
with uevent.jit.session(dir=os.path.join(tmp, "pkg"), perf_map=False) as pj:
    pdump = pj.dump_path
    pj.code_load("pkg_fn", addr, len(CODE), CODE)
precs, pclosed = loads(pdump)
ok(pclosed and [r[:3] for r in precs] == [("pkg_fn", addr, len(CODE))],
   "the binding's package carries the JIT API as uevent.jit: its session writes a whole dump")
sys.exit(1 if tap.failed else 0)
