"""test_arrays.py - TAP tests of the batch reader (PerfData.read_batch, uevent.read_arrays):
its NumPy rows against the per-record objects of the same files, batch edges, cut and
empty files; without NumPy, the clear ImportError."""
import atexit
import errno
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import done, ok, raises, skip  # noqa: E402

import uevent  # noqa: E402

top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
top_builddir = os.environ.get("top_builddir", top_srcdir)
data = os.path.join(top_srcdir, "t", "data")
cli = os.path.join(top_builddir, "tools", "uevent")
burn = os.path.join(top_builddir, "t", ".libs", "burn")
tmp = tempfile.mkdtemp(prefix="uevent-py-arrays-")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)   # however the script ends
GOLDEN = ["perf_records.le.perf.data", "perf_records.be.perf.data", "usdt.perf.data",
          "usdt.pipe.perf.data", "clock.perf.data"]
N_NUMPY = 16

try:
    import numpy  # noqa: F401
except ImportError:
    e = raises(ImportError, uevent.read_arrays, os.path.join(data, GOLDEN[0]))
    ok(e is not None and "NumPy" in str(e) and "python3-numpy" in str(e),
       f"without NumPy, `import uevent` works and read_arrays raises ImportError: {e}")
    skip(N_NUMPY, f"{sys.executable} has no numpy (Debian: python3-numpy)")
    done()

TRANSPORT = {uevent.lib.uevent_transport_name(t): t for t in range(uevent.lib.UEVENT_TRANSPORT_COUNT)}
TRANSPORT = {uevent.ffi.string(k).decode(): v for k, v in TRANSPORT.items()}


def per_record(path):
    """The rows the batch path must give, from the per-record objects; and the error."""
    samples, uevents, err = [], [], None
    try:
        with uevent.PerfData(path) as f:
            for r in f:
                if isinstance(r, uevent.Sample):
                    samples.append((r.time, r.pid, r.tid, r.cpu, r.event_index, r.ip, r.period,
                                    tuple(r.callchain)))
                elif isinstance(r, uevent.UEvent):
                    u = r.uevent
                    uevents.append((u.time or 0, u.pid or 0, u.tid or 0, u.cpu or 0,
                                    u.event_index, u.type, u.flags, TRANSPORT[r.transport],
                                    u.data))
    except uevent.Error as e:
        err = e.errno
    return samples, uevents, err


def rows(a):
    s = [(int(x["time"]), int(x["pid"]), int(x["tid"]), int(x["cpu"]), int(x["event_index"]),
          int(x["ip"]), int(x["period"]), tuple(int(c) for c in a.callchain(i)))
         for i, x in enumerate(a.samples)]
    u = [(int(x["time"]), int(x["pid"]), int(x["tid"]), int(x["cpu"]), int(x["event_index"]),
          int(x["type"]), int(x["flags"]), int(x["transport"]), a.payload(i))
         for i, x in enumerate(a.uevents)]
    return s, u


def by_batches(path, n):
    parts = []
    with uevent.PerfData(path) as f:
        for b in iter(lambda: f.read_batch(n), None):
            parts.append(b)
    return rows(uevent._arrays.concat(parts)), len(parts)


# golden files: every sample and uevent, field by field
for fn in GOLDEN:
    path = os.path.join(data, fn)
    ws, wu, _ = per_record(path)
    a = uevent.read_arrays(path)
    ok(rows(a) == (ws, wu) and (ws or wu),
       f"{fn}: read_arrays gives the per-record path's {len(ws)} samples and {len(wu)} uevents")
(bs, bu), nb = by_batches(os.path.join(data, "clock.perf.data"), 10)
ws, wu, _ = per_record(os.path.join(data, "clock.perf.data"))
ok((bs, bu) == (ws, wu) and nb == 9, f"clock.perf.data in batches of 10: the same rows, {nb} batches")
a = uevent.read_arrays(os.path.join(data, "perf_records.le.perf.data"))
ok(a.samples.dtype.names[:5] == ("time", "pid", "tid", "cpu", "event_index") and
   a.uevents["type"].dtype == numpy.uint32 and a.chains.dtype == numpy.uint64 and
   tuple(a.callchain(0)) == (0x401000, 0x401100, 0x401200) and a.payload(0) == b"hello perf\0",
   "perf_records.le.perf.data: columns by name, a callchain and a payload as written")
with uevent.PerfData(os.path.join(data, "perf_records.le.perf.data")) as f:
    e = raises(uevent.InvalidArgument, f.read_batch, 0)
    # buffers too small for one record grow until it fits; a record that does not fit
    # a batch that has rows already waits for the next
    r1 = uevent._arrays.read_batch(f._live(), 4, chain_cap=1, data_cap=1)
    r2 = uevent._arrays.read_batch(f._live(), 4, chain_cap=1, data_cap=1)
    ok(e is not None and (len(r1.samples), len(r1.uevents), len(r2.samples), len(r2.uevents))
       == (1, 0, 0, 1) and tuple(int(c) for c in r1.callchain(0))
       == (0x401000, 0x401100, 0x401200) and r2.payload(0) == b"hello perf\0",
       "read_batch(0) is refused; a callchain or payload larger than the buffer grows it")

# a recording with callchains, big enough for several batches
rec = os.path.join(tmp, "burn.data")
why = None
if os.geteuid() != 0:
    why = "needs root to record"
elif not os.access(burn, os.X_OK):
    why = "t/burn not built"
elif subprocess.run([cli, "record", "-F", "10000", "-o", rec, "--", burn, "0.5"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
    why = "uevent record -F failed"
if why:
    skip(5, why)
else:
    ws, wu, _ = per_record(rec)
    a = uevent.read_arrays(rec)
    deep = int((a.samples["chain_len"] > 2).sum())
    ok(rows(a) == (ws, wu) and len(ws) > 100 and deep > 0,
       f"t/burn under record -F: {len(ws)} samples ({deep} with callchains deeper than 2), "
       f"{len(wu)} uevents, as the per-record path")
    ok(by_batches(rec, 97)[0] == (ws, wu), "... and the same in batches of 97")
    # cut in the middle of a record: the whole ones, then ENODATA (as iterating)
    cut = os.path.join(tmp, "cut.data")
    with open(rec, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(os.path.getsize(rec) * 2 // 3 + 3))
    cs, cu, cerr = per_record(cut)
    e = raises(uevent.Error, uevent.read_arrays, cut)
    ok(cerr == errno.ENODATA and e is not None and e.errno == errno.ENODATA and
       rows(e.partial) == (cs, cu) and 0 < len(cs) < len(ws),
       f"a cut file: Error(ENODATA) after the {len(cs)} whole samples, in e.partial")
    with uevent.PerfData(cut) as f:
        n = 0
        e = None
        try:
            for b in iter(lambda: f.read_batch(50), None):
                n += len(b.samples)
        except uevent.Error as x:
            e = x
    ok(e is not None and e.errno == errno.ENODATA and n == len(cs),
       f"... read_batch gives the {n} rows first, then raises")
    # no samples, no uevents: a recording of a command that marks nothing
    empty = os.path.join(tmp, "empty.data")
    subprocess.run([cli, "record", "-o", empty, "--", "true"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    a = uevent.read_arrays(empty)
    with uevent.PerfData(empty) as f:
        first = f.read_batch()
    ok(len(a.samples) == len(a.uevents) == len(a.chains) == len(a.payloads) == 0 and
       a.samples.dtype.names is not None and first is None,
       "a recording without samples or uevents: empty arrays; read_batch: None")
# a live session, batch by batch until the program it started has exited
prog = os.path.join(top_builddir, "t", "mark-loop-static")
if not os.access(prog, os.X_OK):
    prog = os.path.join(top_builddir, "t", "mark-loop")
if os.geteuid() != 0 or not os.path.exists("/sys/bus/event_source/devices/uprobe"):
    skip(1, "needs root and uprobes for a usdt session")
else:
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)                # the child's "enabled N of 50" line is not TAP
    try:
        s = uevent.Session.spawn([prog, "50", "batched mark"], sample_period_ns=100000,
                                 callchain=True)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
    marks, sizes, evs = [], [], set()
    bad = raises(uevent.InvalidArgument, s.read_batch, 0)
    for b in iter(lambda: s.read_batch(16), None):
        sizes.append((len(b.samples), len(b.uevents)))
        marks += [b.payload(i) for i in range(len(b.uevents))]
        evs |= {int(e) for e in b.uevents["event_index"]}
    os.waitpid(s.pid, 0)
    names = s.event_names
    s.close()
    ok(marks == [b"batched mark\0"] * 50 and all(a <= 16 and u <= 16 for a, u in sizes) and
       len(sizes) >= 4 and bad is not None and all(names[e].startswith("libuevent:emit") for e in evs),
       f"Session.read_batch(16) until the program exits (spawned after NumPy mapped its "
       f"libraries): {len(marks)} of 50 marks in {len(sizes)} batches, read_batch(0) refused")
# this process's own marks, all waiting when read: batches full but the last (a session
# reads on while the largest record still fits; n rows of room are added to that)
if os.geteuid() != 0 or not os.path.exists("/sys/bus/event_source/devices/uprobe"):
    skip(1, "needs root and uprobes for a usdt session")
else:
    s = uevent.Session(0, transports=["usdt"])
    uevent.open("usdt", ignore_env=True)
    for i in range(300):
        uevent.mark(f"own mark {i}")
    marks, sizes = [], []
    for b in iter(lambda: s.read_batch(64, 200), None):
        sizes.append(len(b.uevents))
        marks += [b.payload(i) for i in range(len(b.uevents))]
    s.close()
    uevent.close()
    ok(marks == [f"own mark {i}\0".encode() for i in range(300)] and 5 <= len(sizes) < 300 // 8,
       f"Session.read_batch(64) of 300 waiting marks: all, in order, in {len(sizes)} batches")
# the OpenTelemetry context of each sample's thread: t/context-data.py's capture (known
# spans; cleared and half-written records have none), its ids as big-endian numbers
ctx = os.path.join(tmp, "ctx.data")
subprocess.run([sys.executable, os.path.join(top_srcdir, "t", "context-data.py"), ctx], check=True)
A, A1, A2, B, B1 = subprocess.run([sys.executable, os.path.join(top_srcdir, "t", "context-data.py"),
                                   "-", "--ids"], check=True, stdout=subprocess.PIPE,
                                  text=True).stdout.split()
a = uevent.read_arrays(ctx)
got = {}
for r in a.samples:
    hi, lo, sp = int(r["context_trace_hi"]), int(r["context_trace_lo"]), int(r["context_span"])
    k = ("%016x%016x" % (hi, lo), "%016x" % sp) if hi or lo else None
    got[k] = got.get(k, 0) + 1
with uevent.PerfData(ctx) as f:
    same = all(bytes(x.context_trace_id).hex() == "%016x%016x" % (int(r["context_trace_hi"]),
                                                                 int(r["context_trace_lo"]))
               for x, r in zip((x for x in f if isinstance(x, uevent.Sample)), a.samples)
               if x.context_err == 0)
ok(got == {(A, A1): 40, (A, A2): 20, (B, B1): 30, None: 10} and same and
   a.samples["context_span"].dtype == numpy.uint64,
   f"read_arrays: context_trace_hi/lo and context_span columns, spans as written: {got}")
zero = os.path.join(tmp, "zero.data")
open(zero, "wb").close()
e1 = raises(uevent.Error, uevent.read_arrays, zero)
e2 = raises(uevent.Error, uevent.PerfData, zero)
ok(e1 is not None and e2 is not None and e1.errno == e2.errno,
   f"a 0-byte file: read_arrays raises as PerfData does ({e1})")

done()
