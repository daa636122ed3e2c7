"""symbolize.py - names for (pid, address, time) from a recording: uevent_symbolizer.

    from uevent.symbolize import Symbolizer

    sym = Symbolizer(debug_dir="build/debug")
    with uevent.PerfData("run.data") as f:
        for rec in f:
            sym.feed_from(f)              # what the record just read says, in time order
            if isinstance(rec, uevent.Sample):
                print(sym.lookup(rec.pid, rec.ip, rec.time).name)

Or `sym.feed_file(path)` first, then lookups at any time: JIT code is named as it was
at the time asked, so an address a later JIT load reuses gets the later name.
"""
from __future__ import annotations

import errno as _errno
import os as _os
from typing import Any, NamedTuple, Optional, Union

from . import _error, _Handle, _out, reason
from ._uevent import ffi as _ffi, lib as _lib

__all__ = ["Symbol", "Symbolizer"]

Path = Union[str, bytes, "_os.PathLike[str]"]

# enum uevent_symbol_source, by value
SOURCES = ("none", "elf", "kernel", "jit_uevent", "jitdump", "perf_map")


class Symbol(NamedTuple):
    """What names an address: name None when nothing does (dso may still be known)."""
    name: Optional[str]
    dso: Optional[str]
    offset: int          # from the symbol's start (named), else in the dso's file
    sym_addr: int
    sym_size: int
    file: Optional[str]  # source file:line, from DWARF or a JIT's line table
    line: int
    source: str          # one of SOURCES


def _s(p: Any) -> Optional[str]:
    return _ffi.string(p).decode(errors="replace") if p != _ffi.NULL else None


class Symbolizer(_Handle):
    """An uevent_symbolizer (see uevent.h). Not thread-safe; free it with close().

    proc_maps=True: the processes are alive (a live Session): what they mapped before
    the session began is read from /proc/PID/maps. C++ and Rust names come demangled as
    perf prints them; demangle=False: as the binary has them.
    """
    _what = "Symbolizer"

    def __init__(self, debug_dir: Optional[Path] = None, kallsyms: Optional[Path] = None,
                 perf_map_dir: Optional[Path] = None, root: Optional[Path] = None,
                 lines: bool = True, byte_order: int = 0, proc_maps: bool = False,
                 demangle: bool = True) -> None:
        o = _out("struct uevent_symbolizer_opts *")
        o.flags = ((0 if lines else _lib.UEVENT_SYMBOLIZER_NO_LINES)
                   | (_lib.UEVENT_SYMBOLIZER_PROC_MAPS if proc_maps else 0)
                   | (0 if demangle else _lib.UEVENT_SYMBOLIZER_NO_DEMANGLE))
        o.byte_order = byte_order
        keep = []   # alive through the call (the library copies the paths)
        for name, v in (("debug_dir", debug_dir), ("kallsyms", kallsyms),
                        ("perf_map_dir", perf_map_dir), ("root", root)):
            if v is not None:
                b = _ffi.new("char[]", _os.fsencode(v))
                keep.append(b)
                setattr(o, name, b)
        p = _lib.uevent_symbolizer__new(o)
        if p == _ffi.NULL:
            raise _error(_ffi.errno, "uevent_symbolizer__new")
        self._h = _ffi.gc(p, _lib.uevent_symbolizer__free)
        self._sym = _out("struct uevent_symbol *")

    def feed_from(self, reader: Any) -> bool:
        """Feeds the record a PerfData or Session last returned; True if it was used.
        ValueError once the reader is closed (the record pointed into its buffers)."""
        rec = getattr(reader, "_rec", None)
        if rec is None or _ffi.typeof(rec) != _ffi.typeof("struct uevent_perf_record *"):
            raise TypeError("feed_from wants a uevent.PerfData or uevent.Session")
        # while the reader is open: a Session's close() from another thread waits for it
        ret = reader._call(lambda _h: _lib.uevent_symbolizer__feed(self._live(), rec))
        if ret < 0:
            raise _error(-ret, "uevent_symbolizer__feed")
        return ret > 0

    def feed_file(self, path: Path) -> int:
        """Feeds every record of a perf.data; returns how many were side-band."""
        n = _lib.uevent_symbolizer__feed_file(self._live(), _os.fsencode(path))
        if n < 0:
            raise _error(-n, reason())
        return int(n)

    def lookup(self, pid: int, addr: int, time: int = 2**64 - 1) -> Symbol:
        """Names addr in process pid as it was at time (default: the latest)."""
        ret = _lib.uevent_symbolizer__lookup(self._live(), pid, addr, time, self._sym)
        if ret < 0 and ret != -_errno.ENOENT:
            raise _error(-ret, "uevent_symbolizer__lookup")
        s = self._sym
        return Symbol(_s(s.name) if ret == 0 else None, _s(s.dso), int(s.offset),
                      int(s.sym_addr), int(s.sym_size), _s(s.file), int(s.line),
                      SOURCES[s.source] if s.source < len(SOURCES) else str(s.source))

    def comm(self, tid: int, time: int = 2**64 - 1) -> Optional[str]:
        """The thread's command name at time, or None."""
        return _s(_lib.uevent_symbolizer__comm(self._live(), tid, time))
