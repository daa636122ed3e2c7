//! perf.rs - reading the perf stream: live [`Session`]s, `perf.data` files ([`PerfData`]),
//! perf ring buffers ([`ring_read`]), all decoded by libuevent into owned [`Record`]s.
//!
//! Every record the C library returns lives in its buffers only until the next call, so
//! [`Record`] copies out what it points to (callchains, raw data, names...). For zero-copy
//! reading, [`Session::next_ref`] and [`PerfData::next_ref`] lend a [`RecordRef`] tied to
//! the reader's `&mut` borrow, which the compiler keeps from outliving the next call.
//! For bulk reading, [`PerfData::read_batch`], [`PerfData::read_all_columns`] and
//! [`Session::read_batch`] have C fill the samples and uevents straight into the `Vec`s
//! of a [`Columns`] (no Rust code per record).
//!
//! ```no_run
//! use std::time::Duration;
//! use uevent::{perf::Record, Payload, Session};
//!
//! let mut s = Session::builder().open()?;            // this process, every usable transport
//! uevent::mark("hello")?;
//! while let Some(rec) = s.next_timeout(Duration::from_millis(100))? {
//!     if let Record::UEvent(u) = &rec {
//!         if let Payload::Text(t) = &u.body.payload {
//!             println!("{:?} {}", u.sample_id.time, t);
//!         }
//!     }
//! }
//! for rec in uevent::PerfData::open("perf.data")? {
//!     println!("{}", rec?.name());
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! No `Pin` here, on purpose: nothing the kernel (or C) writes to lives in Rust memory.
//! The enabled word the kernel flips for usdt and user_events is inside libuevent, the
//! ring buffers are mapped and owned by the C session, and the session object itself is
//! a C heap allocation this crate only holds a pointer to. [`ring_read`] lends a slice
//! for the duration of one call. Readers are `Send` (the C objects have no thread
//! affinity and no thread-local state once open) but not `Sync`.
use std::ffi::{CStr, CString};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use crate::{cstr, cstr_opt, err, sys};

// Transport (enum uevent_transport's carriers, from_raw() and name()) and SessionBuilder
// (struct uevent_session_opts) with its setters are generated as well, in records.rs.

// ---- records ---------------------------------------------------------------------------

/// `perf_event_header`: the record's type (`PERF_RECORD_*`), misc bits and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub ty: u32,
    pub misc: u16,
    pub size: u16,
}

/// A record's header, sample_id and body. `transport` is the transport that carried a
/// uevent (`None` for other records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec<T> {
    pub header: Header,
    pub transport: Option<Transport>,
    pub sample_id: SampleId,
    pub body: T,
}

// SampleId, the owned bodies (Sample, Read, Mmap, Comm, Task, Lost, Throttle, Switch,
// Ksymbol, BpfEvent) and their makers, and Format (struct uevent_perf_format) are
// generated from uevent.h's structs; notes.rs reads what their pointer members point at.
mod notes;
mod records;
pub use records::*;

// Columns (of SampleColumns and UeventColumns, generated in records.rs) and the batch
// readers PerfData::read_batch, PerfData::read_all_columns and Session::read_batch.
mod batch;
pub use batch::{is_cut, partial_columns, Columns, PartialRead};

// Record (one variant per union member), its header(), sample_id() and member(), and
// payload decoding (Payload, decode) are generated too.
impl Record {
    /// The record type's name ("SAMPLE", "MMAP2", "UEVENT", ...) or "" if unknown.
    pub fn name(&self) -> &'static str {
        record_name(self.header().ty)
    }
    /// The uevent this record carries, if it is one.
    pub fn uevent(&self) -> Option<&crate::Record> {
        match self {
            Record::UEvent(r) => Some(&r.body),
            _ => None,
        }
    }
}

/// The name libuevent gives record type `ty` ("SAMPLE", "UEVENT", "FINISHED_ROUND"...),
/// "" if it has none.
pub fn record_name(ty: u32) -> &'static str {
    // SAFETY: uevent_perf_record_name returns NULL or a pointer to a static string.
    let p = unsafe { sys::uevent_perf_record_name(ty) };
    if p.is_null() {
        return "";
    }
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// A decoded record still inside the reader's buffer: valid until the reader's next
/// call, which the borrow checker enforces. [`RecordRef::to_record`] copies it out.
#[derive(Clone, Copy)]
pub struct RecordRef<'a> {
    rec: &'a sys::uevent_perf_record,
    bo: ByteOrder,
}

impl<'a> RecordRef<'a> {
    pub fn header(&self) -> Header {
        Header { ty: self.rec.type_, misc: self.rec.misc, size: self.rec.size }
    }
    pub fn sample_id(&self) -> SampleId {
        SampleId::from_c(&self.rec.id)
    }
    pub fn transport(&self) -> Option<Transport> {
        Transport::from_raw(self.rec.transport)
    }
    /// The C record, for fields this crate does not wrap; pointers in it stay valid
    /// as long as this borrow.
    pub fn raw(&self) -> &'a sys::uevent_perf_record {
        self.rec
    }
    /// For a uevent: its payload type and bytes, without copying.
    pub fn uevent_payload(&self) -> Option<(u32, &'a [u8])> {
        if self.rec.body != sys::UEVENT_BODY_UEVENT {
            return None;
        }
        // SAFETY: type says u.uevent is the member set; data has size bytes inside the
        // reader's buffer, which the 'a borrow keeps alive and unchanged.
        let u = unsafe { &self.rec.u.uevent };
        let data = if u.data.is_null() || u.size == 0 {
            &[][..]
        } else {
            unsafe { std::slice::from_raw_parts(u.data as *const u8, u.size as usize) }
        };
        Some((u.type_, data))
    }

    /// Copies the record out of the reader's buffer.
    pub fn to_record(self) -> Record {
        // SAFETY: the union member read in each arm is the one body says the
        // C decoder filled; pointers and sizes come from that decoder, which checked
        // them against the record's bounds.
        unsafe { record_of(self.rec, self.header(), self.transport(), self.sample_id(), self.bo) }
    }
}

impl std::fmt::Debug for RecordRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordRef")
            .field("header", &self.header())
            .field("sample_id", &self.sample_id())
            .finish_non_exhaustive()
    }
}

/// A path as C takes it: EINVAL (saying so) for one with a NUL byte.
pub(crate) fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| with_reason(err(-22), &format!("{}: path contains a NUL byte", path.display())))
}

/// The error inside an `io::Error` that carries context as well as an errno: the kind
/// is the errno's, [`errno`] finds the number.
#[derive(Debug)]
pub struct Errno {
    pub errno: i32,
    pub context: String,
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.context, io::Error::from_raw_os_error(self.errno))
    }
}

impl std::error::Error for Errno {}

/// The errno of an error this crate returned, with or without context.
pub fn errno(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        let i = e.get_ref()?;
        i.downcast_ref::<Errno>().or_else(|| i.downcast_ref::<PartialRead>().map(|p| &p.error)).map(|x| x.errno)
    })
}

/// An io::Error of errno `e` that also says why, keeping the errno's kind.
pub(crate) fn with_reason(e: io::Error, why: &str) -> io::Error {
    match e.raw_os_error() {
        Some(n) if !why.is_empty() => io::Error::new(e.kind(), Errno { errno: n, context: why.to_string() }),
        _ => e,
    }
}

// ---- live sessions ---------------------------------------------------------------------

impl SessionBuilder {
    /// Watch process `pid` (and, unless `no_inherit`, its new threads and children).
    /// The default is this process.
    pub fn pid(mut self, pid: u32) -> Self {
        self.pid = pid as i32;
        self
    }
    /// Watch every process (one event per CPU; needs privileges).
    pub fn all_processes(mut self) -> Self {
        self.pid = -1;
        self
    }
    /// Listen on these transports only (default: every usable one).
    pub fn transports(mut self, ts: &[Transport]) -> Self {
        self.transports = ts.iter().fold(0, |m, t| m | 1 << t.raw());
        self
    }
    /// Also take cpu-clock samples at this period.
    pub fn sample_period(mut self, d: Duration) -> Self {
        self.sample_period_ns = d.as_nanos().min(u64::MAX as u128) as u64;
        self
    }

    /// Opens the session. The error keeps the errno's kind (`PermissionDenied` for
    /// EACCES/EPERM, `InvalidInput` for EINVAL...) and says what the library tried.
    pub fn open(&self) -> io::Result<Session> {
        self.start(None)
    }

    /// Starts `argv` (`argv[0]` searched in PATH) under a new session that watches it:
    /// the child runs only once the session's events are on it, so its first marks are
    /// heard (as `uevent record -- CMD`). [`Session::pid`] is the child's pid; reap it
    /// with waitpid. A `pid` set on the builder is `InvalidInput`; a program that
    /// cannot run is its exec error (`NotFound`...), the child already reaped.
    pub fn spawn<S: AsRef<std::ffi::OsStr>>(&self, argv: &[S]) -> io::Result<Session> {
        let args = argv
            .iter()
            .map(|a| CString::new(a.as_ref().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "spawn: a NUL in argv"))?;
        if args.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "spawn: argv is empty"));
        }
        let mut ptrs: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
        ptrs.push(std::ptr::null_mut());
        // args and ptrs outlive the call; C only reads them (the child execs them)
        self.start(Some(&ptrs))
    }

    fn start(&self, argv: Option<&[*mut c_char]>) -> io::Result<Session> {
        let path = self.usdt_path.as_deref().map(c_path).transpose()?;
        let cpus = self.cpus.as_deref().map(CString::new).transpose().map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "cpus: a NUL in the CPU list")
        })?;
        let mut opts = crate::zeroed_out::<sys::uevent_session_opts>();
        self.numbers_into(&mut opts);
        // Only read during uevent_session__open (it resolves the path there).
        opts.usdt_path = path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        opts.cpus = cpus.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        let s = match argv {
            Some(a) => unsafe { sys::uevent_session__spawn(&opts, a.as_ptr()) },
            None => unsafe { sys::uevent_session__open(&opts) },
        };
        if s.is_null() {
            let e = io::Error::last_os_error();
            // The reason is thread-local, set by the open that just failed here.
            return Err(with_reason(e, &crate::reason()));
        }
        // what it opened or could not, said by the open on this thread
        Ok(Session { s, rec: Box::new(crate::zeroed_out()), recording: None, reason: crate::reason() })
    }
}

/// A live session: perf events on this (or another) process, records in time order.
/// As an `Iterator` it waits as long as it takes and ends when every watched task has
/// exited; [`Session::next_timeout`] waits a bounded time. Closed when dropped (the
/// usdt uprobe it created is removed then).
///
/// Closing while another thread reads cannot happen: reading borrows the session
/// mutably and only dropping it closes it (C's `uevent_session__close` from another
/// thread, which Python and Lua must guard, has no safe spelling here). This does not
/// compile:
///
/// ```compile_fail
/// let mut s = uevent::Session::builder().open().unwrap();
/// std::thread::scope(|t| {
///     t.spawn(|| drop(s)); // closes it in another thread...
///     let _ = s.next_timeout(std::time::Duration::from_secs(1)); // ...while this reads
/// });
/// ```
///
/// while handing the session to the reading thread, and closing it when that is done,
/// does:
///
/// ```no_run
/// let mut s = uevent::Session::builder().open().unwrap();
/// let reader = std::thread::spawn(move || {
///     let _ = s.next_timeout(std::time::Duration::from_secs(1));
///     s // back to the thread that closes it
/// });
/// drop(reader.join().unwrap());
/// ```
pub struct Session {
    s: *mut sys::uevent_session,
    rec: Box<sys::uevent_perf_record>,
    // The fd record_to() writes to: C writes to it until the session closes, so the
    // session owns it and closes it after uevent_session__close flushed.
    recording: Option<OwnedFd>,
    reason: String,
}

// SAFETY: the C session is a heap object with fds and mappings and no tie to the
// thread that opened it; all mutation goes through &mut self. Not Sync: nothing needs it.
unsafe impl Send for Session {}

fn timeout_ms(d: Option<Duration>) -> c_int {
    match d {
        None => -1,
        // round up so a short wait is not a poll, and cap below c_int's max
        Some(d) => d.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as c_int,
    }
}

impl Session {
    /// A builder with the defaults: this process, every usable transport.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// Transports the session listens on.
    pub fn transports(&self) -> Vec<Transport> {
        let mask = unsafe { sys::uevent_session__transports(self.s) };
        Transport::ALL.into_iter().filter(|t| mask & (1 << t.raw()) != 0).collect()
    }

    /// What the session opened or could not, for people (said when it opened).
    pub fn reason(&self) -> String {
        self.reason.clone()
    }

    /// The process watched ([`SessionBuilder::spawn`]: the child); `None` system-wide.
    pub fn pid(&self) -> Option<u32> {
        let p = unsafe { sys::uevent_session__pid(self.s) };
        (p > 0).then_some(p as u32)
    }

    /// The session's events' names, in the order a sample's `event_index` numbers them.
    pub fn event_names(&self) -> Vec<String> {
        let n = unsafe { sys::uevent_session__nr_events(self.s) }.max(0);
        (0..n).map(|i| unsafe { cstr(sys::uevent_session__event_name(self.s, i)) }).collect()
    }

    /// The name of event `i` (a sample's `event_index`); `None` when there is no such event.
    pub fn event_name(&self, i: i32) -> Option<String> {
        unsafe { cstr_opt(sys::uevent_session__event_name(self.s, i)) }
    }

    pub fn enable(&mut self) -> io::Result<()> {
        crate::check(unsafe { sys::uevent_session__enable(self.s) })
    }

    pub fn disable(&mut self) -> io::Result<()> {
        crate::check(unsafe { sys::uevent_session__disable(self.s) })
    }

    /// Overwrite mode: pauses the rings and queues their contents for the next calls.
    /// Returns the number of records queued. `InvalidInput` without `overwrite(true)`.
    pub fn snapshot(&mut self) -> io::Result<usize> {
        let n = unsafe { sys::uevent_session__snapshot(self.s) };
        crate::check(n)?;
        Ok(n as usize)
    }

    pub fn stats(&self) -> io::Result<SessionStats> {
        let mut st = MaybeUninit::<sys::uevent_session_stats>::zeroed();
        crate::check(unsafe {
            sys::uevent_session__stats(self.s, st.as_mut_ptr(), std::mem::size_of::<sys::uevent_session_stats>() as _)
        })?;
        // SAFETY: zeroed, then filled by the library; it has no pointer members.
        Ok(unsafe { session_stats_from(&st.assume_init(), 0) })
    }

    /// From now on, also writes every record the session reads (returned or not) to
    /// `out` as a pipe-mode perf.data stream, which [`PerfData`] and `perf script` read
    /// back. The session keeps `out` (a `File`, a pipe...) and closes it when dropped,
    /// after the last write. Errors: EBUSY when already recording; a later write error
    /// comes back from the next read.
    pub fn record_to(&mut self, out: impl Into<OwnedFd>) -> io::Result<()> {
        let fd: OwnedFd = out.into();
        crate::check(unsafe { sys::uevent_session__record_to(self.s, fd.as_raw_fd()) })?;
        self.recording = Some(fd);
        Ok(())
    }

    /// The next record without copying: `Ok(None)` when none came within `timeout`
    /// (`None`: wait forever; `Some(Duration::ZERO)`: do not wait).
    pub fn next_ref(&mut self, timeout: Option<Duration>) -> io::Result<Option<RecordRef<'_>>> {
        let ret = unsafe { sys::uevent_session__next(self.s, &mut *self.rec, timeout_ms(timeout)) };
        crate::check(ret)?;
        if ret == 0 {
            return Ok(None);
        }
        // A session reads this machine's rings: host order.
        Ok(Some(RecordRef { rec: &self.rec, bo: ByteOrder::Host }))
    }

    /// The next record, copied out; `Ok(None)` when none came within `timeout`.
    pub fn next_timeout(&mut self, timeout: Duration) -> io::Result<Option<Record>> {
        Ok(self.next_ref(Some(timeout))?.map(|r| r.to_record()))
    }
}

impl Iterator for Session {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        self.next_ref(None).map(|r| r.map(|r| r.to_record())).transpose()
    }
}

impl AsRawFd for Session {
    /// An epoll fd that polls readable when records may be waiting.
    fn as_raw_fd(&self) -> RawFd {
        unsafe { sys::uevent_session__fd(self.s) }
    }
}

impl AsFd for Session {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the epoll fd is open for the session's whole life, which bounds the borrow.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        unsafe { sys::uevent_session__close(self.s) }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("transports", &self.transports()).field("reason", &self.reason()).finish()
    }
}

// ---- perf.data -------------------------------------------------------------------------

/// A `perf.data` file (file or pipe mode; "-" reads standard input), records in file
/// order. As an `Iterator`: a uevent of an unknown format comes as an `Err` with errno
/// EPROTO and reading goes on; any other error ends it (see [`PerfData::offset`]).
pub struct PerfData {
    f: *mut sys::uevent_perf_file,
    rec: Box<sys::uevent_perf_record>,
    bo: ByteOrder,
    done: bool,
    // the file's size when it is a regular file: read_all_columns sizes its columns by it
    size: Option<u64>,
}

// SAFETY: as for Session: a heap object (the file's bytes and its events) with no thread
// affinity; mutation only through &mut self.
unsafe impl Send for PerfData {}

const EPROTO: i32 = 71;

impl PerfData {
    /// Opens a perf.data file. `InvalidInput` (EINVAL) for a corrupt header, `NotFound`...
    pub fn open<P: AsRef<Path>>(path: P) -> io::Result<PerfData> {
        let path = path.as_ref();
        let c = c_path(path)?;
        let f = unsafe { sys::uevent_perf_file__open(c.as_ptr()) };
        if f.is_null() {
            let e = io::Error::last_os_error();
            return Err(with_reason(e, &path.display().to_string()));
        }
        let bo = ByteOrder::from_raw(unsafe { sys::uevent_perf_file__byte_order(f) });
        let size = std::fs::metadata(path).ok().filter(|m| m.is_file()).map(|m| m.len());
        Ok(PerfData { f, rec: Box::new(crate::zeroed_out()), bo, done: false, size })
    }

    /// The byte order the file was written in (its payloads and arrays are in it).
    pub fn byte_order(&self) -> ByteOrder {
        self.bo
    }

    /// Byte offset of the next record (or of the corrupt one after an error).
    pub fn offset(&self) -> u64 {
        unsafe { sys::uevent_perf_file__offset(self.f) }
    }

    /// The names of the file's events (HEADER_EVENT_DESC), one per attr.
    pub fn event_names(&self) -> Vec<String> {
        let n = unsafe { sys::uevent_perf_file__nr_events(self.f) }.max(0);
        (0..n).map(|i| unsafe { cstr(sys::uevent_perf_file__event_name(self.f, i)) }).collect()
    }

    /// The name of event `i` (a sample's `event_index`; "" when the file names none);
    /// `None` when there is no such event (as for `event_index` -1).
    pub fn event_name(&self, i: i32) -> Option<String> {
        unsafe { cstr_opt(sys::uevent_perf_file__event_name(self.f, i)) }
    }

    /// A tracepoint sample's raw fields by name, from this file's formats (libtraceevent):
    /// `"prev_comm=sh prev_pid=42 ..."` as perf script shows them (by type where its print
    /// format is not given to libtraceevent), or with `json` a JSON object's text. `NotFound`
    /// (ENOENT): no tracepoint format here; `Unsupported`: built without libtraceevent.
    pub fn raw_fields(&self, sample: &Sample, json: bool) -> io::Result<String> {
        let mut rec: sys::uevent_perf_record = crate::zeroed_out();
        rec.body = sys::UEVENT_BODY_SAMPLE;
        // the sample member is the one body says; raw points into `sample`, which
        // outlives both calls
        rec.u.sample.raw = sample.raw.as_ptr() as *const c_void;
        rec.u.sample.raw_size = sample.raw.len() as u32;
        rec.u.sample.event_index = sample.event_index;
        let flags = if json { sys::UEVENT_FIELDS_JSON } else { 0 };
        let n = unsafe { sys::uevent_perf_file__raw_fields(self.f, &rec, flags, std::ptr::null_mut(), 0) };
        crate::check(n)?;
        let mut buf = vec![0u8; n as usize + 1];
        let n = unsafe {
            sys::uevent_perf_file__raw_fields(self.f, &rec, flags, buf.as_mut_ptr() as *mut c_char, buf.len() as _)
        };
        crate::check(n)?;
        buf.truncate(n as usize);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// The events' clock id (attr.clockid or HEADER_CLOCK_DATA); `None`: perf's clock.
    pub fn clockid(&self) -> Option<i32> {
        let c = unsafe { sys::uevent_perf_file__clockid(self.f) };
        (c >= 0).then_some(c)
    }

    /// HEADER_CLOCKID: the clock's resolution in ns, when the file has it.
    pub fn clock_res_ns(&self) -> Option<i64> {
        let r = unsafe { sys::uevent_perf_file__clock_res_ns(self.f) };
        (r >= 0).then_some(r)
    }

    /// The next record without copying; `Ok(None)` at the end of the file.
    pub fn next_ref(&mut self) -> io::Result<Option<RecordRef<'_>>> {
        let ret = unsafe { sys::uevent_perf_file__next(self.f, &mut *self.rec) };
        if ret < 0 {
            return Err(with_reason(err(ret), &format!("record at offset {}", self.offset())));
        }
        if ret == 0 {
            return Ok(None);
        }
        Ok(Some(RecordRef { rec: &self.rec, bo: self.bo }))
    }
}

impl Iterator for PerfData {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        if self.done {
            return None;
        }
        let r = self.next_ref().map(|r| r.map(|r| r.to_record()));
        // the end, or an error but EPROTO (the C reader skipped that record: the next is readable)
        self.done = matches!(&r, Ok(None)) || matches!(&r, Err(e) if !is_eproto(e));
        r.transpose()
    }
}

/// True for the error a record of an unknown uevent format gives (errno EPROTO).
pub fn is_eproto(e: &io::Error) -> bool {
    errno(e) == Some(EPROTO)
}

impl std::fmt::Debug for PerfData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfData").field("offset", &self.offset()).field("byte_order", &self.bo).finish()
    }
}

impl Drop for PerfData {
    fn drop(&mut self) {
        unsafe { sys::uevent_perf_file__close(self.f) }
    }
}

// ---- ring buffers ----------------------------------------------------------------------

/// Copies the whole records between data_tail and data_head of a perf ring image into
/// `buf` (records that wrap made whole) and advances data_tail, as the kernel's
/// protocol wants it (head read with acquire, tail written with release). `map` is the
/// mapping: the metadata page (one page of this machine's size), then the data.
/// Returns the bytes copied (0: empty). Errors: `InvalidInput` (EINVAL) for a corrupt
/// ring (data_tail then jumps to data_head) or a `map` not 8-byte aligned; ENOSPC when
/// the first record does not fit `buf`.
///
/// This takes memory the caller owns. For a ring the kernel is writing into right now,
/// call `sys::uevent_ring_read` on the mapping's pointer: a Rust `&mut [u8]` must not
/// change behind its owner's back.
pub fn ring_read(map: &mut [u8], buf: &mut [u8]) -> io::Result<usize> {
    if !map.as_ptr().cast::<u64>().is_aligned() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "ring image is not 8-byte aligned"));
    }
    let n = unsafe {
        sys::uevent_ring_read(map.as_mut_ptr().cast(), map.len() as _, buf.as_mut_ptr().cast(), buf.len() as _)
    };
    if n < 0 {
        return Err(err(n as c_int));
    }
    Ok(n as usize)
}

/// Decodes the perf records back to back in `buf` (as [`ring_read`] returns them,
/// in host order) written in byte order `bo` by an event of this `format`.
pub fn decode_records(buf: &[u8], bo: ByteOrder, format: &Format) -> io::Result<Vec<Record>> {
    let fmt = format.raw();
    let mut out = Vec::new();
    let mut off = 0usize;
    let mut rec: sys::uevent_perf_record = crate::zeroed_out();
    while off < buf.len() {
        let ret = unsafe {
            sys::uevent_perf_record_decode(
                buf[off..].as_ptr().cast(),
                (buf.len() - off) as _,
                bo.raw(),
                &fmt,
                &mut rec,
            )
        };
        crate::check(ret)?;
        if rec.size < 8 {
            return Err(err(-22));
        }
        out.push(RecordRef { rec: &rec, bo }.to_record());
        off += rec.size as usize;
    }
    Ok(out)
}
