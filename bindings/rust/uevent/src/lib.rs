//! uevent - put your own events into the Linux perf stream (libuevent), and read them back.
//!
//! ```no_run
//! uevent::mark("parsing started").unwrap();      // one load when nobody listens
//! {
//!     let _r = uevent::Range::new("parse");       // ends when dropped
//!     uevent::counter("queue_depth", 7).unwrap();
//! }
//! for rec in uevent::FileReader::open("x.perf.data").unwrap() {
//!     println!("{:?}", rec.unwrap().payload);
//! }
//! ```
//!
//! Errors are `io::Error`s carrying the errno libuevent returned (`EINVAL` comes back as
//! `ErrorKind::InvalidInput`). Every declaration comes from `uevent.h` via `uevent-sys`.
use std::ffi::{CStr, CString};
use std::io;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::os::raw::{c_char, c_int};
use std::path::Path;

pub use uevent_sys as sys;

pub mod perf;
pub use perf::uevent_record::Record;
use perf::uevent_record::record_from;
pub use perf::{decode, ByteOrder, JitDebugEntry, Payload, PerfData, Session, SessionBuilder, Stats};
pub mod symbolize;
pub use symbolize::{Symbol, Symbolizer, SymbolizerOpts};

/// bindings/rust/README.md, whose examples are compiled as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

pub(crate) fn err(ret: c_int) -> io::Error {
    io::Error::from_raw_os_error(-ret)
}

#[inline]
pub(crate) fn check(ret: c_int) -> io::Result<()> {
    if ret < 0 {
        Err(err(ret))
    } else {
        Ok(())
    }
}

fn cstring(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::from_raw_os_error(EINVAL))
}

const EINVAL: i32 = 22; // std has no errno constants and we take no outside crates

const E2BIG: i32 = 7;

/// A C string the library owns, copied; "" for NULL.
pub(crate) unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// A C string the library owns, copied; `None` for NULL.
pub(crate) unsafe fn cstr_opt(p: *const c_char) -> Option<String> {
    (!p.is_null()).then(|| cstr(p))
}

// ---- emitting -------------------------------------------------------------------------

/// True when a listener may exist: one relaxed load of the library's enabled word.
#[inline(always)]
pub fn enabled() -> bool {
    // SAFETY: uevent_enabled_word is the library's aligned u32 enabled word, which the
    // library (and the kernel) update with atomics; this is the relaxed load that
    // UEVENT_ENABLED() does. Rust reaches an extern static through the GOT, never a copy
    // relocation, so this reads the library's word itself (tests/emit.rs checks it).
    unsafe {
        std::sync::atomic::AtomicU32::from_ptr(std::ptr::addr_of_mut!(sys::uevent_enabled_word))
            .load(std::sync::atomic::Ordering::Relaxed)
            != 0
    }
}

/// Runs `f` with `s` as a NUL-terminated C string, on the stack when it is short.
#[inline(always)]
fn with_cstr<R>(s: &str, f: impl FnOnce(*const c_char) -> R) -> R {
    const STACK: usize = 256;
    let b = s.as_bytes();
    if b.len() < STACK {
        let mut buf = MaybeUninit::<[u8; STACK]>::uninit();
        let p = buf.as_mut_ptr() as *mut u8;
        // SAFETY: b.len() + 1 <= STACK bytes are written before the pointer is used.
        unsafe {
            std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len());
            *p.add(b.len()) = 0;
        }
        f(p as *const c_char)
    } else {
        let mut v = Vec::with_capacity(b.len() + 1);
        v.extend_from_slice(b);
        v.push(0);
        f(v.as_ptr() as *const c_char)
    }
}

// The enabled check comes first, so a mark nobody listens to costs what UEVENT_MARK()
// does in C: one load, and a silent no-op even for bad arguments. When enabled,
// arguments are checked before the library is called: a refused call never reaches it,
// and stats() does not count it.

/// Bytes a mark's text may take: a payload less its NUL.
pub const TEXT_MAX: usize = MAX_PAYLOAD - 1;
/// Bytes a counter's name may take: a payload less value, length, pad and NUL.
pub const COUNTER_NAME_MAX: usize = sys::UEVENT_COUNTER_NAME_MAX as usize;
/// Bytes a range's name may take: a payload less id, parent, flags, length and NUL.
pub const RANGE_NAME_MAX: usize = sys::UEVENT_RANGE_NAME_MAX as usize;

/// A text or name as C takes it: no NUL (C would end it there), at most `max` bytes;
/// else `E2BIG` or `EINVAL`.
#[inline(always)]
fn check_str(s: &str, max: usize) -> io::Result<()> {
    if s.len() > max {
        return Err(io::Error::from_raw_os_error(E2BIG));
    }
    if s.as_bytes().contains(&0) {
        return Err(io::Error::from_raw_os_error(EINVAL));
    }
    Ok(())
}

/// A text mark: `EINVAL` for a text with a NUL, `E2BIG` past [`TEXT_MAX`] bytes (when
/// enabled: with nobody listening it is a no-op).
#[inline(always)]
pub fn mark(text: &str) -> io::Result<()> {
    if !enabled() {
        return Ok(());
    }
    mark_enabled(text)
}

#[inline(never)]
fn mark_enabled(text: &str) -> io::Result<()> {
    check_str(text, TEXT_MAX)?;
    check(with_cstr(text, |p| unsafe { sys::uevent_mark(p) }))
}

/// A text mark from a C string, without copying: `E2BIG` past [`TEXT_MAX`] bytes (when
/// enabled).
#[inline(always)]
pub fn mark_cstr(text: &CStr) -> io::Result<()> {
    if !enabled() {
        return Ok(());
    }
    if text.to_bytes().len() > TEXT_MAX {
        return Err(io::Error::from_raw_os_error(E2BIG));
    }
    check(unsafe { sys::uevent_mark(text.as_ptr()) })
}

/// A mark formatted only when enabled: `uevent::markf(format_args!("rows={}", n))`.
/// The formatted text exists only then, so only then is it checked as [`mark`] checks.
pub fn markf(args: std::fmt::Arguments<'_>) -> io::Result<()> {
    if !enabled() {
        return Ok(());
    }
    mark(&std::fmt::format(args))
}

/// Emit a raw payload of type `ty` (a well-known type or >= [`TYPE_USER`]): `E2BIG`
/// past [`MAX_PAYLOAD`] bytes (when enabled).
#[inline]
pub fn emit(ty: u32, data: &[u8]) -> io::Result<()> {
    if !enabled() {
        return Ok(());
    }
    if data.len() > MAX_PAYLOAD {
        return Err(io::Error::from_raw_os_error(E2BIG));
    }
    check(unsafe { sys::uevent_emit(ty, data.as_ptr().cast(), data.len() as _) })
}

/// A counter sample, `name` = `value`: `EINVAL` for a name with a NUL, `E2BIG` past
/// [`COUNTER_NAME_MAX`] bytes (when enabled).
#[inline]
pub fn counter(name: &str, value: i64) -> io::Result<()> {
    if !enabled() {
        return Ok(());
    }
    check_str(name, COUNTER_NAME_MAX)?;
    check(with_cstr(name, |p| unsafe { sys::uevent_counter_set(p, value) }))
}

/// A W3C trace context.
pub fn trace_context(trace_id: &[u8; 16], span_id: &[u8; 8], flags: u8) -> io::Result<()> {
    check(unsafe { sys::uevent_trace_context(trace_id.as_ptr(), span_id.as_ptr(), flags) })
}

/// Sets the calling thread's trace context, the one profilers read (OpenTelemetry OTEP
/// 4947's thread record, `uevent_thread_context_set`): plain stores, no system call after
/// the thread's first. On a kernel without `PR_PERF_TLS_AREA` it still stores, and only
/// that kernel's samples lack it. See [`ThreadContext`] for a scoped one.
pub fn thread_context(trace_id: &[u8; 16], span_id: &[u8; 8], flags: u8) -> io::Result<()> {
    check(unsafe { sys::uevent_thread_context_set(trace_id.as_ptr(), span_id.as_ptr(), flags) })
}

/// Adds attribute `key` (an index into the process context's attribute key map) =
/// `value` to the calling thread's context; a later value of a key wins.
pub fn thread_context_attr(key: u8, value: &str) -> io::Result<()> {
    check(unsafe {
        sys::uevent_thread_context_set_attr(key, value.as_ptr().cast(), value.len() as _)
    })
}

/// The calling thread has no trace context any more.
pub fn thread_context_clear() -> io::Result<()> {
    check(unsafe { sys::uevent_thread_context_clear() })
}

/// Whether the kernel dumps the calling thread's context into its samples.
pub fn thread_context_registered() -> bool {
    unsafe { sys::uevent_thread_context_registered() != 0 }
}

/// A scoped thread context: [`ThreadContext::enter`] sets it, dropping the guard brings
/// back the context the thread had before (attributes included). The guard stays on
/// its thread (it is neither `Send` nor `Sync`): the record is the thread's own.
#[must_use = "the context ends when the guard is dropped"]
pub struct ThreadContext {
    prev: [u8; sys::UEVENT_THREAD_CONTEXT_SIZE as usize],
    _thread: PhantomData<*const ()>,
}

impl ThreadContext {
    /// Sets the calling thread's context and returns the guard that undoes it.
    pub fn enter(trace_id: &[u8; 16], span_id: &[u8; 8], flags: u8) -> io::Result<ThreadContext> {
        let mut prev = [0u8; sys::UEVENT_THREAD_CONTEXT_SIZE as usize];
        // SAFETY: the calling thread's record, valid while it lives; only this thread
        // writes it, and not during this copy.
        unsafe {
            let rec = sys::uevent_thread_context_get().cast::<u8>();
            std::ptr::copy_nonoverlapping(rec, prev.as_mut_ptr(), prev.len());
        }
        thread_context(trace_id, span_id, flags)?;
        Ok(ThreadContext { prev, _thread: PhantomData })
    }

    /// Adds an attribute to this context (see [`thread_context_attr`]).
    pub fn attr(&self, key: u8, value: &str) -> io::Result<&Self> {
        thread_context_attr(key, value).map(|()| self)
    }
}

impl Drop for ThreadContext {
    fn drop(&mut self) {
        // SAFETY: prev is a whole record copy, read only.
        unsafe { sys::uevent_thread_context_restore(self.prev.as_ptr().cast(), self.prev.len() as _) };
    }
}

/// Publishes (or updates) OpenTelemetry's process context (OTEP 4719): `service.name`,
/// a `service.instance.id` (random unless given) and the attribute key map whose index
/// `i` names `attr_keys[i]` (append-only: an update repeats the earlier keys first).
pub fn process_context(service_name: Option<&str>, service_instance_id: Option<&str>,
                       attr_keys: &[&str]) -> io::Result<()> {
    let name = service_name.map(cstring).transpose()?;
    let id = service_instance_id.map(cstring).transpose()?;
    let keys = attr_keys.iter().map(|k| cstring(k)).collect::<io::Result<Vec<_>>>()?;
    let ptrs: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
    let o = sys::uevent_process_context_opts {
        sz: std::mem::size_of::<sys::uevent_process_context_opts>() as _,
        service_name: name.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        service_instance_id: id.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        attr_keys: ptrs.as_ptr(),
        nr_attr_keys: ptrs.len() as u32,
    };
    check(unsafe { sys::uevent_process_context_publish(&o) })
}

/// First payload type free for applications.
pub const TYPE_USER: u32 = sys::UEVENT_TYPE_USER;
/// Largest payload any transport carries.
pub const MAX_PAYLOAD: usize = sys::UEVENT_MAX_PAYLOAD as usize;

/// A synchronous range, ended when dropped. Ranges nest per thread, so a guard is not
/// `Send`: it must end on the thread that began it.
#[must_use = "a Range ends when dropped"]
pub struct Range {
    id: u64,
    _not_send: PhantomData<*const ()>,
}

impl Range {
    /// Begins a range named `name` nested in the thread's current one. A name
    /// [`Range::try_new`] refuses begins nothing (id 0), as a refused begin does in C.
    #[inline]
    pub fn new(name: &str) -> Range {
        Range::try_new(name).unwrap_or(Range { id: 0, _not_send: PhantomData })
    }

    /// Begins a range, or says why not: `EINVAL` for a name with a NUL, `E2BIG` past
    /// [`RANGE_NAME_MAX`] bytes.
    #[inline]
    pub fn try_new(name: &str) -> io::Result<Range> {
        check_str(name, RANGE_NAME_MAX)?;
        let id = with_cstr(name, |p| unsafe { sys::uevent_range_begin(p) });
        Ok(Range { id, _not_send: PhantomData })
    }

    /// The range's id (0 when nothing was emitted).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Ends the range now, reporting an error the drop would ignore.
    pub fn end(mut self) -> io::Result<()> {
        let id = std::mem::replace(&mut self.id, 0);
        if id == 0 {
            return Ok(());
        }
        check(unsafe { sys::uevent_range_end(id) })
    }
}

impl Drop for Range {
    fn drop(&mut self) {
        if self.id != 0 {
            unsafe { sys::uevent_range_end(self.id) };
        }
    }
}

/// An async range: not nested, may end on any thread (it is `Send`).
#[must_use = "an AsyncRange ends when dropped"]
pub struct AsyncRange {
    id: u64,
}

impl AsyncRange {
    /// Begins an async range; a name [`AsyncRange::try_new`] refuses begins nothing (id 0).
    pub fn new(name: &str) -> AsyncRange {
        AsyncRange::try_new(name).unwrap_or(AsyncRange { id: 0 })
    }

    /// Begins an async range, or says why not, as [`Range::try_new`].
    pub fn try_new(name: &str) -> io::Result<AsyncRange> {
        check_str(name, RANGE_NAME_MAX)?;
        Ok(AsyncRange { id: with_cstr(name, |p| unsafe { sys::uevent_async_begin(p) }) })
    }
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for AsyncRange {
    fn drop(&mut self) {
        if self.id != 0 {
            unsafe { sys::uevent_async_end(self.id) };
        }
    }
}

// ---- transports -----------------------------------------------------------------------

/// The name of transport number `t` ("usdt", "file", ...).
pub fn transport_name(t: i32) -> String {
    unsafe { cstr(sys::uevent_transport_name(t)) }
}

/// The transport in use.
pub fn transport() -> String {
    transport_name(unsafe { sys::uevent_transport() })
}

/// The reason channel: why this thread's last library call that had more to say than
/// its errno did what it did ("" if nothing).
pub fn reason() -> String {
    unsafe { cstr(sys::uevent_reason()) }
}

/// Largest payload the current transport accepts.
pub fn max_payload() -> usize {
    unsafe { sys::uevent_max_payload() as usize }
}

/// (Re)selects the process-wide transport by name ("auto", "usdt", "file", "none", ...);
/// `path` is the file transport's output. Returns the name of the transport chosen.
pub fn open(transport: &str, path: Option<&Path>, ignore_env: bool) -> io::Result<String> {
    let name = cstring(transport)?;
    let t = unsafe { sys::uevent_transport_from_name(name.as_ptr()) };
    if t < 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("unknown transport '{}' (errno {})", transport, -t),
        ));
    }
    let cpath = path.map(perf::c_path).transpose()?;
    let opts = sys::uevent_open_opts {
        sz: std::mem::size_of::<sys::uevent_open_opts>() as _,
        transport: t,
        path: cpath.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        flags: if ignore_env { sys::UEVENT_OPEN_IGNORE_ENV as _ } else { 0 },
    };
    let ret = unsafe { sys::uevent_open(&opts) };
    if ret < 0 {
        let e = err(ret);
        return Err(io::Error::new(e.kind(), format!("{} ({})", reason(), e)));
    }
    Ok(transport_name(ret))
}

/// Stops delivering (transport "none").
pub fn close() -> io::Result<()> {
    check(unsafe { sys::uevent_close() })
}

// ---- statistics -----------------------------------------------------------------------

// Stats (struct uevent_stats, dropped_by by reason name) is generated, in perf::records.
impl Stats {
    /// The drop count for a reason name ("too_big", "io", ...).
    pub fn dropped_for(&self, reason: &str) -> u64 {
        self.dropped_by.iter().find(|(n, _)| n == reason).map_or(0, |(_, c)| *c)
    }
}

/// Process-wide counters since load.
pub fn stats() -> io::Result<Stats> {
    let mut s = MaybeUninit::<sys::uevent_stats>::zeroed();
    check(unsafe {
        sys::uevent_stats_get(s.as_mut_ptr(), std::mem::size_of::<sys::uevent_stats>() as _)
    })?;
    // SAFETY: zeroed, then filled by the library; it has no pointer members.
    Ok(unsafe { perf::stats_from(&s.assume_init(), 0) })
}

pub fn stats_reset() {
    unsafe { sys::uevent_stats_reset() }
}

// ---- decoding -------------------------------------------------------------------------

// ByteOrder (enum uevent_byte_order) is generated, in perf::records.

/// An output or options struct of uevent.h, which [`zeroed_out`] makes.
///
/// # Safety
/// All-zero bytes are a valid value of it (integers, null pointers, unions of them),
/// and it starts with `size_t sz`.
pub(crate) unsafe trait OutStruct {}
unsafe impl OutStruct for sys::uevent_record {}
unsafe impl OutStruct for sys::uevent_perf_record {}
unsafe impl OutStruct for sys::uevent_session_opts {}
unsafe impl OutStruct for sys::uevent_perf_format {}
unsafe impl OutStruct for sys::uevent_symbol {}

/// An output struct the C library fills: zeroed, its leading `sz` set to its size.
pub(crate) fn zeroed_out<T: OutStruct>() -> T {
    let mut v = MaybeUninit::<T>::zeroed();
    // SAFETY: all-zero bytes are a T, whose first member is a size_t (OutStruct).
    unsafe {
        v.as_mut_ptr().cast::<usize>().write(std::mem::size_of::<T>());
        v.assume_init()
    }
}

/// Decodes one PERF_RECORD_UEVENT (header included). `sample_type` is the event's
/// attr.sample_type; `v0_layout` selects the V0 layout (type, size, data: no format word).
pub fn decode_record(buf: &[u8], bo: ByteOrder, sample_type: u64, v0_layout: bool) -> io::Result<Record> {
    let mut r = zeroed_out::<sys::uevent_record>();
    let flags = if v0_layout { sys::UEVENT_RECORD_V0_LAYOUT as _ } else { 0 };
    check(unsafe { sys::uevent_record_decode(buf.as_ptr().cast(), buf.len() as _, bo.raw(), sample_type, flags, &mut r) })?;
    Ok(record_from(&r, bo))
}

/// Iterates the records of a file-transport file; the file is closed on drop.
pub struct FileReader {
    r: *mut sys::uevent_file_reader,
    bo: ByteOrder,
    done: bool,
}

impl FileReader {
    pub fn open<P: AsRef<Path>>(path: P) -> io::Result<FileReader> {
        let c = perf::c_path(path.as_ref())?;
        let r = unsafe { sys::uevent_file_reader__open(c.as_ptr()) };
        if r.is_null() {
            return Err(io::Error::last_os_error());
        }
        // Payloads stay in the file's byte order.
        let bo = ByteOrder::from_raw(unsafe { sys::uevent_file_reader__byte_order(r) });
        Ok(FileReader { r, bo, done: false })
    }

    /// The byte order of the file's payloads.
    pub fn byte_order(&self) -> ByteOrder {
        self.bo
    }

    /// Byte offset of the next record (or of the corrupt one after an error).
    pub fn offset(&self) -> u64 {
        unsafe { sys::uevent_file_reader__offset(self.r) }
    }
}

impl Iterator for FileReader {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        if self.done {
            return None;
        }
        let mut rec = zeroed_out::<sys::uevent_record>();
        let ret = unsafe { sys::uevent_file_reader__next(self.r, &mut rec) };
        self.done = ret <= 0;
        match ret {
            0 => None,
            r if r < 0 => Some(Err(io::Error::new(err(r).kind(), format!("{} at offset {}", err(r), self.offset())))),
            _ => Some(Ok(record_from(&rec, self.bo))),
        }
    }
}

impl Drop for FileReader {
    fn drop(&mut self) {
        unsafe { sys::uevent_file_reader__close(self.r) };
    }
}

/// The library's version string.
pub fn version() -> String {
    unsafe { cstr(sys::uevent_version()) }
}
