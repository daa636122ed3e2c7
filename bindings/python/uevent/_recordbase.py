"""What the generated record classes (_records.py) are built from: the readers of the
record model's notes in Python, and the immutable tuple record class.

The notes' kinds ([u64 x N], [u64 x N of K], [bytes x N], [str]) become copies of what a
pointer member of a C record points to, made before the C record is reused: from the
cdata (_u64s, _blob, ...) or from an address a struct.unpack of the record read (the
*_at readers). Each reads exactly the bytes its note counts (the C decoder checked them
against the record): a pointer is read through a buffer of that size, never beyond.
"""
import dataclasses as _dc
import inspect as _inspect
import struct as _struct
from operator import itemgetter as _itemgetter
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

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

def _member(ctype: str, path: Tuple[str, ...]) -> Tuple[Any, int, int]:
    """The type, offset and size of the member of ctype at path."""
    t = _ffi.typeof(ctype)
    for name in path:
        t = dict(t.fields)[name].type
    return t, _ffi.offsetof(ctype, *path), _ffi.sizeof(t)


def _layout(ctype: str, paths: Tuple[Any, ...]) -> _struct.Struct:
    """A struct.Struct reading the members of ctype at paths (field names, nested
    structs and unions walked), in offset order, as ints; pointers as their addresses,
    arrays as bytes. A pair of paths (first, last) reads the bytes from first's start to
    last's end, as one bytes object."""
    fmt, at = ["="], 0
    for path in paths:
        if isinstance(path[0], tuple):
            _, off, _ = _member(ctype, path[0])
            _, end, size = _member(ctype, path[1])
            t, size = None, end + size - off
            path = path[0]
        else:
            t, off, size = _member(ctype, path)
        if t is None or t.kind in ("array", "struct"):
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


_cast, _unpack, _CHARP = _ffi.cast, _ffi.unpack, _ffi.typeof("char *")
# byte order -> n -> the struct.Struct of n u64 in that order
_U64S: Dict[int, Dict[int, _struct.Struct]] = {bo: {} for bo in _BO_CHAR}


def _u64s_struct(bo: int, n: int) -> _struct.Struct:
    """The struct.Struct of n u64 in byte order bo, kept in _U64S."""
    s = _U64S[bo][n] = _struct.Struct("%s%dQ" % (_BO_CHAR[bo], n))
    return s


def _blob_at(a: int, n: int) -> bytes:
    """The n bytes at address a (ffi.unpack of a char *: a copy of exactly n)."""
    return _unpack(_cast(_CHARP, a), n) if n and a else b""


def _u64s_at(a: int, n: int, bo: int) -> Tuple[int, ...]:
    """The n u64 at address a, encoded in byte order bo."""
    if not n or not a:
        return ()
    return (_U64S[bo].get(n) or _u64s_struct(bo, n)).unpack(_unpack(_cast(_CHARP, a), 8 * n))


def _groups_at(a: int, n: int, per: int, bo: int) -> Tuple[Tuple[int, ...], ...]:
    if not n or not per or not a:
        return ()
    flat = _u64s_at(a, n * per, bo)
    return tuple(flat[i:i + per] for i in range(0, len(flat), per))


def _cstr_at(a: int) -> str:
    return str(_ffi.string(_cast(_CHARP, a)).decode("utf-8", "replace")) if a else ""


_tnew = tuple.__new__


# ---- the record classes ---------------------------------------------------------------

def _binder(dc: Any) -> Callable[[Tuple[Any, ...], Dict[str, Any]], List[Any]]:
    """bind(args, kw): the values of dataclass dc's fields in order, bound as a call of
    its constructor binds them (its parameters and defaults; TypeError as Python's)."""
    sig = _inspect.signature(dc)

    def bind(args: Tuple[Any, ...], kw: Dict[str, Any]) -> List[Any]:
        try:
            b = sig.bind(*args, **kw)
        except TypeError as e:
            raise TypeError(f"{dc.__qualname__}(): {e}") from None
        b.apply_defaults()
        return list(b.arguments.values())
    return bind


def _record_class(dc: Any, order: Optional[Tuple[str, ...]] = None, base: type = tuple,
                  sid_cell: Optional[Callable[[List[Any], Any], Any]] = None) -> Any:
    """The record class of the frozen dataclass dc: a tuple subclass holding dc's fields
    in `order` (the order its maker builds them in: most of a record is one
    struct.unpack result), each field a property reading its item. It keeps what dc
    offers: the constructor's parameters and defaults, repr, equality within the class,
    hash, immutability (FrozenInstanceError), iteration and pickling in field order, and
    dataclasses.fields/asdict/astuple/replace (dc's field list). Making one is a
    tuple.__new__, where a dataclass sets each slot. With sid_cell, sample_id may be
    held as a cell (a list) that sid_cell(cell, record) makes the SampleId of on first
    use."""
    fields = _dc.fields(dc)
    names = tuple(f.name for f in fields)
    at = {n: i for i, n in enumerate(order or names)}
    # field order -> the tuple's, and back
    put = _itemgetter(*(names.index(n) for n in (order or names)))
    get = _itemgetter(*(at[n] for n in names))
    if len(names) == 1:
        put = get = lambda s: (s[0],)     # type: ignore[assignment]
    if sid_cell is not None:        # compare the cell's value
        k, fget = at["sample_id"], get
        sid_at = names.index("sample_id")

        def get(s: Any) -> Tuple[Any, ...]:
            v = fget(s)
            c = v[sid_at]
            if type(c) is not list:
                return v    # type: ignore[no-any-return]
            return v[:sid_at] + (sid_cell(c, s),) + v[sid_at + 1:]   # type: ignore[no-any-return]
    ns: Dict[str, Any] = {k: v for k, v in vars(dc).items() if isinstance(v, property)}
    ns.update(__slots__=(), __doc__=dc.__doc__, __module__=dc.__module__,
              __qualname__=dc.__qualname__, __annotations__=dc.__annotations__,
              __dataclass_fields__=dc.__dataclass_fields__,
              __dataclass_params__=dc.__dataclass_params__, __match_args__=names)
    for n in names:
        ns[n] = property(_itemgetter(at[n]), doc=f"{dc.__name__}.{n}")
    if sid_cell is not None:
        ns["sample_id"] = property(lambda s: sid_cell(s[k], s) if type(s[k]) is list else s[k],
                                   doc=f"{dc.__name__}.sample_id")
    bind = _binder(dc)

    def __new__(cls: type, *args: Any, **kw: Any) -> Any:
        if kw or len(args) != len(names):
            args = tuple(bind(args, kw))
        return _tnew(cls, put(args))
    ns["__new__"] = __new__
    ns["__iter__"] = lambda s: iter(get(s))
    ns["__getnewargs__"] = lambda s: get(s)
    ns["__reduce__"] = lambda s: (type(s), get(s))     # every pickle protocol: by field
    ns["__repr__"] = lambda s: "%s(%s)" % (type(s).__qualname__, ", ".join(
        "%s=%r" % (n, v) for n, v in zip(names, get(s))))
    # another class's record, or a plain tuple, is not equal (as with a dataclass)
    ns["__eq__"] = lambda s, o: get(s) == get(o) if type(o) is type(s) else \
        False if isinstance(o, tuple) else NotImplemented
    ns["__ne__"] = lambda s, o: get(s) != get(o) if type(o) is type(s) else \
        True if isinstance(o, tuple) else NotImplemented
    ns["__hash__"] = lambda s: hash(get(s))
    for op in ("__lt__", "__le__", "__gt__", "__ge__"):
        ns[op] = lambda s, o: NotImplemented

    def frozen(s: Any, name: str, *v: Any) -> None:
        raise _dc.FrozenInstanceError(f"cannot assign to field {name!r}")
    ns["__setattr__"] = ns["__delattr__"] = frozen
    return type(dc.__name__, (base,), ns)


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
    names = tuple(f.name for f in fields)
    setters = tuple(sets[n] for n in names)
    bind = _binder(cls)

    def __init__(self: Any, *args: Any, **kw: Any) -> None:
        if kw or len(args) != len(names):
            args = tuple(bind(args, kw))
        for s, v in zip(setters, args):
            s(self, v)
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__
