"""Copying a decoded C record's pointer members out (the C record is only valid until
the next call): what the generated record makers (_records.py) call."""
import dataclasses as _dc
import struct as _struct
from typing import Any, Callable, Dict, Tuple

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


# ---- the same from addresses, for the makers that read a record with one unpack ------

def _layout(ctype: str, paths: Tuple[Tuple[str, ...], ...]) -> _struct.Struct:
    """A struct.Struct reading the members of ctype at paths (field names, nested
    structs and unions walked), in offset order, as ints; pointers as their addresses,
    arrays as bytes."""
    fmt, at = ["="], 0
    for path in paths:
        t = _ffi.typeof(ctype)
        for name in path:
            t = dict(t.fields)[name].type
        off = _ffi.offsetof(ctype, *path)
        size = _ffi.sizeof(t)
        if t.kind == "array":
            code = "%ds" % size
        elif t.kind == "pointer":
            code = "Q" if size == 8 else "I"
        else:
            code = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
            if t.kind != "primitive" or t.cname.startswith(("uint", "unsigned", "size_t")):
                code = code.upper()
        if off < at:
            raise ValueError(f"{ctype}: {'.'.join(path)} is not in offset order")
        fmt.append("%dx%s" % (off - at, code) if off > at else code)
        at = off + size
    return _struct.Struct("".join(fmt))


def _ptr(a: int) -> Any:
    return _ffi.cast("char *", a)


def _u64s_at(a: int, n: int, bo: int) -> Tuple[int, ...]:
    if not n or not a:
        return ()
    return _struct.unpack("%s%dQ" % (_BO_CHAR[bo], n), _ffi.buffer(_ptr(a), 8 * n))


def _groups_at(a: int, n: int, per: int, bo: int) -> Tuple[Tuple[int, ...], ...]:
    if not n or not per or not a:
        return ()
    flat = _u64s_at(a, n * per, bo)
    return tuple(flat[i:i + per] for i in range(0, len(flat), per))


def _blob_at(a: int, n: int) -> bytes:
    return bytes(_ffi.buffer(_ptr(a), n)) if n and a else b""


def _cstr_at(a: int) -> str:
    return str(_ffi.string(_ptr(a)).decode("utf-8", "replace")) if a else ""


def _slot_init(cls: type) -> Callable[..., None]:
    """The __init__ the dataclass cls has (same parameters and defaults), setting each
    slot through its member descriptor, bound once: a frozen dataclass's own sets each
    field with object.__setattr__, which costs twice as much and was most of the time
    spent making a record."""
    fields = [f for f in _dc.fields(cls) if f.init]   # type: ignore[arg-type]
    sets: Dict[str, Any] = {}
    for c in reversed(cls.__mro__):
        for n in vars(c).get("__slots__", ()):
            sets[n] = vars(c)[n].__set__
    if any(f.default_factory is not _dc.MISSING or f.name not in sets for f in fields):
        return cls.__init__     # type: ignore[misc]
    env: Dict[str, Any] = {}
    params = []
    for i, f in enumerate(fields):
        if f.default is _dc.MISSING:
            params.append(f.name)
        else:
            env[f"_d{i}"] = f.default
            params.append(f"{f.name}=_d{i}")
    src = (f"def _make({', '.join(f'_s{i}' for i in range(len(fields)))}):\n"
           f"    def __init__(self, {', '.join(params)}):\n"
           + "".join(f"        _s{i}(self, {f.name})\n" for i, f in enumerate(fields))
           + "    return __init__\n")
    exec(src, env)
    init: Callable[..., None] = env["_make"](*(sets[f.name] for f in fields))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
