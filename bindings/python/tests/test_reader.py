"""test_reader.py - TAP tests of the Python reader API: PerfData and ring_read against the
C decoder (`uevent dump --json`), live Sessions, errors, descriptors."""
import atexit
import copy
import dataclasses
import errno
import gc
import json
import os
import pickle
import selectors
import shutil
import subprocess
import sys
import warnings
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import diag, done, ok, raises, skip  # noqa: E402

import uevent  # noqa: E402

top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
top_builddir = os.environ.get("top_builddir", top_srcdir)
data = os.path.join(top_srcdir, "t", "data")
cli = os.path.join(top_builddir, "tools", "uevent")
ffi, L = uevent.ffi, uevent.lib
tmp = tempfile.mkdtemp(prefix="uevent-py-reader-")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)   # however the script ends

# ---- the classes mirror the C structs -------------------------------------------------
MEMBERS = {uevent.Sample: "sample", uevent.Mmap: "mmap", uevent.Comm: "comm",
           uevent.Task: "task", uevent.Lost: "lost", uevent.Throttle: "throttle",
           uevent.Switch: "sw", uevent.Ksymbol: "ksymbol", uevent.BpfEvent: "bpf_event",
           uevent.UEvent: "uevent", uevent.Other: "other"}
# C member -> attribute, where the record's own header takes the C name
RENAMED = {(uevent.BpfEvent, "type"): "bpf_type"}
base = {f.name for f in dataclasses.fields(uevent.PerfRecord)}


def own_fields(cls):
    return [f.name for f in dataclasses.fields(cls) if f.name not in base]


def c_members(member):
    body = dict(ffi.typeof("union uevent_perf_body").fields)[member].type
    return [name for name, _ in body.fields]


for cls, member in MEMBERS.items():
    if cls in (uevent.UEvent, uevent.Other):
        continue
    want = [RENAMED.get((cls, m), m) for m in c_members(member)]
    ok(own_fields(cls) == want, f"{cls.__name__} has the members of union uevent_perf_body.{member}, in order")
ok(own_fields(uevent.Other) == ["data"] and c_members("other") == ["data", "size"],
   "Other has other.data (its size is len(data))")
ok({f.name for f in dataclasses.fields(uevent.PerfRead)}
   == {n for n, _ in ffi.typeof("struct uevent_perf_read").fields},
   "PerfRead has the members of struct uevent_perf_read")
ok([f.name for f in dataclasses.fields(uevent.SessionStats)]
   == [n for n, _ in ffi.typeof("struct uevent_session_stats").fields],
   "SessionStats has the members of struct uevent_session_stats")
ok(all(issubclass(c, tuple) and vars(c)["__slots__"] == () and dataclasses.is_dataclass(c)
       and c.__dataclass_params__.frozen for c in list(MEMBERS) + [uevent.SampleId, uevent.PerfRead]),
   "record classes are tuples without a __dict__ that keep the frozen dataclass interface")


# ---- PerfData against `uevent dump --json`, field by field ------------------------------
def jsonable(v):
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, uevent.PerfRead):     # a record class: a tuple too
        d = {f.name: jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
        return d
    if isinstance(v, tuple):
        return [jsonable(x) for x in v]
    return v


def compare(rec, j, where):
    """Differences between a Python record and the C decoder's JSON object of it."""
    diffs = []

    def eq(what, a, b):
        if a != b:
            diffs.append(f"{where}: {what}: python {a!r} != C {b!r}")

    eq("record", rec.type_name, j["record"])
    eq("type", rec.type, j["record_type"])
    eq("misc", rec.misc, j["misc"])
    eq("size", rec.size, j["size"])
    sid = {k: v for k, v in dataclasses.asdict(rec.sample_id).items() if v is not None}
    eq("sample_id", sid, j.get("sample_id", {}))
    member = MEMBERS[type(rec)]
    present = [m for m in set(MEMBERS.values()) if m in j and isinstance(j[m], dict)]
    eq("union member", [member], present)
    body = j.get(member, {})
    if isinstance(rec, uevent.UEvent):
        u = rec.uevent
        eq("transport", rec.transport, j.get("transport"))
        mine = {"record_type": u.record_type, "misc": u.misc, "record_size": rec.size,
                "format": u.format, "type": u.type, "flags": u.flags, "size": len(u.data),
                "data": u.data.hex()}
        ident = {"fields": 0}
        for k in ("pid", "tid", "time", "id", "stream_id", "cpu", "identifier"):
            v = getattr(u, k)
            ident[k] = 0 if v is None else v
            ident["fields"] |= 0 if v is None else {
                "pid": L.UEVENT_ID_TID, "tid": L.UEVENT_ID_TID, "time": L.UEVENT_ID_TIME,
                "id": L.UEVENT_ID_ID, "stream_id": L.UEVENT_ID_STREAM_ID,
                "cpu": L.UEVENT_ID_CPU, "identifier": L.UEVENT_ID_IDENTIFIER}[k]
        mine["id"] = ident
        mine["event_index"] = u.event_index
        eq("uevent", mine, body)
        eq("event_index", u.event_index, j.get("event_index"))
        p = u.payload
        if isinstance(p, uevent.Text):
            eq("text", p.text, j.get("text"))
        elif isinstance(p, uevent.Counter):
            eq("counter", (p.name, p.value), (j.get("name"), j.get("value")))
        elif isinstance(p, uevent.RangeBegin):
            eq("range", (p.id, p.parent, p.name), (j.get("id"), j.get("parent"), j.get("name")))
        elif isinstance(p, uevent.RangeEnd):
            eq("range end", p.id, j.get("id"))
        return diffs
    if isinstance(rec, uevent.Other):
        eq("other", {"size": len(rec.data), "data": rec.data.hex()}, body)
        return diffs
    mine = {}
    for m in c_members(member):
        mine[m] = jsonable(getattr(rec, RENAMED.get((type(rec), m), m)))
    eq(member, mine, body)
    return diffs


def dump_json(path):
    out = subprocess.run([cli, "dump", "--json", path], check=True, capture_output=True,
                         text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


perf_files = sorted(f for f in os.listdir(data) if f.endswith(".perf.data"))
ok(len(perf_files) >= 5, f"golden perf.data files: {perf_files}")
kinds = set()
decoded = {}
for fn in perf_files:
    path = os.path.join(data, fn)
    cj = dump_json(path)
    with uevent.PerfData(path) as f:
        recs = list(f)
    decoded[fn] = recs
    diffs = [] if len(recs) == len(cj) else [f"{len(recs)} records, C has {len(cj)}"]
    for i, (r, j) in enumerate(zip(recs, cj)):
        diffs += compare(r, j, f"{fn} record {i}")
        kinds.add(type(r).__name__)
    for d in diffs[:5]:
        diag(d)
    ok(not diffs and recs, f"{fn}: all {len(recs)} records agree with `uevent dump --json` field by field")
ok(kinds >= {"Sample", "Mmap", "Comm", "Task", "Lost", "Throttle", "Switch", "Ksymbol",
             "BpfEvent", "UEvent", "Other"}, f"every record class was compared ({sorted(kinds)})")
le, be = decoded.get("perf_records.le.perf.data"), decoded.get("perf_records.be.perf.data")
ok(le and [r for r in le if r.type < 64] == [r for r in be if r.type < 64],
   "the big-endian perf.data decodes to the same records as the little-endian one")
s = next((r for r in le or () if isinstance(r, uevent.Sample)), None)
ok(s is not None and s.read.values == ((10, 7, 0), (20, 9, 3)) and s.callchain == (0x401000, 0x401100, 0x401200)
   and s.branch_entries == ((0x1000, 0x2000, 3),) and s.raw == b"RAWDATA\0\x01\x02\x03\x04"
   and s.tls_user == b"TLS:trace-0123456789ab\0\0" and s.aux == b"AUXBYTES"
   and (s.weight_var1, s.weight_var2, s.weight_var3) == (300, 4, 5),
   "golden sample: group read, callchain, branches, raw, tls_user, aux, weight struct")
# What a dataclass gave, the record classes keep (they are tuples underneath).
names = [f.name for f in dataclasses.fields(uevent.Sample)]
e = None
try:
    s.ip = 1
except dataclasses.FrozenInstanceError as x:
    e = x
ok(e is not None and names[:4] == ["type", "misc", "size", "sample_id"]
   and list(s) == [getattr(s, n) for n in names] and len(dataclasses.astuple(s)) == len(names)
   and uevent.Sample(*[getattr(s, n) for n in names]) == s
   and uevent.Sample(**{n: getattr(s, n) for n in names}) == s,
   "a Sample: frozen; iterates and is made positionally in field order, or by keywords")
t = dataclasses.replace(s, ip=5)
ok(t.ip == 5 and t != s and t.callchain == s.callchain and hash(dataclasses.replace(t, ip=s.ip)) == hash(s)
   and dataclasses.asdict(s)["read"]["values"] == ((10, 7, 0), (20, 9, 3)) == s.read.values
   and all(pickle.loads(pickle.dumps(s, k)) == s for k in range(pickle.HIGHEST_PROTOCOL + 1))
   and copy.deepcopy(s) == s and copy.copy(s.sample_id) == s.sample_id,
   "dataclasses.replace / asdict, hash, pickle and copy work on records")
ok(repr(s.sample_id) == "SampleId(pid=100, tid=101, time=5000, id=7, stream_id=8, cpu=1, identifier=7)"
   and repr(s).startswith("Sample(type=9, misc=") and "callchain=(4198400, 4198656, 4198912)" in repr(s)
   and s != tuple(s) and uevent.PerfRead(*s.read) == s.read and uevent.PerfRead(*s.read) != uevent.SampleId(*[1] * 7),
   f"repr as a dataclass's; equal only within a class ({s.sample_id!r})")
u = uevent.Sample(*s)      # sample_id a SampleId from the start, not PerfData's cell
ok(type(s.sample_id) is uevent.SampleId and s.sample_id is s.sample_id and u == s and hash(u) == hash(s)
   and u.sample_id == s.sample_id and [r for r in le if r == u] == [s],
   "a PerfData sample's sample_id is made on first use and kept; equality and hash as if made at once")
with uevent.PerfData(os.path.join(data, "usdt.perf.data")) as f:
    ok(f.nr_events == 1 and f.event_name(0) == "sdt_libuevent:emit" and f.clockid == -1
       and f.byte_order == L.UEVENT_BO_LITTLE, f"usdt.perf.data: 1 event, named, perf's clock ({f.event_names})")
    e = raises(IndexError, f.event_name, 1)
    ok(e is not None, "event_name out of range is IndexError")
    ue = [r for r in f if isinstance(r, uevent.UEvent)]
ok(all(r.transport == "usdt" for r in ue) and [r.payload for r in ue]
   == [uevent.Text("golden mark")] * 3 + [uevent.Counter("golden", 7)],
   f"usdt.perf.data: its {len(ue)} usdt samples come back as 3 text marks and a counter")
with open(os.path.join(data, "perf-data.expect")) as fh:
    expect = {line.split()[0]: int(line.split()[2]) for line in fh if line.strip()}
with uevent.PerfData(os.path.join(data, "clock.perf.data")) as f:
    n = sum(isinstance(r, uevent.Sample) for r in f)
    ok(n == expect["clock.perf.data"] and f.clockid == -1 and f.nr_events == 1,
       f"clock.perf.data: {n} task-clock samples (perf script counts {expect['clock.perf.data']}), perf's clock")

# The raw golden records, decoded with the attr's format, are the perf.data's records.
ST = 0x3ffbfff
fmt = uevent.PerfFormat(sample_type=ST, read_format=0x1f, branch_sample_type=1 << 17,
                        sample_regs_user=0x7, sample_regs_intr=0x3, sample_id_all=True)
for tag, bo in (("le", "little"), ("be", "big")):
    with open(os.path.join(data, f"perf_records.{tag}.bin"), "rb") as fh:
        raw = fh.read()
    recs = list(uevent.decode_perf_records(raw, fmt, bo))
    want = [r for r in (decoded.get(f"perf_records.{tag}.perf.data") or ()) if r.type < 64]
    # a bare decode knows no events: its samples' and uevents' event_index is -1, the
    # file's say 0
    ev = lambda r: r.uevent.event_index if isinstance(r, uevent.UEvent) else r.event_index
    kinds = (uevent.Sample, uevent.UEvent)
    ok(all(ev(r) == 0 for r in want if isinstance(r, kinds)) and
       all(ev(r) == -1 for r in recs if isinstance(r, kinds)),
       f"perf_records.{tag}: the file's samples and uevents are of event 0, a bare decode's of none (-1)")
    want = [dataclasses.replace(r, event_index=-1) if isinstance(r, uevent.Sample) else
            dataclasses.replace(r, uevent=dataclasses.replace(r.uevent, event_index=-1))
            if isinstance(r, uevent.UEvent) else r for r in want]
    ok(recs == want and len(recs) == 16, f"perf_records.{tag}.bin: decode_perf_records gives the perf.data's {len(want)} records")
e = raises(ValueError, lambda: list(uevent.decode_perf_records(raw[:-3], fmt, "big")))
ok(isinstance(e, uevent.InvalidArgument) and e.errno == errno.EINVAL, "a truncated record raises InvalidArgument")

# ---- ring_read over t/data/ring.le.bin --------------------------------------------------
with open(os.path.join(data, "ring.le.bin"), "rb") as fh:
    img = fh.read()
if sys.byteorder != "little":
    skip(6, "the ring image is little-endian")
else:
    ring = bytearray(img)
    head = int.from_bytes(ring[1024:1032], "little")
    tail = lambda: int.from_bytes(ring[1032:1040], "little")  # noqa: E731
    e = raises(uevent.Error, uevent.ring_read, ring, 16)
    ok(e is not None and e.errno == errno.ENOSPC and tail() != head, "ring: a record larger than cap is ENOSPC, nothing taken")
    out = uevent.ring_read(ring)
    ok(len(out) > 0 and tail() == head, f"ring: {len(out)} bytes read, data_tail advanced to data_head")
    rfmt = uevent.PerfFormat(sample_type=(1 << 1) | (1 << 2) | (1 << 7) | (1 << 16), sample_id_all=True)
    recs = list(uevent.decode_perf_records(out, rfmt))
    wrapped = b"wrapped mark, longer than the 24 bytes left before the end\0"
    ok(len(recs) == 3 and isinstance(recs[0], uevent.UEvent) and recs[0].data == wrapped
       and recs[0].sample_id.time == 1000 and recs[0].sample_id.cpu == 1,
       "ring: the record that wraps comes out whole, a uevent at time 1000")
    ok(isinstance(recs[1], uevent.Lost) and recs[1].lost == 3 and recs[1].id == 7 and recs[1].sample_id.time == 2000,
       "ring: then a LOST record of 3")
    ok(isinstance(recs[2], uevent.UEvent) and recs[2].payload == uevent.Text("after")
       and uevent.ring_read(ring) == b"", "ring: then the uevent after it; empty after the read")
    ring[1024:1032] = (tail() + 8192).to_bytes(8, "little")
    e = raises(ValueError, uevent.ring_read, ring)
    ok(e is not None and e.errno == errno.EINVAL and tail() == int.from_bytes(ring[1024:1032], "little"),
       "ring: head - tail > size is InvalidArgument and the tail catches up")
e = raises(ValueError, uevent.ring_read, img)
ok(isinstance(e, uevent.InvalidArgument), f"ring_read of read-only bytes is InvalidArgument ({e})")

# ---- PerfData errors, descriptors -----------------------------------------------------
e = raises(FileNotFoundError, uevent.PerfData, os.path.join(tmp, "missing.data"))
ok(isinstance(e, uevent.Error) and e.errno == errno.ENOENT, f"missing perf.data is FileNotFoundError ({e})")
bad = os.path.join(tmp, "bad.data")
with open(bad, "wb") as fh:
    fh.write(b"not a perf.data file at all, just words")
e = raises(ValueError, uevent.PerfData, bad)
ok(isinstance(e, uevent.InvalidArgument) and e.errno == errno.EINVAL, f"garbage is InvalidArgument ({e})")
with open(os.path.join(data, "perf_records.le.perf.data"), "rb") as fh:
    pr = fh.read()
trunc = os.path.join(tmp, "trunc.data")
with open(trunc, "wb") as fh:
    fh.write(pr[:1500])
# a pipe-mode file cut inside a record: its whole records, then ENODATA at the cut
ends, off = [], 16
while off + 8 <= len(pr):
    off += int.from_bytes(pr[off + 6:off + 8], "little")
    ends.append(off)
whole = [x for x in ends if x <= 1500]
def read_until_error(path):
    """(records read, the error that ended the reading or None, the offset then)"""
    got, e = 0, None
    with uevent.PerfData(path) as f:
        try:
            for _ in f:
                got += 1
        except uevent.Error as x:
            e = x
        return got, e, f.offset


got, e, at = read_until_error(trunc)
ok(isinstance(e, uevent.Error) and e.errno == errno.ENODATA and got == len(whole) and
   at == whole[-1] and f"offset {at}" in str(e),
   f"a pipe-mode file cut inside a record: {got} records, then ENODATA at offset {at} ({e})")
# The second MMAP2 (at byte 856) claims a 255-byte build id: framing holds, decoding fails.
corrupt = bytearray(pr)
corrupt[856 + 8 + 32] = 0xFF
with open(trunc, "wb") as fh:
    fh.write(corrupt)
got, e, at = read_until_error(trunc)
ok(isinstance(e, uevent.InvalidArgument) and got == 4 and at == 856 and "offset 856" in str(e),
   f"a corrupt record: {got} records, then InvalidArgument at offset {at} ({e})")
f = uevent.PerfData(os.path.join(data, "usdt.perf.data"))
f.close()
f.close()
ok(f.closed and raises(ValueError, next, f) is not None and raises(ValueError, lambda: f.nr_events) is not None,
   "PerfData.close is idempotent; a closed PerfData refuses to read")
f = uevent.PerfData(os.path.join(data, "usdt.perf.data"))
it = iter(f)
first = [next(it), next(it)]
f.close()
ok(len(first) == 2 and raises(ValueError, next, it) is not None and raises(ValueError, iter(f).__next__) is not None,
   "closing a PerfData while iterating it ends the iteration with ValueError (nothing read after)")


def nfds():
    return len(os.listdir("/proc/self/fd"))


small = os.path.join(data, "perf_records.le.perf.data")
gc.collect()
before = nfds()
for i in range(10000):
    f = uevent.PerfData(small)
    next(f)
    del f
gc.collect()
ok(nfds() == before, f"10000 PerfData dropped without close: no fd leak ({before} -> {nfds()})")
for i in range(1000):
    with uevent.PerfData(small) as f:
        pass
ok(nfds() == before, "1000 PerfData in with-blocks: no fd leak")

# ---- Session: argument errors (no perf needed) ------------------------------------------
for kw, what in (({"pid": -2}, "pid -2"), ({"pid": "1"}, "a string pid"),
                 ({"transports": "carrier-pigeon"}, "an unknown transport"),
                 ({"transports": []}, "no transports"), ({"ring_pages": 3}, "ring_pages 3"),
                 ({"tls_user": 1 << 16}, "tls_user 65536"), ({"sample_period_ns": -1}, "a negative period"),
                 ({"wakeup_events": 1 << 32}, "wakeup_events 2**32"), ({"usdt_max_payload": 1.5}, "a float")):
    e = raises(ValueError, uevent.Session, **kw)
    ok(isinstance(e, uevent.InvalidArgument) and e.errno == errno.EINVAL, f"Session({what}) is InvalidArgument")

# the errno -> exception mapping that refusals go through
for err, cls in ((errno.EACCES, PermissionError), (errno.EPERM, PermissionError),
                 (errno.ENOENT, FileNotFoundError), (errno.ESRCH, ProcessLookupError)):
    x = uevent._error(err)
    ok(isinstance(x, cls) and isinstance(x, uevent.Error) and x.errno == err,
       f"errno {errno.errorcode[err]} raises a {cls.__name__} that is a uevent.Error")

# ---- Session: live, through the usdt transport ----------------------------------------
LIVE = 22


def st_trunc(s):
    return s.stats.truncated


def open_session(**kw):
    try:
        return uevent.Session(transports="usdt", **kw), None
    except uevent.Error as e:
        return None, f"no usdt session here: {e}"


s, why = open_session(usdt_max_payload=256)
if s is None:
    skip(LIVE, why)
else:
    ok(s.transports == ("usdt",) and s.fileno() >= 0 and isinstance(s.reason, str),
       f"usdt session: transports {s.transports}, fd {s.fileno()}, reason {s.reason!r}")
    ok(uevent.open("usdt", ignore_env=True) == "usdt" and uevent.enabled(), "the usdt transport is enabled while a session listens")
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ)
    N = 500
    for i in range(N):
        uevent.mark("mark %d", i)
    uevent.counter("queue_depth", -42)
    uevent.emit(L.UEVENT_TYPE_USER + 3, bytes(range(200)))
    with uevent.range("outer"):
        pass
    uevent.mark("x" * 400)
    ready = sel.select(5)
    ok(len(ready) == 1 and ready[0][0].fileobj is s, "the session polls readable through selectors")
    recs = []
    while True:
        r = s.next(500)
        if r is None:
            break
        recs.append(r)
    sel.close()
    marks = [r for r in recs if isinstance(r.payload, uevent.Text)]
    ok(len(recs) == N + 5 and all(isinstance(r, uevent.UEvent) and r.transport == "usdt" for r in recs),
       f"{len(recs)} records, all usdt uevents (want {N + 5})")
    ok([m.payload.text for m in marks] == [f"mark {i}" for i in range(N)], f"the {N} marks in order, exact text")
    ok(all(r.sample_id.pid == os.getpid() and r.sample_id.tid == os.getpid() for r in recs),
       "every record carries our pid and tid")
    ok(all(a.sample_id.time <= b.sample_id.time for a, b in zip(recs, recs[1:])), "in time order")
    tail = recs[N:]
    ok(len(tail) == 5 and tail[0].payload == uevent.Counter("queue_depth", -42)
       and tail[1].payload == uevent.Raw(L.UEVENT_TYPE_USER + 3, bytes(range(200)))
       and tail[2].payload.name == "outer" and tail[3].payload.id == tail[2].payload.id,
       "counter, 200-byte user payload, range begin and end: exact payloads")
    st = s.stats
    ok(tail[4].data == b"x" * 256 and isinstance(tail[4].payload, uevent.Raw) and st_trunc(s) == 1,
       f"a 401-byte mark is cut to usdt_max_payload=256 bytes (Raw: no NUL left) and counted as truncated ({len(tail[4].data)})")
    st = s.stats
    ok(st.lost == 0 and st.lost_samples == 0 and st.corrupt == 0
       and st.uevents == N + 5 and st.records == N + 5, f"stats: nothing lost ({st})")
    uevent.mark("drained by iteration")
    uevent.mark("twice")
    import time
    time.sleep(0.05)
    it = [r.payload.text for r in s.records(0)]
    ok(it == ["drained by iteration", "twice"] and s.next(0) is None, "records(0) yields what is waiting now, then stops")
    fd = s.fileno()
    s.close()
    s.close()
    ok(s.closed and raises(ValueError, s.next, 0) is not None and raises(OSError, os.fstat, fd) is not None,
       "close is idempotent, releases the fd, and a closed session refuses next()")
    e = raises(ValueError, uevent.Session, transports="usdt", cpus="0-4095")
    e2 = raises(ValueError, uevent.Session, transports="usdt", cpus=[-1])
    with uevent.Session(transports="usdt", cpus=[0]) as one:
        pass
    ok(isinstance(e, uevent.InvalidArgument) and "cpus" in str(e) and e2 is not None and one.closed,
       f"cpus: a list of CPUs this system lacks is InvalidArgument ({e}); [0] opens")
    ok(raises(ValueError, uevent.Session.next, uevent.Session.__new__(uevent.Session), -5) is not None,
       "next(timeout_ms=-5) is InvalidArgument")

    # disabled start, enable, disable
    with uevent.Session(transports="usdt", enabled=False) as s:
        uevent.mark("before enable")
        a = s.next(100)
        s.enable()
        uevent.mark("enabled")
        b = s.next(1000)
        s.disable()
        uevent.mark("after disable")
        c = s.next(100)
    ok(a is None and b is not None and b.payload.text == "enabled" and c is None,
       "enabled=False starts disabled; enable() and disable() switch delivery")

    # all_records: the side-band records of a child we run
    with uevent.Session(transports="usdt", all_records=True, usdt_max_payload=64) as s:
        child = subprocess.run(["/bin/true"])
        uevent.mark("after the child")
        side = []
        while True:
            r = s.next(500)
            if r is None:
                break
            side.append(r)
    kids = {r.type_name: r for r in side if isinstance(r, uevent.Task)}
    cpid = kids["FORK"].pid if "FORK" in kids else None
    ok(cpid and kids["FORK"].ppid == os.getpid() and "EXIT" in kids and kids["EXIT"].pid == cpid
       and any(isinstance(r, uevent.Comm) and r.pid == cpid and r.comm == "true" for r in side)
       and any(isinstance(r, uevent.Mmap) and r.pid == cpid and r.filename.endswith("/true") for r in side)
       and isinstance(side[-1], uevent.UEvent) and side[-1].payload == uevent.Text("after the child"),
       f"all_records=True: FORK, COMM, MMAP2 and EXIT of a child, then our mark ({[r.type_name for r in side]})")

    # flight recorder: the rings are read only on snapshot()
    # inherit=False: only our threads; a tree's usdt rings also take other processes' marks
    with uevent.Session(transports="usdt", overwrite=True, inherit=False, usdt_max_payload=64) as s:
        for i in range(10):
            uevent.mark("flight %d", i)
        before = s.next(100)
        s.snapshot()
        got = []
        while True:
            r = s.next(0)
            if r is None:
                break
            got.append(r.payload)
    ok(before is None and got == [uevent.Text(f"flight {i}") for i in range(10)],
       f"overwrite=True: nothing until snapshot(), then the 10 marks in order ({len(got)})")

    # recording what the session reads to a pipe-mode perf.data
    rec_path = os.path.join(tmp, "session.perf.data")
    with open(rec_path, "wb") as out, uevent.Session(transports="usdt") as s:
        s.record_to(out)
        for i in range(20):
            uevent.mark("recorded %d", i)
        uevent.counter("recorded", 20)
        live = []
        while len(live) < 21:
            r = s.next(2000)
            if r is None:
                break
            live.append(r)
        e = raises(uevent.Error, s.record_to, out)
    with uevent.PerfData(rec_path) as f:
        back = [r for r in f if isinstance(r, uevent.UEvent)]
    ok(len(live) == 21 and [(r.payload, r.sample_id) for r in back] == [(r.payload, r.sample_id) for r in live],
       f"record_to: PerfData reads back the {len(back)} uevents the session returned, same payloads and ids")
    ok(e is not None and e.errno == errno.EBUSY, f"record_to twice is EBUSY ({e})")

    # `for rec in session` waits, and ends when the watched process has exited
    child = subprocess.Popen([sys.executable, "-c",
                              "import sys, time, uevent; uevent.open('usdt', ignore_env=True); "
                              "sys.stdin.readline(); [uevent.mark('last %d', i) for i in range(3)]; "
                              "time.sleep(0.3)"], stdin=subprocess.PIPE, cwd=tmp)
    try:
        with uevent.Session(child.pid, transports="usdt") as s:
            child.stdin.write(b"go\n")
            child.stdin.flush()
            it = [r.payload.text for r in s]
    finally:
        child.wait()
    ok(it == ["last 0", "last 1", "last 2"],
       f"for rec in Session(pid): the marks, waited for, and the end when the process exits ({it})")

    # another process, chosen by pid
    child = subprocess.Popen([sys.executable, "-c",
                              "import sys, uevent; uevent.open('usdt', ignore_env=True); sys.stdin.readline(); "
                              "[uevent.mark('child %d', i) for i in range(50)]"],
                             stdin=subprocess.PIPE, cwd=tmp)
    try:
        with uevent.Session(child.pid, transports="usdt") as s:
            child.stdin.write(b"go\n")
            child.stdin.flush()
            got = []
            while len(got) < 50:
                r = s.next(5000)
                if r is None:
                    break
                got.append(r)
            extra = s.next(200)
            lost = s.stats.lost
    finally:
        child.stdin.close()
        child.wait()
    ok([r.payload.text for r in got] == [f"child {i}" for i in range(50)] and extra is None
       and all(r.sample_id.pid == child.pid for r in got) and lost == 0,
       f"Session(pid) reads the 50 marks of another process ({len(got)}), none of ours")

    # a process that does not exist
    e = raises(uevent.Error, uevent.Session, 0x3ffffff0, transports="usdt")
    ok(isinstance(e, ProcessLookupError) and e.errno == errno.ESRCH,
       f"a missing pid is ProcessLookupError, ESRCH ({e!r})")

    # refused by perf_event_paranoid / tracefs: a child that gives up root
    if os.geteuid() != 0:
        skip(1, "not root: cannot drop to an unprivileged user")
    else:
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                uevent.Session(transports="usdt")
                msg = "opened"
            except PermissionError as x:
                msg = f"PermissionError {x.errno} {isinstance(x, uevent.Error)} {x}"
            except BaseException as x:  # noqa: B902 - report anything to the parent
                msg = f"other {x!r}"
            os.write(wfd, msg.encode())
            os._exit(0)
        os.close(wfd)
        msg = b""
        while True:
            chunk = os.read(rfd, 4096)
            if not chunk:
                break
            msg += chunk
        os.close(rfd)
        os.waitpid(pid, 0)
        msg = msg.decode()
        # libuevent reports the transport as unavailable (ENODEV) and says why in the
        # message; a perf_event_open refusal itself would be EACCES -> PermissionError.
        ok(msg.startswith("PermissionError") or ("Error(19," in msg and "Permission denied" in msg),
           f"as nobody, a usdt session is refused, saying why ({msg})")

    # descriptors: sessions dropped without close
    gc.collect()
    before = nfds()
    for i in range(50):
        s = uevent.Session(transports="usdt")
        s.next(0)
        del s
    gc.collect()
    mid = nfds()
    for i in range(50):
        with uevent.Session(transports="usdt") as s:
            pass
    ok(mid == before and nfds() == before, f"100 Sessions dropped or closed: no fd leak ({before} -> {mid} -> {nfds()})")
    # 10,000 more, of a kind that needs no uprobe (the kernel takes ~70 ms to remove
    # one): the dummy event of BPF_EVENT records, half closed, all dropped
    opened = 0
    for i in range(10000):
        s = uevent.Session(transports="prctl", bpf_events=True)
        opened += 1
        if i % 2:
            s.close()
        del s
    gc.collect()
    ok(opened == 10000 and nfds() == before,
       f"10000 Sessions (half closed, all dropped) by garbage collection: no fd leak ({before} -> {nfds()})")

# ---- type hints: mypy accepts typed use of the reader API and catches a misuse -------
GOOD = """
from typing import Optional, Tuple
import selectors
import uevent

def first_time(s: uevent.Session) -> Optional[int]:
    r = s.next(0)
    if isinstance(r, uevent.UEvent):
        p = r.payload
        d: bytes = r.data
        t: str = r.transport
        return r.sample_id.time
    if isinstance(r, uevent.Sample):
        cc: Tuple[int, ...] = r.callchain
        be: Tuple[Tuple[int, int, int], ...] = r.branch_entries
        v: Tuple[Tuple[int, ...], ...] = r.read.values
        return r.ip + r.read.value
    return None

with uevent.Session(transports=["usdt"], ring_pages=64) as s:
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ)
    st: uevent.SessionStats = s.stats
    n: int = st.lost + st.lost_samples
    names: Tuple[str, ...] = s.transports
    for rec in s:
        k: str = rec.type_name
with uevent.PerfData("perf.data") as f:
    ev: Optional[str] = f.event_name(0)
    for rec in f:
        if isinstance(rec, uevent.Mmap):
            fn: str = rec.filename
            bid: bytes = rec.build_id
raw: bytes = uevent.ring_read(bytearray(8192))
for r in uevent.decode_perf_records(raw, uevent.PerfFormat(sample_type=6, sample_id_all=True)):
    sid: uevent.SampleId = r.sample_id
"""
BAD = """
import uevent
with uevent.PerfData("perf.data") as f:
    for rec in f:
        if isinstance(rec, uevent.Comm):
            x: int = rec.comm
"""


def mypy_cmd():
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run([py, "-c", "import mypy"],
                                                 capture_output=True).returncode == 0:
            return [py, "-m", "mypy"]
    return None


mypy = mypy_cmd()
if mypy is None:
    skip(2, "mypy is not installed (Debian: mypy)")
else:
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(uevent.__file__)))
    env = dict(os.environ, MYPYPATH=pkg)
    res = []
    for name, text in (("good", GOOD), ("bad", BAD)):
        path = os.path.join(tmp, f"{name}.py")
        with open(path, "w") as fh:
            fh.write(text)
        res.append(subprocess.run(mypy + ["--strict", "--no-incremental", "--cache-dir=/dev/null",
                                          path],
                                  capture_output=True, text=True, env=env, cwd=tmp))
    ok(res[0].returncode == 0, f"mypy --strict accepts the package and typed use of Session, PerfData and records ({res[0].stdout.strip()[-300:]})")
    ok(res[1].returncode == 1 and 'expression has type "str", variable has type "int"' in res[1].stdout,
       f"mypy sees Comm.comm is a str ({res[1].stdout.strip()[-200:]})")

# ---- one API shape: open_capture, `import *`, the option spellings -------------------
uev = uevent.open_capture(os.path.join(data, "capture.le.perf.data"))
pd = uevent.open_capture(os.path.join(data, "perf_records.le.perf.data"))
with uev, pd:
    marks = [r for r in uev if r.type == 63]
    ok(isinstance(uev, uevent.PerfData) and len(marks) == 3
       and all(r.transport == "file" for r in marks)
       and isinstance(pd, uevent.PerfData) and len(list(pd)) == 17,
       "open_capture opens the file transport's capture and perf's as a PerfData")
e = raises(FileNotFoundError, uevent.open_capture, os.path.join(tmp, "missing"))
ok(isinstance(e, uevent.Error), f"open_capture of a missing file is FileNotFoundError ({e!r})")
star: dict = {}
exec("from uevent import *", star)
ok("range" not in star and "open" not in star and "Session" in star and "open_capture" in star,
   "`from uevent import *` does not shadow the builtins range and open")
e = raises(ValueError, uevent.Session, transports="usdt", no_inherit=True, disabled=True,
           ring_pages=3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    raises(ValueError, uevent.Session, transports="usdt", inherit=False, ring_pages=3)
ok(e is not None and any(issubclass(w.category, DeprecationWarning) and "no_inherit" in str(w.message)
                         for w in caught),
   "Session takes no_inherit= and disabled= as C, Lua and Rust do; inherit= warns it is deprecated")

done()
