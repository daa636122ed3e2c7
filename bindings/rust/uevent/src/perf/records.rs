// records.rs - generated from libuevent/uevent.h by bindings/rust/gen_records.py:
// the owned record structs, one per record struct of uevent.h, and their makers. A
// C member that only counts another's elements is that Vec's length. Do not edit:
// change uevent.h and run `make records`.
#![allow(clippy::all)]

use std::io;
use std::mem::MaybeUninit;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};

use super::notes::{bytes, groups, groups_of, sized_str, u64s};
use super::{cstr, Header, Rec};
use crate::check;
use uevent_sys as sys;

/// `struct uevent_perf_read`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Read {
    pub nr: u64,
    pub time_enabled: u64,
    pub time_running: u64,
    pub value: u64,
    pub id: u64,
    pub lost: u64,
    pub values: Vec<Vec<u64>>,
    pub entry_size: u32,
}

/// Copies a `struct uevent_perf_read` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn read_from(s: &sys::uevent_perf_read, bo: c_int) -> Read {
    let _ = bo;
    Read {
        nr: s.nr,
        time_enabled: s.time_enabled,
        time_running: s.time_running,
        value: s.value,
        id: s.id,
        lost: s.lost,
        values: groups(s.values, (s.nr) as u64, (s.entry_size / 8) as u64, bo),
        entry_size: s.entry_size,
    }
}

/// `struct uevent_perf_sample`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sample {
    pub identifier: u64,
    pub ip: u64,
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub addr: u64,
    pub id: u64,
    pub stream_id: u64,
    pub cpu: u32,
    pub period: u64,
    pub read: Read,
    pub callchain: Vec<u64>,
    pub raw: Vec<u8>,
    pub branch_hw_idx: u64,
    pub branch_entries: Vec<[u64; 3]>,
    pub branch_counters: Vec<u64>,
    pub regs_user_abi: u64,
    pub regs_user: Vec<u64>,
    pub stack_user: Vec<u8>,
    pub stack_user_dyn_size: u64,
    pub weight: u64,
    pub weight_var1: u32,
    pub weight_var2: u16,
    pub weight_var3: u16,
    pub data_src: u64,
    pub transaction: u64,
    pub regs_intr_abi: u64,
    pub regs_intr: Vec<u64>,
    pub phys_addr: u64,
    pub cgroup: u64,
    pub data_page_size: u64,
    pub code_page_size: u64,
    pub tls_user: Vec<u8>,
    pub tls_user_dyn_size: u64,
    pub context_err: i32,
    pub context_trace_id: Vec<u8>,
    pub context_span_id: Vec<u8>,
    pub context_flags: u8,
    pub aux: Vec<u8>,
    pub event_index: i32,
}

/// Copies a `struct uevent_perf_sample` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn sample_from(s: &sys::uevent_perf_sample, bo: c_int) -> Sample {
    let _ = bo;
    Sample {
        identifier: s.identifier,
        ip: s.ip,
        pid: s.pid,
        tid: s.tid,
        time: s.time,
        addr: s.addr,
        id: s.id,
        stream_id: s.stream_id,
        cpu: s.cpu,
        period: s.period,
        read: read_from(&s.read, bo),
        callchain: u64s(s.callchain, (s.callchain_nr) as u64, bo),
        raw: bytes(s.raw, (s.raw_size) as u64),
        branch_hw_idx: s.branch_hw_idx,
        branch_entries: groups_of::<3>(s.branch_entries, (s.branch_nr) as u64, bo),
        branch_counters: u64s(s.branch_counters, (s.branch_nr) as u64, bo),
        regs_user_abi: s.regs_user_abi,
        regs_user: u64s(s.regs_user, (s.regs_user_nr) as u64, bo),
        stack_user: bytes(s.stack_user, (s.stack_user_size) as u64),
        stack_user_dyn_size: s.stack_user_dyn_size,
        weight: s.weight,
        weight_var1: s.weight_var1,
        weight_var2: s.weight_var2,
        weight_var3: s.weight_var3,
        data_src: s.data_src,
        transaction: s.transaction,
        regs_intr_abi: s.regs_intr_abi,
        regs_intr: u64s(s.regs_intr, (s.regs_intr_nr) as u64, bo),
        phys_addr: s.phys_addr,
        cgroup: s.cgroup,
        data_page_size: s.data_page_size,
        code_page_size: s.code_page_size,
        tls_user: bytes(s.tls_user, (s.tls_user_size) as u64),
        tls_user_dyn_size: s.tls_user_dyn_size,
        context_err: s.context_err,
        context_trace_id: s.context_trace_id[..((16) as usize).min(s.context_trace_id.len())].to_vec(),
        context_span_id: s.context_span_id[..((8) as usize).min(s.context_span_id.len())].to_vec(),
        context_flags: s.context_flags,
        aux: bytes(s.aux, (s.aux_size) as u64),
        event_index: s.event_index,
    }
}

/// `struct uevent_perf_mmap`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mmap {
    pub pid: u32,
    pub tid: u32,
    pub addr: u64,
    pub len: u64,
    pub pgoff: u64,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub ino_generation: u64,
    pub prot: u32,
    pub flags: u32,
    pub build_id: Vec<u8>,
    pub filename: String,
}

/// Copies a `struct uevent_perf_mmap` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn mmap_from(s: &sys::uevent_perf_mmap, bo: c_int) -> Mmap {
    let _ = bo;
    Mmap {
        pid: s.pid,
        tid: s.tid,
        addr: s.addr,
        len: s.len,
        pgoff: s.pgoff,
        maj: s.maj,
        min: s.min,
        ino: s.ino,
        ino_generation: s.ino_generation,
        prot: s.prot,
        flags: s.flags,
        build_id: s.build_id[..((s.build_id_size) as usize).min(s.build_id.len())].to_vec(),
        filename: cstr(s.filename),
    }
}

/// `struct uevent_perf_comm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comm {
    pub pid: u32,
    pub tid: u32,
    pub comm: String,
}

/// Copies a `struct uevent_perf_comm` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn comm_from(s: &sys::uevent_perf_comm, bo: c_int) -> Comm {
    let _ = bo;
    Comm {
        pid: s.pid,
        tid: s.tid,
        comm: cstr(s.comm),
    }
}

/// `struct uevent_perf_task`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Task {
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub ptid: u32,
    pub time: u64,
}

/// Copies a `struct uevent_perf_task` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn task_from(s: &sys::uevent_perf_task, bo: c_int) -> Task {
    let _ = bo;
    Task {
        pid: s.pid,
        ppid: s.ppid,
        tid: s.tid,
        ptid: s.ptid,
        time: s.time,
    }
}

/// `struct uevent_perf_lost`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lost {
    pub id: u64,
    pub lost: u64,
}

/// Copies a `struct uevent_perf_lost` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn lost_from(s: &sys::uevent_perf_lost, bo: c_int) -> Lost {
    let _ = bo;
    Lost {
        id: s.id,
        lost: s.lost,
    }
}

/// `struct uevent_perf_throttle`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Throttle {
    pub time: u64,
    pub id: u64,
    pub stream_id: u64,
}

/// Copies a `struct uevent_perf_throttle` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn throttle_from(s: &sys::uevent_perf_throttle, bo: c_int) -> Throttle {
    let _ = bo;
    Throttle {
        time: s.time,
        id: s.id,
        stream_id: s.stream_id,
    }
}

/// `struct uevent_perf_switch`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Switch {
    pub next_prev_pid: u32,
    pub next_prev_tid: u32,
}

/// Copies a `struct uevent_perf_switch` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn switch_from(s: &sys::uevent_perf_switch, bo: c_int) -> Switch {
    let _ = bo;
    Switch {
        next_prev_pid: s.next_prev_pid,
        next_prev_tid: s.next_prev_tid,
    }
}

/// `struct uevent_perf_ksymbol`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ksymbol {
    pub addr: u64,
    pub len: u32,
    pub ksym_type: u16,
    pub flags: u16,
    pub name: String,
}

/// Copies a `struct uevent_perf_ksymbol` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn ksymbol_from(s: &sys::uevent_perf_ksymbol, bo: c_int) -> Ksymbol {
    let _ = bo;
    Ksymbol {
        addr: s.addr,
        len: s.len,
        ksym_type: s.ksym_type,
        flags: s.flags,
        name: cstr(s.name),
    }
}

/// `struct uevent_perf_bpf_event`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BpfEvent {
    pub ty: u16,
    pub flags: u16,
    pub id: u32,
    pub tag: Vec<u8>,
}

/// Copies a `struct uevent_perf_bpf_event` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn bpf_event_from(s: &sys::uevent_perf_bpf_event, bo: c_int) -> BpfEvent {
    let _ = bo;
    BpfEvent {
        ty: s.type_,
        flags: s.flags,
        id: s.id,
        tag: s.tag[..((8) as usize).min(s.tag.len())].to_vec(),
    }
}

/// `struct uevent_session_stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionStats {
    pub records: u64,
    pub uevents: u64,
    pub lost: u64,
    pub lost_samples: u64,
    pub truncated: u64,
    pub corrupt: u64,
    pub bytes: u64,
    pub trimmed: u64,
    pub lost_counted: u64,
    pub usdt_objects: u64,
    pub wakeups: u64,
    pub samples: u64,
    pub bpf_events: u64,
    pub lost_records: u64,
}

/// Copies a `struct uevent_session_stats` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn session_stats_from(s: &sys::uevent_session_stats, bo: c_int) -> SessionStats {
    let _ = bo;
    SessionStats {
        records: s.records,
        uevents: s.uevents,
        lost: s.lost,
        lost_samples: s.lost_samples,
        truncated: s.truncated,
        corrupt: s.corrupt,
        bytes: s.bytes,
        trimmed: s.trimmed,
        lost_counted: s.lost_counted,
        usdt_objects: s.usdt_objects,
        wakeups: s.wakeups,
        samples: s.samples,
        bpf_events: s.bpf_events,
        lost_records: s.lost_records,
    }
}

/// `struct uevent_stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub emitted: u64,
    pub bytes: u64,
    pub unobserved: u64,
    pub dropped: u64,
    pub dropped_by: Vec<(String, u64)>,
}

/// Copies a `struct uevent_stats` the library filled.
///
/// # Safety
/// Its pointer members must point at as many elements as its notes say (the C
/// decoder checked them against the record).
pub(crate) unsafe fn stats_from(s: &sys::uevent_stats, bo: c_int) -> Stats {
    let _ = bo;
    Stats {
        emitted: s.emitted,
        bytes: s.bytes,
        unobserved: s.unobserved,
        dropped: s.dropped,
        dropped_by: s.dropped_by.iter().enumerate().map(|(i, n)| (cstr(sys::uevent_drop_reason_name(i as c_int)), *n)).collect(),
    }
}

/// The sample_id fields of a record (a sample's own, or the trailer of the others);
/// those the event did not ask for are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleId {
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
    pub identifier: Option<u64>,
}

impl SampleId {
    pub(crate) fn from_c(i: &sys::uevent_sample_id) -> SampleId {
        let has = |bit: sys::uevent_id_field| i.fields & bit != 0;
        SampleId {
            pid: has(sys::UEVENT_ID_TID).then_some(i.pid),
            tid: has(sys::UEVENT_ID_TID).then_some(i.tid),
            time: has(sys::UEVENT_ID_TIME).then_some(i.time),
            id: has(sys::UEVENT_ID_ID).then_some(i.id),
            stream_id: has(sys::UEVENT_ID_STREAM_ID).then_some(i.stream_id),
            cpu: has(sys::UEVENT_ID_CPU).then_some(i.cpu),
            identifier: has(sys::UEVENT_ID_IDENTIFIER).then_some(i.identifier),
        }
    }
}

/// One decoded perf record, owned. The variant is the `union uevent_perf_body` member
/// the C library filled: `UEvent` also covers uevents that came as usdt or user_events
/// tracepoint samples; `Other` holds the body of any other record type (perf's own
/// records, numbers 64 and up, included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// Union member `sample`.
    Sample(Rec<Box<Sample>>),
    /// Union member `mmap`.
    Mmap(Rec<Mmap>),
    /// Union member `comm`.
    Comm(Rec<Comm>),
    /// Union member `task`.
    Task(Rec<Task>),
    /// Union member `lost`.
    Lost(Rec<Lost>),
    /// Union member `throttle`.
    Throttle(Rec<Throttle>),
    /// Union member `sw`.
    Switch(Rec<Switch>),
    /// Union member `ksymbol`.
    Ksymbol(Rec<Ksymbol>),
    /// Union member `bpf_event`.
    BpfEvent(Rec<BpfEvent>),
    /// Union member `uevent`.
    UEvent(Rec<crate::Record>),
    /// Union member `other`.
    Other(Rec<Vec<u8>>),
}

impl Record {
    pub fn header(&self) -> Header {
        match self {
            Record::Sample(r) => r.header,
            Record::Mmap(r) => r.header,
            Record::Comm(r) => r.header,
            Record::Task(r) => r.header,
            Record::Lost(r) => r.header,
            Record::Throttle(r) => r.header,
            Record::Switch(r) => r.header,
            Record::Ksymbol(r) => r.header,
            Record::BpfEvent(r) => r.header,
            Record::UEvent(r) => r.header,
            Record::Other(r) => r.header,
        }
    }
    pub fn sample_id(&self) -> SampleId {
        match self {
            Record::Sample(r) => r.sample_id,
            Record::Mmap(r) => r.sample_id,
            Record::Comm(r) => r.sample_id,
            Record::Task(r) => r.sample_id,
            Record::Lost(r) => r.sample_id,
            Record::Throttle(r) => r.sample_id,
            Record::Switch(r) => r.sample_id,
            Record::Ksymbol(r) => r.sample_id,
            Record::BpfEvent(r) => r.sample_id,
            Record::UEvent(r) => r.sample_id,
            Record::Other(r) => r.sample_id,
        }
    }
    /// The name of the C union member this record's body mirrors ("sample", "sw", ...).
    pub fn member(&self) -> &'static str {
        match self {
            Record::Sample(_) => "sample",
            Record::Mmap(_) => "mmap",
            Record::Comm(_) => "comm",
            Record::Task(_) => "task",
            Record::Lost(_) => "lost",
            Record::Throttle(_) => "throttle",
            Record::Switch(_) => "sw",
            Record::Ksymbol(_) => "ksymbol",
            Record::BpfEvent(_) => "bpf_event",
            Record::UEvent(_) => "uevent",
            Record::Other(_) => "other",
        }
    }
}

/// Copies the body the C record's `body` says is set (`enum uevent_perf_body_kind`).
///
/// # Safety
/// That member's pointers must be as the C decoder left them, checked against the record.
pub(crate) unsafe fn record_of(r: &sys::uevent_perf_record, header: Header,
                               transport: Option<Transport>, sample_id: SampleId,
                               bo: ByteOrder) -> Record {
    let b = bo.raw();
    let _ = b;
    match r.body as sys::uevent_perf_body_kind {
        sys::UEVENT_BODY_SAMPLE => Record::Sample(Rec { header, transport, sample_id, body: Box::new(sample_from(&r.u.sample, b)) }),
        sys::UEVENT_BODY_MMAP => Record::Mmap(Rec { header, transport, sample_id, body: mmap_from(&r.u.mmap, b) }),
        sys::UEVENT_BODY_COMM => Record::Comm(Rec { header, transport, sample_id, body: comm_from(&r.u.comm, b) }),
        sys::UEVENT_BODY_TASK => Record::Task(Rec { header, transport, sample_id, body: task_from(&r.u.task, b) }),
        sys::UEVENT_BODY_LOST => Record::Lost(Rec { header, transport, sample_id, body: lost_from(&r.u.lost, b) }),
        sys::UEVENT_BODY_THROTTLE => Record::Throttle(Rec { header, transport, sample_id, body: throttle_from(&r.u.throttle, b) }),
        sys::UEVENT_BODY_SW => Record::Switch(Rec { header, transport, sample_id, body: switch_from(&r.u.sw, b) }),
        sys::UEVENT_BODY_KSYMBOL => Record::Ksymbol(Rec { header, transport, sample_id, body: ksymbol_from(&r.u.ksymbol, b) }),
        sys::UEVENT_BODY_BPF_EVENT => Record::BpfEvent(Rec { header, transport, sample_id, body: bpf_event_from(&r.u.bpf_event, b) }),
        sys::UEVENT_BODY_UEVENT => Record::UEvent(Rec { header, transport, sample_id, body: uevent_record::record_from(&r.u.uevent, bo) }),
        _ => Record::Other(Rec { header, transport, sample_id, body: bytes(r.u.other.data, r.u.other.size as u64) }),
    }
}

/// `struct uevent_jit_debug_entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitDebugEntry {
    pub addr: u64,
    pub line: u32,
    pub discrim: u32,
    pub file: String,
}

unsafe fn each_uevent_jit_debug_entry(info: &sys::uevent_jit_debug_info, b: c_int) -> io::Result<Vec<JitDebugEntry>> {
    let mut out = Vec::new();
    let mut off: u32 = 0;
    loop {
        let mut e = MaybeUninit::<sys::uevent_jit_debug_entry>::zeroed();
        let r = sys::uevent_jit_debug_entry_next(info, b, &mut off, e.as_mut_ptr());
        check(r)?;
        if r == 0 {
            return Ok(out);
        }
        let e = e.assume_init();
        out.push(JitDebugEntry { addr: e.addr, line: e.line, discrim: e.discrim, file: sized_str(e.file, e.file_len) });
    }
}

/// A decoded payload: one variant per well-known payload type, with the members of
/// its codec struct in uevent.h.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// `struct uevent_text`.
    Text(String),
    /// `struct uevent_range_begin`.
    RangeBegin { id: u64, parent: u64, flags: u32, name: String },
    /// `struct uevent_range_end`.
    RangeEnd { id: u64, flags: u32 },
    /// `struct uevent_counter`.
    Counter { name: String, value: i64 },
    /// `struct uevent_jit_code_load`.
    JitCodeLoad { code_addr: u64, code_size: u64, code_index: u64, name: String },
    /// `struct uevent_jit_code_move`.
    JitCodeMove { code_index: u64, old_addr: u64, new_addr: u64, code_size: u64 },
    /// `struct uevent_jit_code_unload`.
    JitCodeUnload { code_addr: u64, code_size: u64, code_index: u64 },
    /// `struct uevent_jit_debug_info`.
    JitDebugInfo { code_addr: u64, entries: Vec<JitDebugEntry> },
    /// `struct uevent_trace_context`.
    TraceContext { trace_id: [u8; 16], span_id: [u8; 8], flags: u8 },
    /// A type this crate does not decode (an application's own), as bytes.
    Raw { ty: u32, data: Vec<u8> },
}

/// Decodes a payload of type `ty` with libuevent's decoders.
pub fn decode(ty: u32, data: &[u8], bo: ByteOrder) -> io::Result<Payload> {
    let b = bo.raw();
    macro_rules! dec {
        ($st:ident, $f:ident) => {{
            let mut o = MaybeUninit::<sys::$st>::zeroed();
            check(sys::$f(data.as_ptr().cast(), data.len() as _, b, o.as_mut_ptr()))?;
            o.assume_init()
        }};
    }
    // SAFETY: each decoder fills its struct from data alone, and its pointers point
    // into data (or at entries the walk checks) while they are copied out here.
    unsafe {
        Ok(match ty {
            sys::UEVENT_TYPE_TEXT => {
                let o = dec!(uevent_text, uevent_text_decode);
                Payload::Text(sized_str(o.text, o.len))
            }
            sys::UEVENT_TYPE_RANGE_BEGIN => {
                let o = dec!(uevent_range_begin, uevent_range_begin_decode);
                Payload::RangeBegin { id: o.id, parent: o.parent, flags: o.flags, name: sized_str(o.name, o.name_len) }
            }
            sys::UEVENT_TYPE_RANGE_END => {
                let o = dec!(uevent_range_end, uevent_range_end_decode);
                Payload::RangeEnd { id: o.id, flags: o.flags }
            }
            sys::UEVENT_TYPE_COUNTER => {
                let o = dec!(uevent_counter, uevent_counter_decode);
                Payload::Counter { name: sized_str(o.name, o.name_len), value: o.value }
            }
            sys::UEVENT_TYPE_JIT_CODE_LOAD => {
                let o = dec!(uevent_jit_code_load, uevent_jit_code_load_decode);
                Payload::JitCodeLoad { code_addr: o.code_addr, code_size: o.code_size, code_index: o.code_index, name: sized_str(o.name, o.name_len) }
            }
            sys::UEVENT_TYPE_JIT_CODE_MOVE => {
                let o = dec!(uevent_jit_code_move, uevent_jit_code_move_decode);
                Payload::JitCodeMove { code_index: o.code_index, old_addr: o.old_addr, new_addr: o.new_addr, code_size: o.code_size }
            }
            sys::UEVENT_TYPE_JIT_CODE_UNLOAD => {
                let o = dec!(uevent_jit_code_unload, uevent_jit_code_unload_decode);
                Payload::JitCodeUnload { code_addr: o.code_addr, code_size: o.code_size, code_index: o.code_index }
            }
            sys::UEVENT_TYPE_JIT_DEBUG_INFO => {
                let o = dec!(uevent_jit_debug_info, uevent_jit_debug_info_decode);
                Payload::JitDebugInfo { code_addr: o.code_addr, entries: each_uevent_jit_debug_entry(&o, b)? }
            }
            sys::UEVENT_TYPE_TRACE_CONTEXT => {
                let o = dec!(uevent_trace_context, uevent_trace_context_decode);
                Payload::TraceContext { trace_id: o.trace_id, span_id: o.span_id, flags: o.flags }
            }
            _ => Payload::Raw { ty, data: data.to_vec() },
        })
    }
}

/// The byte order a payload or record was written in (`enum uevent_byte_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    Host,
    Little,
    Big,
}

impl ByteOrder {
    /// The C enum value.
    pub(crate) fn raw(self) -> c_int {
        (match self {
            ByteOrder::Host => sys::UEVENT_BO_HOST,
            ByteOrder::Little => sys::UEVENT_BO_LITTLE,
            ByteOrder::Big => sys::UEVENT_BO_BIG,
        }) as c_int
    }

    /// The byte order a reader reports (any other value: Host).
    pub(crate) fn from_raw(bo: c_int) -> ByteOrder {
        match bo as sys::uevent_byte_order {
            sys::UEVENT_BO_LITTLE => ByteOrder::Little,
            sys::UEVENT_BO_BIG => ByteOrder::Big,
            _ => ByteOrder::Host,
        }
    }
}

/// A transport that carries uevents (`enum uevent_transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Prctl,
    UserEvents,
    Usdt,
    Ftrace,
    File,
}

impl Transport {
    pub(super) const ALL: [Transport; 5] = [
        Transport::Prctl,
        Transport::UserEvents,
        Transport::Usdt,
        Transport::Ftrace,
        Transport::File,
    ];

    /// The C enum value.
    pub fn raw(self) -> u32 {
        match self {
            Transport::Prctl => sys::UEVENT_TRANSPORT_PRCTL,
            Transport::UserEvents => sys::UEVENT_TRANSPORT_USER_EVENTS,
            Transport::Usdt => sys::UEVENT_TRANSPORT_USDT,
            Transport::Ftrace => sys::UEVENT_TRANSPORT_FTRACE,
            Transport::File => sys::UEVENT_TRANSPORT_FILE,
        }
    }

    /// The transport of C enum value `t`, if it is one that carries events.
    pub fn from_raw(t: u32) -> Option<Transport> {
        match t {
            sys::UEVENT_TRANSPORT_PRCTL => Some(Transport::Prctl),
            sys::UEVENT_TRANSPORT_USER_EVENTS => Some(Transport::UserEvents),
            sys::UEVENT_TRANSPORT_USDT => Some(Transport::Usdt),
            sys::UEVENT_TRANSPORT_FTRACE => Some(Transport::Ftrace),
            sys::UEVENT_TRANSPORT_FILE => Some(Transport::File),
            _ => None,
        }
    }

    /// Its name as the library spells it ("usdt", "user_events", ...).
    pub fn name(self) -> String {
        crate::transport_name(self.raw() as i32)
    }
}

/// Where a symbolizer's name came from (`enum uevent_symbol_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolSource {
    /// Not named (dso may still be known).
    None,
    /// An ELF symbol table (the file's or its debug file's).
    Elf,
    /// Kallsyms or a KSYMBOL record.
    Kernel,
    /// A UEVENT_TYPE_JIT_CODE_LOAD in the stream.
    JitUevent,
    /// A jitdump file.
    Jitdump,
    /// A perf-PID.map file.
    PerfMap,
    /// A value this crate does not know.
    Other(u32),
}

impl SymbolSource {
    /// The source of C enum value `n`.
    pub fn from_raw(n: u32) -> SymbolSource {
        match n {
            sys::UEVENT_SYM_NONE => SymbolSource::None,
            sys::UEVENT_SYM_ELF => SymbolSource::Elf,
            sys::UEVENT_SYM_KERNEL => SymbolSource::Kernel,
            sys::UEVENT_SYM_JIT_UEVENT => SymbolSource::JitUevent,
            sys::UEVENT_SYM_JITDUMP => SymbolSource::Jitdump,
            sys::UEVENT_SYM_PERF_MAP => SymbolSource::PerfMap,
            n => SymbolSource::Other(n),
        }
    }
}

/// Options of a live session (`struct uevent_session_opts`); `open()` starts it.
#[derive(Debug, Clone, Default)]
pub struct SessionBuilder {
    pub(super) pid: i32,
    pub(super) flags: u32,
    pub(super) transports: u32,
    pub(super) ring_pages: u32,
    pub(super) usdt_path: Option<PathBuf>,
    pub(super) usdt_max_payload: u32,
    pub(super) wakeup_events: u32,
    pub(super) sample_period_ns: u64,
    pub(super) tls_user: u32,
    pub(super) cpus: Option<String>,
}

impl SessionBuilder {
    /// `ring_pages`: data pages per ring, a power of 2; 0: from the CPUs and the locked-memory limit
    pub fn ring_pages(mut self, n: u32) -> Self {
        self.ring_pages = n;
        self
    }
    /// `usdt_path`: object with the libuevent:emitN notes; NULL: ours
    pub fn usdt_path<P: AsRef<Path>>(mut self, p: P) -> Self {
        self.usdt_path = Some(p.as_ref().to_path_buf());
        self
    }
    /// `usdt_max_payload`: most bytes fetched per usdt mark (a mark's size class, 16..4096, caps it too); 0: 4096, cut to what the kernel takes (3056 on 6.x)
    pub fn usdt_max_payload(mut self, n: u32) -> Self {
        self.usdt_max_payload = n;
        self
    }
    /// `wakeup_events`: wake the reader (and __fd()) every N marks or samples, or when a ring is half full; 0: every mark, every 64 samples. A reader blocked in __next() looks every 100 ms
    pub fn wakeup_events(mut self, n: u32) -> Self {
        self.wakeup_events = n;
        self
    }
    /// `tls_user`: with samples: PERF_SAMPLE_TLS_USER bytes
    pub fn tls_user(mut self, n: u32) -> Self {
        self.tls_user = n;
        self
    }
    /// `cpus`: CPUs to watch, as perf -C: "0-3,7"; NULL: all (-EINVAL for a bad list)
    pub fn cpus(mut self, s: &str) -> Self {
        self.cpus = Some(s.to_owned());
        self
    }
    /// `UEVENT_SESSION_ALL_RECORDS`: also return COMM, FORK, EXIT, samples...
    pub fn all_records(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_ALL_RECORDS } else { self.flags & !sys::UEVENT_SESSION_ALL_RECORDS };
        self
    }
    /// `UEVENT_SESSION_OVERWRITE`: flight recorder: read the rings on demand
    pub fn overwrite(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_OVERWRITE } else { self.flags & !sys::UEVENT_SESSION_OVERWRITE };
        self
    }
    /// `UEVENT_SESSION_NO_INHERIT`: do not follow new children and threads
    pub fn no_inherit(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_NO_INHERIT } else { self.flags & !sys::UEVENT_SESSION_NO_INHERIT };
        self
    }
    /// `UEVENT_SESSION_BPF_EVENTS`: ask for BPF_EVENT and KSYMBOL records
    pub fn bpf_events(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_BPF_EVENTS } else { self.flags & !sys::UEVENT_SESSION_BPF_EVENTS };
        self
    }
    /// `UEVENT_SESSION_DISABLED`: start disabled: call __enable()
    pub fn disabled(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_DISABLED } else { self.flags & !sys::UEVENT_SESSION_DISABLED };
        self
    }
    /// `UEVENT_SESSION_CALLCHAIN`: samples carry the user stack's callchain (PERF_SAMPLE_CALLCHAIN; frame pointers)
    pub fn callchain(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_CALLCHAIN } else { self.flags & !sys::UEVENT_SESSION_CALLCHAIN };
        self
    }
    /// `UEVENT_SESSION_CONTEXT`: samples carry the sampled thread's OTEP 4947 context (context_*): the kernel's PR_PERF_TLS_AREA where it has it, else a BPF program (root or CAP_BPF+CAP_PERFMON, kernel BTF); without either, reason() says why and the rest is recorded
    pub fn context(mut self, on: bool) -> Self {
        self.flags = if on { self.flags | sys::UEVENT_SESSION_CONTEXT } else { self.flags & !sys::UEVENT_SESSION_CONTEXT };
        self
    }
    /// Sets the numbers of `o` (its strings are the caller's to set).
    pub(super) fn numbers_into(&self, o: &mut sys::uevent_session_opts) {
        o.pid = self.pid;
        o.flags = self.flags;
        o.transports = self.transports;
        o.ring_pages = self.ring_pages;
        o.usdt_max_payload = self.usdt_max_payload;
        o.wakeup_events = self.wakeup_events;
        o.sample_period_ns = self.sample_period_ns;
        o.tls_user = self.tls_user;
    }
}

/// Options of a symbolizer (`struct uevent_symbolizer_opts`); the library copies
/// the paths.
#[derive(Debug, Clone, Default)]
pub struct SymbolizerOpts {
    /// enum uevent_byte_order of the uevent payloads fed (uevent_perf_file__byte_order()); 0: host
    pub byte_order: i32,
    /// also look here for separate debug files: DIR/.build-id/xx/rest.debug, DIR/the .gnu_debuglink name; NULL: only beside the file, its .debug/ and /usr/lib/debug
    pub debug_dir: Option<PathBuf>,
    /// kernel symbols; NULL: /proc/kallsyms
    pub kallsyms: Option<PathBuf>,
    /// where perf-PID.map files are; NULL: /tmp
    pub perf_map_dir: Option<PathBuf>,
    /// prefix for the paths the stream names (a recording of a container or another machine's copy); NULL: /
    pub root: Option<PathBuf>,
    /// `UEVENT_SYMBOLIZER_NO_LINES`: do not read DWARF line tables
    pub no_lines: bool,
    /// `UEVENT_SYMBOLIZER_NO_KERNEL`: do not read kallsyms
    pub no_kernel: bool,
    /// `UEVENT_SYMBOLIZER_NO_PERF_MAP`: do not read perf-PID.map files
    pub no_perf_map: bool,
    /// `UEVENT_SYMBOLIZER_NO_JITDUMP`: do not read jitdump files
    pub no_jitdump: bool,
    /// `UEVENT_SYMBOLIZER_PROC_MAPS`: the processes are alive here (a live session): what they mapped before the recording began comes from /proc/PID/maps
    pub proc_maps: bool,
    /// `UEVENT_SYMBOLIZER_NO_DEMANGLE`: names as the binary has them (default: C++ and Rust names demangled as perf prints them)
    pub no_demangle: bool,
}

impl SymbolizerOpts {
    /// The C options, pointing into `keep` (the paths), which must outlive them.
    pub(crate) fn to_c(&self, keep: &mut Vec<std::ffi::CString>) -> io::Result<sys::uevent_symbolizer_opts> {
        let mut path = |p: &Option<PathBuf>| -> io::Result<*const std::os::raw::c_char> {
            let Some(p) = p else { return Ok(std::ptr::null()) };
            keep.push(super::c_path(p)?);
            Ok(keep[keep.len() - 1].as_ptr())
        };
        Ok(sys::uevent_symbolizer_opts {
            sz: std::mem::size_of::<sys::uevent_symbolizer_opts>() as _,
            flags: 0
                | if self.no_lines { sys::UEVENT_SYMBOLIZER_NO_LINES } else { 0 }
                | if self.no_kernel { sys::UEVENT_SYMBOLIZER_NO_KERNEL } else { 0 }
                | if self.no_perf_map { sys::UEVENT_SYMBOLIZER_NO_PERF_MAP } else { 0 }
                | if self.no_jitdump { sys::UEVENT_SYMBOLIZER_NO_JITDUMP } else { 0 }
                | if self.proc_maps { sys::UEVENT_SYMBOLIZER_PROC_MAPS } else { 0 }
                | if self.no_demangle { sys::UEVENT_SYMBOLIZER_NO_DEMANGLE } else { 0 },
            byte_order: self.byte_order,
            debug_dir: path(&self.debug_dir)?,
            kallsyms: path(&self.kallsyms)?,
            perf_map_dir: path(&self.perf_map_dir)?,
            root: path(&self.root)?,
        })
    }
}

/// What shapes a record of an event (`struct uevent_perf_format`): its attr's
/// sample_type, read_format, branch_sample_type, register masks and sample_id_all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Format {
    pub sample_type: u64,
    pub read_format: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_regs_intr: u64,
    pub sample_id_all: bool,
    /// UEVENT_PERF_*
    pub flags: u32,
}

impl Format {
    /// The C struct (its raw layout zeroed: the library fills that).
    pub(crate) fn raw(&self) -> sys::uevent_perf_format {
        let mut f: sys::uevent_perf_format = crate::zeroed_out();
        f.sample_type = self.sample_type;
        f.read_format = self.read_format;
        f.branch_sample_type = self.branch_sample_type;
        f.sample_regs_user = self.sample_regs_user;
        f.sample_regs_intr = self.sample_regs_intr;
        f.sample_id_all = self.sample_id_all as u32;
        f.flags = self.flags;
        f
    }
}

/// The crate's `Record`, in a module of its own (perf's Record is the perf record).
pub(crate) mod uevent_record {
    use super::*;

    /// One PERF_RECORD_UEVENT (or file-transport record), decoded (`struct uevent_record`).
    /// Sample-id fields the record lacks are `None`; `payload` is `Raw` for types that
    /// did not decode.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Record {
        pub record_type: u32,
        pub misc: u16,
        pub record_size: u16,
        pub format: u32,
        pub ty: u32,
        pub flags: u32,
        pub data: Vec<u8>,
        pub payload: Payload,
        pub pid: Option<u32>,
        pub tid: Option<u32>,
        pub time: Option<u64>,
        pub id: Option<u64>,
        pub stream_id: Option<u64>,
        pub cpu: Option<u32>,
        pub identifier: Option<u64>,
        pub event_index: i32,
    }

    pub(crate) fn record_from(r: &sys::uevent_record, bo: ByteOrder) -> Record {
        // SAFETY: data has size bytes inside the record the decoder checked.
        let data = unsafe { bytes(r.data, r.size as u64) };
        let payload = decode(r.type_, &data, bo)
            .unwrap_or_else(|_| Payload::Raw { ty: r.type_, data: data.clone() });
        let id = SampleId::from_c(&r.id);
        Record {
            record_type: r.record_type,
            misc: r.misc,
            record_size: r.record_size,
            format: r.format,
            ty: r.type_,
            flags: r.flags,
            data,
            payload,
            pid: id.pid,
            tid: id.tid,
            time: id.time,
            id: id.id,
            stream_id: id.stream_id,
            cpu: id.cpu,
            identifier: id.identifier,
            event_index: r.event_index,
        }
    }
}

/// Samples as columns: row `i` of every `Vec` but `chains` is sample `i`; its callchain
/// is `chains[chain_off[i]..][..chain_len[i]]` ([`SampleColumns::callchain`]). Fields
/// the event did not sample are 0; `event_index` as [`super::Sample`]'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleColumns {
    pub time: Vec<u64>,
    pub pid: Vec<u32>,
    pub tid: Vec<u32>,
    pub cpu: Vec<u32>,
    pub event_index: Vec<i32>,
    pub ip: Vec<u64>,
    pub period: Vec<u64>,
    pub chain_off: Vec<u64>,
    pub chain_len: Vec<u32>,
    /// Every row's callchain, back to back.
    pub chains: Vec<u64>,
    pub context_trace_hi: Vec<u64>,
    pub context_trace_lo: Vec<u64>,
    pub context_span: Vec<u64>,
}

/// Uevents as columns: row `i` is uevent `i`; its payload is
/// `data[data_off[i]..][..data_len[i]]` ([`UeventColumns::payload`]), `ty` its payload
/// type, `flags` `UEVENT_RECORD_*`, `transport` the raw `enum uevent_transport`
/// ([`super::Transport::from_raw`]). Sample-id fields the record lacks are 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UeventColumns {
    pub time: Vec<u64>,
    pub pid: Vec<u32>,
    pub tid: Vec<u32>,
    pub cpu: Vec<u32>,
    pub event_index: Vec<i32>,
    pub ty: Vec<u32>,
    pub flags: Vec<u32>,
    pub transport: Vec<u32>,
    pub data_off: Vec<u64>,
    pub data_len: Vec<u32>,
    /// Every row's payload, back to back.
    pub data: Vec<u8>,
}

/// `m!(Rust struct, C struct, [rust: c, ...], offset, tail: c_tail, cap, filled)` for
/// each batch struct (batch.rs's `columns!`).
macro_rules! batch_columns {
    ($m:ident) => {
        $m!(SampleColumns, uevent_sample_batch, [time: time, pid: pid, tid: tid, cpu: cpu, event_index: event_index, ip: ip, period: period, chain_len: chain_len, context_trace_hi: context_trace_hi, context_trace_lo: context_trace_lo, context_span: context_span], chain_off, chains: chain, chain_cap, chain_n);
        $m!(UeventColumns, uevent_record_batch, [time: time, pid: pid, tid: tid, cpu: cpu, event_index: event_index, ty: type_, flags: flags, transport: transport, data_len: data_len], data_off, data: data, data_cap, data_n);
    };
}
pub(crate) use batch_columns;
