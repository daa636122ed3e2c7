"""test_uevent.py - TAP tests of the Python binding: emit, read back, errors, golden files."""
import array
import atexit
import ctypes
import errno
import gc
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import diag, done, ok, raises, skip  # noqa: E402

import uevent  # noqa: E402
import uevent.jit  # noqa: E402

top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
data = os.path.join(top_srcdir, "t", "data")
L = uevent.lib

tmp = tempfile.mkdtemp(prefix="uevent-py-")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)   # however the script ends
path = os.path.join(tmp, "emit.perf.data")

# ---- emit through the file transport, read back --------------------------------------
ok(uevent.open("file", path=path, ignore_env=True) == "file", "open(file) selects the file transport")
ok(uevent.transport() == "file" and uevent.enabled(), "file transport is enabled")
ok(uevent.max_payload() == L.UEVENT_MAX_PAYLOAD, f"max_payload is {uevent.max_payload()}")
uevent.stats_reset()
uevent.mark("hello from python")
uevent.mark("rows=%d", 42)
uevent.mark(b"bytes mark")
uevent.counter("queue_depth", -7)
uevent.emit(L.UEVENT_TYPE_USER + 1, b"\x01\x02\x03")
with uevent.range("outer") as r:
    uevent.mark("inside")


@uevent.range("decorated")
def work(x):
    """doc kept"""
    return x * 2


ok(work(21) == 42 and work(1) == 2 and work.__doc__ == "doc kept", "@range decorator returns the result, keeps metadata")
aid = uevent.async_begin("async-op")
uevent.async_end(aid)
uevent.trace_context(bytes(range(16)), bytes(range(0xA0, 0xA8)), 1)
st = uevent.stats()
ok(st.emitted == 15 and st.dropped == 0, f"stats count 15 emitted, 0 dropped ({st})")

# ---- thread context: OTEP 4947's record, whatever the kernel -----------------------------
T, S, S2 = bytes(range(16)), bytes(range(0xA0, 0xA8)), bytes(range(0xB0, 0xB8))
uevent.thread_context(T, S, 1)
rec = L.uevent_thread_context_get()
ok(bytes(rec.span_id) == S and bytes(rec.trace_id) == T and rec.trace_flags == 1
   and rec.valid == 1 and rec.attrs_data_size == 0 and L.UEVENT_THREAD_CONTEXT_SIZE == 256,
   "thread_context stores ids and flags in the thread's 256-byte OTEP 4947 record, valid 1")
with uevent.thread_context(T, S2, 0, {0: "/orders", 1: "alice"}) as c:
    ok(bytes(rec.span_id) == S2 and rec.attrs_data_size == 2 + 7 + 2 + 5 and
       bytes(rec.attrs_data[0:9]) == b"\x00\x07/orders",
       "with thread_context(..., attrs): the inner span and its attributes")
    uevent.thread_context_attr(2, "x" * 200)
    e = raises(uevent.InvalidArgument, uevent.thread_context_attr, 2, "x" * 256)
    ok(e is not None and e.errno == errno.EINVAL and "256 bytes" in str(e),
       "thread_context_attr refuses values over 255 bytes: EINVAL, saying how long (%s)" % e)
ok(bytes(rec.span_id) == S and rec.valid == 1 and rec.attrs_data_size == 0,
   "leaving the with block brings the outer context back")
with uevent.thread_context(T, S2, 0, {1: "bob"}):
    with uevent.thread_context(T, S, 1):
        pass
    ok(bytes(rec.span_id) == S2 and bytes(rec.attrs_data[0:5]) == b"\x01\x03bob",
       "nested: the inner block restores the outer one's attributes too")
ok(isinstance(uevent.thread_context_registered(), bool), "thread_context_registered is a bool "
   f"({uevent.thread_context_registered()})")
uevent.thread_context_clear()
ok(rec.valid == 0 and bytes(rec.span_id) == bytes(8), "thread_context_clear: no context")
ok(raises(ValueError, uevent.thread_context, b"short", bytes(8)) is not None,
   "thread_context checks id lengths")
ok(raises(OSError, uevent.thread_context_attr, 0, "x") is not None,
   "thread_context_attr with no context: an error")
uevent.process_context("py-test", attr_keys=["http.route", "enduser.id"])
maps = open("/proc/self/maps").read()
ok("OTEL_CTX" in maps and uevent.process_context_add_keys(["tenant"]) == 2,
   "process_context publishes an OTEL_CTX mapping; add_keys appends at index 2")

with uevent.FileReader(path) as rd:
    recs = list(rd)
kinds = [type(x.payload).__name__ for x in recs]
diag(kinds)
ok(len(recs) == 15, f"file reader yields the 15 records ({len(recs)})")
ok(all(x.pid == os.getpid() and x.tid is not None for x in recs), "records carry our pid and a tid")
ok(all(a.time <= b.time for a, b in zip(recs, recs[1:])), "timestamps do not go backwards")
ok(recs[0].payload == uevent.Text("hello from python"), "mark decodes as Text")
ok(recs[1].payload.text == "rows=42" and recs[2].payload.text == "bytes mark", "formatted and bytes marks")
ok(recs[3].payload == uevent.Counter("queue_depth", -7), "counter decodes with its signed value")
ok(recs[4].payload == uevent.Raw(L.UEVENT_TYPE_USER + 1, b"\x01\x02\x03") and recs[4].data == b"\x01\x02\x03",
   "user type passes through as Raw bytes")
rb, inside, re_ = recs[5].payload, recs[6].payload, recs[7].payload
ok(isinstance(rb, uevent.RangeBegin) and rb.name == "outer" and rb.parent == 0 and rb.id != 0
   and inside.text == "inside" and isinstance(re_, uevent.RangeEnd) and re_.id == rb.id,
   "with range(): begin, body, end with the same id")
db, de = recs[8].payload, recs[9].payload
ok(db.name == "decorated" and de.id == db.id and recs[10].payload.id != db.id, "decorator opens a range per call")
ok(recs[12].payload.name == "async-op" and recs[12].payload.flags == L.UEVENT_RANGE_ASYNC
   and recs[13].payload.id == recs[12].payload.id, "async range begin and end")
ok(recs[14].payload == uevent.TraceContext(bytes(range(16)), bytes(range(0xA0, 0xA8)), 1), "trace context")

# ---- disabled: no formatting, no records ----------------------------------------------
uevent.open("none", ignore_env=True)
# (a usdt tracer attached system-wide, as a parallel test's may be, raises the word's low bits)
ok((not uevent.enabled() or uevent._word[0] & 0xffff) and uevent.transport() == "none",
   "transport none is disabled")


class Boom:
    def __int__(self):
        raise AssertionError("formatted while disabled")

    __index__ = __int__


if uevent._word[0] & 0xffff:
    # the probe fires under any transport: a tracer attached system-wide enables marks
    skip(1, "a usdt tracer is attached system-wide: marks are enabled for it")
else:
    before = uevent.stats().emitted
    e = raises(Exception, uevent.mark, "%d", Boom())
    uevent.counter("c", 1)
    with uevent.range("off"):
        pass
    ok(e is None and uevent.stats().emitted == before, "disabled mark formats nothing and emits nothing")

# ---- errors -------------------------------------------------------------------------
uevent.open("file", path=path, ignore_env=True)
uevent.stats_reset()
e = raises(uevent.Error, uevent.emit, L.UEVENT_TYPE_USER, b"x" * (L.UEVENT_MAX_PAYLOAD + 1))
ok(e is not None and e.errno == errno.E2BIG and isinstance(e, OSError), f"oversized emit raises OSError E2BIG ({e})")
ok(uevent.stats().dropped == 0, "a call the binding refuses never reaches the library: no drop counted")
big = bytes(L.UEVENT_MAX_PAYLOAD + 1)
ok(L.uevent_emit(L.UEVENT_TYPE_USER, uevent.ffi.from_buffer(big), len(big)) == -errno.E2BIG
   and uevent.stats().dropped_by.get("too_big", 0) == 1, f"drop counted by reason ({uevent.stats().dropped_by})")
e = raises(ValueError, uevent.open, "carrier-pigeon")
ok(isinstance(e, uevent.InvalidArgument) and e.errno == errno.EINVAL, f"unknown transport is ValueError/EINVAL ({e})")
ok(uevent.transport() == "file", "a refused open keeps the current transport")
e = raises(FileNotFoundError, uevent.FileReader, os.path.join(tmp, "missing.perf.data"))
ok(isinstance(e, uevent.Error) and e.errno == errno.ENOENT, "missing file is FileNotFoundError (a uevent.Error)")
bad = os.path.join(tmp, "bad.perf.data")
with open(bad, "wb") as f:
    f.write(b"NOTAFILE-but-long-enough-for-a-header")
e = raises(ValueError, uevent.FileReader, bad)
ok(e is not None and e.errno == errno.EINVAL, "not perf.data (bad magic) is EINVAL")
ok(raises(ValueError, uevent.decode, L.UEVENT_TYPE_COUNTER, b"abc") is not None, "truncated payload raises ValueError")
ok(raises(ValueError, uevent.decode, 0, b"x\0", "middle") is not None, "bad byte order name raises ValueError")
# C is given a buffer's bytes, not len(), which counts a memoryview's or array's items:
# fewer bytes than it holds, or (items of 0 bytes) more, read from past it
try:
    hi = uevent.decode(L.UEVENT_TYPE_TEXT, memoryview(b"hi!\0").cast("H"))   # len() 2
except ValueError as e:
    hi = e
ok(hi == uevent.Text("hi!"), f"decode of a memoryview of 2-byte items: all its bytes ({hi!r})")


class _Empty(ctypes.Structure):
    _fields_: list = []


none = (_Empty * 32)()  # len() 32, 0 bytes
with uevent.jit.session(jitdump=False, perf_map=False, uevent=False) as _j:
    jit_short = raises(ValueError, _j.code_load, "f", 0x1000, 32, none)
move = raises(ValueError, uevent.decode, L.UEVENT_TYPE_JIT_CODE_MOVE, none)
ok(move is not None and raises(ValueError, uevent.decode_record, none) is not None and
   jit_short is not None, "decode, decode_record, jit code_load of 32 items of 0 bytes: none read")
e = raises(ValueError, uevent.trace_context, b"short", b"12345678")
ok(e is not None, "trace_context checks id lengths")
with open(os.path.join(data, "capture.le.perf.data"), "rb") as f:
    cap = f.read()
trunc = os.path.join(tmp, "trunc.perf.data")
with open(trunc, "wb") as f:
    f.write(cap[:-5])
rd = uevent.FileReader(trunc)
next(rd), next(rd)
e = raises(uevent.Error, next, rd)
ok(e is not None and e.errno == errno.ENODATA and not isinstance(e, ValueError),
   f"truncated last record raises ENODATA ({e})")
rd.close()
rd.close()
ok(rd.closed and raises(ValueError, next, rd) is not None, "close is idempotent; a closed reader refuses next")

# ---- argument checks: the same whether or not anyone listens ------------------------
# Each bad call runs with transport none (nobody listens) and with the file transport
# (always on): it must raise the same exception, errno and message both times, and
# write nothing.
T, MAXP = L.UEVENT_TYPE_USER, L.UEVENT_MAX_PAYLOAD
tid16, sid8 = bytes(range(16)), bytes(range(8))
bad_calls = [
    ("emit(t, str)", lambda: uevent.emit(T, "abc"), TypeError, None),
    ("emit(t, None)", lambda: uevent.emit(T, None), TypeError, None),
    ("emit(t, 42)", lambda: uevent.emit(T, 42), TypeError, None),
    ("emit of a non-contiguous view", lambda: uevent.emit(T, memoryview(b"abcdef")[::2]), ValueError, errno.EINVAL),
    ("emit(-1, ...)", lambda: uevent.emit(-1, b"x"), ValueError, errno.EINVAL),
    ("emit(2**32, ...)", lambda: uevent.emit(1 << 32, b"x"), ValueError, errno.EINVAL),
    ("emit(1.0, ...)", lambda: uevent.emit(float(T), b"x"), TypeError, None),
    ("emit of MAX_PAYLOAD + 1 bytes", lambda: uevent.emit(T, bytes(MAXP + 1)), uevent.Error, errno.E2BIG),
    ("emit of a view of MAX_PAYLOAD + 4 bytes",
     lambda: uevent.emit(T, memoryview(array.array("i", [0] * (MAXP // 4 + 1)))), uevent.Error, errno.E2BIG),
    ("mark(None)", lambda: uevent.mark(None), TypeError, None),
    ("mark(42)", lambda: uevent.mark(42), TypeError, None),
    ("mark(bytearray)", lambda: uevent.mark(bytearray(b"x")), TypeError, None),
    ("mark(42, args)", lambda: uevent.mark(42, 1), TypeError, None),
    ("mark with a NUL", lambda: uevent.mark("a\0b"), ValueError, errno.EINVAL),
    ("mark(bytes) with a NUL", lambda: uevent.mark(b"a\0b"), ValueError, errno.EINVAL),
    ("mark with a lone surrogate", lambda: uevent.mark("\udc80"), ValueError, errno.EINVAL),
    ("mark of MAX_PAYLOAD chars", lambda: uevent.mark("x" * MAXP), uevent.Error, errno.E2BIG),
    ("mark of MAX_PAYLOAD UTF-8 bytes", lambda: uevent.mark("\u00e9" * (MAXP // 2)), uevent.Error, errno.E2BIG),
    ("counter(c, nan)", lambda: uevent.counter("c", float("nan")), TypeError, None),
    ("counter(c, 1.5)", lambda: uevent.counter("c", 1.5), TypeError, None),
    ("counter(c, '7')", lambda: uevent.counter("c", "7"), TypeError, None),
    ("counter(c, None)", lambda: uevent.counter("c", None), TypeError, None),
    ("counter(c, 2**63)", lambda: uevent.counter("c", 1 << 63), ValueError, errno.EINVAL),
    ("counter(c, -2**63 - 1)", lambda: uevent.counter("c", -(1 << 63) - 1), ValueError, errno.EINVAL),
    ("counter(None, 1)", lambda: uevent.counter(None, 1), TypeError, None),
    ("counter name with a NUL", lambda: uevent.counter("a\0b", 1), ValueError, errno.EINVAL),
    # counter payload: value 8, name_len 4, pad 4, name and its NUL
    ("counter name one byte too long", lambda: uevent.counter("n" * (MAXP - 16), 1), uevent.Error, errno.E2BIG),
    ("range(5)", lambda: uevent.range(5), TypeError, None),
    ("range name with a NUL", lambda: uevent.range("a\0b"), ValueError, errno.EINVAL),
    # range_begin payload: id 8, parent 8, flags 4, name_len 4, name and its NUL
    ("range name one byte too long", lambda: uevent.range("r" * (MAXP - 24)), uevent.Error, errno.E2BIG),
    ("async_begin(None)", lambda: uevent.async_begin(None), TypeError, None),
    ("async_begin name with a NUL", lambda: uevent.async_begin(b"a\0"), ValueError, errno.EINVAL),
    ("async_end(-1)", lambda: uevent.async_end(-1), ValueError, errno.EINVAL),
    ("async_end('x')", lambda: uevent.async_end("x"), TypeError, None),
    ("async_end(None)", lambda: uevent.async_end(None), TypeError, None),
    ("trace_context(str, ...)", lambda: uevent.trace_context("t" * 16, sid8), TypeError, None),
    ("trace_context short trace_id", lambda: uevent.trace_context(b"short", sid8), ValueError, errno.EINVAL),
    ("trace_context long span_id", lambda: uevent.trace_context(tid16, bytes(9)), ValueError, errno.EINVAL),
    ("trace_context flags 256", lambda: uevent.trace_context(tid16, sid8, 256), ValueError, errno.EINVAL),
    ("trace_context flags -1", lambda: uevent.trace_context(tid16, sid8, -1), ValueError, errno.EINVAL),
]


def outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - what it raised is what is compared
        return (type(e), getattr(e, "errno", None), str(e))
    return None


checks = os.path.join(tmp, "checks.perf.data")
uevent.open("none", ignore_env=True)
quiet = not uevent._word[0]
off = [outcome(c[1]) for c in bad_calls]
uevent.open("file", path=checks, ignore_env=True)
uevent.stats_reset()
on = [outcome(c[1]) for c in bad_calls]
st = uevent.stats()
with uevent.FileReader(checks) as rd:
    written = list(rd)
ok(not written and st.emitted == 0 and st.dropped == 0,
   f"{len(bad_calls)} refused calls write nothing, count nothing ({len(written)} records, {st})")
for (desc, _, exc, err), a, b in zip(bad_calls, off, on):
    right = b is not None and issubclass(b[0], exc) and (err is None or b[1] == err)
    if quiet:
        ok(right and a == b, f"{desc}: {b and b[0].__name__} {b and b[1]}, the same with nobody listening ({b and b[2]})")
    else:
        ok(right, f"{desc}: {b and b[0].__name__} {b and b[1]} (a usdt tracer listens: no run with nobody listening)")

# What the checks let through, at their limits, is what C takes.
good_calls = [
    lambda: uevent.mark("x" * (MAXP - 1)),
    lambda: uevent.mark("\u00e9" * ((MAXP - 1) // 2)),
    lambda: uevent.mark(b"bytes"),
    lambda: uevent.emit(T, bytes(MAXP)),
    lambda: uevent.emit(T, bytearray(b"xy")),
    lambda: uevent.emit(T, memoryview(array.array("i", [1, 2, 3]))),
    lambda: uevent.counter("n" * (MAXP - 17), (1 << 63) - 1),
    lambda: uevent.counter("c", -(1 << 63)),
    lambda: uevent.counter("c", True),
    lambda: uevent.async_end(uevent.async_begin("r" * (MAXP - 25))),
    lambda: uevent.trace_context(bytearray(tid16), memoryview(sid8), 255),
    lambda: uevent.async_end(0),
]
uevent.open("none", ignore_env=True)
off = [outcome(fn) for fn in good_calls]
uevent.open("file", path=checks, ignore_env=True)
on = [outcome(fn) for fn in good_calls]
ok(off == [None] * len(good_calls) and on == off, f"calls at the limits pass, nobody listening and listening ({off} {on})")
with uevent.FileReader(checks) as rd:
    recs = [r.payload for r in rd]
ok(len(recs) == 12 and recs[0] == uevent.Text("x" * (MAXP - 1)) and recs[1].text == "\u00e9" * ((MAXP - 1) // 2)
   and recs[3] == uevent.Raw(T, bytes(MAXP)) and recs[4] == uevent.Raw(T, b"xy")
   and recs[6] == uevent.Counter("n" * (MAXP - 17), (1 << 63) - 1) and recs[7].value == -(1 << 63)
   and recs[8] == uevent.Counter("c", 1) and recs[9].name == "r" * (MAXP - 25)
   and recs[11] == uevent.TraceContext(tid16, sid8, 255), f"they are recorded as given ({len(recs)} records)")
ok(recs[5] == uevent.Raw(T, array.array("i", [1, 2, 3]).tobytes()),
   f"emit of an int array sends all its bytes, not len() of them ({recs[5]})")

# ---- golden files: agree with t/codec.c field by field ------------------------------
seen = set()


def gold(name, tag):
    fn = f"{name}.{tag}.{'perf.data' if name == 'capture' else 'bin'}"
    seen.add(fn)
    with open(os.path.join(data, fn), "rb") as f:
        return f.read()


for tag, bo in (("le", "little"), ("be", "big")):
    d = uevent.decode
    t = d(L.UEVENT_TYPE_TEXT, gold("text", tag), bo)
    ok(t == uevent.Text("hello, perf"), f"golden text.{tag}")
    x = d(L.UEVENT_TYPE_RANGE_BEGIN, gold("range_begin", tag), bo)
    ok(x == uevent.RangeBegin(0x1122334455667788, 0x42, 1, "parse"), f"golden range_begin.{tag}")
    x = d(L.UEVENT_TYPE_RANGE_END, gold("range_end", tag), bo)
    ok(x == uevent.RangeEnd(0x1122334455667788, 1), f"golden range_end.{tag}")
    x = d(L.UEVENT_TYPE_COUNTER, gold("counter", tag), bo)
    ok(x == uevent.Counter("queue_depth", -12345), f"golden counter.{tag}")
    x = d(L.UEVENT_TYPE_JIT_CODE_LOAD, gold("jit_code_load", tag), bo)
    ok(x == uevent.JitCodeLoad(0x7F0000001000, 0x80, 7, "TRACE_12 app.lua:34"), f"golden jit_code_load.{tag}")
    x = d(L.UEVENT_TYPE_JIT_CODE_MOVE, gold("jit_code_move", tag), bo)
    ok(x == uevent.JitCodeMove(7, 0x7F0000001000, 0x7F0000002000, 0x80), f"golden jit_code_move.{tag}")
    x = d(L.UEVENT_TYPE_JIT_CODE_UNLOAD, gold("jit_code_unload", tag), bo)
    ok(x == uevent.JitCodeUnload(0x7F0000002000, 0x80, 7), f"golden jit_code_unload.{tag}")
    x = d(L.UEVENT_TYPE_JIT_DEBUG_INFO, gold("jit_debug_info", tag), bo)
    ok(x == uevent.JitDebugInfo(0x7F0000001000, (uevent.JitDebugEntry(0x7F0000001000, 34, 0, "app.lua"),
                                                   uevent.JitDebugEntry(0x7F0000001010, 35, 1, "app.lua"))),
       f"golden jit_debug_info.{tag}")
    x = d(L.UEVENT_TYPE_TRACE_CONTEXT, gold("trace_context", tag), bo)
    ok(x == uevent.TraceContext(bytes(range(16)), bytes(range(0xA0, 0xA8)), 1), f"golden trace_context.{tag}")
    st_tid_time = (1 << 1) | (1 << 2)
    r = uevent.decode_record(gold("record_v1", tag), bo, st_tid_time)
    ok(r.record_type == 63 and r.format == 1 and r.type == 0 and r.data == b"hello, perf\0"
       and r.payload == uevent.Text("hello, perf") and (r.pid, r.tid, r.time) == (100, 101, 123456789)
       and r.cpu is None, f"golden record_v1.{tag}")
    r = uevent.decode_record(gold("record_v0", tag), bo, st_tid_time, v0_layout=True)
    ok(r.record_type == 11 and r.format == 0 and r.data == b"hello, perf\0" and r.tid == 101,
       f"golden record_v0.{tag} (V0 layout)")
    gold("capture", tag)
    with uevent.FileReader(os.path.join(data, f"capture.{tag}.perf.data")) as rd:
        rs = list(rd)
    ok(len(rs) == 3 and [r.time for r in rs] == [1000, 2000, 3000]
       and rs[0].payload == uevent.Text("hello, perf")
       and rs[1].type == L.UEVENT_TYPE_COUNTER and rs[1].tid == 102
       and rs[1].payload == uevent.Counter("queue_depth", -12345)
       and rs[2].payload == uevent.RangeBegin(0x1122334455667788, 0x42, 1, "parse"),
       f"golden capture.{tag}.perf.data: 3 records, payloads in the file's byte order")
ok(raises(ValueError, uevent.decode_record, gold("record_v1", "le"), "little", 0) is not None,
   "record with a disagreeing sample_type is refused")
b = bytearray(gold("record_v1", "le"))
b[8] = 9
e = raises(uevent.Error, uevent.decode_record, bytes(b), "little", (1 << 1) | (1 << 2))
ok(e is not None and e.errno == errno.EPROTO, "unknown record format is EPROTO")
every = {f for f in os.listdir(data) if f.endswith(".bin") or f.startswith("capture.")}
# perf_records.* and ring.* belong to the reader API: tests/test_reader.py decodes them.
later = {f for f in every - seen if f.startswith(("perf_records.", "ring."))}
ok(every - later <= seen, f"every golden file is decoded ({sorted(every - seen - later)} left)")

# ---- GC closes descriptors ----------------------------------------------------------
cap_path = os.path.join(data, "capture.le.perf.data")


def nfds():
    return len(os.listdir("/proc/self/fd"))


gc.collect()
fds = nfds()
for i in range(10000):
    rd = uevent.FileReader(cap_path)
    next(rd)
    del rd
gc.collect()
after = nfds()
ok(after == fds, f"10000 FileReaders dropped without close: no fd leak ({fds} -> {after})")
for i in range(1000):
    with uevent.FileReader(cap_path) as rd:
        pass
ok(nfds() == fds, "1000 FileReaders in with-blocks: no fd leak")

# the reason channel: a refused open says why on this thread
e = raises(uevent.Error, uevent.open, "file", path="/nonexistent-dir/x.perf.data", ignore_env=True)
ok(e is not None and "nonexistent-dir" in uevent.reason(),
   f"a refused open: reason() says why ({uevent.reason()})")

# the README names every payload class and every Session option
import inspect  # noqa: E402
import typing  # noqa: E402
with open(os.path.join(top_srcdir, "bindings", "python", "README.md")) as f:
    readme = f.read()
classes = [c.__name__ for c in typing.get_args(uevent.Payload)]
opts = [n for n in inspect.signature(uevent.Session.__init__).parameters
        if n not in ("self", "inherit", "enabled") and not n.startswith("_")]
lacks = [n for n in classes + opts if f"| `{n}` |" not in readme]
ok(classes and opts and not lacks,
   f"README.md's tables have the {len(classes)} payload classes and {len(opts)} Session options"
   + (f"; lacks {lacks}" if lacks else ""))

# an import that fails says where it looked and what to do: a copy of the package
# without its extension, then one whose extension's RUNPATH names no libuevent
import glob  # noqa: E402
import subprocess  # noqa: E402
pkg = os.path.dirname(uevent.__file__)
for case in ("no extension", "no libuevent"):
    d = os.path.join(tmp, case.replace(" ", "-"))
    shutil.copytree(pkg, os.path.join(d, "uevent"))
    for ext in glob.glob(os.path.join(d, "uevent", "_uevent*.so")):
        if case == "no extension":
            os.unlink(ext)
            continue
        rp = ":".join(uevent._elf_runpath(ext)).encode()
        with open(ext, "rb") as f:
            data = f.read()
        if rp and data.count(rp) == 1:
            with open(ext, "wb") as f:
                f.write(data.replace(rp, b"/" + b"x" * (len(rp) - 1)))
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["PYTHONPATH"] = d
    p = subprocess.run([sys.executable, "-c", "import uevent"], env=env, text=True,
                       capture_output=True, cwd=d)
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    if case == "no libuevent" and p.returncode == 0:
        skip(1, "libuevent.so.0 loads from the system here (installed): nothing to miss")
        continue
    want = (["no extension for this Python", os.path.join(d, "uevent"), "./configure PYTHON="]
            if case == "no extension" else
            ["cannot load libuevent.so.0", "RUNPATH of", "LD_LIBRARY_PATH: unset", "make install"])
    ok(p.returncode != 0 and all(w in last for w in want) and "Traceback" in p.stderr and
       p.stderr.count("File ") <= 2,
       f"import with {case}: one ImportError naming where it looked and the fix ({last[:150]})")

done()
