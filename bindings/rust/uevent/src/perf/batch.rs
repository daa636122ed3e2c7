//! batch.rs - samples and uevents read in batches into owned columns
//! (`uevent_perf_file__read_batch`, `uevent_session__read_batch`): C fills the rows
//! straight into `Vec`s, no Rust code runs per record.
use std::io;
use std::os::raw::c_int;
use std::time::Duration;

use super::records::batch_columns;
use super::{timeout_ms, with_reason, Errno, PerfData, SampleColumns, Session, UeventColumns};
use crate::{err, sys};

// SampleColumns and UeventColumns, one `Vec` per column of struct uevent_sample_batch /
// uevent_record_batch, are generated from their notes in uevent.h (records.rs).

/// A batch (or a whole file) of samples and uevents, each in file / session order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    pub samples: SampleColumns,
    pub uevents: UeventColumns,
}

impl SampleColumns {
    /// Sample `i`'s callchain (panics when `i` is out of range, as indexing does).
    pub fn callchain(&self, i: usize) -> &[u64] {
        let off = self.chain_off[i] as usize;
        &self.chains[off..off + self.chain_len[i] as usize]
    }
}

impl UeventColumns {
    /// Uevent `i`'s payload bytes (panics when `i` is out of range, as indexing does).
    pub fn payload(&self, i: usize) -> &[u8] {
        let off = self.data_off[i] as usize;
        &self.data[off..off + self.data_len[i] as usize]
    }
}

/// What C needs of a column set and how its rows come back: `with_capacity`, the packed C
/// view `batch` (room for `n` rows and `tail_cap` elements of the tail array), `filled`
/// (the counts C returned) and `append` (offsets into the tail rebased).
macro_rules! columns {
    ($t:ident, $b:ident, [$($f:ident: $cf:ident),*], $off:ident, $tail:ident: $ctail:ident,
     $ccap:ident, $cn:ident) => {
        impl $t {
            pub fn len(&self) -> usize {
                self.$off.len()
            }
            pub fn is_empty(&self) -> bool {
                self.$off.is_empty()
            }
            fn with_capacity(n: usize, tail_cap: usize) -> $t {
                $t {
                    $($f: Vec::with_capacity(n),)*
                    $off: Vec::with_capacity(n),
                    $tail: Vec::with_capacity(tail_cap),
                }
            }
            fn batch(&mut self, n: usize, tail_cap: usize) -> sys::$b {
                sys::$b {
                    sz: std::mem::size_of::<sys::$b>() as _,
                    cap: n as _,
                    stride: 0,
                    n: 0,
                    $($cf: self.$f.as_mut_ptr(),)*
                    $off: self.$off.as_mut_ptr(),
                    $ctail: self.$tail.as_mut_ptr(),
                    $ccap: tail_cap as _,
                    $cn: 0,
                }
            }
            fn filled(&mut self, b: &sys::$b) {
                let n = b.n as usize;
                $(filled(&mut self.$f, n);)*
                filled(&mut self.$off, n);
                filled(&mut self.$tail, b.$cn as usize);
            }
            fn append(&mut self, mut o: $t) {
                let base = self.$tail.len() as u64;
                self.$off.extend(o.$off.iter().map(|x| x + base));
                $(self.$f.append(&mut o.$f);)*
                self.$tail.append(&mut o.$tail);
            }
        }
    };
}

batch_columns!(columns);

impl Columns {
    /// Rows: samples + uevents.
    pub fn len(&self) -> usize {
        self.samples.len() + self.uevents.len()
    }
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty() && self.uevents.is_empty()
    }
    /// Adds `other`'s rows after these (its callchain and payload offsets rebased).
    pub fn append(&mut self, other: Columns) {
        self.samples.append(other.samples);
        self.uevents.append(other.uevents);
    }
}

/// `v` (empty, capacity reserved) holds the `n` elements C wrote into its buffer.
fn filled<T: Copy>(v: &mut Vec<T>, n: usize) {
    // C never writes past the capacity it was given; a count beyond it is a library bug.
    assert!(v.is_empty() && n <= v.capacity(), "libuevent returned {} rows for {}", n, v.capacity());
    // SAFETY: the buffer has room for n (checked above) and the C reader wrote each of
    // its first n elements (rows below the count it returned; chain/data below chain_n
    // / data_n); T is a plain integer, valid for any bytes.
    unsafe { v.set_len(n) }
}

/// Room for the largest record (65535 bytes): 8191 callchain ips, 65535 payload bytes,
/// which a session needs free before it reads (else ENOSPC).
const MIN_CHAIN: usize = 8192;
const MIN_DATA: usize = 65536;
const ENOSPC: c_int = 28;
const ENODATA: i32 = 61;

/// One batch of up to `n` samples and `n` uevents from `call` (the C reader on the
/// batches), with room for `caps` callchain ips and payload bytes (`None`: 16 and 64 a
/// row and the largest record's, as a session reads on only while that much is free):
/// `Ok(None)` when it returned 0, `Err(-errno)`
/// for its error. One record that does not fit empty columns (ENOSPC) gets columns
/// four times larger.
fn read_one(
    n: usize,
    caps: Option<(usize, usize)>,
    mut call: impl FnMut(&mut sys::uevent_sample_batch, &mut sys::uevent_record_batch) -> c_int,
) -> Result<Option<Columns>, c_int> {
    if n == 0 || n > i32::MAX as usize {
        return Err(-22);
    }
    let (mut chain_cap, mut data_cap) = caps.unwrap_or((16 * n + MIN_CHAIN, 64 * n + MIN_DATA));
    loop {
        let mut s = SampleColumns::with_capacity(n, chain_cap);
        let mut u = UeventColumns::with_capacity(n, data_cap);
        let mut sb = s.batch(n, chain_cap);
        let mut ub = u.batch(n, data_cap);
        let ret = call(&mut sb, &mut ub);
        if ret == -ENOSPC && chain_cap < 1 << 28 {
            chain_cap *= 4;
            data_cap *= 4;
            continue;
        }
        if ret < 0 {
            return Err(ret);
        }
        if ret == 0 {
            return Ok(None);
        }
        s.filled(&sb);
        u.filled(&ub);
        return Ok(Some(Columns { samples: s, uevents: u }));
    }
}

/// The error [`PerfData::read_all_columns`] returns when the file is cut or corrupt: the
/// errno and where, and every row before it. [`partial_columns`] finds it in the
/// `io::Error`, [`super::errno`] its errno.
#[derive(Debug)]
pub struct PartialRead {
    pub error: Errno,
    pub partial: Columns,
}

impl std::fmt::Display for PartialRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (after {} rows)", self.error, self.partial.len())
    }
}

impl std::error::Error for PartialRead {}

/// The rows [`PerfData::read_all_columns`] read before its error, if `e` is one.
pub fn partial_columns(e: &io::Error) -> Option<&Columns> {
    e.get_ref().and_then(|i| i.downcast_ref::<PartialRead>()).map(|p| &p.partial)
}

impl PerfData {
    /// The next up to `max_rows` samples and up to `max_rows` uevents (other records are
    /// skipped, as are uevents of an unknown format) as columns filled by C;
    /// `Ok(None)` at the end of the file. A cut file gives its rows, then ENODATA
    /// ([`is_cut`]); a corrupt record `InvalidInput` (EINVAL); `max_rows` 0 or above
    /// `i32::MAX` is `InvalidInput`. Errors say the offset, as [`PerfData::next_ref`]'s.
    pub fn read_batch(&mut self, max_rows: usize) -> io::Result<Option<Columns>> {
        self.read_batch_caps(max_rows, None)
    }

    fn read_batch_caps(&mut self, max_rows: usize, caps: Option<(usize, usize)>) -> io::Result<Option<Columns>> {
        let f = self.f;
        // SAFETY: f is the open file this PerfData owns; sb and ub point at Vecs with
        // room for cap rows and chain_cap / data_cap elements, alive across the call.
        read_one(max_rows, caps, |sb, ub| unsafe { sys::uevent_perf_file__read_batch(f, sb, ub) })
            .map_err(|ret| with_reason(err(ret), &format!("record at offset {}", self.offset())))
    }

    /// Every remaining sample and uevent as one `Columns`. On an error (a cut file:
    /// ENODATA) the `io::Error` carries the rows before it: [`partial_columns`].
    /// A regular file bounds what its rows can need (a record is at least 16 bytes, a
    /// callchain ip 8), so most files are read in one call, into columns that size
    /// (only the pages written are touched); a pipe in batches of 65536 rows.
    pub fn read_all_columns(&mut self) -> io::Result<Columns> {
        let (n, caps) = match self.size {
            Some(size) => {
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                let n = (size / 16 + 1).min(1 << 22);
                let caps = ((size / 8 + 1).clamp(MIN_CHAIN, 1 << 25), (size + 1).clamp(MIN_DATA, 1 << 26));
                (n, Some(caps))
            }
            None => (1 << 16, None),
        };
        let mut all = Columns::default();
        loop {
            match self.read_batch_caps(n, caps) {
                Ok(Some(c)) if all.is_empty() => all = c,
                Ok(Some(c)) => all.append(c),
                Ok(None) => return Ok(all),
                Err(e) => {
                    let Some(n) = super::errno(&e) else { return Err(e) };
                    let error = Errno { errno: n, context: format!("record at offset {}", self.offset()) };
                    return Err(io::Error::new(e.kind(), PartialRead { error, partial: all }));
                }
            }
        }
    }
}

/// True for the error a cut perf.data file gives after its last whole record (ENODATA).
pub fn is_cut(e: &io::Error) -> bool {
    super::errno(e) == Some(ENODATA)
}

impl Session {
    /// Up to `max_rows` samples and `max_rows` uevents as columns: waits up to `timeout`
    /// (`None`: forever) for the first record, then takes only those already waiting.
    /// `Ok(None)` when none came in time (or every watched task has exited). Each batch
    /// has room for the largest record (the C reader needs it: a session cannot put a
    /// record back), so a small `max_rows` still reserves 64 KiB of payload room.
    pub fn read_batch(&mut self, max_rows: usize, timeout: Option<Duration>) -> io::Result<Option<Columns>> {
        let (s, t) = (self.s, timeout_ms(timeout));
        // SAFETY: s is the open session this Session owns; sb and ub point at Vecs with
        // room for cap rows and chain_cap / data_cap elements, alive across the call.
        read_one(max_rows, None, |sb, ub| unsafe { sys::uevent_session__read_batch(s, sb, ub, t) }).map_err(err)
    }
}
