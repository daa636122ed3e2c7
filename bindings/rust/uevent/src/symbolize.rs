//! symbolize.rs - names for (pid, address, time) from a recording: `uevent_symbolizer`.
//!
//! ```no_run
//! let mut s = uevent::Symbolizer::new(&uevent::SymbolizerOpts::default()).unwrap();
//! s.feed_file("run.data").unwrap();
//! let sym = s.lookup(1234, 0x5555_5555_1234, u64::MAX).unwrap();
//! println!("{:?} in {:?}", sym.name, sym.dso);
//! ```
//!
//! JIT code announced in the stream is named as it was at the time asked, so an address
//! a later load reuses gets the later name.
use std::io;
use std::path::Path;

use crate::{check, cstr_opt as string, sys};

const ENOENT: i32 = 2;

// Options: struct uevent_symbolizer_opts, generated (perf/records.rs).
pub use crate::perf::SymbolizerOpts;

// Where a name came from: enum uevent_symbol_source, generated (perf/records.rs).
pub use crate::perf::SymbolSource as Source;

/// What names an address; `name` is None when nothing does (`dso` may still be known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: Option<String>,
    pub dso: Option<String>,
    /// From the symbol's start when named, else in the dso's file.
    pub offset: u64,
    pub sym_addr: u64,
    pub sym_size: u64,
    pub file: Option<String>,
    pub line: u32,
    pub source: Source,
}

/// A `uevent_symbolizer`: fed a recording's side-band, then asked for names.
pub struct Symbolizer {
    s: *mut sys::uevent_symbolizer,
}

// SAFETY: the symbolizer is a heap object with no thread affinity; it is only used
// through &mut self (it is not thread-safe, so it is not Sync).
unsafe impl Send for Symbolizer {}

impl Symbolizer {
    pub fn new(opts: &SymbolizerOpts) -> io::Result<Symbolizer> {
        let mut keep = Vec::new();
        let o = opts.to_c(&mut keep)?;
        // SAFETY: o and the strings it points at (keep) live through the call (the
        // library copies them).
        let s = unsafe { sys::uevent_symbolizer__new(&o) };
        if s.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Symbolizer { s })
    }

    /// Feeds the record a reader just gave (`PerfData::next_ref`, `Session::next_ref`),
    /// in time order; true if it was side-band the symbolizer keeps.
    pub fn feed(&mut self, rec: &crate::perf::RecordRef<'_>) -> io::Result<bool> {
        // SAFETY: the record is the reader's, valid for the borrow; self.s is live.
        let ret = unsafe { sys::uevent_symbolizer__feed(self.s, rec.raw()) };
        check(ret)?;
        Ok(ret > 0)
    }

    /// Feeds every record of a perf.data (side-band and JIT uevents); returns how many
    /// were used. A JIT uevent that does not decode is skipped. The error says the file
    /// and the offset (a cut file: every whole record fed first).
    pub fn feed_file<P: AsRef<Path>>(&mut self, path: P) -> io::Result<u64> {
        let p = crate::perf::c_path(path.as_ref())?;
        // SAFETY: self.s is live; p outlives the call.
        let n = unsafe { sys::uevent_symbolizer__feed_file(self.s, p.as_ptr()) };
        if n < 0 {
            return Err(crate::perf::with_reason(io::Error::from_raw_os_error(-n as i32), &crate::reason()));
        }
        Ok(n as u64)
    }

    /// Names addr in process pid at time (u64::MAX: the latest).
    pub fn lookup(&mut self, pid: u32, addr: u64, time: u64) -> io::Result<Symbol> {
        let mut o = crate::zeroed_out::<sys::uevent_symbol>();
        // SAFETY: self.s is live, o ours.
        let ret = unsafe { sys::uevent_symbolizer__lookup(self.s, pid, addr, time, &mut o) };
        if ret < 0 && ret != -ENOENT {
            check(ret)?;
        }
        // SAFETY: the strings are the symbolizer's, valid while it lives; copied here.
        unsafe {
            Ok(Symbol {
                name: if ret == 0 { string(o.name) } else { None },
                dso: string(o.dso),
                offset: o.offset,
                sym_addr: o.sym_addr,
                sym_size: o.sym_size,
                file: string(o.file),
                line: o.line,
                source: Source::from_raw(o.source),
            })
        }
    }

    /// The thread's command name at time, from the COMM records fed.
    pub fn comm(&mut self, tid: u32, time: u64) -> Option<String> {
        // SAFETY: self.s is live; the string is copied before the next call.
        unsafe { string(sys::uevent_symbolizer__comm(self.s, tid, time)) }
    }
}

impl Drop for Symbolizer {
    fn drop(&mut self) {
        // SAFETY: self.s came from uevent_symbolizer__new and is freed once.
        unsafe { sys::uevent_symbolizer__free(self.s) }
    }
}
