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
import os as _os
import sys as _sys
from dataclasses import dataclass as _dataclass
from typing import (Any, Callable, Dict, Iterator, NamedTuple, Optional, Tuple, TypeVar,
                    Union)

from ._uevent import ffi as _ffi, lib as _lib

__all__ = [
    "Error", "InvalidArgument", "mark", "emit", "counter", "trace_context", "range",
    "async_begin", "async_end", "enabled", "open", "close", "transport", "open_reason",
    "max_payload", "Stats", "stats", "stats_reset", "decode", "decode_record", "Record",
    "FileReader", "Text", "RangeBegin", "RangeEnd", "Counter", "JitCodeLoad", "JitCodeMove",
    "JitCodeUnload", "JitDebugEntry", "JitDebugInfo", "TraceContext", "Raw", "version",
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
    return cls(err, msg if what is None else f"{msg}: {what}")


def _check(ret: int, what: Optional[str] = None) -> int:
    if ret < 0:
        raise _error(-ret, what)
    return ret


def _bytes(s: Union[str, bytes]) -> bytes:
    return s.encode() if isinstance(s, str) else bytes(s)


# ---- emitting -------------------------------------------------------------------------

# The enabled word itself: one load per disabled mark, no C call.
_word = _ffi.addressof(_lib, "uevent_enabled_word")
_mark = _lib.uevent_mark
_emit = _lib.uevent_emit
_counter = _lib.uevent_counter
_from_buffer = _ffi.from_buffer


def enabled() -> bool:
    """True when a listener may exist (the exported enabled word is non-zero)."""
    return _word[0] != 0


def mark(text: Union[str, bytes], *args: Any) -> None:
    """A text mark. With args, `text % args` is formatted only when enabled."""
    if _word[0]:
        if args:
            text = text % args
        ret = _mark(text.encode() if isinstance(text, str) else text)
        if ret < 0:
            raise _error(-ret, "mark")


def emit(type: int, data: Union[bytes, bytearray, memoryview]) -> None:
    """Emit a raw payload of `type` (a well-known type or >= UEVENT_TYPE_USER)."""
    if _word[0]:
        ret = _emit(type, _from_buffer(data), len(data))
        if ret < 0:
            raise _error(-ret, f"emit of {len(data)} bytes")


def counter(name: Union[str, bytes], value: int) -> None:
    """A counter sample, `name` = `value` (a signed 64-bit integer)."""
    if _word[0]:
        ret = _counter(name.encode() if isinstance(name, str) else name, value)
        if ret < 0:
            raise _error(-ret, "counter")


def trace_context(trace_id: bytes, span_id: bytes, flags: int = 0) -> None:
    """A W3C trace context: 16-byte trace id, 8-byte span id, trace flags."""
    if len(trace_id) != 16 or len(span_id) != 8:
        raise InvalidArgument(_errno.EINVAL, "trace_id must be 16 bytes, span_id 8")
    _check(_lib.uevent_trace_context(trace_id, span_id, flags), "trace_context")


_F = TypeVar("_F", bound=Callable[..., Any])


class range:  # noqa: A001 - uevent.range, as the API promises
    """A synchronous range: `with uevent.range("name"):` or `@uevent.range("name")`.

    Ranges nest per thread. When nobody listens, entering costs one C call.
    """

    __slots__ = ("_name", "_ids")

    def __init__(self, name: Union[str, bytes]) -> None:
        self._name = _bytes(name)
        self._ids: list = []

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
    return _lib.uevent_async_begin(_bytes(name))


def async_end(rid: int) -> None:
    if rid:
        _check(_lib.uevent_async_end(rid), "async range end")


# ---- transports -----------------------------------------------------------------------


def _tname(t: int) -> str:
    p = _lib.uevent_transport_name(t)
    return _ffi.string(p).decode() if p != _ffi.NULL else str(t)


def open(transport: Union[str, int] = "auto", path: Union[str, bytes, None] = None,
         ignore_env: bool = False) -> str:
    """(Re)select the process-wide transport; returns the name of the one chosen.

    `transport` is a name ("auto", "prctl", "user_events", "usdt", "ftrace", "file",
    "none") or number; `path` is the file transport's output file.
    """
    if isinstance(transport, str):
        t = _lib.uevent_transport_from_name(transport.encode())
        if t < 0:
            raise InvalidArgument(_errno.EINVAL, f"unknown transport {transport!r}")
    else:
        t = transport
    opts = _ffi.new("struct uevent_open_opts *")
    opts.sz = _ffi.sizeof("struct uevent_open_opts")
    opts.transport = t
    keep = None
    if path is not None:
        keep = _ffi.new("char[]", _os.fsencode(path))
        opts.path = keep
    if ignore_env:
        opts.flags = _lib.UEVENT_OPEN_IGNORE_ENV
    ret = _lib.uevent_open(opts)
    del keep
    if ret < 0:
        raise _error(-ret, open_reason())
    return _tname(ret)


def close() -> None:
    """Stop delivering (transport "none") and release the transport's resources."""
    _check(_lib.uevent_close(), "close")


def transport() -> str:
    """The name of the transport in use."""
    return _tname(_lib.uevent_transport())


def open_reason() -> str:
    """Why the last open chose or refused what it did."""
    p = _lib.uevent_open_reason()
    return _ffi.string(p).decode() if p != _ffi.NULL else ""


def max_payload() -> int:
    """Largest payload the current transport accepts, in bytes."""
    return _lib.uevent_max_payload()


def version() -> str:
    return _ffi.string(_lib.uevent_version()).decode()


# ---- statistics -----------------------------------------------------------------------


@_dataclass(frozen=True)
class Stats:
    emitted: int
    bytes: int
    unobserved: int
    dropped: int
    dropped_by: Dict[str, int]


def stats() -> Stats:
    """Process-wide counters since load: emitted, and dropped by reason."""
    s = _ffi.new("struct uevent_stats *")
    _check(_lib.uevent_stats_get(s, _ffi.sizeof(s[0])), "stats")
    by = {}
    for i in _builtins.range(len(s.dropped_by)):
        p = _lib.uevent_drop_reason_name(i)
        by[_ffi.string(p).decode() if p != _ffi.NULL else str(i)] = s.dropped_by[i]
    return Stats(s.emitted, s.bytes, s.unobserved, s.dropped, by)


def stats_reset() -> None:
    _lib.uevent_stats_reset()


# ---- decoding -------------------------------------------------------------------------


class Text(NamedTuple):
    text: str


class RangeBegin(NamedTuple):
    id: int
    parent: int
    flags: int
    name: str


class RangeEnd(NamedTuple):
    id: int
    flags: int


class Counter(NamedTuple):
    name: str
    value: int


class JitCodeLoad(NamedTuple):
    code_addr: int
    code_size: int
    code_index: int
    name: str


class JitCodeMove(NamedTuple):
    code_index: int
    old_addr: int
    new_addr: int
    code_size: int


class JitCodeUnload(NamedTuple):
    code_addr: int
    code_size: int
    code_index: int


class JitDebugEntry(NamedTuple):
    addr: int
    line: int
    discrim: int
    file: str


class JitDebugInfo(NamedTuple):
    code_addr: int
    entries: Tuple[JitDebugEntry, ...]


class TraceContext(NamedTuple):
    trace_id: bytes
    span_id: bytes
    flags: int


class Raw(NamedTuple):
    """A payload of a type this binding does not decode (an application's own)."""
    type: int
    data: bytes


Payload = Union[Text, RangeBegin, RangeEnd, Counter, JitCodeLoad, JitCodeMove, JitCodeUnload,
                JitDebugInfo, TraceContext, Raw]

_BO = {"host": _lib.UEVENT_BO_HOST, "little": _lib.UEVENT_BO_LITTLE, "big": _lib.UEVENT_BO_BIG}


def _bo(byte_order: Union[str, int]) -> int:
    if isinstance(byte_order, int):
        return byte_order
    try:
        return _BO[byte_order]
    except KeyError:
        raise InvalidArgument(_errno.EINVAL, f"byte order {byte_order!r}") from None


def _str(p: Any, n: int) -> str:
    return _ffi.unpack(p, n).decode("utf-8", "replace")


def _dec_text(buf, n, bo):
    o = _ffi.new("struct uevent_text *")
    _check(_lib.uevent_text_decode(buf, n, bo, o), "text payload")
    return Text(_str(o.text, o.len))


def _dec_range_begin(buf, n, bo):
    o = _ffi.new("struct uevent_range_begin *")
    _check(_lib.uevent_range_begin_decode(buf, n, bo, o), "range_begin payload")
    return RangeBegin(o.id, o.parent, o.flags, _str(o.name, o.name_len))


def _dec_range_end(buf, n, bo):
    o = _ffi.new("struct uevent_range_end *")
    _check(_lib.uevent_range_end_decode(buf, n, bo, o), "range_end payload")
    return RangeEnd(o.id, o.flags)


def _dec_counter(buf, n, bo):
    o = _ffi.new("struct uevent_counter *")
    _check(_lib.uevent_counter_decode(buf, n, bo, o), "counter payload")
    return Counter(_str(o.name, o.name_len), o.value)


def _dec_jit_code_load(buf, n, bo):
    o = _ffi.new("struct uevent_jit_code_load *")
    _check(_lib.uevent_jit_code_load_decode(buf, n, bo, o), "jit_code_load payload")
    return JitCodeLoad(o.code_addr, o.code_size, o.code_index, _str(o.name, o.name_len))


def _dec_jit_code_move(buf, n, bo):
    o = _ffi.new("struct uevent_jit_code_move *")
    _check(_lib.uevent_jit_code_move_decode(buf, n, bo, o), "jit_code_move payload")
    return JitCodeMove(o.code_index, o.old_addr, o.new_addr, o.code_size)


def _dec_jit_code_unload(buf, n, bo):
    o = _ffi.new("struct uevent_jit_code_unload *")
    _check(_lib.uevent_jit_code_unload_decode(buf, n, bo, o), "jit_code_unload payload")
    return JitCodeUnload(o.code_addr, o.code_size, o.code_index)


def _dec_jit_debug_info(buf, n, bo):
    o = _ffi.new("struct uevent_jit_debug_info *")
    _check(_lib.uevent_jit_debug_info_decode(buf, n, bo, o), "jit_debug_info payload")
    off = _ffi.new("uint32_t *")
    e = _ffi.new("struct uevent_jit_debug_entry *")
    entries = []
    while True:
        r = _check(_lib.uevent_jit_debug_entry_next(o, bo, off, e), "jit_debug_info entry")
        if r == 0:
            break
        entries.append(JitDebugEntry(e.addr, e.line, e.discrim, _str(e.file, e.file_len)))
    return JitDebugInfo(o.code_addr, tuple(entries))


def _dec_trace_context(buf, n, bo):
    o = _ffi.new("struct uevent_trace_context *")
    _check(_lib.uevent_trace_context_decode(buf, n, bo, o), "trace_context payload")
    return TraceContext(bytes(_ffi.buffer(o.trace_id)), bytes(_ffi.buffer(o.span_id)), o.flags)


_DECODERS: Dict[int, Callable[[Any, int, int], Payload]] = {
    _lib.UEVENT_TYPE_TEXT: _dec_text,
    _lib.UEVENT_TYPE_RANGE_BEGIN: _dec_range_begin,
    _lib.UEVENT_TYPE_RANGE_END: _dec_range_end,
    _lib.UEVENT_TYPE_COUNTER: _dec_counter,
    _lib.UEVENT_TYPE_JIT_CODE_LOAD: _dec_jit_code_load,
    _lib.UEVENT_TYPE_JIT_CODE_MOVE: _dec_jit_code_move,
    _lib.UEVENT_TYPE_JIT_CODE_UNLOAD: _dec_jit_code_unload,
    _lib.UEVENT_TYPE_JIT_DEBUG_INFO: _dec_jit_debug_info,
    _lib.UEVENT_TYPE_TRACE_CONTEXT: _dec_trace_context,
}


def decode(type: int, data: Union[bytes, bytearray, memoryview],
           byte_order: Union[str, int] = "host") -> Payload:
    """Decode a payload of `type` with libuevent's decoders.

    Returns a named tuple (Text, Counter, ...), or Raw for types it does not know.
    Raises InvalidArgument (a ValueError) for a malformed payload.
    """
    dec = _DECODERS.get(type)
    if dec is None:
        return Raw(type, bytes(data))
    buf = _from_buffer(data)
    return dec(buf, len(data), _bo(byte_order))


@_dataclass(frozen=True)
class Record:
    """One PERF_RECORD_UEVENT (or file-transport record), decoded.

    `payload` is the decoded payload (Raw for application types and payloads that did
    not decode); sample_id fields the record lacks are None.
    """
    type: int
    payload: Payload
    data: bytes
    format: int
    flags: int
    record_type: int
    misc: int
    pid: Optional[int] = None
    tid: Optional[int] = None
    time: Optional[int] = None
    id: Optional[int] = None
    stream_id: Optional[int] = None
    cpu: Optional[int] = None
    identifier: Optional[int] = None


def _record(r: Any, bo: int) -> Record:
    data = _ffi.unpack(_ffi.cast("const char *", r.data), r.size) if r.size else b""
    dec = _DECODERS.get(r.type)
    payload: Payload
    if dec is None:
        payload = Raw(r.type, data)
    else:
        try:
            payload = dec(_from_buffer(data), len(data), bo)
        except InvalidArgument:
            payload = Raw(r.type, data)
    f = r.id_fields
    has = lambda bit, v: v if f & bit else None  # noqa: E731
    return Record(r.type, payload, data, r.format, r.flags, r.record_type, r.misc,
                  has(_lib.UEVENT_ID_TID, r.pid), has(_lib.UEVENT_ID_TID, r.tid),
                  has(_lib.UEVENT_ID_TIME, r.time), has(_lib.UEVENT_ID_ID, r.id),
                  has(_lib.UEVENT_ID_STREAM_ID, r.stream_id), has(_lib.UEVENT_ID_CPU, r.cpu),
                  has(_lib.UEVENT_ID_IDENTIFIER, r.identifier))


def decode_record(buf: Union[bytes, bytearray, memoryview], byte_order: Union[str, int] = "host",
                  sample_type: int = 0, seed_layout: bool = False) -> Record:
    """Decode one PERF_RECORD_UEVENT (header included). `sample_type` is the event's
    attr.sample_type (for the sample_id trailer); `seed_layout` for the 2014 seed's form."""
    r = _ffi.new("struct uevent_record *")
    cbuf = _from_buffer(buf)
    bo = _bo(byte_order)
    flags = _lib.UEVENT_RECORD_SEED_LAYOUT if seed_layout else 0
    _check(_lib.uevent_record_decode(cbuf, len(buf), bo, sample_type, flags, r), "record")
    return _record(r, bo)


_HOST_BO = _lib.UEVENT_BO_LITTLE if _sys.byteorder == "little" else _lib.UEVENT_BO_BIG
_SWAP_BO = _lib.UEVENT_BO_BIG if _sys.byteorder == "little" else _lib.UEVENT_BO_LITTLE


def _file_byte_order(path: Union[str, bytes]) -> int:
    # The reader decodes the records' own fields; payloads stay in the file's order,
    # which only the header's byte-order mark tells (libuevent has no getter for it).
    h = _ffi.new("struct uevent_file_header *")
    with _builtins.open(path, "rb") as f:
        raw = f.read(_ffi.sizeof(h[0]))
    _ffi.memmove(h, raw, min(len(raw), _ffi.sizeof(h[0])))
    return _HOST_BO if h.byte_order == 0x01020304 else _SWAP_BO


class FileReader:
    """Iterates the records of a file-transport file as Record objects.

    A context manager; the descriptor is closed by close(), at the end of a `with`,
    or when the reader is garbage-collected.
    """

    def __init__(self, path: Union[str, bytes, "_os.PathLike[str]"]) -> None:
        self.path = _os.fspath(path)
        p = _lib.uevent_file_reader__open(_os.fsencode(self.path))
        if p == _ffi.NULL:
            raise _error(_ffi.errno, repr(self.path))
        self._r: Any = _ffi.gc(p, _lib.uevent_file_reader__close)
        self._rec = _ffi.new("struct uevent_record *")
        self.byte_order = _file_byte_order(self.path)

    def __iter__(self) -> Iterator[Record]:
        return self

    def __next__(self) -> Record:
        if self._r is None:
            raise ValueError("I/O operation on a closed FileReader")
        ret = _lib.uevent_file_reader__next(self._r, self._rec)
        if ret == 0:
            raise StopIteration
        if ret < 0:
            raise _error(-ret, f"{self.path!r} at offset {self.offset}")
        return _record(self._rec, self.byte_order)

    @property
    def offset(self) -> int:
        """Byte offset of the next record (or of the corrupt one after an error)."""
        if self._r is None:
            raise ValueError("I/O operation on a closed FileReader")
        return _lib.uevent_file_reader__offset(self._r)

    @property
    def closed(self) -> bool:
        return self._r is None

    def close(self) -> None:
        """Close the file; calling it again does nothing."""
        if self._r is not None:
            r, self._r = self._r, None
            _ffi.release(r)

    def __enter__(self) -> "FileReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
