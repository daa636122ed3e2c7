//! bench.rs - Rust's share of bench/bindings: ns per mark, disabled and enabled.
use std::hint::black_box;
use std::time::Instant;

fn measure(n: u64, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..n {
            f();
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    let x = c"x";
    uevent::open("none", None, true).unwrap();
    println!("rust disabled uevent::mark {:.2}", measure(20_000_000, || { let _ = black_box(uevent::mark(black_box("x"))); }));
    let path = std::env::var("UEVENT_BENCH_FILE").unwrap_or_else(|_| "bench.uev".into());
    uevent::open("file", Some(std::path::Path::new(&path)), true).unwrap();
    println!("rust enabled uevent::mark {:.2}", measure(100_000, || { let _ = black_box(uevent::mark(black_box("x"))); }));
    println!("rust enabled mark_cstr {:.2}", measure(100_000, || { let _ = black_box(uevent::mark_cstr(black_box(x))); }));
    println!("rust enabled sys::uevent_mark {:.2}", measure(100_000, || unsafe { black_box(uevent::sys::uevent_mark(black_box(x.as_ptr()))); }));
}
