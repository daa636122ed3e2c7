//! bench.rs - Rust's share of bench/bindings: ns per mark, disabled and enabled.
use std::hint::black_box;
use std::time::Instant;

/// Best of 5 runs of n iterations, in ns per iteration, as bench.h's MEASURE: an empty
/// asm after each (a compiler barrier on all memory) keeps the body in the loop and its
/// loads unmerged, and costs nothing itself, in C and here alike.
fn measure(n: u64, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..n {
            f();
            // SAFETY: an empty asm statement; without `nomem` it may touch any memory.
            unsafe { std::arch::asm!("", options(nostack)) };
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    let x = c"x";
    uevent::open("none", None, true).unwrap();
    // as C's UEVENT_MARK("x") row: a literal, the result dropped
    println!("rust disabled uevent::mark {:.2}", measure(20_000_000, || { let _ = uevent::mark("x"); }));
    let path = std::env::var("UEVENT_BENCH_FILE").unwrap_or_else(|_| "bench.perf.data".into());
    uevent::open("file", Some(std::path::Path::new(&path)), true).unwrap();
    println!("rust enabled uevent::mark {:.2}", measure(100_000, || { let _ = black_box(uevent::mark(black_box("x"))); }));
    println!("rust enabled mark_cstr {:.2}", measure(100_000, || { let _ = black_box(uevent::mark_cstr(black_box(x))); }));
    println!("rust enabled sys::uevent_mark {:.2}", measure(100_000, || unsafe { black_box(uevent::sys::uevent_mark(black_box(x.as_ptr()))); }));
}
