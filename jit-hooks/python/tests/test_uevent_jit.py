"""test_uevent_jit.py - TAP tests of the Python JIT hook (no perf needed).
usage: python3 test_uevent_jit.py TMPDIR"""
import errno
import os
import struct
import sys

import uevent_jit
from tinyjit import CODE, compile_code

tmp = sys.argv[1]
n = failed = 0


def ok(cond, desc):
    global n, failed
    n += 1
    failed += not cond
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc), flush=True)


def loads(path):
    """(name, addr, size, code) of each JIT_CODE_LOAD, and whether the file ends in CLOSE."""
    data = open(path, "rb").read()
    out, off, last = [], 40, None
    while off + 16 <= len(data):
        rid, size = struct.unpack_from("<II", data, off)
        if rid == 0:
            addr, csize = struct.unpack_from("<QQ", data, off + 32)
            end = data.index(b"\0", off + 56)
            out.append((data[off + 56:end].decode(), addr, csize, data[end + 1:end + 1 + csize]))
        last, off = rid, off + size
    return out, last == 3 and off == len(data)


print("1..9")
print("# backend:", uevent_jit.backend().name)
mapf = os.path.join(tmp, "py.map")
with uevent_jit.session(dir=os.path.join(tmp, "jd"), perf_map_path=mapf) as jit:
    dump = jit.dump_path
    ok(dump.endswith("/jd/jit-%d.dump" % os.getpid()), "session() opens DIR/jit-PID.dump")
    mem, addr, fn = compile_code()
    jit.debug_info(addr, [(addr, 3, "tiny.py")])
    jit.code_load("py_fn", addr, len(CODE), CODE)
    ok(fn(12345) == 0, "the JIT-compiled function runs (returns 0 after 12345 iterations)")
    jit.code_load("py_fn_from_memory", addr + 16, 4)      # bytes read at addr
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
s = uevent_jit.session(jitdump=False, perf_map=False)
ok(s.dump_path is None and s.perf_map_path is None, "jitdump and perf map can be turned off")
s.close()
sys.exit(1 if failed else 0)
