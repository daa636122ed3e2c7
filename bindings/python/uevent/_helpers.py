"""Copying a decoded C record's pointer members out (the C record is only valid until
the next call): what the generated record makers (_records.py) call."""
import struct as _struct
from typing import Any, Tuple

from ._uevent import ffi as _ffi, lib as _lib

_BO_CHAR = {_lib.UEVENT_BO_HOST: "=", _lib.UEVENT_BO_LITTLE: "<", _lib.UEVENT_BO_BIG: ">"}


def _u64s(p: Any, n: int, bo: int) -> Tuple[int, ...]:
    """n u64 of an encoded array (uevent_perf_u64's job, done with one unpack)."""
    if not n or p == _ffi.NULL:
        return ()
    return _struct.unpack("%s%dQ" % (_BO_CHAR[bo], n), _ffi.buffer(p, 8 * n))


def _groups(p: Any, n: int, per: int, bo: int) -> Tuple[Tuple[int, ...], ...]:
    """n groups of per u64 each, as tuples."""
    if not per:
        return ()
    flat = _u64s(p, n * per, bo)
    return tuple(flat[i:i + per] for i in range(0, len(flat), per))


def _blob(p: Any, n: int) -> bytes:
    return bytes(_ffi.buffer(p, n)) if n and p != _ffi.NULL else b""


def _cstr(p: Any) -> str:
    return str(_ffi.string(p).decode("utf-8", "replace")) if p != _ffi.NULL else ""


def _str(p: Any, n: int) -> str:
    return str(_ffi.unpack(p, n).decode("utf-8", "replace"))
