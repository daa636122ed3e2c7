"""uevent - put your own events into the Linux perf stream (libuevent), and read them back.

    import uevent
    uevent.mark("parsing started")               # one load when nobody listens
    uevent.mark("parsed %d rows", n)             # formats only when enabled
    with uevent.range("parse"):
        ...
    uevent.counter("queue_depth", 7)

Errors are exceptions: `uevent.Error` (an OSError carrying errno, also an instance of the
matching builtin such as PermissionError), and `uevent.InvalidArgument` (EINVAL: both an
OSError and a ValueError). Every declaration comes from libuevent's uevent.h via CFFI.
"""
from __future__ import annotations

import builtins as _builtins
import errno as _errno
import functools as _functools
import json as _json
import operator as _operator
import os as _os
import threading as _threading
import warnings as _warnings
from dataclasses import asdict as _asdict
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence,
                    Tuple, TypeVar, Union)



def _elf_runpath(path: str) -> List[str]:
    """The RUNPATH (or RPATH) directories of ELF file path ([] if none or unreadable)."""
    import struct
    try:
        with _builtins.open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:    # 64-bit, little
            return []
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in _builtins.range(shnum)]
        for sec in secs:
            if sec[1] != 6:                                     # SHT_DYNAMIC
                continue
            stroff = secs[sec[6]][4]
            for k in _builtins.range(0, sec[5], 16):
                tag, val = struct.unpack_from("<qQ", data, sec[4] + k)
                if tag in (15, 29):                             # DT_RPATH, DT_RUNPATH
                    end = data.index(b"\0", stroff + val)
                    return data[stroff + val:end].decode(errors="replace").split(":")
    except (OSError, ValueError, IndexError, struct.error):
        pass
    return []


def _import_error(e: ImportError) -> ImportError:
    """The extension's ImportError, saying where it looked and what to do."""
    import glob
    import sys
    here = _os.path.dirname(_os.path.abspath(__file__))
    if isinstance(e, ModuleNotFoundError) and e.name == "_cffi_backend":
        return ImportError("uevent needs cffi, which this Python lacks: make the venv with "
                           "--system-site-packages (Debian: python3-cffi) or pip install "
                           "cffi", name="uevent")
    exts = glob.glob(_os.path.join(here, "_uevent*.so"))
    if isinstance(e, ModuleNotFoundError) and e.name in ("uevent._uevent", "_uevent"):
        import importlib.machinery as m
        return ImportError(
            f"uevent: no extension for this Python ({sys.implementation.cache_tag}) in {here}"
            f" (looked for _uevent{m.EXTENSION_SUFFIXES[0]}; there: "
            f"{', '.join(_os.path.basename(x) for x in exts) or 'none'}): build the binding "
            f"with this interpreter (./configure PYTHON={sys.executable} && make), or "
            f"pip install bindings/python", name="uevent")
    if "libuevent.so" in str(e):
        ext = exts[0] if exts else here
        ld = _os.environ.get("LD_LIBRARY_PATH", "")
        dirs = [f"RUNPATH of {_os.path.basename(ext)}: {':'.join(_elf_runpath(ext)) or 'none'}",
                f"LD_LIBRARY_PATH: {ld or 'unset'}", "the system's (ld.so.cache, /lib, /usr/lib)"]
        return ImportError(
            f"uevent: the extension cannot load libuevent.so.0 ({e}); looked in "
            f"{'; '.join(dirs)}: make install it (then ldconfig), set LD_LIBRARY_PATH to the "
            f"build tree's libuevent/.libs, or pip install bindings/python (which carries "
            f"it)", name="uevent")
    return e


try:
    from ._uevent import ffi as _ffi, lib as _lib
except ImportError as _e:             # say where it looked, and the fix
    _err = _import_error(_e)
    if _err is _e:
        raise
    raise _err from None
from . import _records
from ._records import (SampleId, PerfRecord, PerfRead, Sample, Mmap, Comm, Task, Lost, Throttle,
                       Switch, Ksymbol, BpfEvent, UEvent, Other, SessionStats, Stats, Text, RangeBegin, RangeEnd,
                       Counter, JitCodeLoad, JitCodeMove, JitCodeUnload, JitDebugEntry,
                       JitDebugInfo, TraceContext, Raw, Payload, PerfFormat, Record, _cstr)

__all__ = [
    # not "range" and "open": `from uevent import *` leaves the builtins alone
    "Error", "InvalidArgument", "mark", "emit", "counter", "trace_context",
    "thread_context", "thread_context_attr", "thread_context_clear", "thread_context_registered",
    "process_context", "process_context_add_keys",
    "async_begin", "async_end", "enabled", "close", "transport", "reason",
    "max_payload", "Stats", "stats", "stats_reset", "decode", "decode_record", "Record",
    "FileReader", "Text", "RangeBegin", "RangeEnd", "Counter", "JitCodeLoad", "JitCodeMove",
    "JitCodeUnload", "JitDebugEntry", "JitDebugInfo", "TraceContext", "Raw", "version",
    "SampleId", "PerfRecord", "PerfRead", "Sample", "Mmap", "Comm", "Task", "Lost", "Throttle",
    "Switch", "Ksymbol", "BpfEvent", "UEvent", "Other", "AnyRecord", "PerfFormat",
    "decode_perf_records", "ring_read", "SessionStats", "Session", "PerfData", "open_capture",
    "read_arrays",
    "ffi", "lib",
]

ffi = _ffi
lib = _lib

# ---- errors ---------------------------------------------------------------------------


class Error(OSError):
    """An error libuevent reported; `.errno` is the errno."""


class InvalidArgument(Error, ValueError):
    """EINVAL: a bad argument (unknown transport name, corrupt payload, ...)."""


_classes: Dict[int, type] = {_errno.EINVAL: InvalidArgument}


def _error(err: int, what: Optional[str] = None) -> Error:
    """The exception for errno `err`: Error mixed with the builtin OSError subclass."""
    cls = _classes.get(err)
    if cls is None:
        builtin = type(OSError(err, ""))
        cls = Error if builtin is OSError else type(
            builtin.__name__, (Error, builtin), {"__module__": __name__})
        _classes[err] = cls
    msg = _ffi.string(_lib.uevent_strerror(err)).decode()
    e: Error = cls(err, msg if what is None else f"{msg}: {what}")
    return e


def _check(ret: int, what: Optional[str] = None) -> int:
    if ret < 0:
        raise _error(-ret, what)
    return ret


_records._check = _check


def _out(ctype: str) -> Any:
    """An output struct for the C library to fill: zeroed, its sz set."""
    p = _ffi.new(ctype)
    p.sz = _ffi.sizeof(p[0])
    return p


# ---- emitting -------------------------------------------------------------------------
# Arguments are checked before the enabled check, so a bad call raises the same whether or
# not anyone listens (C can only check what it is handed, and only when it runs). A refused
# call never reaches the library: stats() does not count it. mark()'s `text % args` exists
# only when formatted, so what it formats is checked only when enabled.

# The enabled word itself: one load per disabled mark, no C call.
_word = _ffi.addressof(_lib, "uevent_enabled_word")
_mark = _lib.uevent_mark
_emit = _lib.uevent_emit
_counter = _lib.uevent_counter_set
_from_buffer = _ffi.from_buffer
_MAX_PAYLOAD = int(_lib.UEVENT_MAX_PAYLOAD)
_TEXT_ROOM = _MAX_PAYLOAD - 1  # the text's NUL is sent too
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_type = _builtins.type  # emit()'s `type` argument hides the builtin


_COUNTER_ROOM = int(_lib.UEVENT_COUNTER_NAME_MAX)  # a payload less the fields around it
_RANGE_ROOM = int(_lib.UEVENT_RANGE_NAME_MAX)


def _cstr_arg(s: Union[str, bytes], what: str, room: int) -> bytes:
    """A text or name as the bytes C gets: str (UTF-8) or bytes, without NUL (C would end
    it there), at most `room` bytes."""
    if isinstance(s, str):
        try:
            b = s.encode()
        except UnicodeEncodeError as e:
            raise InvalidArgument(_errno.EINVAL, f"{what}: {e}") from None
    elif isinstance(s, bytes):
        b = s if type(s) is bytes else bytes(s)
    else:
        raise TypeError(f"{what} must be str or bytes, not {type(s).__name__}")
    if len(b) > room:
        raise _error(_errno.E2BIG, f"{what} is {len(b)} bytes, more than the {room} a payload has room for")
    if 0 in b:  # (an int: memchr; b"\0" would be a slower substring search)
        raise InvalidArgument(_errno.EINVAL, f"{what} contains a NUL byte")
    return b


def _int(v: int, lo: int, hi: int, what: str) -> int:
    """An integer (or an object with __index__) in [lo, hi], as an int."""
    if type(v) is not int:
        try:
            v = _operator.index(v)
        except TypeError:
            raise TypeError(f"{what} must be an integer, not {type(v).__name__}") from None
    if not lo <= v <= hi:
        raise InvalidArgument(_errno.EINVAL, f"{what} {v} is out of range [{lo}, {hi}]")
    return v


def _fixed(b: bytes, n: int, what: str) -> bytes:
    """Exactly n bytes from a bytes-like object."""
    if isinstance(b, str):
        raise TypeError(f"trace_context: {what} must be bytes, not str")
    try:
        b = bytes(memoryview(b))
    except TypeError:
        raise TypeError(f"trace_context: {what} must be bytes, not {type(b).__name__}") from None
    if len(b) != n:
        raise InvalidArgument(_errno.EINVAL, "trace_context: trace_id must be 16 bytes, span_id 8")
    return b


def _context_args(trace_id: bytes, span_id: bytes, flags: int, what: str) -> Tuple[bytes, bytes, int]:
    """A trace context's 16-byte trace id, 8-byte span id and flags, checked."""
    return (_fixed(trace_id, 16, "trace_id"), _fixed(span_id, 8, "span_id"),
            _int(flags, 0, 0xFF, what + ": flags"))


def enabled() -> bool:
    """True when a listener may exist (the exported enabled word is non-zero)."""
    return bool(_word[0])


def mark(text: Union[str, bytes], *args: Any) -> None:
    """A text mark. With args, `text % args` is formatted only when enabled.

    The text (str or bytes) must hold no NUL and fit a payload with its NUL (4095 bytes).
    """
    if args:
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"mark: format must be str or bytes, not {type(text).__name__}")
        if not _word[0]:
            return
        text = text % args
    # The usual cases, checked without encoding (ASCII is its own UTF-8); others converted.
    if not (type(text) is str and len(text) <= _TEXT_ROOM and text.isascii() and "\0" not in text
            or type(text) is bytes and len(text) <= _TEXT_ROOM and 0 not in text):
        text = _cstr_arg(text, "mark: text", _TEXT_ROOM)
    if _word[0]:
        ret = _mark(text.encode() if type(text) is str else text)
        if ret < 0:
            raise _error(-ret, "mark")


def emit(type: int, data: Union[bytes, bytearray, memoryview]) -> None:
    """Emit a raw payload of `type` (a well-known type or >= UEVENT_TYPE_USER).

    `data` is any C-contiguous bytes-like object; all of its bytes are sent.
    """
    t = type
    if _type(t) is not int or not 0 <= t <= 0xFFFFFFFF:
        t = _int(t, 0, 0xFFFFFFFF, "emit: type")
    if _type(data) is bytes:
        buf: Any = data
        n = len(data)
    else:
        try:
            buf = memoryview(data)
        except TypeError:
            raise TypeError(f"emit: data must be bytes-like, not {_type(data).__name__}") from None
        if not buf.c_contiguous:
            raise InvalidArgument(_errno.EINVAL, "emit: data must be C-contiguous")
        n = buf.nbytes
    if n > _MAX_PAYLOAD:
        raise _error(_errno.E2BIG, f"emit of {n} bytes, more than the {_MAX_PAYLOAD} a payload holds")
    if _word[0]:
        ret = _emit(t, _from_buffer(buf), n)
        if ret < 0:
            raise _error(-ret, f"emit of {n} bytes")


def counter(name: Union[str, bytes], value: int) -> None:
    """A counter sample, `name` = `value` (a signed 64-bit integer)."""
    if type(name) is str and len(name) <= _COUNTER_ROOM and name.isascii() and "\0" not in name:
        b: Union[str, bytes] = name  # checked as mark() checks; encoded only when sent
    else:
        b = _cstr_arg(name, "counter: name", _COUNTER_ROOM)
    v = value if type(value) is int and _I64_MIN <= value <= _I64_MAX else \
        _int(value, _I64_MIN, _I64_MAX, "counter: value")
    if _word[0]:
        ret = _counter(b.encode() if type(b) is str else b, v)
        if ret < 0:
            raise _error(-ret, "counter")


def trace_context(trace_id: bytes, span_id: bytes, flags: int = 0) -> None:
    """A W3C trace context: 16-byte trace id, 8-byte span id, trace flags."""
    _check(_lib.uevent_trace_context(*_context_args(trace_id, span_id, flags, "trace_context")),
           "trace_context")


class thread_context:
    """Set the calling thread's trace context, the one profilers read (OTEP 4947).

    ``uevent.thread_context(trace_id, span_id, flags)`` sets it now; as a context manager,
    ``with uevent.thread_context(tid, sid, 1, {0: "/orders"}):``, the thread's previous
    context (attributes included) comes back on exit. ``attrs`` maps key indexes (into
    the process context's attribute_key_map) to strings. Plain stores into the thread's
    record (uevent_thread_context_set); on a kernel without PR_PERF_TLS_AREA it still
    stores, and only that kernel's samples lack it.
    """
    __slots__ = ("_prev",)

    def __init__(self, trace_id: bytes, span_id: bytes, flags: int = 0,
                 attrs: Optional[Dict[int, str]] = None) -> None:
        args = _context_args(trace_id, span_id, flags, "thread_context")
        self._prev = _ffi.buffer(_lib.uevent_thread_context_get(),
                                 _lib.UEVENT_THREAD_CONTEXT_SIZE)[:]
        _check(_lib.uevent_thread_context_set(*args), "thread_context")
        for k, v in (attrs or {}).items():
            thread_context_attr(k, v)

    def __enter__(self) -> "thread_context":
        return self

    def __exit__(self, *exc: Any) -> None:
        _check(_lib.uevent_thread_context_restore(self._prev, len(self._prev)),
               "thread_context: restoring")


def thread_context_attr(key: int, value: Union[str, bytes]) -> None:
    """Attribute key (an index into attribute_key_map) = value on this thread's context."""
    k = _int(key, 0, 0xFF, "thread_context_attr: key")
    v = value.encode() if isinstance(value, str) else bytes(value)
    if len(v) > 255:
        raise InvalidArgument(_errno.EINVAL, f"thread_context_attr: value is {len(v)} bytes, at most 255")
    _check(_lib.uevent_thread_context_set_attr(k, v, len(v)), "thread_context_attr")


def thread_context_clear() -> None:
    """The calling thread has no trace context any more (its samples carry none)."""
    _check(_lib.uevent_thread_context_clear(), "thread_context_clear")


def thread_context_registered() -> bool:
    """True when the kernel dumps the calling thread's context into its samples."""
    return bool(_lib.uevent_thread_context_registered())


def process_context(service_name: Optional[str] = None, *,
                    service_instance_id: Optional[str] = None,
                    attr_keys: Sequence[str] = ()) -> None:
    """Publish (or update) the process context of OTEP 4719 that profilers read.

    ``attr_keys[i]`` names key index ``i`` of thread_context attributes; the map is
    append-only, so an update passes the earlier keys first.
    """
    keep = [_ffi.new("char[]", k.encode()) for k in attr_keys]
    o = _out("struct uevent_process_context_opts *")
    if service_name is not None:
        keep.append(_ffi.new("char[]", service_name.encode()))
        o.service_name = keep[-1]
    if service_instance_id is not None:
        keep.append(_ffi.new("char[]", service_instance_id.encode()))
        o.service_instance_id = keep[-1]
    arr = _ffi.new("char *[]", keep[:len(attr_keys)] or 1)
    o.attr_keys = arr
    o.nr_attr_keys = len(attr_keys)
    _check(_lib.uevent_process_context_publish(o), "process_context")


def process_context_add_keys(keys: Sequence[str]) -> int:
    """Append attribute keys to the published context: the index of the first."""
    keep = [_ffi.new("char[]", k.encode()) for k in keys]
    arr = _ffi.new("char *[]", keep or 1)
    return _check(_lib.uevent_process_context_add_keys(arr, len(keep)), "process_context_add_keys")


_F = TypeVar("_F", bound=Callable[..., Any])


class range:  # noqa: A001 - uevent.range, as the API promises
    """A synchronous range: `with uevent.range("name"):` or `@uevent.range("name")`.

    Ranges nest per thread. When nobody listens, entering costs one C call.
    """

    __slots__ = ("_name", "_ids")

    def __init__(self, name: Union[str, bytes]) -> None:
        self._name = _cstr_arg(name, "range: name", _RANGE_ROOM)
        self._ids: List[int] = []

    def __enter__(self) -> "range":
        self._ids.append(_lib.uevent_range_begin(self._name))
        return self

    def __exit__(self, *exc: Any) -> None:
        rid = self._ids.pop()
        if rid:
            _check(_lib.uevent_range_end(rid), "range end")

    def __call__(self, fn: _F) -> _F:
        name = self._name
        begin, end = _lib.uevent_range_begin, _lib.uevent_range_end

        @_functools.wraps(fn)
        def wrapper(*a: Any, **kw: Any) -> Any:
            rid = begin(name)
            try:
                return fn(*a, **kw)
            finally:
                if rid:
                    end(rid)
        return wrapper  # type: ignore[return-value]


def async_begin(name: Union[str, bytes]) -> int:
    """Open an async range (not nested, may end on any thread); returns its id (0: none)."""
    return int(_lib.uevent_async_begin(_cstr_arg(name, "async_begin: name", _RANGE_ROOM)))


def async_end(rid: int) -> None:
    """End an async range by the id async_begin returned (0: nothing to end)."""
    rid = _int(rid, 0, (1 << 64) - 1, "async_end: id")
    if rid:
        _check(_lib.uevent_async_end(rid), "async range end")


# ---- transports -----------------------------------------------------------------------


def _transport_number(t: Union[str, int]) -> int:
    """A transport by name or number, as its number."""
    if isinstance(t, str):
        n = _lib.uevent_transport_from_name(t.encode())
        if n < 0:
            raise InvalidArgument(_errno.EINVAL, f"unknown transport {t!r}")
        return int(n)
    return t


def _tname(t: int) -> str:
    return _cstr(_lib.uevent_transport_name(t)) or str(t)


def open(transport: Union[str, int] = "auto", path: Union[str, bytes, None] = None,
         ignore_env: bool = False) -> str:
    """(Re)select the process-wide transport; returns the name of the one chosen.

    `transport` is a name ("auto", "prctl", "user_events", "usdt", "ftrace", "file",
    "none") or number; `path` is the file transport's output file.
    """
    t = _transport_number(transport)
    opts = _out("struct uevent_open_opts *")
    opts.transport = t
    keep = _ffi.new("char[]", _os.fsencode(path)) if path is not None else _ffi.NULL
    opts.path = keep
    if ignore_env:
        opts.flags = _lib.UEVENT_OPEN_IGNORE_ENV
    ret = _lib.uevent_open(opts)
    del keep
    if ret < 0:
        raise _error(-ret, reason())
    return _tname(ret)


def close() -> None:
    """Stop delivering (transport "none") and release the transport's resources."""
    _check(_lib.uevent_close(), "close")


def transport() -> str:
    """The name of the transport in use."""
    return _tname(_lib.uevent_transport())


def reason() -> str:
    """The reason channel: why this thread's last library call that had more to say
    than its errno did what it did ("" if nothing)."""
    return _cstr(_lib.uevent_reason())


def max_payload() -> int:
    """Largest payload the current transport accepts, in bytes."""
    return int(_lib.uevent_max_payload())


def version() -> str:
    return str(_ffi.string(_lib.uevent_version()).decode())


# ---- statistics -----------------------------------------------------------------------


# Stats (struct uevent_stats, dropped_by by reason name) is generated: _records.


def stats() -> Stats:
    """Process-wide counters since load: emitted, and dropped by reason."""
    s = _ffi.new("struct uevent_stats *")
    _check(_lib.uevent_stats_get(s, _ffi.sizeof(s[0])), "stats")
    return _records._mk_uevent_stats(s, 0)


def stats_reset() -> None:
    _lib.uevent_stats_reset()


# ---- decoding -------------------------------------------------------------------------


_BO = {"host": _lib.UEVENT_BO_HOST, "little": _lib.UEVENT_BO_LITTLE, "big": _lib.UEVENT_BO_BIG}


def _bo(byte_order: Union[str, int]) -> int:
    if isinstance(byte_order, int):
        return byte_order
    try:
        return int(_BO[byte_order])
    except KeyError:
        raise InvalidArgument(_errno.EINVAL, f"byte order {byte_order!r}") from None


def decode(type: int, data: Union[bytes, bytearray, memoryview],
           byte_order: Union[str, int] = "host") -> Payload:
    """Decode a payload of `type` with libuevent's decoders.

    Returns a named tuple (Text, Counter, ...), or Raw for types it does not know.
    Raises InvalidArgument (a ValueError) for a malformed payload.
    """
    dec = _records.DECODERS.get(type)
    if dec is None:
        return Raw(type, bytes(data))
    buf = _from_buffer(data)
    return dec(buf, len(buf), _bo(byte_order))     # its bytes (len(data) may count items)


# Record (struct uevent_record, its payload decoded) is generated: _records.
_record = _records._mk_uevent_record


def decode_record(buf: Union[bytes, bytearray, memoryview], byte_order: Union[str, int] = "host",
                  sample_type: int = 0, v0_layout: bool = False) -> Record:
    """Decode one PERF_RECORD_UEVENT (header included). `sample_type` is the event's
    attr.sample_type (for the sample_id trailer); `v0_layout` for the V0 layout (type,
    size, data: no format word)."""
    r = _out("struct uevent_record *")
    cbuf = _from_buffer(buf)
    bo = _bo(byte_order)
    flags = _lib.UEVENT_RECORD_V0_LAYOUT if v0_layout else 0
    _check(_lib.uevent_record_decode(cbuf, len(cbuf), bo, sample_type, flags, r), "record")
    return _record(r, bo)


class _Handle:
    """What the readers share: a C object that close() frees (again: nothing), as do the
    end of a `with` and garbage collection."""
    _h: Any = None
    _what = "handle"

    def _live(self) -> Any:
        if self._h is None:
            raise ValueError(f"I/O operation on a closed {self._what}")
        return self._h

    def _call(self, f: Callable[[Any], Any]) -> Any:
        """f(the C object), which stays valid while f runs (see Session's)."""
        return f(self._live())

    @property
    def closed(self) -> bool:
        return self._h is None

    def close(self) -> None:
        """Close it; calling it again does nothing."""
        if self._h is not None:
            h, self._h = self._h, None
            _ffi.release(h)

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_H = TypeVar("_H", bound=_Handle)


class _Reader(_Handle):
    """A file's reader: the C object uevent_<_c>__open() opens, whose next() fills a
    struct _rec_type that _convert copies out."""
    _c = _rec_type = ""
    _convert: Callable[[Any, int], Any]

    def __iter__(self: _H) -> _H:
        return self

    def __init__(self, path: Union[str, bytes, "_os.PathLike[str]"]) -> None:
        self.path = _os.fsdecode(_os.fspath(path))
        c = _functools.partial(getattr, _lib)
        p = c(f"uevent_{self._c}__open")(_os.fsencode(self.path))
        if p == _ffi.NULL:
            raise _error(_ffi.errno, repr(self.path))
        self._h = _ffi.gc(p, c(f"uevent_{self._c}__close"))
        self._next, self._offset = c(f"uevent_{self._c}__next"), c(f"uevent_{self._c}__offset")
        self._rec = _out(f"struct {self._rec_type} *")
        # the order the file was written in, which its payloads and arrays keep
        self.byte_order: int = c(f"uevent_{self._c}__byte_order")(p)

    def __next__(self) -> Any:
        ret = self._next(self._live(), self._rec)
        if ret == 0:
            raise StopIteration
        if ret < 0:
            raise _error(-ret, f"{self.path!r} at offset {self.offset}")
        return self._convert(self._rec, self.byte_order)

    @property
    def offset(self) -> int:
        """Byte offset of the next record (or of the corrupt one after an error)."""
        return int(self._offset(self._live()))


class FileReader(_Reader):
    """Iterates the records of a file-transport file as Record objects.

    A context manager; the descriptor is closed by close(), at the end of a `with`,
    or when the reader is garbage-collected.
    """
    _what, _c, _rec_type, _convert = "FileReader", "file_reader", "uevent_record", staticmethod(_record)


class _Events(_Handle):
    """A reader's perf events (the C object's nr_events and event_name)."""
    _c = ""

    @property
    def nr_events(self) -> int:
        """Number of the events (a Sample's event_index is one of them)."""
        return _check(self._call(getattr(_lib, f"uevent_{self._c}__nr_events")), "nr_events")

    def event_name(self, i: int) -> Optional[str]:
        """The name of event i: "dummy", "GROUP:emit16", "cpu-clock"... (in a perf.data
        file: HEADER_EVENT_DESC's, or None when the file has none)."""
        if not isinstance(i, int) or not 0 <= i < self.nr_events:
            raise IndexError(f"event {i} of {self.nr_events}")
        f = getattr(_lib, f"uevent_{self._c}__event_name")
        return self._call(lambda h: (lambda p: _cstr(p) if p != _ffi.NULL else None)(f(h, i)))

    @property
    def event_names(self) -> Tuple[Optional[str], ...]:
        return tuple(self.event_name(i) for i in _builtins.range(self.nr_events))



# ---- reading perf records: sessions, perf.data, rings ---------------------------------
#
# Each decoded C record (struct uevent_perf_record) becomes one immutable object of the
# class for its union member (_records: tuples that keep the dataclass interface);
# pointer members are copied out (the C record is only valid until the next call).

AnyRecord = Union[Sample, Mmap, Comm, Task, Lost, Throttle, Switch, Ksymbol, BpfEvent, UEvent,
                  Other]

@_functools.lru_cache(maxsize=None)
def _record_name(t: int) -> str:
    return _cstr(_lib.uevent_perf_record_name(t)) or str(t)


# How each union member becomes an object is generated from uevent.h's record structs
# (_records.BODY_MAKERS, by the C record's `body`), the uevent's with its payload decoded.
_records.record_name, _records.transport_name = _record_name, _tname


def _perf_record(r: Any, bo: int) -> AnyRecord:
    return _records.perf_record(r, bo)  # type: ignore[no-any-return]


# PerfFormat (struct uevent_perf_format, its members named as in C) is generated: _records.
def _format(fmt: Optional[PerfFormat]) -> Any:
    f = _out("struct uevent_perf_format *")
    for k, v in _asdict(fmt or PerfFormat()).items():     # its members, named as in C
        setattr(f, k, int(v))
    return f


def decode_perf_records(buf: Union[bytes, bytearray, memoryview],
                        format: Optional[PerfFormat] = None,
                        byte_order: Union[str, int] = "host") -> Iterator[AnyRecord]:
    """Decode perf records lying back to back in buf (as ring_read() returns them).

    Raises InvalidArgument for a truncated or corrupt record, Error(EPROTO) for a uevent
    of an unknown format.
    """
    data = bytes(buf)
    cbuf = _from_buffer(data)
    bo = _bo(byte_order)
    f = _format(format)
    r = _out("struct uevent_perf_record *")
    off = 0
    while off < len(data):
        _check(_lib.uevent_perf_record_decode(cbuf + off, len(data) - off, bo, f, r),
               f"perf record at offset {off}")
        yield _perf_record(r, bo)
        off += r.size


def ring_read(mapping: Union[bytearray, memoryview, Any], cap: Optional[int] = None) -> bytes:
    """Take the records waiting in a perf ring buffer (a writable buffer: an mmap of a
    perf fd, or a copy of one, metadata page first). Returns them as bytes, whole even
    where they wrapped, and advances data_tail; b"" when the ring is empty.

    Raises InvalidArgument for a corrupt ring (data_tail is moved to data_head) and
    Error(ENOSPC) when the first record does not fit cap bytes (default: the ring's size).
    """
    try:
        base = _ffi.from_buffer(mapping, require_writable=True)
    except (TypeError, BufferError):
        raise InvalidArgument(_errno.EINVAL, "ring_read needs a writable buffer") from None
    size = len(base)
    out = _ffi.new("char[]", cap if cap is not None else size)
    n = _check(_lib.uevent_ring_read(base, size, out, len(out)), "ring")
    return bytes(_ffi.buffer(out, n))


# ---- live sessions --------------------------------------------------------------------


# SessionStats (struct uevent_session_stats, field for field) is generated: _records.


def _transport_bit(t: Union[str, int]) -> int:
    t = _transport_number(t)
    if not isinstance(t, int) or not 0 < t < _lib.UEVENT_TRANSPORT_COUNT:
        raise InvalidArgument(_errno.EINVAL, f"not a transport: {t!r}")
    return 1 << t


class Session(_Events):
    """A live perf session reading uevents (and, on request, other records).

        with uevent.Session() as s:            # this process
            uevent.mark("hello")
            rec = s.next(1000)                 # a UEvent, or None after 1 s

    pid: None or 0 for this process, > 0 for that one (following its children unless
    no_inherit=True), -1 for every process. transports: names (or numbers) to listen on,
    default every usable one. `fileno()` polls readable when records may be waiting, so
    a Session works with select/selectors. Iterating waits for records and ends when
    every watched task has exited; records(0) yields those waiting now.
    Closing (close(), the end of a `with`, or garbage collection) releases every fd.
    cpus: the CPUs to watch, "0-3,7" (as perf -C) or numbers; default every CPU.
    all_records: also COMM, MMAP, FORK, EXIT... records, which a symbolizer needs to name
    samples; default on when sampling (sample_period_ns or callchain), off otherwise.
    context: samples (sample_period_ns) carry the sampled thread's trace context
    (context_trace_id...): the kernel's record where it dumps one, else a BPF program
    (root or CAP_BPF+CAP_PERFMON, kernel BTF); reason says why not.
    """

    def __init__(self, pid: Optional[int] = None, *,
                 transports: Union[None, str, int, Iterable[Union[str, int]]] = None,
                 all_records: Optional[bool] = None, overwrite: bool = False,
                 no_inherit: bool = False,
                 bpf_events: bool = False, disabled: bool = False, ring_pages: int = 0,
                 usdt_path: Union[str, bytes, "_os.PathLike[str]", None] = None,
                 usdt_max_payload: int = 0, wakeup_events: int = 0,
                 sample_period_ns: int = 0, tls_user: int = 0, callchain: bool = False,
                 context: bool = False,
                 cpus: Union[None, str, Iterable[int]] = None,
                 inherit: Optional[bool] = None, enabled: Optional[bool] = None,
                 _spawn: Optional[Sequence[Union[str, bytes]]] = None) -> None:
        self._recording: Any = None
        self._cv = _threading.Condition()
        if inherit is not None or enabled is not None:      # the 0.1 spellings
            _warnings.warn("Session(inherit=, enabled=) are deprecated: use no_inherit=, "
                           "disabled= (as C, Lua and Rust spell them)", DeprecationWarning, 2)
            no_inherit = no_inherit or inherit is False
            disabled = disabled or enabled is False
        if pid is None:
            pid = 0
        if all_records is None:     # samples need COMM and MMAP records to be named
            all_records = bool(sample_period_ns) or callchain
        mask = 0
        if transports is not None:
            items = [transports] if isinstance(transports, (str, int)) else list(transports)
            if not items:
                raise InvalidArgument(_errno.EINVAL, "transports is empty")
            for t in items:
                mask |= _transport_bit(t)
        if cpus is not None and not isinstance(cpus, str):
            items = list(cpus)
            if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in items):
                raise InvalidArgument(_errno.EINVAL, f"cpus must be CPU numbers: {cpus!r}")
            cpus = ",".join(str(c) for c in items)
        o = _out("struct uevent_session_opts *")
        o.transports = mask
        # the rest by the members' names and C types (generated); C refuses what no
        # kernel takes (pid < -1, ring_pages not a power of 2...) with a reason
        keep = _records.session_opts(o, locals())
        if _spawn is None:
            p = _lib.uevent_session__open(o)
        else:
            args = [_ffi.new("char[]", _os.fsencode(a)) for a in _spawn]
            p = _lib.uevent_session__spawn(o, _ffi.new("char *[]", args + [_ffi.NULL]))
            del args
        err = _ffi.errno
        del keep
        if p == _ffi.NULL:
            raise _error(err or _errno.EINVAL, reason() or None)
        self._reason = reason()          # what it opened or could not, said by the open
        self._h = _ffi.gc(p, _lib.uevent_session__close)
        self._rec = _out("struct uevent_perf_record *")
        self.pid = pid if _spawn is None else int(_lib.uevent_session__pid(p))

    # Any thread may close a Session while others use it: each call counts itself in
    # (_busy, under _cv) and close() frees the C object only once none is in. A reader
    # waiting in C is woken by uevent_session__shutdown() and raises ValueError, as any
    # call on a closed Session does. A close() from inside a call of its own thread (a
    # signal handler) cannot wait: the last call to leave frees the object.
    _busy = 0
    _readers: List[int] = []
    _doomed: Any = None

    def __iter__(self: _H) -> _H:
        return self

    def _call(self, f: Callable[[Any], Any]) -> Any:
        cv = self.__dict__.get("_cv")
        if cv is None:                   # not opened (__new__): nothing to guard
            return f(self._live())
        with cv:
            h = self._live()
            self._busy += 1
            self._readers = self._readers + [_threading.get_ident()]
        try:
            return f(h)
        finally:
            with cv:
                self._busy -= 1
                rd = list(self._readers)
                rd.remove(_threading.get_ident())
                self._readers = rd
                if not self._busy:
                    if self._doomed is not None:
                        doomed, self._doomed = self._doomed, None
                        _ffi.release(doomed)
                    cv.notify_all()

    def _raise_if_closed(self, ret: int) -> None:
        """Raises as a closed Session does for the -ECANCELED of a close() from another thread."""
        if ret == -_errno.ECANCELED and self._h is None:
            self._live()

    @classmethod
    def spawn(cls, argv: Sequence[Union[str, bytes, "_os.PathLike[str]"]],
              **opts: Any) -> "Session":
        """Start argv (argv[0] searched in PATH) under a new session that watches it:
        the child runs only once the session's events are on it, so its first marks
        are heard (as `uevent record -- CMD`). opts are Session's, but pid. The child's
        pid is `.pid`; reap it with os.waitpid(). A program that cannot run raises
        (FileNotFoundError...), its child already reaped."""
        if "pid" in opts:
            raise InvalidArgument(_errno.EINVAL, "spawn watches the child: no pid")
        if isinstance(argv, (str, bytes)) or not argv:
            raise InvalidArgument(_errno.EINVAL, f"argv must be a non-empty list: {argv!r}")
        return cls(None, _spawn=[_os.fsencode(a) for a in argv], **opts)

    _what, _c = "Session", "session"

    def next(self, timeout_ms: int = -1) -> Optional[AnyRecord]:
        """The next record in time order, or None when none came within timeout_ms
        (0: do not wait, -1: wait forever)."""
        if not isinstance(timeout_ms, int) or timeout_ms < -1 or timeout_ms >= 1 << 31:
            raise InvalidArgument(_errno.EINVAL, f"timeout_ms must be -1 or more: {timeout_ms!r}")
        def next_c(h: Any) -> Optional[AnyRecord]:
            ret = _lib.uevent_session__next(h, self._rec, timeout_ms)
            if ret == 0:
                return None
            self._raise_if_closed(ret)
            if ret < 0:
                raise _error(-ret, "session next")
            # copied out before close() can free what the C record points into
            return _perf_record(self._rec, _lib.UEVENT_BO_HOST)
        return self._call(next_c)  # type: ignore[no-any-return]

    def __next__(self) -> AnyRecord:
        """`for rec in session` waits as long as it takes, and ends when every watched
        task has exited (as Rust's Session does): for this process, never. records(0)
        takes what is waiting now."""
        rec = self.next(-1)
        if rec is None:
            raise StopIteration
        return rec

    def records(self, timeout_ms: int = -1) -> Iterator[AnyRecord]:
        """The records until none comes within timeout_ms (0: those waiting now)."""
        rec = self.next(timeout_ms)
        while rec is not None:
            yield rec
            rec = self.next(timeout_ms)

    def read_batch(self, n: int = 65536, timeout_ms: int = -1) -> Any:
        """As PerfData.read_batch, from the live session: waits up to timeout_ms for the
        first record (-1: until one comes or every watched task has exited), then takes
        only what is waiting. None when none came."""
        from . import _arrays
        r = self._call(lambda h: _arrays.read_batch(h, n, call=lambda h, sb, ub:
                       _lib.uevent_session__read_batch(h, sb, ub, timeout_ms)))
        if isinstance(r, int):
            self._raise_if_closed(r)
            raise _error(-r, f"session read_batch({n!r})")
        return r

    def fileno(self) -> int:
        """An fd that polls readable when records may be waiting (owned by the session)."""
        return _check(self._call(_lib.uevent_session__fd), "session fd")

    def enable(self) -> None:
        _check(self._call(_lib.uevent_session__enable), "session enable")

    def disable(self) -> None:
        _check(self._call(_lib.uevent_session__disable), "session disable")

    def snapshot(self) -> None:
        """Overwrite mode: pause the rings and queue their contents for next()."""
        ret = self._call(_lib.uevent_session__snapshot)
        self._raise_if_closed(ret)
        _check(ret, "session snapshot")

    def record_to(self, file: Union[int, Any]) -> None:
        """From now on also write every record the session reads to `file` (an fd or an
        object with fileno()) as a pipe-mode perf.data stream, which PerfData and
        `perf script` read. Flushed each read round and at close; the file stays yours,
        and the session keeps a reference to it until closed. Error(EBUSY) when already
        recording."""
        fd = file if isinstance(file, int) else file.fileno()
        if not isinstance(fd, int) or fd < 0:
            raise InvalidArgument(_errno.EINVAL, f"not a file descriptor: {file!r}")
        _check(self._call(lambda h: _lib.uevent_session__record_to(h, fd)), "session record_to")
        self._recording = file

    @property
    def stats(self) -> SessionStats:
        st = _ffi.new("struct uevent_session_stats *")
        _check(self._call(lambda h: _lib.uevent_session__stats(h, st, _ffi.sizeof(st[0]))),
               "session stats")
        return _records._mk_uevent_session_stats(st, 0)

    @property
    def transports(self) -> Tuple[str, ...]:
        """Names of the transports the session listens on."""
        mask = self._call(_lib.uevent_session__transports)
        return tuple(_tname(t) for t in _builtins.range(32) if mask & (1 << t))

    @property
    def reason(self) -> str:
        """What the session opened or could not, for people (said when it opened)."""
        return self._call(lambda _h: self._reason)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close every fd and mapping (and remove the usdt probe); again does nothing.
        From any thread: a next() waiting in another raises ValueError, and close
        returns once the session is gone (called from inside a call of this thread,
        as a signal handler may be, the call's end frees it)."""
        cv = self.__dict__.get("_cv")
        if cv is None:
            super().close()
        else:
            with cv:
                h, self._h = self._h, None
                if h is not None and not self._busy:
                    _ffi.release(h)
                elif h is not None:
                    _lib.uevent_session__shutdown(h)
                    self._doomed = h
                    if _threading.get_ident() not in self._readers:
                        while self._doomed is not None:
                            cv.wait()
        self._recording = None

    def __repr__(self) -> str:
        if self._h is None:
            return "<uevent.Session closed>"
        return f"<uevent.Session pid={self.pid} transports={','.join(self.transports)}>"


# ---- perf.data files ------------------------------------------------------------------

class PerfData(_Reader, _Events):
    """Iterates the records of a perf.data file (file or pipe mode; "-": standard input).

        with uevent.PerfData("perf.data") as f:
            for rec in f:
                if isinstance(rec, uevent.UEvent): print(rec.payload)

    Samples of the usdt and user_events tracepoints come back as UEvent records when
    the file's tracing data gives their layout. A missing file raises
    FileNotFoundError, a corrupt one InvalidArgument (at `offset`).
    """

    _what, _c, _rec_type = "PerfData", "perf_file", "uevent_perf_record"
    _convert = staticmethod(_perf_record)

    def __iter__(self) -> Iterator[AnyRecord]:    # next() and iteration read the same
        return _records.perf_records(self, _error)  # type: ignore[no-any-return]

    def raw_fields(self, sample: Sample, as_dict: bool = False) -> Union[str, Dict[str, Any]]:
        """A tracepoint sample's raw fields by name, from this file's tracing data
        (libtraceevent): "prev_comm=sh prev_pid=42 ..." as perf script shows them (by type
        where the print format is not given to libtraceevent), or with as_dict a dict
        (numbers as ints). FileNotFoundError (ENOENT): not a sample of a tracepoint with a
        format here; Error(EOPNOTSUPP): libuevent was built without libtraceevent."""
        if not isinstance(sample, Sample):
            raise InvalidArgument(_errno.EINVAL, f"not a Sample: {type(sample).__name__}")
        rec = _out("struct uevent_perf_record *")
        rec.body = _lib.UEVENT_BODY_SAMPLE
        raw = _from_buffer(sample.raw)
        rec.u.sample.raw = raw
        rec.u.sample.raw_size = len(raw)
        rec.u.sample.event_index = sample.event_index
        flags = _lib.UEVENT_FIELDS_JSON if as_dict else 0
        n = _check(_lib.uevent_perf_file__raw_fields(self._live(), rec, flags, _ffi.NULL, 0),
                   f"raw_fields: no tracepoint format here for event {sample.event_index}")
        buf = _ffi.new("char[]", n + 1)
        _check(_lib.uevent_perf_file__raw_fields(self._live(), rec, flags, buf, n + 1),
               "raw_fields")
        text = _ffi.string(buf).decode("utf-8", "replace")
        if not as_dict:
            return text
        d: Dict[str, Any] = _json.loads(text)
        return d

    def read_batch(self, n: int = 65536) -> Any:
        """The next n samples and n uevents at most (other records skipped) as NumPy
        structured arrays filled in C, no Python per record: a uevent._arrays.Arrays, or
        None at the end. Needs NumPy (ImportError without). Errors as iterating's."""
        from . import _arrays
        r = _arrays.read_batch(self._live(), n)
        if isinstance(r, int):
            raise _error(-r, f"read_batch({n!r}): {self.path!r} at offset {self.offset}")
        return r

    @property
    def clockid(self) -> int:
        """The events' clock (attr.clockid or HEADER_CLOCK_DATA), -1 for perf's clock."""
        return int(_lib.uevent_perf_file__clockid(self._live()))

    @property
    def clock_res_ns(self) -> int:
        """HEADER_CLOCKID (the clock's resolution in ns), -1 when absent."""
        return int(_lib.uevent_perf_file__clock_res_ns(self._live()))


def read_arrays(path: Union[str, bytes, "_os.PathLike[str]"]) -> Any:
    """Every sample and uevent of a perf.data file as NumPy arrays (uevent._arrays.Arrays:
    PerfData.read_batch's, joined). An error is raised as iterating raises it, with the
    rows read before it as its `partial` attribute (a cut file: every whole record)."""
    from . import _arrays
    with PerfData(path) as f:
        return _arrays.read_all(f, _error)


def open_capture(path: Union[str, bytes, "_os.PathLike[str]"]) -> PerfData:
    """Opens a capture: a PerfData of perf records. Every capture is perf.data, the file
    transport's too (pipe mode); "-" reads a stream from standard input. Errors as
    PerfData's."""
    return PerfData(_os.fspath(path))
