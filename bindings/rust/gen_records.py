#!/usr/bin/env python3
"""gen_records.py - the Rust crate's records.rs from the record model (libuevent/records_model.py).

Owned record structs (one per record struct of uevent.h) and their makers, the Record
enum, the payload types and decoders, ByteOrder, Transport, SymbolSource, SessionBuilder
and Format.
The readers of the notes' kinds they call are uevent/src/perf/notes.rs. records.rs is
committed (cargo builds without Python): `make records` writes it, t/records.test fails
when it is stale. usage: gen_records.py libuevent/uevent.h > uevent/src/perf/records.rs
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libuevent"))
import records_model as rm  # noqa: E402


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



def rust(model):
    members = model.union_members()
    bodies = [st for m, st in members if m not in RUST_HAND_MADE]
    union = model.union()
    skip = {rm.ROOT, union, "uevent_sample_id", "uevent_record", "uevent_perf_bytes"}
    order = [s for s in model.records if s not in skip] + rm.COUNTERS
    out = ["// records.rs - generated from libuevent/uevent.h by bindings/rust/gen_records.py:",
           "// the owned record structs, one per record struct of uevent.h, and their makers. A",
           "// C member that only counts another's elements is that Vec's length. Do not edit:",
           "// change uevent.h and run `make records`.",
           "#![allow(clippy::all)]",
           "",
           "use std::io;",
           "use std::mem::MaybeUninit;",
           "use std::os::raw::c_int;",
           "use std::path::{Path, PathBuf};",
           "",
           "use super::notes::{bytes, groups, groups_of, sized_str, u64s};",
           "use super::{cstr, Header, Rec};",
           "use crate::check;",
           "use uevent_sys as sys;",
           ""]
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
                n = rm.expr(f.count, "s.")
                fields.append((rn, "Vec<u8>",
                               f"{c}[..(({n}) as usize).min({c}.len())].to_vec()"))
            elif f.kind == "bytes":
                fields.append((rn, "Vec<u8>", f"bytes({c}, ({rm.expr(f.count, 's.')}) as u64)"))
            elif f.kind == "u64" and f.per and f.per.isdigit():
                fields.append((rn, f"Vec<[u64; {f.per}]>",
                               f"groups_of::<{f.per}>({c}, ({rm.expr(f.count, 's.')}) as u64, bo)"))
            elif f.kind == "u64" and f.per:
                fields.append((rn, "Vec<Vec<u64>>",
                               f"groups({c}, ({rm.expr(f.count, 's.')}) as u64, "
                               f"({rm.expr(f.per, 's.')}) as u64, bo)"))
            elif f.kind == "u64":
                fields.append((rn, "Vec<u64>", f"u64s({c}, ({rm.expr(f.count, 's.')}) as u64, bo)"))
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
    out += rust_byte_order(model) + rust_transports(model) + rust_symbol_sources(model)
    out += rust_session_opts(model) + rust_symbolizer_opts(model) + rust_format(model)
    out += rust_uevent_record(model) + rust_columns(model)
    return "\n".join(out)


# batch struct -> (its Rust column struct, the Rust name of its tail array, its doc)
RUST_COLUMNS = {
    "uevent_sample_batch": ("SampleColumns", "chains", [
        "Samples as columns: row `i` of every `Vec` but `chains` is sample `i`; its callchain",
        "is `chains[chain_off[i]..][..chain_len[i]]` ([`SampleColumns::callchain`]). Fields",
        "the event did not sample are 0; `event_index` as [`super::Sample`]'s."]),
    "uevent_record_batch": ("UeventColumns", "data", [
        "Uevents as columns: row `i` is uevent `i`; its payload is",
        "`data[data_off[i]..][..data_len[i]]` ([`UeventColumns::payload`]), `ty` its payload",
        "type, `flags` `UEVENT_RECORD_*`, `transport` the raw `enum uevent_transport`",
        "([`super::Transport::from_raw`]). Sample-id fields the record lacks are 0."]),
}


def rust_columns(model):
    """The owned column structs of the batch structs ([column], [offset in T] and
    [tail CAP N] members), and batch_columns!(m), which gives batch.rs's macro m each
    one's columns: m!(Rust struct, C struct, [rust: c, ...], offset, tail: c_tail, CAP, N)."""
    out, calls = [], []
    for st, cols in model.batches():
        t, tail_name, doc = RUST_COLUMNS[st]
        out += [f"/// {d}" for d in doc]
        out += ["#[derive(Debug, Clone, Default, PartialEq, Eq)]", f"pub struct {t} {{"]
        plain, off, tail = [], None, None
        for f in cols:
            if f.tail:
                tail = f
                d = f.doc.split("] ", 1)[1]
                out += [f"    /// {d[0].upper() + d[1:]}.", f"    pub {tail_name}: Vec<{RUST_INT[f.ctype]}>,"]
                continue
            rn = RUST_NAME.get(f.name, f.name)
            out.append(f"    pub {rn}: Vec<{RUST_INT[f.ctype]}>,")
            if f.offset_in:
                off = f
            else:
                plain.append(f"{rn}: {f.name}" + ("_" if f.name in RUST_KEYWORDS else ""))
        out += ["}", ""]
        calls.append(f"        $m!({t}, {st}, [{', '.join(plain)}], {off.name}, "
                     f"{tail_name}: {tail.name}, {tail.tail[0]}, {tail.tail[1]});")
    out += ["/// `m!(Rust struct, C struct, [rust: c, ...], offset, tail: c_tail, cap, filled)` for",
            "/// each batch struct (batch.rs's `columns!`).",
            "macro_rules! batch_columns {", "    ($m:ident) => {"] + calls + ["    };", "}",
            "pub(crate) use batch_columns;", ""]
    return out


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



def rust_byte_order(model):
    bos = [b for b, _ in model.enum_members("UEVENT_BO_")]
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


def rust_transports(model):
    # the transports that carry events: all but AUTO (a way to choose), NONE and COUNT
    ts = [t for t, _ in model.enum_members("UEVENT_TRANSPORT_") if t not in ("AUTO", "NONE", "COUNT")]
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



def rust_symbol_sources(model):
    """SymbolSource: enum uevent_symbol_source, each constant with its comment."""
    ss = model.enum_members("UEVENT_SYM_")
    name = {s: "".join(w.capitalize() for w in s.lower().split("_")) for s, _ in ss}
    out = ["/// Where a symbolizer's name came from (`enum uevent_symbol_source`).",
           "#[derive(Debug, Clone, Copy, PartialEq, Eq)]", "pub enum SymbolSource {"]
    for s, doc in ss:
        out += ([f"    /// {doc[:1].upper()}{doc[1:]}."] if doc else []) + [f"    {name[s]},"]
    out += ["    /// A value this crate does not know.", "    Other(u32),", "}", "",
            "impl SymbolSource {", "    /// The source of C enum value `n`.",
            "    pub fn from_raw(n: u32) -> SymbolSource {", "        match n {"]
    out += [f"            sys::UEVENT_SYM_{s} => SymbolSource::{name[s]}," for s, _ in ss]
    out += ["            n => SymbolSource::Other(n),", "        }", "    }", "}", ""]
    return out


rm.FORMAT = "uevent_perf_format"
FORMAT_BOOL = {"sample_id_all"}

# Options of struct uevent_session_opts whose SessionBuilder setter is written by hand.
RUST_OPT_HAND = {"pid", "transports", "sample_period_ns"}


def rust_session_opts(model):
    fl = [f for f in model["uevent_session_opts"] if f.name != "sz"]

    def ty(f):
        if f.ptr:
            return "Option<PathBuf>" if f.name.endswith("_path") else "Option<String>"
        return RUST_INT[f.ctype]
    doc = model.member_docs("uevent_session_opts")
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
    for flag, c in model.enum_members("UEVENT_SESSION_"):
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


def rust_symbolizer_opts(model):
    """SymbolizerOpts: struct uevent_symbolizer_opts's members (paths as PathBufs) and one
    boolean per UEVENT_SYMBOLIZER_* flag, with their comments as docs."""
    st = "uevent_symbolizer_opts"
    fl = [f for f in model[st] if f.name not in ("sz", "flags")]
    flags = model.enum_members("UEVENT_SYMBOLIZER_")
    doc = model.member_docs(st)
    out = ["/// Options of a symbolizer (`struct uevent_symbolizer_opts`); the library copies",
           "/// the paths.", "#[derive(Debug, Clone, Default)]", "pub struct SymbolizerOpts {"]
    for f in fl:
        out += [f"    /// {doc[f.name]}",
                f"    pub {f.name}: {'Option<PathBuf>' if f.ptr else RUST_INT[f.ctype]},"]
    for flag, c in flags:
        out += [f"    /// `UEVENT_SYMBOLIZER_{flag}`: {re.sub(chr(92) + 's+', ' ', c)}",
                f"    pub {flag.lower()}: bool,"]
    out += ["}", "", "impl SymbolizerOpts {",
            "    /// The C options, pointing into `keep` (the paths), which must outlive them.",
            f"    pub(crate) fn to_c(&self, keep: &mut Vec<std::ffi::CString>) -> io::Result<sys::{st}> {{",
            "        let mut path = |p: &Option<PathBuf>| -> io::Result<*const std::os::raw::c_char> {",
            "            let Some(p) = p else { return Ok(std::ptr::null()) };",
            "            keep.push(super::c_path(p)?);",
            "            Ok(keep[keep.len() - 1].as_ptr())", "        };",
            f"        Ok(sys::{st} {{", f"            sz: std::mem::size_of::<sys::{st}>() as _,",
            "            flags: 0" + "".join(
                f"\n                | if self.{flag.lower()} {{ sys::UEVENT_SYMBOLIZER_{flag} }} else {{ 0 }}"
                for flag, _ in flags) + ","]
    out += [f"            {f.name}: path(&self.{f.name})?," if f.ptr else f"            {f.name}: self.{f.name},"
            for f in fl]
    out += ["        })", "    }", "}", ""]
    return out


def rust_format(model):
    doc = model.member_docs(rm.FORMAT)
    fl = model.format_fields()
    ty = {f.name: "bool" if f.name in FORMAT_BOOL else RUST_INT[f.ctype] for f in fl}
    out = ["/// What shapes a record of an event (`struct uevent_perf_format`): its attr's",
           "/// sample_type, read_format, branch_sample_type, register masks and sample_id_all.",
           "#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]", "pub struct Format {"]
    for f in fl:
        out += [f"    /// {doc[f.name]}"] if doc[f.name] else []
        out.append(f"    pub {f.name}: {ty[f.name]},")
    out += ["}", "", "impl Format {",
            "    /// The C struct (its raw layout zeroed: the library fills that).",
            f"    pub(crate) fn raw(&self) -> sys::{rm.FORMAT} {{",
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
    members = model.union_members()
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
    for st in model.entry_structs():
        parent = next(p for _, p in model.payloads() if any(f.each == st for f in model[p]))
        fl = [(f.name,) + val(f, "e") for f in model.payload_fields(st)]
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
    for t, st in model.payloads():
        fl = [(f.name,) + val(f, "o") for f in model.payload_fields(st)]
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


if __name__ == "__main__":
    rm.main(sys.argv, rust)
