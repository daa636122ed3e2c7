"""test_spawn.py - TAP tests of Session.spawn (a program started under the session loses
none of its first marks) and of the event a sample names (event_index, event_name)."""
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
# an ELF that marks first thing (libtool's t/mark-loop is a wrapper script, slower to start)
mark_loop = os.path.join(top_builddir, "t", "mark-loop-static")
if not os.access(mark_loop, os.X_OK):
    mark_loop = os.path.join(top_builddir, "t", "mark-loop")

# a perf.data of one event: each sample's event_index names it
with uevent.PerfData(os.path.join(top_srcdir, "t", "data", "clock.perf.data")) as f:
    idx = {r.event_index for r in f if isinstance(r, uevent.Sample)}
    ok(idx == {0} and f.event_name(0) == "task-clock",
       f"PerfData: every sample's event_index is 0, event_name(0) task-clock ({idx})")
with uevent.PerfData(os.path.join(top_srcdir, "t", "data", "clock.perf.data")) as f:
    smp = next(r for r in f if isinstance(r, uevent.Sample))
    e = raises(FileNotFoundError, f.raw_fields, smp)
    ok(isinstance(e, FileNotFoundError), f"raw_fields of a task-clock sample: ENOENT ({e!r})")

# a tracepoint's fields by name (perf record, root; libtraceevent at configure)
perf = os.environ.get("PERF") or shutil.which("perf")
data = os.path.join(tempfile.mkdtemp(prefix="uevent-py-spawn-"), "sw.data")
atexit.register(shutil.rmtree, os.path.dirname(data), ignore_errors=True)   # skipped too
if os.geteuid() != 0 or not perf or subprocess.run(
        [perf, "record", "-q", "-N", "-e", "sched:sched_switch", "-o", data, "--", "sleep", "0.01"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
    skip(1, "needs root and perf record -e sched:sched_switch")
else:
    with uevent.PerfData(data) as f:
        sw = [r for r in f if isinstance(r, uevent.Sample)]
        try:
            d = [f.raw_fields(r, as_dict=True) for r in sw]
            t = [f.raw_fields(r) for r in sw]
            ok(sw and all(x["prev_pid"] == r.pid and isinstance(x["prev_comm"], str)
                          for x, r in zip(d, sw)) and
               all(s.startswith(f"prev_comm={x['prev_comm']} prev_pid={r.pid} ")
                   for s, x, r in zip(t, d, sw)),
               f"raw_fields of {len(sw)} sched_switch samples by name: {t[0] if t else None}")
        except uevent.Error as e:
            if e.errno != errno.EOPNOTSUPP:
                raise
            skip(1, f"libuevent built without libtraceevent ({e})")


def spawn_quiet(argv, **kw):
    """Session.spawn with the child's stdout (not TAP) sent to /dev/null."""
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        return uevent.Session.spawn(argv, **kw)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


if os.geteuid() != 0 or not os.path.exists("/sys/bus/event_source/devices/uprobe"):
    skip(4, "needs root and uprobes for a usdt session")
else:
    text = b"spawned right away\0"
    with spawn_quiet([mark_loop, "22", "spawned right away"]) as s:
        n, idle, status = 0, 0, None
        while idle < 3:
            rec = s.next(200)
            if rec is None:
                if status is None:
                    pid, st = os.waitpid(s.pid, os.WNOHANG)
                    status = st if pid else None
                idle += status is not None
                continue
            n += isinstance(rec, uevent.UEvent) and rec.sample_id.pid == s.pid and \
                rec.data == text
        if status is None:
            status = os.waitpid(s.pid, 0)[1]
        ok(n == 22 and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
           f"Session.spawn: a program marking at once gives {n} of 22 marks")
        names = s.event_names
        ok(s.nr_events == len(names) > 0 and any(nm.endswith(":emit16") for nm in names),
           f"the session's events are named: {names}")
        ok(isinstance(raises(IndexError, s.event_name, s.nr_events), IndexError),
           "event_name past the last event is IndexError")
    e = raises(FileNotFoundError, uevent.Session.spawn, [os.path.join(top_builddir, "no-such")])
    ok(isinstance(e, FileNotFoundError), f"spawning a missing program: {e!r}")
done()
