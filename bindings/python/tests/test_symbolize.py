"""test_symbolize.py - TAP tests of uevent.symbolize: the symbolizer from Python, on made-up
files (no privileges) and on recordings of t/burn and t/jit-cjit (root)."""
import collections
import errno
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import diag, done, ok, raises, skip  # noqa: E402

import uevent  # noqa: E402
from uevent.symbolize import Symbol, Symbolizer  # noqa: E402

top_srcdir = os.environ.get("top_srcdir", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
top_builddir = os.environ.get("top_builddir", top_srcdir)
cli = os.path.join(top_builddir, "tools", "uevent")
tmp = tempfile.mkdtemp(prefix="uevent-py-sym-")

try:
    ks = os.path.join(tmp, "kallsyms")
    with open(ks, "w") as f:
        f.write("ffffffff81000000 T _stext\nffffffff81000100 T kfunc\n")
    with open(os.path.join(tmp, "perf-777.map"), "w") as f:
        f.write("7f0000100000 40 lua:hot\n"
                "7f0000200000 40 _ZN2at8internal15invoke_parallelEl\n"
                "7f0000300000 40 _RNvNtCs1234_7mycrate5inner3foo\n")
    with Symbolizer(kallsyms=ks, perf_map_dir=tmp) as s:
        k = s.lookup(1, 0xffffffff81000104)
        ok(isinstance(k, Symbol) and k.name == "kfunc" and k.offset == 4 and
           k.dso == "[kernel.kallsyms]" and k.source == "kernel", f"kernel symbol: {k}")
        m = s.lookup(777, 0x7f0000100008)
        ok(m.name == "lua:hot" and m.source == "perf_map", f"perf map: {m}")
        n = s.lookup(778, 0x1234, 5)
        ok(n.name is None and n.dso is None and n.source == "none", "nothing: name None")
        ok(s.comm(5) is None, "comm of an unknown thread: None")
        c, r = s.lookup(777, 0x7f0000200008), s.lookup(777, 0x7f0000300008)
        ok(c.name == "at::internal::invoke_parallel(long)",
           f"a C++ name demangled, as perf prints it: {c.name}")
        if "define HAVE_LIBIBERTY 1" in open(os.path.join(top_builddir, "config.h")).read():
            ok(r.name == "mycrate::inner::foo", f"a Rust v0 name demangled: {r.name}")
        else:
            skip(1, "built without libiberty (Debian: libiberty-dev): Rust v0 names stay raw")
    with Symbolizer(kallsyms=ks, perf_map_dir=tmp, demangle=False) as s:
        c, r = s.lookup(777, 0x7f0000200008), s.lookup(777, 0x7f0000300008)
        ok(c.name == "_ZN2at8internal15invoke_parallelEl" and
           r.name == "_RNvNtCs1234_7mycrate5inner3foo",
           f"demangle=False: the names as the binary has them: {c.name}, {r.name}")
        e = raises(TypeError, s.feed_from, object())
        ok(e is not None, "feed_from wants a reader")
    ok(raises(ValueError, s.lookup, 1, 1) is not None, "a closed Symbolizer raises ValueError")

    # feed_file: C's loop (uevent_symbolizer__feed_file), its errors as exceptions
    golden = os.path.join(top_srcdir, "t", "data", "perf_records.le.perf.data")
    with Symbolizer() as s, uevent.PerfData(golden) as f:
        one = sum(s.feed_from(f) for _ in f)
    clock = os.path.join(top_srcdir, "t", "data", "clock.perf.data")
    with Symbolizer() as s, uevent.PerfData(clock) as f:
        next(r for r in f if isinstance(r, uevent.Mmap))
        f.close()   # the record's file name points into the mapping this unmaps
        ok(raises(ValueError, s.feed_from, f) is not None, "feed_from a closed reader raises ValueError")
    with Symbolizer() as s:
        whole = s.feed_file(golden)
        e = raises(FileNotFoundError, s.feed_file, os.path.join(tmp, "none.data"))
        cut = os.path.join(tmp, "cut.data")
        with open(golden, "rb") as f, open(cut, "wb") as o:
            data = f.read()
            o.write(data[:len(data) * 2 // 3])
        c = raises(uevent.Error, s.feed_file, cut)
    ok(one > 0 and whole == one, f"feed_file uses what feeding one record at a time does ({whole})")
    ok(e is not None and "none.data" in str(e) and c is not None and
       c.errno == errno.ENODATA and "at offset" in str(c),
       f"feed_file: a missing file is FileNotFoundError, a cut one ENODATA, each saying "
       f"where ({e}; {c})")

    why = None
    if os.geteuid() != 0:
        why = "needs root for uevent record"
    elif not os.path.exists(os.path.join(top_builddir, "config.h")) or \
            "define HAVE_LIBDW 1" not in open(os.path.join(top_builddir, "config.h")).read():
        why = "built without libdw"
    if why:
        skip(6, why)
    else:
        # a live session with callchain=True, named as it goes (this process mapped its
        # code before the session: proc_maps)
        import time
        s = Symbolizer(proc_maps=True)
        chains, named = 0, 0
        with uevent.Session(sample_period_ns=1000000, callchain=True, all_records=True,
                            transports="usdt") as sess:
            end = time.monotonic() + 0.3
            x = 0
            while time.monotonic() < end:
                x = (x * 31 + 7) % 1000003
            for _ in range(100000):
                rec = sess.next(0)
                if rec is None:
                    break
                s.feed_from(sess)
                if isinstance(rec, uevent.Sample):
                    chains += len(rec.callchain) > 2
                    named += s.lookup(rec.pid, rec.ip, rec.time).name is not None
        ok(chains > 0 and named > 0,
           f"Session(callchain=True): {chains} samples with stacks, {named} named live")
        s.close()
        env = dict(os.environ)
        burn = os.path.join(top_builddir, "t", ".libs", "burn")
        # sampling, with no all_records: the COMM and MMAP records naming needs come too
        s = Symbolizer()
        kinds, hot = collections.Counter(), 0
        with uevent.Session.spawn([burn, "0.3"], sample_period_ns=1000000) as sess:
            for rec in sess:
                s.feed_from(sess)
                kinds[type(rec).__name__] += 1
                if isinstance(rec, uevent.Sample):
                    hot += s.lookup(rec.pid, rec.ip, rec.time).name == "burn_hot"
            os.waitpid(sess.pid, 0)
        ok(kinds["Mmap"] and kinds["Comm"] and hot,
           f"Session(sample_period_ns=) alone delivers what naming needs: {dict(kinds)}, "
           f"{hot} samples named burn_hot")
        s.close()
        data = os.path.join(tmp, "b.data")
        subprocess.run([cli, "record", "-o", data, "-F", "1000", "--", burn, "0.3"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        s = Symbolizer()
        names = collections.Counter()
        lines = set()
        with uevent.PerfData(data) as f:
            for rec in f:
                s.feed_from(f)
                if isinstance(rec, uevent.Sample):
                    y = s.lookup(rec.pid, rec.ip, rec.time)
                    names[y.name] += 1
                    if y.name == "burn_hot" and y.file:
                        lines.add((os.path.basename(y.file), y.line))
        total = sum(names.values())
        ok(total and names["burn_hot"] * 2 >= total,
           f"streaming: burn_hot named in {names['burn_hot']} of {total} samples")
        ok(any(fn == "burn.c" and ln > 0 for fn, ln in lines),
           f"DWARF lines: {sorted(lines)[:3]}")
        s.close()

        cjit = os.path.join(top_builddir, "t", "jit-cjit")
        jdata = os.path.join(tmp, "j.data")
        out = subprocess.run([cli, "record", "-o", jdata, "-F", "1000", "--", cjit, "0.2",
                              "move"], env=dict(os.environ, JITDUMPDIR=tmp),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, check=True).stdout
        addr = {w[0] + " " + w[1]: int(w[2], 16) for w in
                (line.split() for line in out.splitlines()) if len(w) == 3 and w[0] in ("load", "move")}
        s = Symbolizer()
        used = s.feed_file(jdata)
        by_time = collections.Counter()
        with uevent.PerfData(jdata) as f:
            for rec in f:
                if isinstance(rec, uevent.Sample) and addr.get("load a", -1) <= rec.ip < addr.get("load a", -1) + 16:
                    by_time[s.lookup(rec.pid, rec.ip, rec.time).name] += 1
        ok(used > 0 and by_time["uevent_cjit_hot_a"] > 0 and by_time["uevent_cjit_hot_b"] > 0,
           f"one address, two names by time (feed_file then lookup): {dict(by_time)}")
        with uevent.PerfData(jdata) as f:
            pids = {rec.pid for rec in f if isinstance(rec, uevent.Sample) and
                    addr.get("load a", -1) <= rec.ip < addr.get("load a", -1) + 16}
        late = [s.lookup(p, addr["load a"]) for p in pids]
        ok(late and all(y.name == "uevent_cjit_hot_b" and y.source == "jit_uevent" for y in late),
           "at the latest time the address is the later load's")
        s.close()
finally:
    # jit-cjit's jitdump is in tmp (JITDUMPDIR), its perf map at perf's /tmp/perf-PID.map:
    # that map goes by the jitdump's PID
    for dump in glob.glob(os.path.join(tmp, ".debug", "jit", "*", "jit-*.dump")):
        pid = os.path.basename(dump)[len("jit-"):-len(".dump")]
        if pid.isdigit() and os.path.lexists("/tmp/perf-%s.map" % pid):
            os.remove("/tmp/perf-%s.map" % pid)
    shutil.rmtree(tmp, ignore_errors=True)
done()
