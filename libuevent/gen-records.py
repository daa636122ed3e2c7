#!/usr/bin/env python3
# gen-records.py - the record model of uevent.h, as code for the readers that mirror it.
#
# The record structs of uevent.h (struct uevent_perf_record, its union's members, the
# nested structs they hold) are the one statement of what a decoded record is. This
# reads them, with the bracket note a pointer or array member's comment starts with
# ([bytes x N], [u64 x N], [u64 x N of K], [str]), and writes:
#   --c-json   tools/uevent-json.h: `uevent dump --json`'s printers, one per struct
#   --python   the Python binding's record classes and their makers
#   --rust     the Rust crate's owned record structs and their makers (committed, like
#              bindgen's output: cargo builds without Python)
#   --lua      the LuaJIT binding's record converters and payload decoders
# The payload codec structs (struct uevent_counter, ...) carry notes of their own and
# become each binding's payload types and decoders.
# So a member added to a record struct is a one-line change to uevent.h.
#
# usage: gen-records.py --c-json|--python|--rust|--lua libuevent/uevent.h > OUT
import re
import sys

# The struct each record member of union uevent_perf_body is, and what they nest.
ROOT = "uevent_perf_record"
# Other structs the bindings mirror field for field: the session's counters.
EXTRA = ["uevent_session_stats", "uevent_stats"]
# Python class names where the struct's own name would change the binding's API.
PY_CLASS = {"uevent_perf_bytes": "Other", "uevent_perf_read": "PerfRead",
            "uevent_session_stats": "SessionStats", "uevent_stats": "Stats"}
# Members of the union that the bindings make by hand (they need the payload codecs).
HAND_MADE = {"uevent"}
# The members most records of a union member have, the rest being empty: perf_records()
# makes such a record without testing each of the rest.
COMMON = {"sample": ("callchain",)}
# The union members whose makers perf_records() has inline: a perf.data's samples and its
# FINISHED_ROUND records (Other), one per round of samples.
INLINE = ("sample", "other")
# Of those, the ones whose records are often their header alone (FINISHED_ROUND).
BARE = ("other",)
# PerfRecord's own fields, which a body member must not shadow in Python.
PY_BASE = ("type", "misc", "size", "sample_id")

# struct -> the bindings' field order where a [order a, b] note gives one
ORDER = {}

ANN = re.compile(r"^\[(bytes|u64|str)(?:\s+x\s+([^\]]+?))?\]")


class Field:
    def __init__(self, name, ctype, ptr, array, ann):
        self.name, self.ctype, self.ptr, self.array = name, ctype, ptr, array
        self.kind, self.count, self.per = None, None, None
        if ann:
            m = ANN.match(ann)
            if m:
                self.kind = m.group(1)
                if m.group(2):
                    parts = m.group(2).split(" of ")
                    self.count = parts[0].strip()
                    self.per = parts[1].strip() if len(parts) > 1 else None
        m = re.match(r"^\[(each (\w+)|length)\]", ann or "")
        self.each = m.group(2) if m else None       # [each S]: entries walked with S_next
        self.length = bool(m) and m.group(1) == "length"
        m = re.match(r"^\[by (\w+)\]", ann or "")
        self.by = m.group(1) if m else None     # [by F]: counts by the name F(index) gives
        m = re.match(r"^\[id (\w+)\]", ann or "")
        self.idbit = m.group(1) if m else name.upper()    # sample_id: UEVENT_ID_<bit>
        self.nested = ctype[len("struct "):] if ctype.startswith("struct ") and not ptr else None
        self.union = ctype[len("union "):] if ctype.startswith("union ") else None


def parse(text):
    """struct/union name -> list of Field, for every struct and union in the header."""
    out = {}
    for m in re.finditer(r"\b(struct|union)\s+(\w+)\s*\{(.*?)\n\};", text, re.S):
        fields = []
        body = m.group(3)
        for d in re.finditer(r"([^;{}]*?);[ \t]*(/\*.*?\*/)?", body, re.S):
            decl = re.sub(r"/\*.*?\*/", " ", d.group(1), flags=re.S).strip()
            if not decl or decl.startswith("#"):
                continue
            ann = d.group(2)[2:-2].strip() if d.group(2) else None
            names = [n.strip() for n in decl.split(",")]
            first = re.match(r"(.*?)([\s*]+)(\w+)\s*(\[\w*\])?$", names[0])
            if not first:
                raise SystemExit(f"gen-records: cannot read '{decl}'")
            ctype = re.sub(r"\s+", " ", first.group(1).replace("const ", "")).strip()
            decls = [first.group(2) + first.group(3) + (first.group(4) or "")] + names[1:]
            for dn in decls:
                ptr = "*" in dn
                nm = re.match(r"[\s*]*(\w+)\s*(\[\w*\])?", dn)
                fields.append(Field(nm.group(1), ctype, ptr, bool(nm.group(2)), ann))
        out[m.group(2)] = fields
        order = re.match(r"\s*/\*\s*\[order ([^\]]+)\]", body)
        if order:
            ORDER[m.group(2)] = [n.strip() for n in order.group(1).split(",")]
    return out


def reachable(model):
    """Structs of the record model in dependency order (nested ones first)."""
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for f in model[name]:
            if (f.ptr or f.array) and not f.kind:
                raise SystemExit(f"gen-records: {name}.{f.name}: a pointer or array member "
                                 f"needs a [bytes x N], [u64 x N] or [str] note in its comment")
            if f.nested:
                visit(f.nested)
            if f.union:
                visit(f.union)
        order.append(name)
    visit(ROOT)
    return order


def union_members(model):
    u = next(f.union for f in model[ROOT] if f.union)
    return [(f.name, f.nested) for f in model[u]]


def expr(e, prefix, div="/"):
    """A count expression over the struct's members: names get the prefix."""
    out = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: prefix + m.group(1), e)
    return out.replace("/", div)


# ---- C: uevent dump --json --------------------------------------------------------------

def c_json(model):
    out = ["/* uevent-json.h - generated from libuevent/uevent.h by libuevent/gen-records.py:",
           " * `uevent dump --json`'s printer for each record struct, keys named as the",
           " * members. Do not edit: change uevent.h and run `make records`. */", ""]
    structs = reachable(model)
    for name in structs:
        if name == ROOT or any(f.union for f in model[name]) or name not in \
                {s for _, s in union_members(model)} | {f.nested for n in structs
                                                        for f in model[n] if f.nested}:
            continue
        out.append(f"static void json_{name}(const struct {name} *s, int bo)")
        out.append("{")
        uses_bo = any(f.kind == "u64" or f.nested for f in model[name])
        if not uses_bo:
            out.append("\t(void)bo;")
        lead = "{"
        for f in model[name]:
            if f.name == "sz":
                continue
            key = f'{lead}\\"{f.name}\\": '
            lead = ", "
            if f.nested:
                line = f'printf("{key}"); json_{f.nested}(&s->{f.name}, bo);'
            elif f.kind == "str":
                line = f'printf("{key}"); json_str(s->{f.name} ? s->{f.name} : "");'
            elif f.kind == "bytes":
                n = expr(f.count, "s->")
                if f.array:
                    n = f"({n}) < sizeof(s->{f.name}) ? ({n}) : sizeof(s->{f.name})"
                line = f'printf("{key}"); json_bytes(s->{f.name}, {n});'
            elif f.kind == "u64":
                per = expr(f.per, "s->") if f.per else "1"
                line = (f'printf("{key}"); json_u64s(s->{f.name}, '
                        f"{expr(f.count, 's->')}, {per}, {'1' if f.per else '0'}, bo);")
            elif f.ctype.startswith("int"):
                line = f'printf("{key}%" PRId64, (int64_t)s->{f.name});'
            else:
                line = f'printf("{key}%" PRIu64, (uint64_t)s->{f.name});'
            out.append("\t" + line)
        out.append("\tputchar('}');")
        out.append("}")
        out.append("")
    out.append("/* The member the record's body says is set, as \"member\": {...}. */")
    out.append("static void json_perf_member(const struct uevent_perf_record *r, int bo)")
    out.append("{")
    out.append("\tswitch (r->body) {")
    for member, st in union_members(model):
        out.append(f"\tcase UEVENT_BODY_{member.upper()}:")
        out.append(f'\t\tprintf(", \\"{member}\\": ");')
        out.append(f"\t\tjson_{st}(&r->u.{member}, bo);")
        out.append("\t\tbreak;")
    out.append("\t}")
    out.append("}")
    return "\n".join(out) + "\n"


# ---- payloads: the codec structs of the well-known payload types ------------------------

HEADER = ""     # the header's text, for the enums the structs do not hold


def payloads(model):
    """(UEVENT_TYPE_ suffix, struct) of each well-known payload type: UEVENT_TYPE_X is a
    struct uevent_x, decoded by uevent_x_decode()."""
    return [(t, "uevent_" + t.lower()) for t in re.findall(r"\bUEVENT_TYPE_(\w+)\s*=", HEADER)
            if "uevent_" + t.lower() in model]


def id_fields(model):
    """(member, UEVENT_ID_ suffix of the bit saying it is there) of struct uevent_sample_id."""
    return [(f.name, f.idbit) for f in model["uevent_sample_id"] if f.name != "fields"]


def entry_structs(model):
    """Structs whose entries a payload's [each S] member holds."""
    return [f.each for _, st in payloads(model) for f in model[st] if f.each]


def payload_fields(model, st):
    """A payload struct's members as the bindings have them: without the members that
    only give another's length, in [order] where one is given."""
    counts = {f.count for f in model[st] if f.count}
    keep = [f for f in model[st] if not f.length and f.name not in counts]
    if st in ORDER:
        by = {f.name: f for f in keep}
        keep = [by[n] for n in ORDER[st]]
    return keep


def pay_class(st):
    return "".join(w.capitalize() for w in st[len("uevent_"):].split("_"))


# ---- Python: the binding's record classes ------------------------------------------------

def py_class(name):
    if name in PY_CLASS:
        return PY_CLASS[name]
    short = name[len("uevent_perf_"):] if name.startswith("uevent_perf_") else name
    return "".join(w.capitalize() for w in short.split("_"))


# What the bracket notes' kinds are in Python: copies of what a pointer member points to,
# made before the C record is reused ([u64 x N], [u64 x N of K], [bytes x N], [str]).
PY_NOTES = '''
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
        if t.kind in ("array", "struct"):
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


# The pointers of a decoded record (checked by the C decoder against the record) are read
# through one buffer over the process's address space, made once: an ffi.cast and an
# ffi.buffer per pointer cost more than the rest of a sample's copy.
_MEM = _ffi.buffer(_ffi.cast("char *", 1), _sys.maxsize - 1)
_U64S: Dict[int, Dict[int, _struct.Struct]] = {bo: {} for bo in _BO_CHAR}


def _ptr(a: int) -> Any:
    return _ffi.cast("char *", a)


def _u64s_struct(bo: int, n: int) -> _struct.Struct:
    """The struct.Struct of n u64 in byte order bo, kept in _U64S."""
    s = _U64S[bo][n] = _struct.Struct("%s%dQ" % (_BO_CHAR[bo], n))
    return s


def _u64s_at(a: int, n: int, bo: int) -> Tuple[int, ...]:
    if not n or not a:
        return ()
    return (_U64S[bo].get(n) or _u64s_struct(bo, n)).unpack_from(_MEM, a - 1)


def _groups_at(a: int, n: int, per: int, bo: int) -> Tuple[Tuple[int, ...], ...]:
    if not n or not per or not a:
        return ()
    flat = _u64s_at(a, n * per, bo)
    return tuple(flat[i:i + per] for i in range(0, len(flat), per))


def _blob_at(a: int, n: int) -> bytes:
    return _MEM[a - 1:a - 1 + n] if n and a else b""


def _cstr_at(a: int) -> str:
    return str(_ffi.string(_ptr(a)).decode("utf-8", "replace")) if a else ""


_tnew = tuple.__new__


def _sid_cell(c: List[Any]) -> Any:
    """A record's sample_id from the cell perf_records() leaves in its tuple: [the
    _L_ID values], made a SampleId on first use and kept there."""
    v = c[0]
    if type(v) is tuple:
        v = c[0] = _sid(v[1], v)
    return v


def _params(fields: List[Any], env: Dict[str, Any]) -> List[str]:
    """The parameters of a generated constructor for these dataclass fields, in order,
    each default bound in env as _dN."""
    params = []
    for i, f in enumerate(fields):
        if f.default is _dc.MISSING:
            params.append(f.name)
        else:
            env[f"_d{i}"] = f.default
            params.append(f"{f.name}=_d{i}")
    return params


def _record_class(dc: Any, order: Optional[Tuple[str, ...]] = None,
                  base: type = tuple, lazy_sid: bool = False) -> Any:
    """The record class of the frozen dataclass dc: a tuple subclass holding dc's fields
    in `order` (the order its maker builds them in: most of a record is one
    struct.unpack result), each field a property reading its item. It keeps what dc
    offers: the constructor's parameters and defaults, repr, equality within the class,
    hash, immutability (FrozenInstanceError), iteration and pickling in field order, and
    dataclasses.fields/asdict/astuple/replace (dc's field list). Making one is a
    tuple.__new__, where a dataclass sets each slot."""
    fields = _dc.fields(dc)
    names = tuple(f.name for f in fields)
    at = {n: i for i, n in enumerate(order or names)}
    get = _itemgetter(*(at[n] for n in names)) if len(names) > 1 else \
        (lambda s: (s[at[names[0]]],))
    if lazy_sid:        # sample_id may be a cell (_sid_cell): compare its value
        k, fget = at["sample_id"], get
        sid_at = names.index("sample_id")

        def get(s: Any) -> Tuple[Any, ...]:
            v = fget(s)
            c = v[sid_at]
            if type(c) is not list:
                return v    # type: ignore[no-any-return]
            return v[:sid_at] + (_sid_cell(c),) + v[sid_at + 1:]  # type: ignore[no-any-return]
    ns: Dict[str, Any] = {k: v for k, v in vars(dc).items() if isinstance(v, property)}
    ns.update(__slots__=(), __doc__=dc.__doc__, __module__=dc.__module__,
              __qualname__=dc.__qualname__, __annotations__=dc.__annotations__,
              __dataclass_fields__=dc.__dataclass_fields__,
              __dataclass_params__=dc.__dataclass_params__, __match_args__=names)
    for n in names:
        ns[n] = property(_itemgetter(at[n]), doc=f"{dc.__name__}.{n}")
    if lazy_sid:
        ns["sample_id"] = property(lambda s: _sid_cell(s[k]) if type(s[k]) is list else s[k],
                                   doc=f"{dc.__name__}.sample_id")
    env: Dict[str, Any] = {"_tnew": _tnew}
    params = _params(fields, env)
    inner = ", ".join(sorted(names, key=at.__getitem__))
    exec(f"def __new__(_cls, {', '.join(params)}):\\n"
         f"    return _tnew(_cls, ({inner},))\\n", env)
    ns["__new__"] = env["__new__"]
    ns["__iter__"] = lambda s: iter(get(s))
    ns["__getnewargs__"] = lambda s: get(s)
    ns["__reduce__"] = lambda s: (type(s), get(s))     # every pickle protocol: by field
    ns["__repr__"] = lambda s: "%s(%s)" % (type(s).__qualname__, ", ".join(
        "%s=%r" % (n, v) for n, v in zip(names, get(s))))
    # another class's record, or a plain tuple, is not equal (as with a dataclass)
    ns["__eq__"] = lambda s, o: get(s) == get(o) if type(o) is type(s) else \\
        False if isinstance(o, tuple) else NotImplemented
    ns["__ne__"] = lambda s, o: get(s) != get(o) if type(o) is type(s) else \\
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
    env: Dict[str, Any] = {}
    params = _params(fields, env)
    src = (f"def _make({', '.join(f'_s{i}' for i in range(len(fields)))}):\\n"
           f"    def __init__(self, {', '.join(params)}):\\n"
           + "".join(f"        _s{i}(self, {f.name})\\n" for i, f in enumerate(fields))
           + "    return __init__\\n")
    exec(src, env)
    init: Callable[..., None] = env["_make"](*(sets[f.name] for f in fields))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init'''


def python(model):
    members = union_members(model)
    bodies = {st for m, st in members if m not in HAND_MADE}
    union = next(f.union for f in model[ROOT] if f.union)
    nested = [s for s in reachable(model) if s not in bodies and s not in (ROOT, union) and
              not any(f.union for f in model[s]) and s not in
              {st for m, st in members} and s != "uevent_sample_id"]
    out = ['"""Record classes generated from libuevent/uevent.h by libuevent/gen-records.py.',
           "",
           "One immutable class per record struct of uevent.h, fields in the struct's order",
           "(the perf records' and SampleId tuples that keep the dataclass interface:",
           "_record_class); pointer members are copied out (bytes, str, tuples of ints). Do",
           'not edit: change uevent.h."""',
           "# flake8: noqa",
           "import dataclasses as _dc",
           "import os as _os",
           "import struct as _struct",
           "import sys as _sys",
           "from dataclasses import dataclass as _dataclass",
           "from operator import itemgetter as _itemgetter",
           "from typing import (Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union,",
           "                    cast as _cast)",
           "",
           "from ._uevent import ffi as _ffi, lib as _lib",
           ""] + PY_NOTES.splitlines() + [
           "",
           "",
           "@_dataclass(frozen=True)",
           "class SampleId:",
           '    """The sample_id fields of a record (or of a sample); None where the record '
           'has none."""']
    sid = [f.name for f in model["uevent_sample_id"] if f.name != "fields"]
    out.append(f"    __slots__ = {tuple(sid)!r}")
    for n in sid:
        out.append(f"    {n}: Optional[int]")
    out += ["", "", "# the sample_id members and the UEVENT_ID_* bit saying each is there",
            "ID_FIELDS = (" + " ".join(f'("{n}", _lib.UEVENT_ID_{b}),' for n, b in id_fields(model))
            + ")", "", "",
            "def id_values(i: Any) -> Tuple[Optional[int], ...]:",
            '    """A struct uevent_sample_id\'s members, None where its fields lack them."""',
            "    f = i.fields",
            "    return tuple(getattr(i, n) if f & b else None for n, b in ID_FIELDS)"]
    out += ["", "", "@_dataclass(frozen=True)", "class PerfRecord:",
            '    """A decoded perf record: `type` is perf_event_header.type (PERF_RECORD_*), '
            '`misc`',
            '    and `size` the header\'s; `type_name` is the type\'s name ("SAMPLE", "MMAP2", '
            '...)."""',
            f"    __slots__ = {PY_BASE!r}",
            "    type: int", "    misc: int", "    size: int", "    sample_id: SampleId",
            "", "    @property", "    def type_name(self) -> str:",
            "        return record_name(self.type)", "", "",
            "def _no_names(t: int) -> str:",
            "    return str(t)", "", "",
            "# the C library's name of a record type: set by the package",
            "record_name: Callable[[int], str] = _no_names", ""]

    def fields_of(name, base, ref=None, nested=None):
        """(python name, type, value expression) of each member. ref(member) is how the
        expression reads a member (default: the cdata's attribute s.member, pointers as
        cdata); with a ref, pointers are addresses (the _at helpers) and nested(f) gives
        a nested struct's expression."""
        res = []
        at = "_at" if ref else ""
        ref = ref or (lambda m: "s." + m)
        count = lambda e: re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: ref(m.group(1)),
                                 e).replace("/", "//")
        counts = {f.count for f in model[name] if f.kind == "bytes" and f.count}
        # the fast makers skip the call for an empty array (most of a sample's are)
        nz = (lambda e, n, empty: f"({e} if {n} else {empty})") if at else (lambda e, n, empty: e)
        for f in model[name]:
            if f.name == "sz":
                continue
            pn = f.name
            if base and pn in PY_BASE:
                if pn in counts:
                    continue        # the length of a bytes member: len() of it
                pn = name[len("uevent_perf_"):].split("_")[0] + "_" + pn
            s = None if f.nested and nested else ref(f.name)
            if f.nested:
                res.append((pn, py_class(f.nested),
                            nested(f) if nested else f"_mk_{f.nested}({s}, bo)"))
            elif f.by:
                res.append((pn, "Dict[str, int]",
                            f"{{_cstr(_lib.{f.by}(i)) or str(i): v for i, v in enumerate({s})}}"))
            elif f.kind == "str":
                res.append((pn, "str", f"_cstr{at}({s})"))
            elif f.kind == "bytes":
                n = count(f.count)
                if f.array:
                    # the fast makers' unpack reads an array as bytes already
                    res.append((pn, "bytes", f"{s}[:{n}]" if at else f"bytes({s})[:{n}]"))
                else:
                    res.append((pn, "bytes", nz(f"_blob{at}({s}, {n})", n, 'b""')))
            elif f.kind == "u64" and f.per:
                e = f"_groups{at}({s}, {count(f.count)}, {count(f.per)}, bo)"
                t = "Tuple[Tuple[int, ...], ...]"
                if f.per.isdigit():     # groups of a known size: say so to the type checker
                    t = "Tuple[Tuple[" + ", ".join(["int"] * int(f.per)) + "], ...]"
                    e = f"_cast({t!r}, {e})"
                res.append((pn, t, nz(e, count(f.count), "()")))
            elif f.kind == "u64":
                res.append((pn, "Tuple[int, ...]",
                            nz(f"_u64s{at}({s}, {count(f.count)}, bo)", count(f.count), "()")))
            else:
                res.append((pn, "int", s))
        return res

    def split(st):
        """A body struct's members as (Python name, member) in two lists: the plain
        numbers, read by one struct.unpack straight into the record's tuple, and the
        rest (pointers, arrays, nested structs), made from a second unpack."""
        counts = {f.count for f in model[st] if f.kind == "bytes" and f.count}
        plain, rest = [], []
        for f in model[st]:
            if f.name == "sz" or (f.name in PY_BASE and f.name in counts):
                continue
            pn = f.name if f.name not in PY_BASE else \
                st[len("uevent_perf_"):].split("_")[0] + "_" + f.name
            simple = not (f.nested or f.by or f.kind or f.ptr or f.array)
            (plain if simple else rest).append((pn, f))
        return plain, rest

    zero_objects = []       # made once the classes are: a nested struct all zeros

    def blob_maker(nst):
        """The maker of a nested struct from its bytes (read as one member of the record)."""
        if any(f.nested for f in model[nst]):
            raise SystemExit(f"gen-records: {nst}: a struct nested twice is not supported")
        fl = [f.name for f in model[nst] if f.name != "sz"]
        mk = fields_of(nst, False, lambda m: "b_" + m)
        zero_objects.append(f"_ZO_{nst} = _mkb_{nst}(_Z_{nst}, 0)")
        return [f"_B_{nst} = _layout(\"struct {nst}\", (" + " ".join(f"({n!r},)," for n in fl)
                + "))", f'_Z_{nst} = bytes(_ffi.sizeof("struct {nst}"))', "", "",
                f"def _mkb_{nst}(b: bytes, bo: int) -> {py_class(nst)}:",
                "    " + "".join(f"b_{n}, " for n in fl) + f"= _B_{nst}.unpack_from(b)",
                f"    return {py_class(nst)}(" + ", ".join(e for _, _, e in mk) + ")", ""]

    orders = {}             # record class -> the order its tuple holds its fields in
    inline = {}             # union member -> its maker's lines (the last the record)

    def fast_maker(member, st, cls):
        """The maker of a body struct: type, misc, size and the plain members from one
        struct.unpack of the C record, then sample_id and the other members (made from
        a second unpack: pointers read only where a count says so)."""
        plain, rest = split(st)
        orders[cls] = ("type", "misc", "size") + tuple(n for n, _ in plain) + \
            ("sample_id",) + tuple(n for n, _ in rest)
        want = {f.name for _, f in rest}
        for _, f in rest:
            for e in (f.count, f.per):
                want |= set(re.findall(r"\b([A-Za-z_]\w*)\b", e or ""))
        av = [f.name for f in model[st] if f.name in want]
        nest = lambda f: (f"(_mkb_{f.nested}(a_{f.name}, bo) if a_{f.name} != _Z_{f.nested}"
                          f" else _ZO_{f.nested})")
        ex = dict((pn, e) for pn, _, e in fields_of(st, True, lambda m: "a_" + m, nest))
        out = [f"_P_{st} = _layout(\"struct uevent_perf_record\", (('type',), ('misc',), "
               "('size',),"] + [f"    ('u', {member!r}, {f.name!r})," for _, f in plain] + ["))"]
        if av:
            out += [f"_A_{st} = _layout(\"struct uevent_perf_record\", ("]
            out += [f"    ('u', {member!r}, {n!r})," for n in av] + ["))"]
        out += ["", "", f"def _mk_{st}(r: Any, buf: Any, sid: SampleId, bo: int) -> {cls}:"]
        body = [f"_tnew({cls}, _P_{st}.unpack_from(buf) + (sid, "
                + "".join(ex[n] + ", " for n, _ in rest) + "))"]
        if av:
            body.insert(0, "".join(f"a_{n}, " for n in av) + f"= _A_{st}.unpack_from(buf)")
        out += ["    " + b for b in body[:-1]] + ["    return " + body[-1], ""]
        inline[member] = (body, None)
        if member in BARE:
            # A record that is its header alone (size 8: FINISHED_ROUND) and has no
            # sample_id holds nothing else: perf_records() makes one object of each.
            empty = lambda f: f"_ZO_{f.nested}" if f.nested else 'b""' if f.kind == "bytes" \
                else '""' if f.kind == "str" else "()" if f.kind == "u64" else "0"
            bare = [f"p = _P_{st}.unpack_from(buf)",
                    "if p[2] == 8 and not i[1]:",
                    "    o = bare.get(p)",
                    "    if o is None:",
                    f"        o = bare[p] = _tnew({cls}, p + (NO_ID, "
                    + "".join(empty(f) + ", " for _, f in rest) + "))",
                    "    yield o", "else:"]
            body = [b.replace(f"_P_{st}.unpack_from(buf)", "p") for b in body]
            inline[member] = (bare + ["    " + b for b in body[:-1]], "yield " + body[-1])
            if plain:
                raise SystemExit(f"gen-records: {st}: a bare record with members is not bare")
        common = COMMON.get(member)
        if common is None:
            return out
        # The usual record, its rare members all empty, tested with one unpack of their
        # counts (the zero tuple is that of a zeroed struct) and made without them.
        fixed = {f.name for _, f in rest if f.array and f.count.isdigit()}
        used = set(common) | fixed
        rare = [f for _, f in rest if f.name not in used]
        cond = set()
        for f in rare:
            if f.nested:
                cond.add(f.name)
            elif f.kind in ("bytes", "u64") and f.count:
                cond |= set(re.findall(r"\b([A-Za-z_]\w*)\b", f.count))
            else:
                raise SystemExit(f"gen-records: {st}.{f.name}: no count to test it is empty by")
        cv = [f.name for f in model[st] if f.name in cond]
        uv = set(used)
        for f in model[st]:
            if f.name in used:
                for e in (f.count, f.per):
                    uv |= set(re.findall(r"\b([A-Za-z_]\w*)\b", e or ""))
        uv = [f.name for f in model[st] if f.name in uv]
        empty = lambda f: f"_ZO_{f.nested}" if f.nested else 'b""' if f.kind == "bytes" else "()"
        exc = dict((pn, e) for pn, _, e in fields_of(st, True, lambda m: "c_" + m, nest))
        out += [f"_R_{st} = _layout(\"struct uevent_perf_record\", (" +
                " ".join(f"('u', {member!r}, {n!r})," for n in cv) + "))",
                f"_RZ_{st} = _R_{st}.unpack_from(bytes(_R_{st}.size))",
                f"_C_{st} = _layout(\"struct uevent_perf_record\", (" +
                " ".join(f"('u', {member!r}, {n!r})," for n in uv) + "))", ""]
        usual = ["".join(f"c_{n}, " for n in uv) + f"= _C_{st}.unpack_from(buf)",
                 f"_tnew({cls}, _P_{st}.unpack_from(buf) + (sid, " + "".join(
                     (exc[pn] if f.name in used else empty(f)) + ", " for pn, f in rest) + "))"]
        inline[member] = (body, (f"_R_{st}.unpack_from(buf) == _RZ_{st}", usual))
        return out

    for name in nested + [st for m, st in members if st in bodies] + EXTRA:
        is_body = name in bodies
        cls = py_class(name)
        fl = fields_of(name, is_body)
        out += ["", "@_dataclass(frozen=True)",
                f"class {cls}({'PerfRecord' if is_body else ''}):".replace("()", ""),
                f'    """struct {name}."""',
                f"    __slots__ = {tuple(n for n, _, _ in fl)!r}"]
        out += [f"    {n}: {t}" for n, t, _ in fl]
        out += ["", ""]
        if is_body:
            out += fast_maker(next(m for m, st in members if st == name), name, cls)
            continue
        else:
            out.append(f"def _mk_{name}(s: Any, bo: int) -> {cls}:")
            out.append(f"    return {cls}(" + ", ".join(e for _, _, e in fl) + ")")
        out.append("")
        if name in nested:
            out += ["", ""] + blob_maker(name)
    out += python_payloads(model) + python_uevent_record(model) + python_uevent(model)
    out += python_options(model)
    out += ["", "# union member -> maker of its record object, from the C record, its bytes,",
            "# its sample_id and byte order",
            "MAKERS: Dict[str, Callable[[Any, Any, SampleId, int], Any]] = {"]
    for m, st in members:
        out.append(f'    "{m}": _mk_{st}{"_body" if m in HAND_MADE else ""},')
    out.append("}")
    out += ["", "# each dataclass's __init__ sets its slots directly (_slot_init)",
            "for _c in (" + ", ".join(py_class(s) for s in EXTRA) + ", Record):",
            '    setattr(_c, "__init__", _slot_init(_c))',
            "# the record classes as tuples (_record_class): the dataclasses above give their",
            "# fields, the makers the order of their tuples",
            "SampleId = _record_class(SampleId)",
            "PerfRecord = _record_class(PerfRecord)"]
    out += [f"{py_class(s)} = _record_class({py_class(s)})" for s in nested]
    lazy = {py_class(st) for m, st in members if m in INLINE}
    out += [f"{c} = _record_class({c}, {o!r}, PerfRecord{', True' if c in lazy else ''})"
            for c, o in orders.items()]
    out += ["UEvent = _record_class(UEvent, None, PerfRecord)",
            "NO_ID = SampleId(" + ", ".join("None" for _ in sid) + ")"] + zero_objects
    out += python_head(model, inline)
    out.append("# enum uevent_perf_body_kind -> the union member it sets")
    out.append("MEMBER_OF_BODY = {" + " ".join(f'_lib.UEVENT_BODY_{m.upper()}: "{m}",'
                                               for m, _ in members) + "}")
    out.append("BODY_MAKERS = tuple(MAKERS[MEMBER_OF_BODY[_i]] for _i in "
               "range(_lib.UEVENT_BODY_COUNT))")
    out.append("BODY_CLASSES = (" + ", ".join(py_class(st) for m, st in members
                                               if st in bodies) + ",)")
    return "\n".join(out) + "\n"


def python_uevent(model):
    """UEvent, the record of the union member the bindings make by hand: its transport's
    name and its struct uevent_record as a Record (with the payload decoded)."""
    return ["", "", "@_dataclass(frozen=True)", "class UEvent(PerfRecord):",
            '    """A uevent: PERF_RECORD_UEVENT, or one that came through a usdt/user_events'
            ' sample.',
            "    `transport` names the transport that carried it, `uevent` is the decoded",
            '    struct uevent_record (with its payload)."""',
            '    __slots__ = ("transport", "uevent")', "    transport: str", "    uevent: Record",
            "", "    @property", "    def payload(self) -> Payload:",
            "        return self.uevent.payload", "", "    @property",
            "    def data(self) -> bytes:", "        return self.uevent.data", "", "",
            "# the name of a transport (enum uevent_transport): set by the package",
            "transport_name: Callable[[int], str] = str",
            "_P_HEAD = _layout(\"struct uevent_perf_record\", (('type',), ('misc',), ('size',)))",
            "", "",
            "def _mk_uevent_record_body(r: Any, buf: Any, sid: SampleId, bo: int) -> UEvent:",
            "    return _tnew(UEvent, _P_HEAD.unpack_from(buf) + (sid, transport_name(r.transport),",
            "                                                     _mk_uevent_record(r.u.uevent, bo)))"]


def python_head(model, inline):
    """perf_record() and perf_records(): a C record's body kind and sample_id from one
    unpack, then the maker of its body member (BODY_MAKERS, indexed by enum
    uevent_perf_body_kind). perf_records() has the makers of the INLINE members (most
    of a perf.data) in its loop, their u64 arrays read in place and their structs'
    unpack_from bound once."""
    fix = lambda c: re.sub(r"_u64s_at\((\w+), (\w+), bo\)",
                           r"((q.get(\2) or _u64s_struct(bo, \2)).unpack_from(mem, \1 - 1) if \1 else ())",
                           c)
    lines = []
    for k, m in enumerate(INLINE):
        code, usual = inline[m]
        if isinstance(usual, str):          # code to run as it is, then this yield
            lines += [f"        {'el' if k else ''}if i[0] == _BODY_{m.upper()}:"]
            lines += ["            " + c for c in code] + ["                " + usual]
            continue
        code = [fix(c) for c in code]
        ls = ["            " + c for c in code[:-1]] + ["            yield " + code[-1]]
        if usual:
            ls = (["            if " + usual[0] + ":"] +
                  ["                " + fix(c) for c in usual[1][:-1]] +
                  ["                yield " + fix(usual[1][-1]), "            else:"] +
                  ["    " + c for c in ls])
        lines += [f"        {'el' if k else ''}if i[0] == _BODY_{m.upper()}:"] + ls
    bound = sorted(set(re.findall(r"\b(_[A-Z]+_\w+)\.unpack_from\b", "\n".join(lines))))
    lines = [re.sub(r"\b(_[A-Z]+_\w+)\.unpack_from\b", lambda m: "u" + m.group(1), ln)
             for ln in lines]
    # their sample_id a cell, made a SampleId when asked for (_sid_cell)
    lines = [re.sub(r"(\(buf\)|\bp) \+ \(sid, ", r"\1 + ([i], ", ln) for ln in lines]
    sid = [f for f in model["uevent_sample_id"] if f.name != "fields"]
    lv = [("body",), ("id", "fields")] + [("id", f.name) for f in sid]
    bits = sorted({f.idbit for f in sid})
    return ["", "", "_L_ID = _layout(\"struct uevent_perf_record\", (" +
            " ".join(f"{p!r}," for p in lv) + "))",
            "".join(f"_BODY_{m.upper()} = int(_lib.UEVENT_BODY_{m.upper()})\n" for m in INLINE),
            "# the UEVENT_ID_* bits as ints (a lib attribute is a lookup each time)",
            "".join(f"_ID_{b} = int(_lib.UEVENT_ID_{b})\n" for b in bits), "",
            "def _sid_maker(f: int) -> Callable[[Tuple[int, ...]], SampleId]:",
            '    """The maker of the SampleId of id fields f from _L_ID\'s values: a record\'s',
            "    sample_id has one of a few such sets (the event's), each made once and kept in",
            '    _SIDS."""',
            "    if not f:", "        _SIDS[f] = lambda i: NO_ID", "        return _SIDS[f]",
            "    at = [" + ", ".join(f"{k + 2} if f & _ID_{f_.idbit} else None"
                                    for k, f_ in enumerate(sid)) + "]",
            '    env = {"_tnew": _tnew, "SampleId": SampleId}',
            '    exec("def mk(i, _tnew=_tnew, SampleId=SampleId):\\n"',
            '         "    return _tnew(SampleId, (%s,))\\n" % ", ".join(',
            '        "None" if k is None else "i[%d]" % k for k in at), env)',
            '    _SIDS[f] = env["mk"]', '    return env["mk"]  # type: ignore[no-any-return]',
            "", "",
            "_SIDS: Dict[int, Callable[[Tuple[int, ...]], SampleId]] = {}",
            "", "",
            "def _sid(f: int, i: Tuple[int, ...]) -> SampleId:",
            '    """The SampleId of id fields f and the values i (_L_ID\'s)."""',
            "    return (_SIDS.get(f) or _sid_maker(f))(i)", "", "",
            "def perf_record(r: Any, bo: int) -> Any:",
            '    """The object of a C struct uevent_perf_record."""',
            "    buf = _ffi.buffer(r)",
            "    i = _L_ID.unpack_from(buf)",
            "    return BODY_MAKERS[i[0]](r, buf, _sid(i[1], i), bo)", "", "",
            "def perf_records(reader: Any, error: Callable[[int, str], Exception]) -> Iterator[Any]:",
            '    """The records of a PerfData reader (its C reader\'s next() filling its one C',
            "    record), as objects: its iteration, with what each record needs at hand. Ends",
            '    (ValueError) when the reader is closed."""',
            "    h, nxt, r, bo = reader._h, reader._next, reader._rec, reader.byte_order",
            "    buf = _ffi.buffer(r)",
            "    unpack, makers, sids, sid_maker = _L_ID.unpack_from, BODY_MAKERS, _SIDS, _sid_maker",
            "    q, mem, bare = _U64S[bo], _MEM, {}"] + [
            f"    u{n} = {n}.unpack_from" for n in bound] + [
            "    reader._live()              # raises: closed",
            "    while reader._h is h:",
            "        ret = nxt(h, r)",
            "        if ret <= 0:",
            "            if ret == 0:", "                return",
            "            raise error(-ret, f\"{reader.path!r} at offset {reader.offset}\")",
            "        i = unpack(buf)",
            ] + lines + [
            "        else:",
            "            yield makers[i[0]](r, buf, (sids.get(i[1]) or sid_maker(i[1]))(i), bo)",
            "    reader._live()              # raises: closed", ""]


def python_payloads(model):
    """The payload classes (named tuples, fields as the [order] note says) and decoders."""
    def val(f, o):
        if f.kind == "str":
            return "str", f"_str({o}.{f.name}, {o}.{f.count})"
        if f.kind == "bytes":
            return "bytes", f"_blob({o}.{f.name}, {f.count})"
        if f.each:
            return f"Tuple[{pay_class(f.each)}, ...]", f"_each_{f.each}({o}, bo)"
        return "int", f"{o}.{f.name}"
    out = ["", "", "# ---- payloads", "",
           "# the package's check of a C call's return (raises its exceptions): set by it",
           "_check: Callable[[int, str], int] = lambda ret, what: ret", ""]
    for st in entry_structs(model):
        cls = pay_class(st)
        fl = [(f.name,) + val(f, "e") for f in payload_fields(model, st)]
        out += ["", f"class {cls}(NamedTuple):", f'    """struct {st}."""']
        out += [f"    {n}: {t}" for n, t, _ in fl]
        out += ["", "", f"def _each_{st}(info: Any, bo: int) -> Tuple[{cls}, ...]:",
                f'    off, e = _ffi.new("uint32_t *"), _ffi.new("struct {st} *")',
                f"    out = []",
                f'    while _check(_lib.{st}_next(info, bo, off, e), "{st[7:]}"):',
                f"        out.append({cls}(" + ", ".join(e for _, _, e in fl) + "))",
                "    return tuple(out)", ""]
    for t, st in payloads(model):
        cls = pay_class(st)
        fl = [(f.name,) + val(f, "o") for f in payload_fields(model, st)]
        out += ["", f"class {cls}(NamedTuple):", f'    """A {st[7:]} payload: struct {st}."""']
        out += [f"    {n}: {ty}" for n, ty, _ in fl]
        out += ["", "", f"def _dec_{st[7:]}(buf: Any, n: int, bo: int) -> {cls}:",
                f'    o = _ffi.new("struct {st} *")',
                f'    _check(_lib.{st}_decode(buf, n, bo, o), "{st[7:]} payload")',
                f"    return {cls}(" + ", ".join(e for _, _, e in fl) + ")", ""]
    out += ["", "class Raw(NamedTuple):",
            '    """A payload of a type this binding does not decode (an application\'s own)."""',
            "    type: int", "    data: bytes", "", "",
            "Payload = Union[" + ", ".join(pay_class(st) for _, st in payloads(model)) + ", Raw]",
            "PAYLOAD_CLASSES = (" + ", ".join(pay_class(st) for st in entry_structs(model)
                                              + [st for _, st in payloads(model)]) + ", Raw)",
            "# payload type -> its decoder(buffer, size, byte order)",
            "DECODERS: Dict[int, Callable[[Any, int, int], Payload]] = {"]
    out += [f"    _lib.UEVENT_TYPE_{t}: _dec_{st[7:]}," for t, st in payloads(model)]
    out += ["}", ""]
    return out


def python_uevent_record(model):
    """struct uevent_record as the package's Record (as the Rust crate's): its payload
    decoded beside `data`, the sample_id members flattened (None where it lacks them)."""
    fl = [f for f in model["uevent_record"] if f.name not in ("sz", "size")]
    sid = [f.name for f in model["uevent_sample_id"] if f.name != "fields"]
    out = ["", "", "@_dataclass(frozen=True)", "class Record:",
           '    """One PERF_RECORD_UEVENT (or file-transport record), decoded (struct uevent_record).',
           "", "    `payload` is the decoded payload (Raw for application types and payloads that did",
           '    not decode); sample_id fields the record lacks are None.', '    """']
    args = []
    after_id = False        # members after the flattened sample_id need defaults too
    for f in fl:
        if f.kind == "bytes":
            out += [f"    {f.name}: bytes", "    payload: Payload"]
            args += ["data", "payload"]
        elif f.nested:
            out += [f"    {n}: Optional[int] = None" for n in sid]
            args.append("*id_values(r.id)")
            after_id = True
        else:
            dflt = (" = -1" if f.ctype.startswith("int") else " = 0") if after_id else ""
            out.append(f"    {f.name}: int{dflt}")
            args.append("r." + f.name)
    out += ["", "", "def _mk_uevent_record(r: Any, bo: int) -> Record:",
            "    data = _blob(r.data, r.size)", "    dec = DECODERS.get(r.type)",
            "    payload: Payload = Raw(r.type, data)", "    if dec is not None:",
            "        try:", "            payload = dec(_ffi.from_buffer(data), len(data), bo)",
            "        except ValueError:      # a payload that does not decode stays bytes",
            "            pass", "    return Record(" + ", ".join(args) + ")"]
    return out


def python_options(model):
    """PerfFormat (struct uevent_perf_format), and what Session() takes of struct
    uevent_session_opts: its plain numbers (bits wide) and one flag per keyword."""
    doc = member_docs(FORMAT)
    out = ["", "", "@_dataclass(frozen=True)", "class PerfFormat:",
           '    """What a record\'s layout depends on (struct uevent_perf_format): the fields',
           '    of its event\'s perf_event_attr."""']
    for f in format_fields(model):
        b = f.name in FORMAT_BOOL
        out.append(f"    {f.name}: {'bool' if b else 'int'} = {'False' if b else '0'}"
                   + (f"  # {doc[f.name]}" if doc[f.name] else ""))
    out += ["", "", "def _int_opt(kw: Dict[str, Any], k: str, lo: int, hi: int) -> int:",
            "    v = kw[k]",
            "    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v < hi:",
            '        _check(-22, f"{k} must be an integer in [{lo}, {hi})")   # EINVAL',
            "    return v", "", "",
            "def _str_opt(kw: Dict[str, Any], k: str, keep: List[Any]) -> Any:",
            "    if kw[k] is None:", "        return _ffi.NULL",
            '    keep.append(_ffi.new("char[]", _os.fsencode(kw[k])))', "    return keep[-1]",
            "", "",
            "def session_opts(o: Any, kw: Dict[str, Any]) -> List[Any]:",
            '    """Sets struct uevent_session_opts o from Session()\'s keywords, named as its',
            "    members (flags: one boolean per UEVENT_SESSION_* flag; transports is the",
            "    caller's): a number an int in its C type's range, a string str, bytes or a path.",
            '    Returns the C strings o points to, to keep while o is used."""',
            "    keep: List[Any] = []"]
    for f in model["uevent_session_opts"]:
        if f.ptr:
            out.append(f'    o.{f.name} = _str_opt(kw, "{f.name}", keep)')
        elif f.name not in ("sz", "flags", "transports"):
            lo, hi = PY_INT_RANGE[f.ctype]
            out.append(f'    o.{f.name} = _int_opt(kw, "{f.name}", {lo}, {hi})')
    out += ["    o.flags = sum(f for k, f in (" + " ".join(
        f'("{fl.lower()}", _lib.UEVENT_SESSION_{fl}),' for fl, _ in enum_members("UEVENT_SESSION_"))
        + ") if kw[k])", "    return keep"]
    return out


# The range of a C type's values, as Lua bounds [lo, hi]: doubles, which a uint64_t cdata
# is compared with exactly up to 2^64 - 2^11 (the largest double below 2^64).
LUA_INT_RANGE = {"int": "-2^31, 2^31 - 1", "unsigned int": "0, 2^32 - 1",
                 "uint64_t": "0, 2^64 - 2^11"}
# The range of a C type's values, as Python bounds [lo, hi).
PY_INT_RANGE = {"int": ("-(1 << 31)", "1 << 31"), "unsigned int": ("0", "1 << 32"),
                "uint64_t": ("0", "1 << 64")}


# ---- Rust: the crate's owned records -----------------------------------------------------

RUST_INT = {"uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
            "int64_t": "i64", "int32_t": "i32", "size_t": "usize", "int": "i32",
            "unsigned int": "u32"}
# Union members the crate makes by hand (the uevent's payload codecs; Other is a Vec<u8>).
RUST_HAND_MADE = {"uevent", "other"}
RUST_NAME = {"type": "ty"}
# bindgen's names for C members that are Rust keywords
RUST_KEYWORDS = {"type", "fn", "impl", "match", "move", "ref", "self", "struct", "use", "where"}


def rust_short(name):
    for p in ("uevent_perf_", "uevent_"):
        if name.startswith(p):
            return name[len(p):]
    return name


def rust_type(name):
    return "".join(w.capitalize() for w in rust_short(name).split("_"))


# What the bracket notes' kinds are in Rust: copies out of the C record ([bytes x N],
# [str] with a length, [u64 x N], [u64 x N of K] with K a number or a member).
RUST_NOTES = '''unsafe fn bytes(p: *const c_void, n: u64) -> Vec<u8> {
    if p.is_null() || n == 0 {
        return Vec::new();
    }
    std::slice::from_raw_parts(p as *const u8, n as usize).to_vec()
}

unsafe fn sized_str(p: *const c_char, n: u32) -> String {
    if p.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, n as usize)).into_owned()
}

unsafe fn u64s(p: *const c_void, n: u64, bo: c_int) -> Vec<u64> {
    if p.is_null() {
        return Vec::new();
    }
    (0..n).map(|i| sys::uevent_perf_u64(p, i, bo)).collect()
}

/// n groups of K u64 each.
unsafe fn groups_of<const K: usize>(p: *const c_void, n: u64, bo: c_int) -> Vec<[u64; K]> {
    let all = u64s(p, n * K as u64, bo);
    all.chunks_exact(K).map(|c| c.try_into().expect("K elements")).collect()
}

/// n groups of per u64 each.
unsafe fn groups(p: *const c_void, n: u64, per: u64, bo: c_int) -> Vec<Vec<u64>> {
    if per == 0 {
        return Vec::new();
    }
    u64s(p, n * per, bo).chunks(per as usize).map(|c| c.to_vec()).collect()
}'''


def rust(model):
    members = union_members(model)
    bodies = [st for m, st in members if m not in RUST_HAND_MADE]
    union = next(f.union for f in model[ROOT] if f.union)
    skip = {ROOT, union, "uevent_sample_id", "uevent_record", "uevent_perf_bytes"}
    order = [s for s in reachable(model) if s not in skip] + EXTRA
    out = ["// records.rs - generated from libuevent/uevent.h by libuevent/gen-records.py: the",
           "// owned record structs, one per record struct of uevent.h, and their makers. A C",
           "// member that only counts another's elements is that Vec's length. Do not edit:",
           "// change uevent.h and run `make records`.",
           "#![allow(clippy::all)]",
           "",
           "use std::io;",
           "use std::mem::MaybeUninit;",
           "use std::os::raw::{c_char, c_int, c_void};",
           "use std::path::{Path, PathBuf};",
           "",
           "use super::{cstr, Header, Rec};",
           "use crate::check;",
           "use uevent_sys as sys;",
           ""] + RUST_NOTES.splitlines() + [""]
    for name in order:
        # a count that is only another member's length (not that of groups: read.nr is
        # 1 for a value that is not a group's) is that Vec's len()
        counts = {f.count for f in model[name] if f.kind in ("bytes", "u64") and f.count
                  and not f.per and re.fullmatch(r"[A-Za-z_]\w*", f.count)}
        fields = []
        for f in model[name]:
            if f.name == "sz" or f.name in counts:
                continue
            rn = RUST_NAME.get(f.name, f.name)
            c = "s." + f.name + ("_" if f.name in RUST_KEYWORDS else "")
            if f.nested:
                fields.append((rn, rust_type(f.nested), f"{rust_short(f.nested)}_from(&{c}, bo)"))
            elif f.by:
                fields.append((rn, "Vec<(String, u64)>", f"{c}.iter().enumerate()"
                               f".map(|(i, n)| (cstr(sys::{f.by}(i as c_int)), *n)).collect()"))
            elif f.kind == "str":
                fields.append((rn, "String", f"cstr({c})"))
            elif f.kind == "bytes" and f.array:
                n = expr(f.count, "s.")
                fields.append((rn, "Vec<u8>",
                               f"{c}[..(({n}) as usize).min({c}.len())].to_vec()"))
            elif f.kind == "bytes":
                fields.append((rn, "Vec<u8>", f"bytes({c}, ({expr(f.count, 's.')}) as u64)"))
            elif f.kind == "u64" and f.per and f.per.isdigit():
                fields.append((rn, f"Vec<[u64; {f.per}]>",
                               f"groups_of::<{f.per}>({c}, ({expr(f.count, 's.')}) as u64, bo)"))
            elif f.kind == "u64" and f.per:
                fields.append((rn, "Vec<Vec<u64>>",
                               f"groups({c}, ({expr(f.count, 's.')}) as u64, "
                               f"({expr(f.per, 's.')}) as u64, bo)"))
            elif f.kind == "u64":
                fields.append((rn, "Vec<u64>", f"u64s({c}, ({expr(f.count, 's.')}) as u64, bo)"))
            else:
                fields.append((rn, RUST_INT[f.ctype], c))
        t = rust_type(name)
        short = rust_short(name)
        out += [f"/// `struct {name}`.",
                "#[derive(Debug, Clone, Default, PartialEq, Eq)]",
                f"pub struct {t} {{"]
        out += [f"    pub {n}: {ty}," for n, ty, _ in fields]
        out += ["}", "",
                f"/// Copies a `struct {name}` the library filled.",
                "///",
                "/// # Safety",
                "/// Its pointer members must point at as many elements as its notes say (the C",
                "/// decoder checked them against the record).",
                f"pub(crate) unsafe fn {short}_from(s: &sys::{name}, bo: c_int) -> {t} {{",
                "    let _ = bo;",
                f"    {t} {{"]
        out += [f"        {n}: {e}," for n, _, e in fields]
        out += ["    }", "}", ""]
    out += rust_sample_id(model) + rust_record_enum(model) + rust_payloads(model)
    out += rust_byte_order() + rust_transports() + rust_session_opts(model) + rust_format(model)
    out += rust_uevent_record(model)
    return "\n".join(out)


def rust_uevent_record(model):
    """struct uevent_record as the crate's Record: `type` as `ty`, its payload decoded
    beside `data`, the sample_id members flattened (None where the record lacks them)."""
    fl = [f for f in model["uevent_record"] if f.name != "sz" and f.name != "size"]
    sid = [f for f in model["uevent_sample_id"] if f.name != "fields"]
    out = ["/// The crate's `Record`, in a module of its own (perf's Record is the perf record).",
           "pub(crate) mod uevent_record {", "    use super::*;", "",
           "    /// One PERF_RECORD_UEVENT (or file-transport record), decoded (`struct uevent_record`).",
           "    /// Sample-id fields the record lacks are `None`; `payload` is `Raw` for types that",
           "    /// did not decode.",
           "    #[derive(Debug, Clone, PartialEq, Eq)]", "    pub struct Record {"]
    for f in fl:
        if f.kind == "bytes":
            out += [f"        pub {f.name}: Vec<u8>,", "        pub payload: Payload,"]
        elif f.nested:
            out += [f"        pub {g.name}: Option<{RUST_INT[g.ctype]}>," for g in sid]
        else:
            out.append(f"        pub {RUST_NAME.get(f.name, f.name)}: {RUST_INT[f.ctype]},")
    out += ["    }", "",
            "    pub(crate) fn record_from(r: &sys::uevent_record, bo: ByteOrder) -> Record {",
            "        // SAFETY: data has size bytes inside the record the decoder checked.",
            "        let data = unsafe { bytes(r.data, r.size as u64) };",
            "        let payload = decode(r.type_, &data, bo)",
            "            .unwrap_or_else(|_| Payload::Raw { ty: r.type_, data: data.clone() });",
            "        let id = SampleId::from_c(&r.id);", "        Record {"]
    for f in fl:
        if f.kind == "bytes":
            out += [f"            {f.name},", "            payload,"]
        elif f.nested:
            out += [f"            {g.name}: id.{g.name}," for g in sid]
        else:
            c = f.name + ("_" if f.name in RUST_KEYWORDS else "")
            out.append(f"            {RUST_NAME.get(f.name, f.name)}: r.{c},")
    out += ["        }", "    }", "}", ""]
    return out


def rust_sample_id(model):
    fl = [f for f in model["uevent_sample_id"] if f.name != "fields"]
    out = ["/// The sample_id fields of a record (a sample's own, or the trailer of the others);",
           "/// those the event did not ask for are `None`.",
           "#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]", "pub struct SampleId {"]
    out += [f"    pub {f.name}: Option<{RUST_INT[f.ctype]}>," for f in fl]
    out += ["}", "", "impl SampleId {",
            "    pub(crate) fn from_c(i: &sys::uevent_sample_id) -> SampleId {",
            "        let has = |bit: sys::uevent_id_field| i.fields & bit != 0;", "        SampleId {"]
    out += [f"            {f.name}: has(sys::UEVENT_ID_{f.idbit}).then_some(i.{f.name})," for f in fl]
    out += ["        }", "    }", "}", ""]
    return out


def enum_members(prefix):
    """(suffix, comment) of each constant PREFIX_X of the header's enums, in order."""
    return re.findall(r"\b%s(\w+)\s*=\s*\w+,?\s*(?:/\*\s*(.*?)\s*\*/)?" % prefix, HEADER, re.S)


def rust_byte_order():
    bos = [b for b, _ in enum_members("UEVENT_BO_")]
    name = {b: b.capitalize() for b in bos}
    out = ["/// The byte order a payload or record was written in (`enum uevent_byte_order`).",
           "#[derive(Debug, Clone, Copy, PartialEq, Eq)]", "pub enum ByteOrder {"]
    out += [f"    {name[b]}," for b in bos]
    out += ["}", "", "impl ByteOrder {", "    /// The C enum value.", "    pub(crate) fn raw(self) -> c_int {",
            "        (match self {"]
    out += [f"            ByteOrder::{name[b]} => sys::UEVENT_BO_{b}," for b in bos]
    out += ["        }) as c_int", "    }", "",
            f"    /// The byte order a reader reports (any other value: {name[bos[0]]}).",
            "    pub(crate) fn from_raw(bo: c_int) -> ByteOrder {",
            "        match bo as sys::uevent_byte_order {"]
    out += [f"            sys::UEVENT_BO_{b} => ByteOrder::{name[b]}," for b in bos[1:]]
    out += [f"            _ => ByteOrder::{name[bos[0]]},", "        }", "    }", "}", ""]
    return out


def rust_transports():
    # the transports that carry events: all but AUTO (a way to choose), NONE and COUNT
    ts = [t for t, _ in enum_members("UEVENT_TRANSPORT_") if t not in ("AUTO", "NONE", "COUNT")]
    name = {t: "".join(w.capitalize() for w in t.lower().split("_")) for t in ts}
    out = ["/// A transport that carries uevents (`enum uevent_transport`).",
           "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]", "pub enum Transport {"]
    out += [f"    {name[t]}," for t in ts]
    out += ["}", "", "impl Transport {",
            f"    pub(super) const ALL: [Transport; {len(ts)}] = ["]
    out += [f"        Transport::{name[t]}," for t in ts]
    out += ["    ];", "", "    /// The C enum value.", "    pub fn raw(self) -> u32 {", "        match self {"]
    out += [f"            Transport::{name[t]} => sys::UEVENT_TRANSPORT_{t}," for t in ts]
    out += ["        }", "    }", "",
            "    /// The transport of C enum value `t`, if it is one that carries events.",
            "    pub fn from_raw(t: u32) -> Option<Transport> {", "        match t {"]
    out += [f"            sys::UEVENT_TRANSPORT_{t} => Some(Transport::{name[t]})," for t in ts]
    out += ["            _ => None,", "        }", "    }", "",
            '    /// Its name as the library spells it ("usdt", "user_events", ...).',
            "    pub fn name(self) -> String {", "        crate::transport_name(self.raw() as i32)",
            "    }", "}", ""]
    return out


def member_docs(struct):
    """member -> its comment in uevent.h's struct (one line), None where it has none."""
    doc = {f.name: None for f in parse(HEADER)[struct]}
    for m in re.finditer(r"^\s*[\w ]+?[\s*]+(\w+);\s*/\*\s*(.*?)\s*\*/", re.search(
            r"struct %s \{(.*?)\n\};" % struct, HEADER, re.S).group(1), re.M | re.S):
        doc[m.group(1)] = re.sub(r"\s+", " ", m.group(2))
    return doc


# struct uevent_perf_format as an options value of each binding (PerfFormat, Format,
# perf_format{}): its numbers, those named here as booleans; the nested raw layout is
# the library's to fill.
FORMAT = "uevent_perf_format"
FORMAT_BOOL = {"sample_id_all"}


def format_fields(model):
    return [f for f in model[FORMAT] if f.name != "sz" and not f.nested]


# Options of struct uevent_session_opts whose SessionBuilder setter is written by hand.
RUST_OPT_HAND = {"pid", "transports", "sample_period_ns"}


def rust_session_opts(model):
    fl = [f for f in model["uevent_session_opts"] if f.name != "sz"]

    def ty(f):
        if f.ptr:
            return "Option<PathBuf>" if f.name.endswith("_path") else "Option<String>"
        return RUST_INT[f.ctype]
    doc = member_docs("uevent_session_opts")
    out = ["/// Options of a live session (`struct uevent_session_opts`); `open()` starts it.",
           "#[derive(Debug, Clone, Default)]", "pub struct SessionBuilder {"]
    out += [f"    pub(super) {f.name}: {ty(f)}," for f in fl]
    out += ["}", "", "impl SessionBuilder {"]
    for f in fl:
        if f.name in RUST_OPT_HAND or f.name == "flags":
            continue
        out.append(f"    /// `{f.name}`: {doc[f.name]}")
        if ty(f) == "Option<PathBuf>":
            out += [f"    pub fn {f.name}<P: AsRef<Path>>(mut self, p: P) -> Self {{",
                    f"        self.{f.name} = Some(p.as_ref().to_path_buf());"]
        elif f.ptr:
            out += [f"    pub fn {f.name}(mut self, s: &str) -> Self {{",
                    f"        self.{f.name} = Some(s.to_owned());"]
        else:
            out += [f"    pub fn {f.name}(mut self, n: {ty(f)}) -> Self {{", f"        self.{f.name} = n;"]
        out += ["        self", "    }"]
    for flag, c in enum_members("UEVENT_SESSION_"):
        c = re.sub(r"\s+", " ", c)
        out += [f"    /// `UEVENT_SESSION_{flag}`: {c}",
                f"    pub fn {flag.lower()}(mut self, on: bool) -> Self {{",
                f"        self.flags = if on {{ self.flags | sys::UEVENT_SESSION_{flag} }} "
                f"else {{ self.flags & !sys::UEVENT_SESSION_{flag} }};", "        self", "    }"]
    out += ["    /// Sets the numbers of `o` (its strings are the caller's to set).",
            "    pub(super) fn numbers_into(&self, o: &mut sys::uevent_session_opts) {"]
    out += [f"        o.{f.name} = self.{f.name};" for f in fl if not f.ptr]
    out += ["    }", "}", ""]
    return out


def rust_format(model):
    doc = member_docs(FORMAT)
    fl = format_fields(model)
    ty = {f.name: "bool" if f.name in FORMAT_BOOL else RUST_INT[f.ctype] for f in fl}
    out = ["/// What shapes a record of an event (`struct uevent_perf_format`): its attr's",
           "/// sample_type, read_format, branch_sample_type, register masks and sample_id_all.",
           "#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]", "pub struct Format {"]
    for f in fl:
        out += [f"    /// {doc[f.name]}"] if doc[f.name] else []
        out.append(f"    pub {f.name}: {ty[f.name]},")
    out += ["}", "", "impl Format {",
            "    /// The C struct (its raw layout zeroed: the library fills that).",
            f"    pub(crate) fn raw(&self) -> sys::{FORMAT} {{",
            "        let mut f: sys::uevent_perf_format = crate::zeroed_out();"]
    out += [f"        f.{f.name} = self.{f.name}" + (" as u32;" if ty[f.name] == "bool" else ";")
            for f in fl]
    out += ["        f", "    }", "}", ""]
    return out


# The union members whose Record variant is not a generated struct: (type, maker)
RUST_BODY = {"uevent": ("crate::Record", "uevent_record::record_from(&r.u.uevent, bo)"),
             "other": ("Vec<u8>", "bytes(r.u.other.data, r.u.other.size as u64)")}
RUST_VARIANT = {"uevent": "UEvent", "other": "Other"}
RUST_BOXED = {"sample"}     # several times larger than any other record


def rust_record_enum(model):
    members = union_members(model)
    vs = []
    for m, st in members:
        v = RUST_VARIANT.get(m, rust_type(st))
        t, mk = RUST_BODY.get(m, (rust_type(st), f"{rust_short(st)}_from(&r.u.{m}, b)"))
        if m in RUST_BOXED:
            t, mk = f"Box<{t}>", f"Box::new({mk})"
        vs.append((m, v, t, mk))
    out = ["/// One decoded perf record, owned. The variant is the `union uevent_perf_body` member",
           "/// the C library filled: `UEvent` also covers uevents that came as usdt or user_events",
           "/// tracepoint samples; `Other` holds the body of any other record type (perf's own",
           "/// records, numbers 64 and up, included).",
           "#[derive(Debug, Clone, PartialEq, Eq)]",
           "pub enum Record {"]
    for m, v, t, _ in vs:
        out += [f"    /// Union member `{m}`.", f"    {v}(Rec<{t}>),"]
    out += ["}", "", "impl Record {", "    pub fn header(&self) -> Header {", "        match self {"]
    out += [f"            Record::{v}(r) => r.header," for _, v, _, _ in vs]
    out += ["        }", "    }", "    pub fn sample_id(&self) -> SampleId {", "        match self {"]
    out += [f"            Record::{v}(r) => r.sample_id," for _, v, _, _ in vs]
    out += ["        }", "    }",
            "    /// The name of the C union member this record's body mirrors (\"sample\", \"sw\", ...).",
            "    pub fn member(&self) -> &'static str {", "        match self {"]
    out += [f'            Record::{v}(_) => "{m}",' for m, v, _, _ in vs]
    out += ["        }", "    }", "}", "",
            "/// Copies the body the C record's `body` says is set (`enum uevent_perf_body_kind`).",
            "///", "/// # Safety",
            "/// That member's pointers must be as the C decoder left them, checked against the record.",
            "pub(crate) unsafe fn record_of(r: &sys::uevent_perf_record, header: Header,",
            "                               transport: Option<Transport>, sample_id: SampleId,",
            "                               bo: ByteOrder) -> Record {",
            "    let b = bo.raw();",
            "    let _ = b;",
            "    match r.body as sys::uevent_perf_body_kind {"]
    for m, v, _, mk in vs:
        pat = "_" if m == "other" else f"sys::UEVENT_BODY_{m.upper()}"
        out.append(f"        {pat} => Record::{v}(Rec {{ header, transport, sample_id, body: {mk} }}),")
    out += ["    }", "}", ""]
    return out


def rust_payloads(model):
    def val(f, o):
        if f.kind == "str":
            return "String", f"sized_str({o}.{f.name}, {o}.{f.count})"
        if f.kind == "bytes":
            return f"[u8; {f.count}]", f"{o}.{f.name}"
        if f.each:
            return f"Vec<{rust_type(f.each)}>", f"each_{f.each}(&{o}, b)?"
        return RUST_INT[f.ctype], f"{o}.{f.name}"
    out = []
    for st in entry_structs(model):
        parent = next(p for _, p in payloads(model) if any(f.each == st for f in model[p]))
        fl = [(f.name,) + val(f, "e") for f in payload_fields(model, st)]
        out += [f"/// `struct {st}`.", "#[derive(Debug, Clone, PartialEq, Eq)]",
                f"pub struct {rust_type(st)} {{"]
        out += [f"    pub {n}: {t}," for n, t, _ in fl]
        out += ["}", "",
                f"unsafe fn each_{st}(info: &sys::{parent}, b: c_int)"
                f" -> io::Result<Vec<{rust_type(st)}>> {{",
                "    let mut out = Vec::new();", "    let mut off: u32 = 0;", "    loop {",
                f"        let mut e = MaybeUninit::<sys::{st}>::zeroed();",
                f"        let r = sys::{st}_next(info, b, &mut off, e.as_mut_ptr());",
                "        check(r)?;", "        if r == 0 {", "            return Ok(out);", "        }",
                "        let e = e.assume_init();",
                f"        out.push({rust_type(st)} {{ " + ", ".join(f"{n}: {e}" for n, _, e in fl)
                + " });", "    }", "}", ""]
    out += ["/// A decoded payload: one variant per well-known payload type, with the members of",
            "/// its codec struct in uevent.h.",
            "#[derive(Debug, Clone, PartialEq, Eq)]", "pub enum Payload {"]
    pays = []
    for t, st in payloads(model):
        fl = [(f.name,) + val(f, "o") for f in payload_fields(model, st)]
        pays.append((t, st, fl))
        out.append(f"    /// `struct {st}`.")
        if len(fl) == 1:
            out.append(f"    {rust_type(st)}({fl[0][1]}),")
        else:
            out.append(f"    {rust_type(st)} {{ " + ", ".join(f"{n}: {ty}" for n, ty, _ in fl) + " },")
    out += ["    /// A type this crate does not decode (an application's own), as bytes.",
            "    Raw { ty: u32, data: Vec<u8> },", "}", "",
            "/// Decodes a payload of type `ty` with libuevent's decoders.",
            "pub fn decode(ty: u32, data: &[u8], bo: ByteOrder) -> io::Result<Payload> {",
            "    let b = bo.raw();",
            "    macro_rules! dec {",
            "        ($st:ident, $f:ident) => {{",
            "            let mut o = MaybeUninit::<sys::$st>::zeroed();",
            "            check(sys::$f(data.as_ptr().cast(), data.len() as _, b, o.as_mut_ptr()))?;",
            "            o.assume_init()",
            "        }};",
            "    }",
            "    // SAFETY: each decoder fills its struct from data alone, and its pointers point",
            "    // into data (or at entries the walk checks) while they are copied out here.",
            "    unsafe {",
            "        Ok(match ty {"]
    for t, st, fl in pays:
        out.append(f"            sys::UEVENT_TYPE_{t} => {{")
        out.append(f"                let o = dec!({st}, {st}_decode);")
        if len(fl) == 1:
            out.append(f"                Payload::{rust_type(st)}({fl[0][2]})")
        else:
            out.append(f"                Payload::{rust_type(st)} {{ "
                       + ", ".join(f"{n}: {e}" for n, _, e in fl) + " }")
        out.append("            }")
    out += ["            _ => Payload::Raw { ty, data: data.to_vec() },", "        })", "    }", "}", ""]
    return out


# ---- Lua: the LuaJIT binding's converters and payload decoders --------------------------

# What the bracket notes' kinds are in Lua: [bytes x N] a string, [u64 x N (of K)] arrays.
LUA_NOTES = '''local function bytes(p, n)
  n = tonumber(n)
  if p == nil or n == 0 then return "" end
  return ffi_string(p, n)
end
-- n entries of per u64s each: a flat array when per == 1, else an array of arrays.
-- Read in place (what uevent_perf_u64() does), swapped when the record's order is not ours.
local u64p = ffi.typeof("const uint64_t *")
local bswap = bit.bswap
local bo_host = tonumber(lib.UEVENT_BO_HOST)
local host_bo = ffi.abi("le") and lib.UEVENT_BO_LITTLE or lib.UEVENT_BO_BIG
local function u64s(p, n, per, bo)
  local t = {}
  n, per = tonumber(n), tonumber(per)
  if p == nil or n == 0 or per == 0 then return t end
  local a = ffi.cast(u64p, p)
  local swap = bo ~= bo_host and bo ~= host_bo
  for i = 0, n - 1 do
    local e = per == 1 and t or {}   -- one flat array, or one array per entry
    for j = 0, per - 1 do
      local v = a[i * per + j]
      e[per == 1 and i + 1 or j + 1] = swap and bswap(v) or v
    end
    if per ~= 1 then t[i + 1] = e end
  end
  return t
end'''


def lua(model):
    members = union_members(model)
    union = next(f.union for f in model[ROOT] if f.union)
    out = ["-- _records.lua - generated from libuevent/uevent.h by libuevent/gen-records.py: the",
           "-- record structs as Lua tables (one converter per struct, members as named in C),",
           "-- the payload decoders, and which union member each record body sets. Do not edit:",
           "-- change uevent.h. uevent.lua calls this with the library and its helpers.",
           "return function(lib, ffi, h)",
           "local cstr, fail, tnew = h.cstr, h.fail, h.tnew",
           "local ffi_new, ffi_string, sizeof, math_min = ffi.new, ffi.string, ffi.sizeof, math.min",
           "local bit = require \"bit\"",
           "local R = { convert = {}, decoders = {}, body_struct = {}, member_of_body = {} }",
           "local convert = R.convert",
           ""] + LUA_NOTES.splitlines() + [
           "",
           "-- 64-bit members stay uint64_t/int64_t cdata (addresses do not fit a double); narrower",
           "-- ones are numbers; byte blobs are Lua strings; u64 arrays are Lua arrays of cdata.",
           ]
    for name in [s for s in reachable(model) if s not in (ROOT, union)]:
        fl = [f for f in model[name] if f.name != "sz"]
        out.append(f"convert.{name} = function(s, bo)")
        out.append(f"  local t = tnew(0, {len(fl) + 1})")
        for f in fl:
            m = "s." + f.name
            if f.kind == "str":
                e = f"cstr({m})"
            elif f.kind == "bytes" and f.array:
                e = f"bytes({m}, math_min({expr(f.count, 's.')}, sizeof({m})))"
            elif f.kind == "bytes":
                e = f"bytes({m}, {expr(f.count, 's.')})"
            elif f.kind == "u64":
                e = f"u64s({m}, {expr(f.count, 's.')}, {expr(f.per, 's.') if f.per else '1'}, bo)"
            elif f.nested:
                e = f"convert.{f.nested}({m}, bo)"
            elif f.ctype.endswith("int64_t"):
                e = m
            else:
                e = f"tonumber({m})"
            out.append(f"  t.{f.name} = {e}")
        out += ["  return t", "end"]
    out += ["", "-- union uevent_perf_body: member -> struct; enum uevent_perf_body_kind -> member"]
    for m, st in members:
        out.append(f'R.body_struct.{m} = "{st}"')
        out.append(f'R.member_of_body[tonumber(lib.UEVENT_BODY_{m.upper()})] = "{m}"')
    out += ["", "-- The sample_id members present, as id.fields says (narrow ones as numbers).",
            "function R.sample_id(id)", "  local t, f = {}, id.fields"]
    for f in model["uevent_sample_id"]:
        if f.name != "fields":
            v = f"id.{f.name}" if f.ctype.endswith("int64_t") else f"tonumber(id.{f.name})"
            out.append(f"  if bit.band(f, lib.UEVENT_ID_{f.idbit}) ~= 0 then t.{f.name} = {v} end")
    out += ["  return t", "end"]
    out += ["", "-- struct uevent_record as a table (as Python's and Rust's Record): its payload",
            "-- decoded beside data by decode(type, data, size, bo), the sample_id members present",
            "function R.uevent_record(r, bo, decode)", "  local t = R.sample_id(r.id)"]
    for f in model["uevent_record"]:
        if f.kind == "bytes":
            out += [f"  t.{f.name} = bytes(r.{f.name}, r.{f.count})",
                    f"  t.payload = decode(r.type, t.{f.name}, #t.{f.name}, bo)",
                    f'    or {{ kind = "raw", type = tonumber(r.type), data = t.{f.name} }}']
        elif not f.nested and f.name not in ("sz", "size"):
            out.append(f"  t.{f.name} = tonumber(r.{f.name})")
    out += ["  return t", "end"]
    out += ["", "-- session options: one boolean per UEVENT_SESSION_* flag, the numbers of the struct",
            "R.session_flags = {"]
    out += [f"  {fl.lower()} = lib.UEVENT_SESSION_{fl}," for fl, _ in enum_members("UEVENT_SESSION_")]
    out.append("}")
    out += ["-- its other members: a string, or a number in its C type's range",
            "local session_members = {"]
    out += [f'  {f.name} = "string",' if f.ptr else
            f"  {f.name} = {{ {LUA_INT_RANGE[f.ctype]} }}," for f in model["uevent_session_opts"]
            if f.name not in ("sz", "flags", "transports")]
    out += ["}",
            "-- Sets struct uevent_session_opts o from session{}'s keys, named as its members",
            "-- (transports is the caller's): true, or nil, err, -EINVAL.",
            "function R.session_opts(o, opts)",
            "  for k, range in pairs(session_members) do",
            "    local v = opts[k]",
            "    if v ~= nil then",
            '      if range == "string" and type(v) ~= "string" then',
            '        return fail(-22, "session: " .. k .. " must be a string")',
            "      end",
            '      if range ~= "string" and (type(v) ~= "number" and type(v) ~= "cdata"',
            "                                or v < range[1] or v > range[2]) then",
            '        return fail(-22, ("session: %s must be a number in [%.0f, %.0f]"):format(k, range[1], range[2]))',
            "      end",
            "      o[k] = v",
            "    end",
            "  end",
            "  local flags = 0",
            "  for k, f in pairs(R.session_flags) do",
            "    if opts[k] then flags = bit.bor(flags, f) end",
            "  end",
            "  o.flags = flags",
            "  return true",
            "end"]
    out += ["", "-- perf_format{}: struct uevent_perf_format from its members by name (a boolean one",
            "-- is set by true or a non-zero number); the raw layout is the library's to fill",
            "function R.perf_format(o)",
            '  local f = ffi_new("struct uevent_perf_format")',
            "  f.sz = sizeof(f)",
            "  o = o or {}"]
    for f in format_fields(model):
        if f.name in FORMAT_BOOL:
            out.append(f"  f.{f.name} = (o.{f.name} == true or (tonumber(o.{f.name}) or 0) ~= 0) and 1 or 0")
        else:
            out.append(f"  if o.{f.name} then f.{f.name} = o.{f.name} end")
    out += ["  return f", "end"]
    out += ["", "-- the counter structs as tables of numbers (a [by F] array: by the name F gives)",
            "R.counters = {}"]
    for name in EXTRA:
        out += [f"R.counters.{name} = function(s)", "  local t = {}"]
        for f in model[name]:
            if f.by:
                out += [f"  t.{f.name} = {{}}",
                        f"  for i = 0, sizeof(s.{f.name}) / sizeof(s.{f.name}[0]) - 1 do",
                        f"    t.{f.name}[cstr(lib.{f.by}(i)) or tostring(i)] = tonumber(s.{f.name}[i])",
                        "  end"]
            else:
                out.append(f"  t.{f.name} = tonumber(s.{f.name})")
        out += ["  return t", "end"]

    def val(f, o):
        if f.kind == "str":
            return f"ffi_string({o}.{f.name}, {o}.{f.count})"
        if f.kind == "bytes":
            return f"ffi_string({o}.{f.name}, {f.count})"
        if f.each:
            return f"each_{f.each}({o}, bo)"
        return f"{o}.{f.name}"
    out += ["", "-- payload decoders: (buffer, size, byte order) -> table with .kind, or nil, err"]
    for st in entry_structs(model):
        fl = payload_fields(model, st)
        out += [f"local function each_{st}(info, bo)",
                f'  local off, e, t = ffi_new("uint32_t[1]"), ffi_new("struct {st}"), {{}}',
                "  while true do",
                f"    local r = lib.{st}_next(info, bo, off, e)",
                f'    if r < 0 then return fail(r, "{st[7:]}") end',
                "    if r == 0 then return t end",
                "    t[#t + 1] = { " + ", ".join(f"{f.name} = {val(f, 'e')}" for f in fl) + " }",
                "  end", "end"]
    for t, st in payloads(model):
        fl = payload_fields(model, st)
        out += [f"R.decoders[tonumber(lib.UEVENT_TYPE_{t})] = function(buf, n, bo)",
                f'  local o = ffi_new("struct {st}")',
                f"  local r = lib.{st}_decode(buf, n, bo, o)",
                f'  if r < 0 then return fail(r, "{st[7:]} payload") end']
        for f in fl:
            if f.each:
                out += [f"  local {f.name}, err, code = {val(f, 'o')}",
                        f"  if not {f.name} then return nil, err, code end"]
        out.append(f'  return {{ kind = "{st[7:]}", ' + ", ".join(
            f"{f.name} = {f.name if f.each else val(f, 'o')}" for f in fl) + " }")
        out.append("end")
    out += ["return R", "end"]
    return "\n".join(out) + "\n"


def main():
    emit = {"--c-json": c_json, "--python": python, "--rust": rust, "--lua": lua}
    if len(sys.argv) != 3 or sys.argv[1] not in emit:
        raise SystemExit("usage: gen-records.py --c-json|--python|--rust|--lua uevent.h")
    global HEADER
    with open(sys.argv[2], encoding="utf-8") as f:
        HEADER = f.read()
    model = parse(HEADER)
    sys.stdout.write(emit[sys.argv[1]](model))


if __name__ == "__main__":
    main()
