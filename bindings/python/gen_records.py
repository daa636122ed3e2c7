#!/usr/bin/env python3
"""gen_records.py - the Python package's record classes (_records.py) from the record model.

One immutable class per record struct of uevent.h and its maker, SampleId, the perf
records' reader loop (perf_records()), the payload classes and decoders, PerfFormat and
the session options. The readers of the notes' kinds and the tuple record class the
generated code uses are uevent/_recordbase.py. The model is libuevent/records_model.py,
found in the source tree or (for `pip install` against an installed libuevent) on
sys.path. usage: gen_records.py libuevent/uevent.h > uevent/_records.py
"""
import os
import re
import sys

try:
    import records_model as rm
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "libuevent"))
    import records_model as rm

# Python class names where the struct's own name would change the binding's API.
PY_CLASS = {"uevent_perf_bytes": "Other", "uevent_perf_read": "PerfRead",
            "uevent_session_stats": "SessionStats", "uevent_stats": "Stats"}
# Members of the union that the bindings make by hand (they need the payload codecs).
HAND_MADE = {"uevent"}
# The members most records of a union member have, the rest being empty: perf_records()
# makes such a record without testing each of the rest, and reads the members after the
# last of these (the run: rare members, and those the event fixes) as one bytes object,
# reusing the values of the record before when that is the same (common_parts).
COMMON = {"sample": ("callchain",)}
# The union members whose makers perf_records() has inline: a perf.data's samples and its
# FINISHED_ROUND records (Other), one per round of samples.
INLINE = ("sample", "other")
# Of those, the ones whose records are often their header alone (FINISHED_ROUND).
BARE = ("other",)
# PerfRecord's own fields, which a body member must not shadow in Python.
PY_BASE = ("type", "misc", "size", "sample_id")


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
def python(model):
    members = model.union_members()
    bodies = {st for m, st in members if m not in HAND_MADE}
    union = model.union()
    nested = [s for s in model.records if s not in bodies and s not in (rm.ROOT, union) and
              not any(f.union for f in model[s]) and s not in
              {st for m, st in members} and s != "uevent_sample_id"]
    out = ['"""Record classes generated from libuevent/uevent.h by bindings/python/gen_records.py.',
           "",
           "One immutable class per record struct of uevent.h, fields in the struct's order",
           "(the perf records' and SampleId tuples that keep the dataclass interface:",
           "_record_class); pointer members are copied out (bytes, str, tuples of ints) by",
           "the readers of _recordbase.py. Do not edit: change uevent.h.\"\"\"",
           "# flake8: noqa",
           "import dataclasses as _dc",
           "import os as _os",
           "from dataclasses import dataclass as _dataclass",
           "from operator import itemgetter as _itemgetter",
           "from typing import (Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union,",
           "                    cast as _cast)",
           "",
           "from ._recordbase import (_blob, _blob_at, _cstr, _cstr_at, _groups, _groups_at,",
           "                          _layout, _record_class, _slot_init, _str, _tnew, _u64s,",
           "                          _u64s_at, _u64s_struct, _U64S)",
           "from ._uevent import ffi as _ffi, lib as _lib",
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
            "ID_FIELDS = (" + " ".join(f'("{n}", _lib.UEVENT_ID_{b}),' for n, b in model.id_fields())
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
                    # the fast makers' unpack reads an array as bytes already: sliced
                    # to its count, unless the count is the array's whole size
                    res.append((pn, "bytes", (s if f.count == f.dim else f"{s}[:{n}]")
                                if at else f"bytes({s})[:{n}]"))
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
            raise SystemExit(f"gen_records: {nst}: a struct nested twice is not supported")
        fl = [f.name for f in model[nst] if f.name != "sz"]
        mk = fields_of(nst, False, lambda m: "b_" + m)
        zero_objects.append(f"_ZO_{nst} = _mkb_{nst}(_Z_{nst}, 0)")
        return [f"_B_{nst} = _layout(\"struct {nst}\", (" + " ".join(f"({n!r},)," for n in fl)
                + "))", f'_Z_{nst} = bytes(_ffi.sizeof("struct {nst}"))', "", "",
                f"def _mkb_{nst}(b: bytes, bo: int) -> {py_class(nst)}:",
                "    " + "".join(f"b_{n}, " for n in fl) + f"= _B_{nst}.unpack_from(b)",
                f"    return {py_class(nst)}(" + ", ".join(e for _, _, e in mk) + ")", ""]

    orders = {}             # record class -> the order its tuple holds its fields in
    common_x = []           # (COMMON member, its members of perf_records' first unpack)
    inline = {}             # union member -> (its maker's lines, the last the record; how
                            # the loop takes them: None, "as is", or the yield after them)

    def fast_maker(member, st, cls):
        """The maker of a body struct: type, misc, size and the plain members from one
        struct.unpack of the C record, then sample_id and the other members (made from
        a second unpack: pointers read only where a count says so). A COMMON member's
        struct is read in three parts (common_parts)."""
        plain, rest = split(st)
        want = {f.name for _, f in rest}
        for _, f in rest:
            for e in (f.count, f.per):
                want |= set(re.findall(r"\b([A-Za-z_]\w*)\b", e or ""))
        av = [f.name for f in model[st] if f.name in want]
        nest = lambda f: (f"(_mkb_{f.nested}(a_{f.name}, bo) if a_{f.name} != _Z_{f.nested}"
                          f" else _ZO_{f.nested})")
        ex = dict((pn, e) for pn, _, e in fields_of(st, True, lambda m: "a_" + m, nest))
        parts = None
        if member in COMMON:
            parts = common_parts(model, fields_of, member, st, plain, rest, ex)
            common_x.append((member, parts["x"]))
        head, lead = (parts["head"], parts["lead"]) if parts else (plain, rest)
        orders[cls] = ("type", "misc", "size") + tuple(n for n, _ in head) + \
            ("sample_id",) + tuple(n for n, _ in lead)
        out = [f"_P_{st} = _layout(\"struct uevent_perf_record\", (('type',), ('misc',), "
               "('size',),"] + [f"    ('u', {member!r}, {f.name!r})," for _, f in head] + ["))"]
        if av:
            out += [f"_A_{st} = _layout(\"struct uevent_perf_record\", ("]
            out += [f"    ('u', {member!r}, {n!r})," for n in av] + ["))"]
        tail = ""
        if parts:
            orders[cls] += tuple(n for n, _ in parts["kept"] + parts["rare"])
            out += [f"_K_{st} = _layout(\"struct uevent_perf_record\", ("]
            out += [f"    ('u', {member!r}, {f.name!r})," for _, f in parts["kept"]] + ["))"]
            tail = f" + _K_{st}.unpack_from(buf) + (" + "".join(
                ex[n] + ", " for n, _ in parts["rare"]) + ")"
        out += ["", "", f"def _mk_{st}(r: Any, buf: Any, sid: SampleId, bo: int) -> {cls}:"]
        body = [f"_tnew({cls}, _P_{st}.unpack_from(buf) + (sid, "
                + "".join(ex[n] + ", " for n, _ in lead) + ")" + tail + ")"]
        if av:
            body.insert(0, "".join(f"a_{n}, " for n in av) + f"= _A_{st}.unpack_from(buf)")
        out += ["    " + b for b in body[:-1]] + ["    return " + body[-1], ""]
        inline[member] = (body, None)
        if parts:
            inline[member] = (parts["loop"](body), "as is")
        if member in BARE:
            # A record that is its header alone (size 8: FINISHED_ROUND) and has no
            # sample_id holds nothing else: perf_records() makes one object of each.
            empty = lambda f: f"_ZO_{f.nested}" if f.nested else 'b""' if f.kind == "bytes" \
                else '""' if f.kind == "str" else "()" if f.kind == "u64" else "0"
            bare = [f"p = _P_{st}.unpack_from(buf)",
                    "if p[2] == 8 and not x[1]:",
                    "    o = bare.get(p)",
                    "    if o is None:",
                    f"        o = bare[p] = _tnew({cls}, p + (NO_ID, "
                    + "".join(empty(f) + ", " for _, f in rest) + "))",
                    "    yield o", "else:"]
            body = [b.replace(f"_P_{st}.unpack_from(buf)", "p") for b in body]
            inline[member] = (bare + ["    " + b for b in body[:-1]], "yield " + body[-1])
            if plain:
                raise SystemExit(f"gen_records: {st}: a bare record with members is not bare")
        return out

    for name in nested + [st for m, st in members if st in bodies] + rm.COUNTERS:
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
            "for _c in (" + ", ".join(py_class(s) for s in rm.COUNTERS) + ", Record):",
            '    setattr(_c, "__init__", _slot_init(_c))',
            "", "",
            "def _sid_cell(c: List[Any], s: Any) -> Any:",
            '    """A record\'s sample_id from the cell perf_records() leaves in its tuple: [the',
            '    _L_ID values], made a SampleId on first use and kept there."""',
            "    v = c[0]",
            "    if type(v) is tuple:",
            "        v = c[0] = _sid(v[1], v)",
            "    return v", "", "",
            "def _own_sid_cell(c: List[Any], s: Any) -> Any:",
            '    """The sample_id of a record s of a COMMON member (a sample) from the cell',
            "    perf_records() leaves in its tuple: [its id.fields], made on first use from its",
            "    own members of the same names (uevent.h: a sample's sample_id is its same",
            '    fields) and kept there."""',
            "    v = c[0]",
            "    if type(v) is int:",
            "        v = c[0] = (_OWN_SIDS.get((type(s), v)) or _own_sid_maker(type(s), v))(s)",
            "    return v", "", "",
            "# the record classes as tuples (_record_class): the dataclasses above give their",
            "# fields, the makers the order of their tuples",
            "SampleId = _record_class(SampleId)",
            "PerfRecord = _record_class(PerfRecord)"]
    out += [f"{py_class(s)} = _record_class({py_class(s)})" for s in nested]
    lazy = {py_class(st) for m, st in members if m in INLINE}
    own = {py_class(st) for m, st in members if m in COMMON}
    cell = lambda c: ", _own_sid_cell" if c in own else ", _sid_cell" if c in lazy else ""
    out += [f"{c} = _record_class({c}, {o!r}, PerfRecord{cell(c)})" for c, o in orders.items()]
    out += ["UEvent = _record_class(UEvent, None, PerfRecord)",
            "NO_ID = SampleId(" + ", ".join("None" for _ in sid) + ")"] + zero_objects
    out += ["# a COMMON member's class -> where its tuple holds SampleId's fields",
            "_OWN_AT = {" + " ".join(f"{c}: {tuple(orders[c].index(n) for n in sid)!r},"
                                     for c in sorted(own)) + "}"]
    out += python_head(model, inline, common_x)
    out.append("# enum uevent_perf_body_kind -> the union member it sets")
    out.append("MEMBER_OF_BODY = {" + " ".join(f'_lib.UEVENT_BODY_{m.upper()}: "{m}",'
                                               for m, _ in members) + "}")
    out.append("BODY_MAKERS = tuple(MAKERS[MEMBER_OF_BODY[_i]] for _i in "
               "range(_lib.UEVENT_BODY_COUNT))")
    out.append("BODY_CLASSES = (" + ", ".join(py_class(st) for m, st in members
                                               if st in bodies) + ",)")
    out += python_batches(model)
    return "\n".join(out) + "\n"


def common_parts(model, fields_of, member, st, plain, rest, ex):
    """A COMMON member's struct in three parts, in the order of its record's tuple:
    head, its plain members outside `the run` (from one unpack), with sample_id and
    lead, its other members outside the run (the common ones, and the rare nested
    structs, compared with a zeroed one); kept, the plain members and fixed arrays
    of the run, and rare, its other (rare) members. The run goes from the member
    after the last common one to the last rare one: most records of a file have
    the same run as the one before them (rare members empty, the rest fixed by the
    event), so perf_records() reads it as one bytes object and, where it is that of
    the record before, reuses that record's kept and (empty) rare values.
    A record's sample_id is made from its own members (uevent.h: a sample's are
    its same fields), its cell [id.fields]. Returns the parts, loop(body) (the
    loop's lines for the member; body: the lines of its maker) and x (what the
    loop's first unpack reads of it). fields_of is python()'s."""
    fields = [f for f in model[st] if f.name != "sz"]
    names = [f.name for f in fields]
    fixed = {f.name for _, f in rest if f.array and f.count.isdigit()}
    used = set(COMMON[member]) | fixed
    rare = [f.name for _, f in rest if f.name not in used]
    first = max(names.index(n) for n in COMMON[member]) + 1
    last = max(names.index(n) for n in rare)
    run = names[first:last + 1]
    head = [(n, f) for n, f in plain if f.name not in run]
    lead = [(n, f) for n, f in rest if f.name not in run]
    kept = [(n, f) for n, f in plain + rest if f.name in run and f.name not in rare]
    kept.sort(key=lambda e: names.index(e[1].name))
    rare_run = [(n, f) for n, f in rest if f.name in rare and f.name in run]
    bad = lambda what: SystemExit(f"gen_records: {st}: {what} (perf_records' usual {member})")
    for n, f in lead:
        if f.name not in COMMON[member] and not f.nested:
            raise bad(f"{f.name} is rare, before the run, and not a nested struct")
        if f.name in COMMON[member] and not f.ptr:
            raise bad(f"the common {f.name} is not a pointer")
    for n, f in kept:
        if ex[n] != "a_" + f.name:
            raise bad(f"{f.name} in the run is not read as it is")
    for n, f in rare_run:
        if f.nested or not f.count:
            raise bad(f"the rare {f.name} in the run has no count to test it is empty by")
    counts = sorted({k for _, f in rare_run for k in f.names() if not k.isdigit()},
                    key=names.index)
    kn = [f.name for _, f in kept]
    if any(k not in kn for k in counts):
        raise bad("a rare member's count is outside the run")
    hn = [f.name for _, f in head]
    by_name = {f.name: f for f in fields}
    uses = sorted({k for n in COMMON[member] for k in by_name[n].names()}, key=names.index)
    if any(k not in hn for k in uses):
        raise bad("a common member's count is not a plain member before the run")
    if any(n not in hn for n, _ in model.id_fields()):
        raise bad("its sample_id members are not members of its own")
    # X: body, id.fields, the lead members (rare nested structs, common pointers),
    # the run
    at = {f.name: 2 + k for k, (_, f) in enumerate(lead)}
    runx = 2 + len(lead)
    empty = lambda f: 'b""' if f.kind == "bytes" else "()"
    exc = dict((p, e) for p, _, e in fields_of(st, True, lambda m: "c_" + m,
                                                   lambda f: f"_ZO_{f.nested}"))
    zero = [f"x[{at[f.name]}] != _Z_{f.nested}" for _, f in lead if f.nested]
    full_if = " or ".join(zero + [f"k[{kn.index(c)}]" for c in counts]) or "False"

    def loop(body):
        full = [b.replace(f"_K_{st}.unpack_from(buf)", "k") for b in body]
        full[-1] = full[-1].replace("(sid, ", "([x[1]], ")
        return [
            f"if x[{runx}] != same_{member}" + "".join(" or " + z for z in zero) + ":",
            f"    k = _K_{st}.unpack_from(buf)",
            f"    if {full_if}:"] + ["        " + b for b in full[:-1]] + [
            "        yield " + full[-1],
            "        continue",
            f"    same_{member}, k_{member} = x[{runx}], k + (" + "".join(
                empty(f) + ", " for _, f in rare_run) + ")",
            f"p = _P_{st}.unpack_from(buf)",
            ", ".join([f"c_{k}" for k in uses] + [f"c_{n}" for n in COMMON[member]])
            + " = " + ", ".join([f"p[{3 + hn.index(k)}]" for k in uses] +
                                [f"x[{at[n]}]" for n in COMMON[member]]),
            f"yield _tnew({py_class(st)}, p + ([x[1]], " + "".join(
                exc[n] + ", " for n, _ in lead) + f") + k_{member})"]
    xs = [f"('u', {member!r}, {f.name!r})," for _, f in lead] + [
        f"(('u', {member!r}, {run[0]!r}), ('u', {member!r}, {run[-1]!r})),"]
    return {"head": head, "lead": lead, "kept": kept, "rare": rare_run, "loop": loop, "x": xs}


# NumPy's type code of a C integer type
NP_CODE = {"uint8_t": "u1", "uint16_t": "u2", "uint32_t": "u4", "uint64_t": "u8",
           "int8_t": "i1", "int16_t": "i2", "int32_t": "i4", "int64_t": "i8"}


def python_batches(model):
    """The row columns of each batch struct ([column] and [offset in T] members, not the
    tail array): (name, NumPy type code), the structured arrays' fields (_arrays.py)."""
    out = ["", "# batch struct -> its row columns as (member, NumPy type code), host order",
           "BATCH_COLUMNS: Dict[str, List[Tuple[str, str]]] = {"]
    for st, cols in model.batches():
        out.append(f'    "{st}": [' + ", ".join(f'("{f.name}", "{NP_CODE[f.ctype]}")'
                                             for f in cols if not f.tail) + "],")
    return out + ["}"]


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


def python_head(model, inline, common_x):
    """perf_record() and perf_records(): a C record's body kind and sample_id from one
    unpack, then the maker of its body member (BODY_MAKERS, indexed by enum
    uevent_perf_body_kind). perf_records() has the makers of the INLINE members (most
    of a perf.data) in its loop, their structs' unpack_from bound once; its first
    unpack (_X_HEAD) reads the body kind, id.fields and what the COMMON member's usual
    record is told by (common_x)."""
    if len(common_x) > 1:
        raise SystemExit("gen_records: perf_records() reads one COMMON member's run")
    lines = []
    for k, m in enumerate(INLINE):
        code, usual = inline[m]
        lines += [f"        {'el' if k else ''}if x[0] == _BODY_{m.upper()}:"]
        if usual == "as is":                # the loop's lines, as they are
            lines += ["            " + c for c in code]
        elif usual:                         # code to run as it is, then this yield
            lines += ["            " + c for c in code] + ["                " + usual]
        else:
            lines += ["            " + c for c in code[:-1]] + ["            yield " + code[-1]]
    # pointer members read from the file's bytes (uevent_perf_file__bytes()), bounded
    lines = [re.sub(r"\b_u64s_at\(([^,()]+), ([^,()]+), bo\)", r"u64s(\1, \2)", ln)
             for ln in lines]
    lines = [re.sub(r"\b_blob_at\(([^,()]+), ([^,()]+)\)", r"blob(\1, \2)", ln) for ln in lines]
    # the usual sample's (c_ names) arrays read inline: a call less a record
    lines = [re.sub(r"\(u64s\((c_\w+), (c_\w+)\) if \2 else \(\)\)",
                    r"(((u64s_of(\2) or _u64s_struct(bo, \2)).unpack_from(view, o) if 0 <= "
                    r"(o := \1 - base) <= size - 8 * \2 else _u64s_at(\1, \2, bo)) if \2 else ())",
                    ln) for ln in lines]
    bound = sorted(set(re.findall(r"\b(_[A-Z]+_\w+)\.unpack_from\b", "\n".join(lines))))
    lines = [re.sub(r"\b(_[A-Z]+_\w+)\.unpack_from\b", lambda m: "u" + m.group(1), ln)
             for ln in lines]
    # their sample_id a cell, made a SampleId when asked for (_sid_cell)
    lines = [re.sub(r"(\(buf\)|\bp) \+ \(sid, ", r"\1 + ([unpack(buf)], ", ln) for ln in lines]
    sid = [f for f in model["uevent_sample_id"] if f.name != "fields"]
    lv = [("body",), ("id", "fields")] + [("id", f.name) for f in sid]
    bits = sorted({f.idbit for f in sid})
    xs = [x for _, m in common_x for x in m]
    return ["", "", "_L_ID = _layout(\"struct uevent_perf_record\", (" +
            " ".join(f"{p!r}," for p in lv) + "))",
            "_X_HEAD = _layout(\"struct uevent_perf_record\", (('body',), ('id', 'fields'), " +
            " ".join(xs) + "))",
            "".join(f"_BODY_{m.upper()} = int(_lib.UEVENT_BODY_{m.upper()})\n" for m in INLINE),
            "# the UEVENT_ID_* bits as ints (a lib attribute is a lookup each time)",
            "".join(f"_ID_{b} = int(_lib.UEVENT_ID_{b})\n" for b in bits), "",
            "def _sid_maker(f: int) -> Callable[[Tuple[int, ...]], SampleId]:",
            '    """The maker of the SampleId of id fields f from _L_ID\'s values: a record\'s',
            "    sample_id has one of a few such sets (the event's), each made once and kept in",
            '    _SIDS."""',
            "    if not f:", "        _SIDS[f] = lambda i: NO_ID", "        return _SIDS[f]",
            "    # the items of i (one None added at its end) the SampleId's fields are",
            f"    pick = _itemgetter(*(k if f & b else {len(sid) + 2} for k, b in (" +
            " ".join(f"({k + 2}, _ID_{f_.idbit})," for k, f_ in enumerate(sid)) + ")))",
            "",
            "    def mk(i: Tuple[int, ...]) -> SampleId:",
            "        return _tnew(SampleId, pick(i + (None,)))  # type: ignore[no-any-return]",
            "    _SIDS[f] = mk",
            "    return mk",
            "", "",
            "_SIDS: Dict[int, Callable[[Tuple[int, ...]], SampleId]] = {}",
            "", "",
            "def _sid(f: int, i: Tuple[int, ...]) -> SampleId:",
            '    """The SampleId of id fields f and the values i (_L_ID\'s)."""',
            "    return (_SIDS.get(f) or _sid_maker(f))(i)", "", "",
            "def _own_sid_maker(c: type, f: int) -> Callable[[Any], SampleId]:",
            '    """The maker of the SampleId of id fields f from a record of class c (its',
            '    own members, _OWN_AT), kept in _OWN_SIDS."""',
            "    pick = _itemgetter(*(k if f & b else -1 for k, b in zip(_OWN_AT[c], (" +
            " ".join(f"_ID_{f_.idbit}," for f_ in sid) + "))))",
            "",
            "    def mk(s: Any) -> SampleId:",
            "        return _tnew(SampleId, pick(s + (None,)))  # type: ignore[no-any-return]",
            "    _OWN_SIDS[(c, f)] = mk",
            "    return mk",
            "", "",
            "_OWN_SIDS: Dict[Tuple[type, int], Callable[[Any], SampleId]] = {}",
            "", "",
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
            "    head = _X_HEAD.unpack_from",
            "    bare: Dict[Any, Any] = {}"] + [
            f"    same_{m}: Any = None     # the run of the last usual {m}, and its values" for m, _ in common_x] + [
            f"    k_{m}: Any = None" for m, _ in common_x] + [
            f"    u{n} = {n}.unpack_from" for n in bound] + [
            "    reader._live()              # raises: closed",
            "    # the file's bytes, which every pointer member points into: an array is read",
            "    # from one view of them (a bounded offset), without a cast and a copy",
            "    n_at = _ffi.new(\"size_t *\")",
            "    at = _ffi.cast(\"char *\", _lib.uevent_perf_file__bytes(h, n_at))",
            "    base, size = int(_ffi.cast(\"uintptr_t\", at)), int(n_at[0])",
            "    view = _ffi.buffer(at, size) if base else b\"\"",
            "    u64s_of = _U64S[bo].get",
            "",
            "    def u64s(a: int, n: int) -> Tuple[int, ...]:",
            "        o = a - base",
            "        if 0 <= o <= size - 8 * n:",
            "            return (u64s_of(n) or _u64s_struct(bo, n)).unpack_from(view, o)  # type: ignore[no-any-return]",
            "        return _u64s_at(a, n, bo)",
            "",
            "    def blob(a: int, n: int) -> bytes:",
            "        o = a - base",
            "        return view[o:o + n] if 0 <= o <= size - n else _blob_at(a, n)  # type: ignore[no-any-return]",
            "",
            "    while reader._h is h:",
            "        ret = nxt(h, r)",
            "        if ret <= 0:",
            "            if ret == 0:", "                return",
            "            raise error(-ret, f\"{reader.path!r} at offset {reader.offset}\")",
            "        x = head(buf)",
            ] + lines + [
            "        else:",
            "            i = unpack(buf)",
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
    for st in model.entry_structs():
        cls = pay_class(st)
        fl = [(f.name,) + val(f, "e") for f in model.payload_fields(st)]
        out += ["", f"class {cls}(NamedTuple):", f'    """struct {st}."""']
        out += [f"    {n}: {t}" for n, t, _ in fl]
        out += ["", "", f"def _each_{st}(info: Any, bo: int) -> Tuple[{cls}, ...]:",
                f'    off, e = _ffi.new("uint32_t *"), _ffi.new("struct {st} *")',
                f"    out = []",
                f'    while _check(_lib.{st}_next(info, bo, off, e), "{st[7:]}"):',
                f"        out.append({cls}(" + ", ".join(e for _, _, e in fl) + "))",
                "    return tuple(out)", ""]
    for t, st in model.payloads():
        cls = pay_class(st)
        fl = [(f.name,) + val(f, "o") for f in model.payload_fields(st)]
        out += ["", f"class {cls}(NamedTuple):", f'    """A {st[7:]} payload: struct {st}."""']
        out += [f"    {n}: {ty}" for n, ty, _ in fl]
        out += ["", "", f"def _dec_{st[7:]}(buf: Any, n: int, bo: int) -> {cls}:",
                f'    o = _ffi.new("struct {st} *")',
                f'    _check(_lib.{st}_decode(buf, n, bo, o), "{st[7:]} payload")',
                f"    return {cls}(" + ", ".join(e for _, _, e in fl) + ")", ""]
    out += ["", "class Raw(NamedTuple):",
            '    """A payload of a type this binding does not decode (an application\'s own)."""',
            "    type: int", "    data: bytes", "", "",
            "Payload = Union[" + ", ".join(pay_class(st) for _, st in model.payloads()) + ", Raw]",
            "PAYLOAD_CLASSES = (" + ", ".join(pay_class(st) for st in model.entry_structs()
                                              + [st for _, st in model.payloads()]) + ", Raw)",
            "# payload type -> its decoder(buffer, size, byte order)",
            "DECODERS: Dict[int, Callable[[Any, int, int], Payload]] = {"]
    out += [f"    _lib.UEVENT_TYPE_{t}: _dec_{st[7:]}," for t, st in model.payloads()]
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
    doc = model.member_docs(rm.FORMAT)
    out = ["", "", "@_dataclass(frozen=True)", "class PerfFormat:",
           '    """What a record\'s layout depends on (struct uevent_perf_format): the fields',
           '    of its event\'s perf_event_attr."""']
    for f in model.format_fields():
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
        f'("{fl.lower()}", _lib.UEVENT_SESSION_{fl}),' for fl, _ in model.enum_members("UEVENT_SESSION_"))
        + ") if kw[k])", "    return keep"]
    return out

LUA_INT_RANGE = {"int": "-2^31, 2^31 - 1", "unsigned int": "0, 2^32 - 1",
                 "uint64_t": "0, 2^64 - 2^11"}
# The range of a C type's values, as Python bounds [lo, hi).
PY_INT_RANGE = {"int": ("-(1 << 31)", "1 << 31"), "unsigned int": ("0", "1 << 32"),
                "uint64_t": ("0", "1 << 64")}


rm.FORMAT = "uevent_perf_format"
FORMAT_BOOL = {"sample_id_all"}


if __name__ == "__main__":
    rm.main(sys.argv, python)
