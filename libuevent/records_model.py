#!/usr/bin/env python3
"""records_model.py - the record model of uevent.h: its structs and their bracket notes.

The record structs of uevent.h (struct uevent_perf_record, its union's members, the
nested structs they hold), the payload codec structs and the session's counters and
options are the one statement of what the bindings and `uevent dump --json` mirror. This
module reads them, with the note a member's comment starts with (the grammar is the
table in docs/format.md, "The notes"), into a Model; one emitter beside each consumer
turns the Model into code:
    tools/gen_json.py              tools/uevent-json.h (dump --json's printers)
    bindings/python/gen_records.py the Python package's _records.py
    bindings/rust/gen_records.py   the Rust crate's records.rs
    bindings/lua/gen_records.py    the LuaJIT binding's uevent/_records.lua
Nothing here knows a consumer: a new struct member, function or enum constant in the
header needs no change to this file.

usage: records_model.py uevent.h       the model as JSON (t/records.test reads it)
"""
import json
import re
import sys

# The struct each record member of union uevent_perf_body is, and what they nest.
ROOT = "uevent_perf_record"
# Other structs the bindings mirror field for field: the session's counters.
COUNTERS = ["uevent_session_stats", "uevent_stats"]
# struct uevent_perf_format, an options value of each binding.
FORMAT = "uevent_perf_format"
SESSION_OPTS = "uevent_session_opts"

# [bytes x N], [u64 x N], [u64 x N of K], [str], [str x N]
KINDS = re.compile(r"^\[(bytes|u64|str)(?:\s+x\s+([^\]]+?))?\]")
NAME = re.compile(r"\b([A-Za-z_]\w*)\b")


class Field:
    """One member of a struct or union, with what its note says."""

    def __init__(self, name, ctype, ptr, array, note, doc):
        self.name, self.ctype, self.ptr, self.array = name, ctype, ptr, array
        self.doc = doc                  # its comment, one line (None without one)
        self.kind = self.count = self.per = None
        m = KINDS.match(note or "")
        if m:
            self.kind = m.group(1)      # bytes, u64 or str
            if m.group(2):
                parts = m.group(2).split(" of ")
                self.count = parts[0].strip()       # N: elements (a member or a number)
                self.per = parts[1].strip() if len(parts) > 1 else None    # K: per group
        m = re.match(r"^\[(each (\w+)|length)\]", note or "")
        self.each = m.group(2) if m else None       # [each S]: entries walked with S_next
        self.length = bool(m) and m.group(1) == "length"
        m = re.match(r"^\[by (\w+)\]", note or "")
        self.by = m.group(1) if m else None     # [by F]: counts by the name F(index) gives
        m = re.match(r"^\[id (\w+)\]", note or "")
        self.idbit = m.group(1) if m else name.upper()    # sample_id: UEVENT_ID_<bit>
        # batches: [column] one element a row, [offset in T] a row's first element in the
        # tail array T, [tail CAP N] the rows' elements back to back (room CAP, N filled)
        m = re.match(r"^\[(column|offset in (\w+)|tail (\w+) (\w+))\]", note or "")
        self.column = bool(m)
        self.offset_in = m.group(2) if m else None
        self.tail = (m.group(3), m.group(4)) if m and m.group(3) else None
        self.nested = ctype[len("struct "):] if ctype.startswith("struct ") and not ptr else None
        self.union = ctype[len("union "):] if ctype.startswith("union ") else None

    def names(self):
        """The members its count and per expressions name."""
        return set(NAME.findall(self.count or "")) | set(NAME.findall(self.per or ""))

    def as_dict(self):
        d = {"name": self.name, "ctype": self.ctype}
        for k in ("ptr", "array", "length", "column"):
            if getattr(self, k):
                d[k] = True
        for k in ("kind", "count", "per", "each", "by", "nested", "union", "offset_in", "tail"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        return d


def parse(text):
    """(struct/union name -> list of Field, name -> [order] note's list) for every struct
    and union in the header text."""
    structs, order = {}, {}
    for m in re.finditer(r"\b(struct|union)\s+(\w+)\s*\{(.*?)\n\};", text, re.S):
        fields = []
        body = m.group(3)
        for d in re.finditer(r"([^;{}]*?);[ \t]*(/\*.*?\*/)?", body, re.S):
            decl = re.sub(r"/\*.*?\*/", " ", d.group(1), flags=re.S).strip()
            if not decl or decl.startswith("#"):
                continue
            note = d.group(2)[2:-2].strip() if d.group(2) else None
            doc = re.sub(r"\s+", " ", note) if note else None
            names = [n.strip() for n in decl.split(",")]
            first = re.match(r"(.*?)([\s*]+)(\w+)\s*(\[\w*\])?$", names[0])
            if not first:
                raise SystemExit(f"records_model: cannot read '{decl}'")
            ctype = re.sub(r"\s+", " ", first.group(1).replace("const ", "")).strip()
            decls = [first.group(2) + first.group(3) + (first.group(4) or "")] + names[1:]
            for dn in decls:
                nm = re.match(r"[\s*]*(\w+)\s*(\[\w*\])?", dn)
                # a comment after several declarators is the doc of none
                fields.append(Field(nm.group(1), ctype, "*" in dn, bool(nm.group(2)), note,
                                    doc if len(decls) == 1 else None))
                fields[-1].dim = nm.group(2)[1:-1] if nm.group(2) else None  # "16"; "" for []
        structs[m.group(2)] = fields
        om = re.match(r"\s*/\*\s*\[order ([^\]]+)\]", body)
        if om:
            order[m.group(2)] = [n.strip() for n in om.group(1).split(",")]
    return structs, order


class Model:
    """The header's structs (self.structs[name] is a list of Field) and what the
    emitters ask of them."""

    def __init__(self, text):
        self.header = text
        self.structs, self.order = parse(text)
        self.records = self.reachable()         # checks every pointer has a note

    def __getitem__(self, name):
        return self.structs[name]

    def __contains__(self, name):
        return name in self.structs

    def reachable(self):
        """Structs of the record model in dependency order (nested ones first)."""
        order, seen = [], set()

        def visit(name):
            if name in seen:
                return
            seen.add(name)
            for f in self.structs[name]:
                if (f.ptr or f.array) and not f.kind:
                    raise SystemExit(f"records_model: {name}.{f.name}: a pointer or array "
                                     f"member needs a [bytes x N], [u64 x N] or [str] note "
                                     f"in its comment")
                if f.nested:
                    visit(f.nested)
                if f.union:
                    visit(f.union)
            order.append(name)
        visit(ROOT)
        return order

    def union(self):
        """The name of the union a record's body is."""
        return next(f.union for f in self.structs[ROOT] if f.union)

    def union_members(self):
        """(member, struct) of each member of the body union, in order."""
        return [(f.name, f.nested) for f in self.structs[self.union()]]

    def payloads(self):
        """(UEVENT_TYPE_ suffix, struct) of each well-known payload type: UEVENT_TYPE_X
        is a struct uevent_x, decoded by uevent_x_decode()."""
        return [(t, "uevent_" + t.lower())
                for t in re.findall(r"\bUEVENT_TYPE_(\w+)\s*=", self.header)
                if "uevent_" + t.lower() in self.structs]

    def id_fields(self):
        """(member, UEVENT_ID_ suffix of the bit saying it is there) of struct
        uevent_sample_id."""
        return [(f.name, f.idbit) for f in self.structs["uevent_sample_id"]
                if f.name != "fields"]

    def entry_structs(self):
        """Structs whose entries a payload's [each S] member holds."""
        return [f.each for _, st in self.payloads() for f in self.structs[st] if f.each]

    def payload_fields(self, st):
        """A payload struct's members as the bindings have them: without the members
        that only give another's length, in [order] where one is given."""
        counts = {f.count for f in self.structs[st] if f.count}
        keep = [f for f in self.structs[st] if not f.length and f.name not in counts]
        if st in self.order:
            by = {f.name: f for f in keep}
            keep = [by[n] for n in self.order[st]]
        return keep

    def batches(self):
        """(struct, its [column], [offset in T] and [tail CAP N] members in order) of each
        batch struct, in the header's order."""
        return [(name, [f for f in fields if f.column]) for name, fields in self.structs.items()
                if any(f.column for f in fields)]

    def format_fields(self):
        """struct uevent_perf_format's numbers (the nested raw layout is the library's)."""
        return [f for f in self.structs[FORMAT] if f.name != "sz" and not f.nested]

    def enum_members(self, prefix):
        """(suffix, comment) of each constant PREFIX_X of the header's enums, in order."""
        return re.findall(r"\b%s(\w+)\s*=\s*\w+,?\s*(?:/\*\s*(.*?)\s*\*/)?" % prefix,
                          self.header, re.S)

    def member_docs(self, struct):
        """member -> its comment in the struct (one line), None where it has none."""
        return {f.name: f.doc for f in self.structs[struct]}

    def as_dict(self):
        """The model as plain data (what records_model.py prints)."""
        used = self.records + [s for _, s in self.payloads()] + self.entry_structs() + \
            COUNTERS + [FORMAT, SESSION_OPTS] + [s for s, _ in self.batches()]
        return {
            "structs": {s: [f.as_dict() for f in self.structs[s]] for s in dict.fromkeys(used)},
            "order": self.order,
            "root": ROOT,
            "union": self.union(),
            "union_members": [list(m) for m in self.union_members()],
            "payloads": [list(p) for p in self.payloads()],
            "id_fields": [list(i) for i in self.id_fields()],
            "counters": COUNTERS,
            "batches": [[s, [f.name for f in cols]] for s, cols in self.batches()],
        }


def expr(e, prefix, div="/"):
    """A count expression over the struct's members: names get the prefix."""
    return NAME.sub(lambda m: prefix + m.group(1), e).replace("/", div)


def load(path):
    with open(path, encoding="utf-8") as f:
        return Model(f.read())


def main(argv, emit=None):
    """An emitter's main: `EMITTER uevent.h > OUT` (emit(model) is OUT's text); without
    emit, the model as JSON."""
    if len(argv) != 2:
        raise SystemExit(f"usage: {argv[0]} uevent.h")
    model = load(argv[1])
    if emit is None:
        sys.stdout.write(json.dumps(model.as_dict(), indent=1) + "\n")
    else:
        sys.stdout.write(emit(model))


if __name__ == "__main__":
    main(sys.argv)
