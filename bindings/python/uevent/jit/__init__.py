"""uevent.jit - announce machine code a Python program generates, so perf names it.

    import uevent.jit
    with uevent.jit.session() as jit:              # jit-PID.dump, /tmp/perf-PID.map, uevents
        addr = ...                                  # your code, in executable memory
        jit.code_load("my_kernel", addr, len(code), code)
        run_it()

Then ``perf record -k mono ...; perf inject --jit -i perf.data -o perf.jit.data;
perf report -i perf.jit.data``. Every call writes its records before it returns, so
announce code before it first runs.

The C calls go through the Python binding (``import uevent``: CFFI, built from uevent.h),
so no declaration is restated here.

CPython >= 3.12's own perf support (``python -X perf`` / ``sys.activate_stack_trampoline``)
names *Python functions* through /tmp/perf-PID.map; this module names the code *your*
JIT generates. Both can run at once: both append whole lines to the same perf map (we
never truncate it), and with ``python -X perf_jit`` (3.13+, its own jitdump) perf inject
simply processes both jitdump files.
"""
from __future__ import annotations

import errno as _errno
import os
from typing import Iterable, Optional, Sequence, Tuple, Union

__all__ = ["Session", "session", "NO_JITDUMP", "NO_PERF_MAP", "NO_UEVENT"]


def __getattr__(name: str) -> int:
    # NO_JITDUMP & co. are the binding's UEVENT_JIT_* values (from uevent.h), looked up on use
    if name.startswith("NO_") and name in __all__:
        return getattr(_binding().lib, "UEVENT_JIT_" + name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))

BytesLike = Union[bytes, bytearray, memoryview]


def _b(s: Union[str, bytes, None]) -> Optional[bytes]:
    return None if s is None else os.fsencode(s)


_u = None


def _binding():
    """The Python binding (its CFFI module's declarations come from uevent.h; none are
    restated here), imported on first use."""
    global _u
    if _u is None:
        import uevent as u
        u.lib.uevent_jit__open  # AttributeError if the binding predates the JIT API
        _u = u
    return _u


class Session:
    """One JIT session: the process's jitdump and perf-map files and the uevent markers.

    Methods raise the binding's uevent.Error (an OSError with errno) on failure; close()
    is idempotent.
    """

    def __init__(self, dir: Union[str, bytes, None] = None, perf_map: bool = True,
                 jitdump: bool = True, uevent: bool = True,
                 perf_map_path: Union[str, bytes, None] = None):
        self._u = u = _binding()
        self._ffi, self._lib = ffi, lib = u.ffi, u.lib
        flags = sum(getattr(lib, "UEVENT_JIT_NO_" + k) for k, on in
                    (("JITDUMP", jitdump), ("PERF_MAP", perf_map), ("UEVENT", uevent)) if not on)
        o = u._out("struct uevent_jit_opts *")
        d, m = _b(dir), _b(perf_map_path)
        keep = [ffi.new("char[]", d) if d else ffi.NULL, ffi.new("char[]", m) if m else ffi.NULL]
        o.dir, o.perf_map_path, o.flags = keep[0], keep[1], flags
        self._h = lib.uevent_jit__open(o)
        if self._h == ffi.NULL:
            self._h = None
            err = ffi.errno
            raise u._error(err, "uevent.jit: cannot start: " + (u.reason() or "uevent_jit__open"))

    def _handle(self):
        if self._h is None:
            raise OSError(_errno.EBADF, "uevent.jit session is closed")
        return self._h

    def _path(self, p) -> Optional[str]:
        return None if p == self._ffi.NULL else os.fsdecode(self._ffi.string(p))

    def code_load(self, name: Union[str, bytes], addr: int, size: int,
                  code: Optional[BytesLike] = None) -> None:
        """Announce size bytes at addr (code: a copy of them; None reads them at addr)."""
        buf = self._ffi.NULL if code is None else self._ffi.from_buffer(code)
        if code is not None and len(buf) < size:      # its bytes (len(code) may count items)
            raise ValueError("code shorter than size")
        self._u._check(self._lib.uevent_jit__code_load(self._handle(), _b(name), addr, size, buf),
                       "code_load")

    def code_move(self, old_addr: int, new_addr: int, size: int = 0) -> None:
        self._u._check(self._lib.uevent_jit__code_move(self._handle(), old_addr, new_addr, size),
                       "code_move")

    def code_unload(self, addr: int, size: int = 0) -> None:
        self._u._check(self._lib.uevent_jit__code_unload(self._handle(), addr, size), "code_unload")

    def debug_info(self, code_addr: int,
                   entries: Sequence[Tuple[int, int, Union[str, bytes]]]) -> None:
        """Line table (addr, line, file) for code about to be loaded at code_addr:
        call it before that code_load."""
        ffi = self._ffi
        arr = ffi.new("struct uevent_jit_debug_entry[]", max(len(entries), 1))
        keep = []
        for i, (a, line, f) in enumerate(entries):
            keep.append(ffi.new("char[]", _b(f)))
            arr[i].addr, arr[i].line, arr[i].file = a, line, keep[-1]
        self._u._check(self._lib.uevent_jit__debug_info(self._handle(), code_addr, arr,
                                                        len(entries)), "debug_info")

    def flush(self) -> None:
        """Writes the batched jitdump records and perf-map lines now."""
        self._u._check(self._lib.uevent_jit__flush(self._handle()), "flush")

    @property
    def dump_path(self) -> Optional[str]:
        return self._path(self._lib.uevent_jit__dump_path(self._handle()))

    @property
    def perf_map_path(self) -> Optional[str]:
        return self._path(self._lib.uevent_jit__perf_map_path(self._handle()))

    def close(self) -> None:
        if self._h is not None:
            h, self._h = self._h, None
            self._u._check(self._lib.uevent_jit__close(h), "close")

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def session(**kw) -> Session:
    """A Session, for ``with uevent.jit.session() as jit: ...``."""
    return Session(**kw)
