//! notes.rs - what the record model's bracket notes are in Rust: copies out of a C record
//! the library decoded ([bytes x N], [str x N], [u64 x N], [u64 x N of K] with K a number
//! or a member). The generated records.rs calls these; each reads exactly the elements
//! its note counts.
use std::os::raw::{c_char, c_int, c_void};

use uevent_sys as sys;

/// n bytes at p.
///
/// # Safety
/// p is NULL or points at n readable bytes.
pub(super) unsafe fn bytes(p: *const c_void, n: u64) -> Vec<u8> {
    if p.is_null() || n == 0 {
        return Vec::new();
    }
    std::slice::from_raw_parts(p as *const u8, n as usize).to_vec()
}

/// n bytes of text at p ([str x N]).
///
/// # Safety
/// p is NULL or points at n readable bytes.
pub(super) unsafe fn sized_str(p: *const c_char, n: u32) -> String {
    if p.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, n as usize)).into_owned()
}

/// n u64 at p, encoded in byte order bo.
///
/// # Safety
/// p is NULL or points at n readable u64s.
pub(super) unsafe fn u64s(p: *const c_void, n: u64, bo: c_int) -> Vec<u64> {
    if p.is_null() {
        return Vec::new();
    }
    (0..n).map(|i| sys::uevent_perf_u64(p, i, bo)).collect()
}

/// n groups of K u64 each.
///
/// # Safety
/// As [`u64s`], for n * K u64s.
pub(super) unsafe fn groups_of<const K: usize>(p: *const c_void, n: u64, bo: c_int) -> Vec<[u64; K]> {
    let all = u64s(p, n * K as u64, bo);
    all.chunks_exact(K).map(|c| c.try_into().expect("K elements")).collect()
}

/// n groups of per u64 each.
///
/// # Safety
/// As [`u64s`], for n * per u64s.
pub(super) unsafe fn groups(p: *const c_void, n: u64, per: u64, bo: c_int) -> Vec<Vec<u64>> {
    if per == 0 {
        return Vec::new();
    }
    u64s(p, n * per, bo).chunks(per as usize).map(|c| c.to_vec()).collect()
}
