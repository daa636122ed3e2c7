//! perfdata.rs - PerfData agrees with `uevent dump --json` field by field on every
//! t/data/*.perf.data; the golden perf records and ring image decode as t/perfdec.c says.
mod common;
use common::top;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use uevent::perf::{self, Format, Record};
use uevent::{ByteOrder, Payload, PerfData};

fn data(name: &str) -> PathBuf {
    top("top_srcdir").join("t/data").join(name)
}

// ---- a tiny JSON reader: what `uevent dump --json` prints, and no more ------------------

#[derive(Debug, Clone, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Num(i128),
    Str(String),
    Arr(Vec<J>),
    Obj(BTreeMap<String, J>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) {
        self.ws();
        assert_eq!(self.s.get(self.i), Some(&c), "expected '{}' at {}", c as char, self.i);
        self.i += 1;
    }
    fn peek(&mut self) -> u8 {
        self.ws();
        *self.s.get(self.i).expect("unexpected end of JSON")
    }
    fn value(&mut self) -> J {
        match self.peek() {
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                if self.peek() == b'}' {
                    self.i += 1;
                    return J::Obj(m);
                }
                loop {
                    let k = match self.value() {
                        J::Str(k) => k,
                        other => panic!("object key {:?}", other),
                    };
                    self.eat(b':');
                    let v = self.value();
                    // `dump --json` repeats "comm" and "lost" (summary, then the member
                    // object); like most JSON readers, the last one wins.
                    m.insert(k, v);
                    match self.peek() {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return J::Obj(m);
                        }
                        c => panic!("'{}' in object", c as char),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut v = Vec::new();
                if self.peek() == b']' {
                    self.i += 1;
                    return J::Arr(v);
                }
                loop {
                    v.push(self.value());
                    match self.peek() {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return J::Arr(v);
                        }
                        c => panic!("'{}' in array", c as char),
                    }
                }
            }
            b'"' => {
                self.i += 1;
                let mut out = Vec::new();
                loop {
                    let c = self.s[self.i];
                    self.i += 1;
                    match c {
                        b'"' => return J::Str(String::from_utf8_lossy(&out).into_owned()),
                        b'\\' => {
                            let e = self.s[self.i];
                            self.i += 1;
                            match e {
                                b'n' => out.push(b'\n'),
                                b't' => out.push(b'\t'),
                                b'r' => out.push(b'\r'),
                                b'b' => out.push(8),
                                b'f' => out.push(12),
                                b'u' => {
                                    let h = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
                                    self.i += 4;
                                    let ch = char::from_u32(u32::from_str_radix(h, 16).unwrap()).unwrap();
                                    out.extend_from_slice(ch.to_string().as_bytes());
                                }
                                other => out.push(other),
                            }
                        }
                        c => out.push(c),
                    }
                }
            }
            b't' | b'f' | b'n' => {
                for (word, v) in [("true", J::Bool(true)), ("false", J::Bool(false)), ("null", J::Null)] {
                    if self.s[self.i..].starts_with(word.as_bytes()) {
                        self.i += word.len();
                        return v;
                    }
                }
                panic!("bad literal at {}", self.i)
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && (self.s[self.i] == b'-' || self.s[self.i].is_ascii_digit()) {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                J::Num(t.parse().unwrap_or_else(|_| panic!("number '{}' at {}", t, start)))
            }
        }
    }
}

fn parse(line: &str) -> J {
    let mut p = Parser { s: line.as_bytes(), i: 0 };
    let v = p.value();
    p.ws();
    assert_eq!(p.i, line.len(), "trailing bytes after JSON");
    v
}

#[test]
fn json_reader_reads_what_it_must() {
    let v = parse(r#"{"a": [1, -2, 18446744073709551615], "b": "x\"\\\u0001y", "c": {}, "d": [], "e": true}"#);
    let mut m = BTreeMap::new();
    m.insert("a".into(), J::Arr(vec![J::Num(1), J::Num(-2), J::Num(u64::MAX as i128)]));
    m.insert("b".into(), J::Str("x\"\\\u{1}y".into()));
    m.insert("c".into(), J::Obj(BTreeMap::new()));
    m.insert("d".into(), J::Arr(vec![]));
    m.insert("e".into(), J::Bool(true));
    assert_eq!(v, J::Obj(m));
}

// ---- the Rust records, in the JSON's shape --------------------------------------------

fn n<T: Into<u64>>(v: T) -> J {
    J::Num(v.into() as i128)
}
fn hex(b: &[u8]) -> J {
    J::Str(b.iter().map(|x| format!("{:02x}", x)).collect())
}
fn nums(v: &[u64]) -> J {
    J::Arr(v.iter().map(|x| n(*x)).collect())
}
fn s(v: &str) -> J {
    J::Str(v.into())
}
fn obj(kv: Vec<(&str, J)>) -> J {
    let mut m = BTreeMap::new();
    for (k, v) in kv {
        assert!(m.insert(k.to_string(), v).is_none(), "test builds {} twice", k);
    }
    J::Obj(m)
}

fn sample_id_json(r: &Record) -> Option<J> {
    let i = r.sample_id();
    let mut kv = Vec::new();
    if let (Some(p), Some(t)) = (i.pid, i.tid) {
        kv.push(("pid", n(p)));
        kv.push(("tid", n(t)));
    }
    if let Some(v) = i.time {
        kv.push(("time", n(v)));
    }
    if let Some(v) = i.id {
        kv.push(("id", n(v)));
    }
    if let Some(v) = i.stream_id {
        kv.push(("stream_id", n(v)));
    }
    if let Some(v) = i.cpu {
        kv.push(("cpu", n(v)));
    }
    if let Some(v) = i.identifier {
        kv.push(("identifier", n(v)));
    }
    (!kv.is_empty()).then(|| obj(kv))
}

fn id_fields(u: &uevent::Record) -> u32 {
    use uevent::sys;
    let mut f = 0;
    let mut set = |on: bool, bit: sys::uevent_id_field| f |= if on { bit } else { 0 };
    set(u.tid.is_some(), sys::UEVENT_ID_TID);
    set(u.time.is_some(), sys::UEVENT_ID_TIME);
    set(u.id.is_some(), sys::UEVENT_ID_ID);
    set(u.stream_id.is_some(), sys::UEVENT_ID_STREAM_ID);
    set(u.cpu.is_some(), sys::UEVENT_ID_CPU);
    set(u.identifier.is_some(), sys::UEVENT_ID_IDENTIFIER);
    f
}

fn member_json(r: &Record) -> J {
    match r {
        Record::Sample(x) => {
            let b = &x.body;
            let rd = &b.read;
            obj(vec![
                ("identifier", n(b.identifier)),
                ("ip", n(b.ip)),
                ("pid", n(b.pid)),
                ("tid", n(b.tid)),
                ("time", n(b.time)),
                ("addr", n(b.addr)),
                ("id", n(b.id)),
                ("stream_id", n(b.stream_id)),
                ("cpu", n(b.cpu)),
                ("period", n(b.period)),
                (
                    "read",
                    obj(vec![
                        ("nr", n(rd.nr)),
                        ("time_enabled", n(rd.time_enabled)),
                        ("time_running", n(rd.time_running)),
                        ("value", n(rd.value)),
                        ("id", n(rd.id)),
                        ("lost", n(rd.lost)),
                        ("entry_size", n(rd.entry_size)),
                        ("values", J::Arr(rd.values.iter().map(|e| nums(e)).collect())),
                    ]),
                ),
                ("callchain_nr", n(b.callchain.len() as u64)),
                ("callchain", nums(&b.callchain)),
                ("raw_size", n(b.raw.len() as u64)),
                ("raw", hex(&b.raw)),
                ("branch_nr", n(b.branch_entries.len() as u64)),
                ("branch_hw_idx", n(b.branch_hw_idx)),
                (
                    "branch_entries",
                    J::Arr(
                        b.branch_entries
                            .iter()
                            .map(|e| nums(e))
                            .collect(),
                    ),
                ),
                ("branch_counters", nums(&b.branch_counters)),
                ("regs_user_abi", n(b.regs_user_abi)),
                ("regs_user_nr", n(b.regs_user.len() as u64)),
                ("regs_user", nums(&b.regs_user)),
                ("stack_user_size", n(b.stack_user.len() as u64)),
                ("stack_user", hex(&b.stack_user)),
                ("stack_user_dyn_size", n(b.stack_user_dyn_size)),
                ("weight", n(b.weight)),
                ("weight_var1", n(b.weight_var1)),
                ("weight_var2", n(b.weight_var2)),
                ("weight_var3", n(b.weight_var3)),
                ("data_src", n(b.data_src)),
                ("transaction", n(b.transaction)),
                ("regs_intr_abi", n(b.regs_intr_abi)),
                ("regs_intr_nr", n(b.regs_intr.len() as u64)),
                ("regs_intr", nums(&b.regs_intr)),
                ("phys_addr", n(b.phys_addr)),
                ("cgroup", n(b.cgroup)),
                ("data_page_size", n(b.data_page_size)),
                ("code_page_size", n(b.code_page_size)),
                ("tls_user_size", n(b.tls_user.len() as u64)),
                ("tls_user", hex(&b.tls_user)),
                ("tls_user_dyn_size", n(b.tls_user_dyn_size)),
                ("context_err", J::Num(b.context_err as i128)),
                ("context_trace_id", hex(&b.context_trace_id)),
                ("context_span_id", hex(&b.context_span_id)),
                ("context_flags", n(b.context_flags as u64)),
                ("aux_size", n(b.aux.len() as u64)),
                ("aux", hex(&b.aux)),
                ("event_index", J::Num(b.event_index as i128)),
            ])
        }
        Record::Mmap(x) => {
            let m = &x.body;
            obj(vec![
                ("pid", n(m.pid)),
                ("tid", n(m.tid)),
                ("addr", n(m.addr)),
                ("len", n(m.len)),
                ("pgoff", n(m.pgoff)),
                ("maj", n(m.maj)),
                ("min", n(m.min)),
                ("ino", n(m.ino)),
                ("ino_generation", n(m.ino_generation)),
                ("prot", n(m.prot)),
                ("flags", n(m.flags)),
                ("build_id_size", n(m.build_id.len() as u64)),
                ("build_id", hex(&m.build_id)),
                ("filename", s(&m.filename)),
            ])
        }
        Record::Comm(x) => obj(vec![("pid", n(x.body.pid)), ("tid", n(x.body.tid)), ("comm", s(&x.body.comm))]),
        Record::Task(x) => {
            let t = &x.body;
            obj(vec![("pid", n(t.pid)), ("ppid", n(t.ppid)), ("tid", n(t.tid)), ("ptid", n(t.ptid)), ("time", n(t.time))])
        }
        Record::Lost(x) => obj(vec![("id", n(x.body.id)), ("lost", n(x.body.lost))]),
        Record::Throttle(x) => {
            let t = &x.body;
            obj(vec![("time", n(t.time)), ("id", n(t.id)), ("stream_id", n(t.stream_id))])
        }
        Record::Switch(x) => obj(vec![
            ("next_prev_pid", n(x.body.next_prev_pid)),
            ("next_prev_tid", n(x.body.next_prev_tid)),
        ]),
        Record::Ksymbol(x) => {
            let k = &x.body;
            obj(vec![
                ("addr", n(k.addr)),
                ("len", n(k.len)),
                ("ksym_type", n(k.ksym_type)),
                ("flags", n(k.flags)),
                ("name", s(&k.name)),
            ])
        }
        Record::BpfEvent(x) => {
            let b = &x.body;
            obj(vec![("type", n(b.ty)), ("flags", n(b.flags)), ("id", n(b.id)), ("tag", hex(&b.tag))])
        }
        Record::UEvent(x) => {
            let u = &x.body;
            obj(vec![
                ("record_type", n(u.record_type)),
                ("misc", n(u.misc)),
                ("record_size", n(u.record_size)),
                ("format", n(u.format)),
                ("type", n(u.ty)),
                ("flags", n(u.flags)),
                ("size", n(u.data.len() as u64)),
                ("data", hex(&u.data)),
                (
                    "id",
                    obj(vec![
                        ("fields", n(id_fields(u))),
                        ("pid", n(u.pid.unwrap_or(0))),
                        ("tid", n(u.tid.unwrap_or(0))),
                        ("time", n(u.time.unwrap_or(0))),
                        ("id", n(u.id.unwrap_or(0))),
                        ("stream_id", n(u.stream_id.unwrap_or(0))),
                        ("cpu", n(u.cpu.unwrap_or(0))),
                        ("identifier", n(u.identifier.unwrap_or(0))),
                    ]),
                ),
                ("event_index", J::Num(u.event_index as i128)),
            ])
        }
        Record::Other(x) => obj(vec![("size", n(x.body.len() as u64)), ("data", hex(&x.body))]),
    }
}

const MEMBERS: [&str; 11] =
    ["sample", "mmap", "comm", "task", "lost", "throttle", "sw", "ksymbol", "bpf_event", "uevent", "other"];

/// The payload keys `dump --json` prints for a uevent, from the Rust decode.
fn payload_keys(u: &uevent::Record) -> Vec<(&'static str, J)> {
    let mut kv = vec![("type", n(u.ty))];
    match &u.payload {
        Payload::Text(t) => kv.push(("text", s(t))),
        Payload::Counter { name, value } => {
            kv.push(("name", s(name)));
            kv.push(("value", J::Num(*value as i128)));
        }
        Payload::RangeBegin { id, parent, flags, name } => {
            kv.push(("id", n(*id)));
            kv.push(("parent", n(*parent)));
            kv.push(("async", J::Bool(flags & 1 != 0)));
            kv.push(("name", s(name)));
        }
        Payload::RangeEnd { id, .. } => kv.push(("id", n(*id))),
        _ => {}
    }
    kv
}

/// Compares one record with its JSON line; returns how many values were compared.
fn agree(file: &str, i: usize, r: &Record, j: &J) -> usize {
    let J::Obj(top) = j else { panic!("{} line {}: not an object", file, i) };
    let at = format!("{} record {} ({})", file, i, r.name());
    let h = r.header();
    let name = if r.name().is_empty() { "unknown" } else { r.name() };
    assert_eq!(top["record"], s(name), "{}", at);
    assert_eq!(top["record_type"], n(h.ty), "{}", at);
    assert_eq!(top["misc"], n(h.misc), "{}", at);
    assert_eq!(top["size"], n(h.size), "{}", at);
    let id = r.sample_id();
    assert_eq!(top["time"], n(id.time.unwrap_or(0)), "{}", at);
    assert_eq!(top["pid"], n(id.pid.unwrap_or(0)), "{}", at);
    assert_eq!(top["tid"], n(id.tid.unwrap_or(0)), "{}", at);
    assert_eq!(top["cpu"], n(id.cpu.unwrap_or(0)), "{}", at);
    assert_eq!(top.get("sample_id"), sample_id_json(r).as_ref(), "{}: sample_id", at);
    let present: Vec<_> = MEMBERS.iter().filter(|m| top.contains_key(**m)).collect();
    // "comm" and "lost" are also summary keys of COMM and LOST records: a string / a number
    let present: Vec<_> = present.into_iter().filter(|m| matches!(top[**m], J::Obj(_))).collect();
    assert_eq!(present, vec![&r.member()], "{}: union member", at);
    let mine = member_json(r);
    let theirs = &top[r.member()];
    if let (J::Obj(a), J::Obj(b)) = (&mine, theirs) {
        let ka: Vec<_> = a.keys().collect();
        let kb: Vec<_> = b.keys().collect();
        assert_eq!(ka, kb, "{}: the member's keys", at);
        for k in a.keys() {
            assert_eq!(a[k], b[k], "{}: {}.{}", at, r.member(), k);
        }
    }
    let mut compared = match &mine {
        J::Obj(a) => a.len(),
        _ => 0,
    };
    if let Record::UEvent(u) = r {
        assert_eq!(top["transport"], s(&u.transport.map(|t| t.name()).unwrap_or_default()), "{}", at);
        for (k, v) in payload_keys(&u.body) {
            assert_eq!(top.get(k), Some(&v), "{}: payload key {}", at, k);
            compared += 1;
        }
    }
    compared
}

fn dump_json(path: &std::path::Path) -> Option<Vec<J>> {
    let tool = top("top_builddir").join("tools/uevent");
    if !tool.exists() {
        return None;
    }
    let out = Command::new(&tool).arg("dump").arg("--json").arg(path).output().unwrap();
    assert!(out.status.success(), "{:?}: {}", path, String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap().lines().map(parse).collect())
}

#[test]
fn perf_data_agrees_with_c_dump_json() {
    let mut files: Vec<_> = std::fs::read_dir(data(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".perf.data"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the perf.data golden files: {:?}", files);
    let (mut total, mut values, mut uevents, mut samples) = (0, 0, 0, 0);
    for f in &files {
        let path = data(f);
        let Some(json) = dump_json(&path) else {
            panic!("tools/uevent is not built (run make)");
        };
        let mut pd = PerfData::open(&path).unwrap();
        let mut recs = Vec::new();
        for r in pd.by_ref() {
            match r {
                Ok(r) => recs.push(r),
                Err(e) if perf::is_eproto(&e) => continue, // dump skips these too
                Err(e) => panic!("{}: {}", f, e),
            }
        }
        assert_eq!(recs.len(), json.len(), "{}: records", f);
        assert!(!recs.is_empty(), "{}", f);
        for (i, (r, j)) in recs.iter().zip(&json).enumerate() {
            values += agree(f, i, r, j);
            uevents += matches!(r, Record::UEvent(_)) as usize;
            samples += matches!(r, Record::Sample(_)) as usize;
        }
        total += recs.len();
        eprintln!("{}: {} records agree ({:?} byte order)", f, recs.len(), pd.byte_order());
    }
    eprintln!("{} records, {} member values compared, {} uevents, {} samples", total, values, uevents, samples);
    assert!(uevents > 0 && samples > 0);
}

#[test]
fn the_comparison_notices_a_difference() {
    let path = data("perf_records.le.perf.data");
    let json = dump_json(&path).expect("tools/uevent is not built (run make)");
    let recs: Vec<Record> = PerfData::open(&path).unwrap().collect::<Result<_, _>>().unwrap();
    let i = recs.iter().position(|r| matches!(r, Record::Sample(_))).unwrap();
    agree("same", i, &recs[i], &json[i]);
    let mut changed = Vec::new();
    for k in 0..3 {
        let mut r = recs[i].clone();
        let Record::Sample(s) = &mut r else { unreachable!() };
        match k {
            0 => s.body.callchain[1] += 1,
            1 => s.body.read.values[1].pop().map(|_| ()).unwrap(),
            _ => s.sample_id.cpu = None,
        }
        changed.push(std::panic::catch_unwind(|| agree("changed", i, &r, &json[i])).is_err());
    }
    assert_eq!(changed, [true; 3]);
}

// The attr of t/data/perf_records.*: t/data/make-perf-golden.py's FORMAT.
const ID_ALL: u64 = (1 << 1) | (1 << 2) | (1 << 6) | (1 << 9) | (1 << 7) | (1 << 16);
fn golden_format() -> Format {
    Format {
        sample_type: 0x3ffbfff,
        read_format: 31,
        branch_sample_type: 1 << 17,
        sample_regs_user: 0x7,
        sample_regs_intr: 0x3,
        sample_id_all: true,
        ..Format::default()
    }
}

#[test]
fn perf_records_bin_equal_perf_records_perf_data() {
    for (tag, bo) in [("le", ByteOrder::Little), ("be", ByteOrder::Big)] {
        let bin = std::fs::read(data(&format!("perf_records.{}.bin", tag))).unwrap();
        let mut recs = perf::decode_records(&bin, bo, &golden_format()).unwrap();
        assert_eq!(recs.len(), 16, "{}", tag);
        let pd = PerfData::open(data(&format!("perf_records.{}.perf.data", tag))).unwrap();
        assert_eq!(pd.byte_order(), bo);
        let from_file: Vec<Record> = pd
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .into_iter()
            .filter(|r| r.header().ty < 64) // perf's own records (HEADER_ATTR...) are not in .bin
            .collect();
        // a bare decode knows no events: its samples and uevents are of event -1, the
        // file's of 0
        for (a, b) in recs.iter_mut().zip(&from_file) {
            if let (Record::Sample(a), Record::Sample(b)) = (&mut *a, b) {
                assert_eq!((a.body.event_index, b.body.event_index), (-1, 0), "{}", tag);
                a.body.event_index = 0;
            }
            if let (Record::UEvent(a), Record::UEvent(b)) = (a, b) {
                assert_eq!((a.body.event_index, b.body.event_index), (-1, 0), "{}", tag);
                a.body.event_index = 0;
            }
        }
        assert_eq!(recs, from_file, "{}: same records from the .bin and the perf.data", tag);

        let Record::Sample(smp) = &recs[0] else { panic!("{}: first is {:?}", tag, recs[0]) };
        let b = &smp.body;
        assert_eq!((b.ip, b.pid, b.tid, b.time, b.period), (0x401000, 100, 101, 5000, 4000));
        assert_eq!(b.read.values, vec![vec![10, 7, 0], vec![20, 9, 3]]);
        assert_eq!(b.callchain, vec![0x401000, 0x401100, 0x401200]);
        assert_eq!(b.raw, b"RAWDATA\0\x01\x02\x03\x04");
        assert_eq!(b.branch_entries, vec![[0x1000, 0x2000, 3]]);
        assert_eq!((b.regs_user.clone(), b.regs_intr.clone()), (vec![11, 12, 13], vec![21, 22]));
        assert_eq!((b.weight, b.weight_var2, b.weight_var3), (300, 4, 5));
        assert_eq!(&b.tls_user[..22], b"TLS:trace-0123456789ab");
        assert_eq!(b.aux, b"AUXBYTES");
        assert_eq!(smp.sample_id.identifier, Some(7));
        let names: Vec<_> = recs.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "SAMPLE", "MMAP", "MMAP2", "MMAP2", "COMM", "FORK", "EXIT", "LOST", "LOST_SAMPLES",
                "THROTTLE", "UNTHROTTLE", "SWITCH", "SWITCH_CPU_WIDE", "KSYMBOL", "BPF_EVENT", "UEVENT"
            ]
        );
        let Record::Mmap(m) = &recs[3] else { panic!() };
        assert_eq!(m.body.build_id, (1..=20).collect::<Vec<u8>>());
        assert_eq!(m.body.filename, "/usr/lib/libbuild.so");
        assert!(matches!(&recs[7], Record::Lost(l) if l.body.lost == 42 && l.body.id == 7));
        assert!(matches!(&recs[14], Record::BpfEvent(b) if b.body.id == 42 && b.body.tag[0] == 0x6d));
        let u = recs[15].uevent().unwrap();
        assert_eq!(u.payload, Payload::Text("hello perf".into()));
        assert_eq!(recs[15].sample_id().time, Some(5000));
        let _ = ID_ALL;
    }
}

#[test]
fn ring_image_through_safe_ring_read() {
    let img = std::fs::read(data("ring.le.bin")).unwrap();
    assert_eq!(img.len(), 8192);
    if cfg!(target_endian = "big") {
        eprintln!("SKIP: the ring image is little-endian");
        return;
    }
    // an 8-aligned copy of the image, without unsafe
    let mut backing = vec![0u8; img.len() + 8];
    let off = backing.as_ptr().align_offset(8);
    let map = &mut backing[off..off + img.len()];
    map.copy_from_slice(&img);
    let word = |m: &[u8], at: usize| u64::from_ne_bytes(m[at..at + 8].try_into().unwrap());
    let (head, tail) = (word(map, 1024), word(map, 1032));
    assert_ne!(head, tail);

    let mut small = [0u8; 16];
    let e = perf::ring_read(map, &mut small).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(28), "ENOSPC: {}", e);
    let mut out = vec![0u8; 8192];
    let n = perf::ring_read(map, &mut out).unwrap();
    assert!(n > 0);
    assert_eq!(word(map, 1032), head, "data_tail advanced to data_head");
    let fmt = Format { sample_type: (1 << 1) | (1 << 2) | (1 << 7) | (1 << 16), sample_id_all: true, ..Format::default() };
    let recs = perf::decode_records(&out[..n], ByteOrder::Host, &fmt).unwrap();
    assert_eq!(recs.len(), 3);
    let u = recs[0].uevent().expect("a uevent first");
    assert_eq!(u.payload, Payload::Text("wrapped mark, longer than the 24 bytes left before the end".into()));
    assert_eq!(recs[0].sample_id().time, Some(1000));
    assert!(matches!(&recs[1], Record::Lost(l) if l.body.lost == 3 && l.body.id == 7 && l.sample_id.time == Some(2000)));
    assert_eq!(recs[2].uevent().unwrap().payload, Payload::Text("after".into()));
    assert_eq!(perf::ring_read(map, &mut out).unwrap(), 0, "empty after the read");

    // head - tail > size: corrupt, and the tail catches up
    let t = word(map, 1032);
    map[1024..1032].copy_from_slice(&(t + 8192).to_ne_bytes());
    let e = perf::ring_read(map, &mut out).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(word(map, 1032), t + 8192);
    // a bad record size
    map.copy_from_slice(&img);
    map[4096 + 4096 - 24..4096 + 4096 - 16].fill(0xff);
    assert_eq!(perf::ring_read(map, &mut out).unwrap_err().raw_os_error(), Some(22));
    // misaligned and too small maps are refused, not read
    let e = perf::ring_read(&mut backing[off + 1..off + 1 + 4096], &mut out).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let e = perf::ring_read(&mut backing[off..off + 64], &mut out).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(22));
}

#[test]
fn perf_data_errors() {
    let e = PerfData::open(data("no-such.perf.data")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(perf::errno(&e), Some(2));
    let dir = std::env::temp_dir().join(format!("uevent-rs-pd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.perf.data");
    std::fs::write(&bad, b"PERFILE2 but nothing that follows makes sense at all....").unwrap();
    let e = PerfData::open(&bad).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{}", e);
    // a pipe-mode file cut short (a killed writer): its whole records, then one ENODATA
    let full = std::fs::read(data("perf_records.le.perf.data")).unwrap();
    std::fs::write(&bad, &full[..full.len() - 20]).unwrap();
    let whole = PerfData::open(data("perf_records.le.perf.data")).unwrap().count();
    let items: Vec<_> = PerfData::open(&bad).unwrap().collect();
    assert_eq!(items.len(), whole, "the last record cut: the others, then the error");
    assert!(items[..whole - 1].iter().all(|r| r.is_ok()));
    assert_eq!(perf::errno(items[whole - 1].as_ref().unwrap_err()), Some(61), "ENODATA");
    let (mut off, mut sample_at, mut uevent_at) = (16, 0, 0);
    while off + 8 <= full.len() {
        let ty = u32::from_le_bytes(full[off..off + 4].try_into().unwrap());
        match ty {
            9 if sample_at == 0 => sample_at = off,
            63 => uevent_at = off,
            _ => {}
        }
        off += u16::from_le_bytes(full[off + 6..off + 8].try_into().unwrap()) as usize;
    }
    assert!(sample_at > 0 && uevent_at > 0);
    if cfg!(target_endian = "little") {
        // a uevent of an unknown format: one EPROTO error, and reading goes on
        let mut f = full.clone();
        f[uevent_at + 8] = 9;
        std::fs::write(&bad, &f).unwrap();
        let items: Vec<_> = PerfData::open(&bad).unwrap().collect();
        assert_eq!(items.len(), whole);
        let errs: Vec<_> = items.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errs.len(), 1);
        assert!(perf::is_eproto(errs[0]), "{}", errs[0]);
        // a sample whose callchain_nr overruns it: the records before, one error, the end
        let mut f = full.clone();
        f[sample_at + 152..sample_at + 160].copy_from_slice(&0x10000u64.to_le_bytes());
        std::fs::write(&bad, &f).unwrap();
        let mut pd = PerfData::open(&bad).unwrap();
        let items: Vec<_> = pd.by_ref().collect();
        let (last, good) = items.split_last().unwrap();
        assert!(!good.is_empty() && good.iter().all(|r| r.is_ok() && r.as_ref().unwrap().header().ty >= 64));
        let e = last.as_ref().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{}", e);
        assert_eq!(perf::errno(e), Some(22));
        assert!(e.to_string().contains(&format!("offset {}", sample_at)), "{}", e);
        assert!(pd.next().is_none(), "nothing after a corrupt record");
    }
    let e = PerfData::open("bad\0path").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    std::fs::remove_dir_all(&dir).unwrap();
}
