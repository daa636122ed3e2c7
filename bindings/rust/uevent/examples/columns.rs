//! columns.rs - Rust's share of bench/arrays: the best wall time of ROUNDS reads of
//! FILE record by record (owned `perf::Record`s) and as columns (`read_all_columns`).
//! Prints `rust_records ROWS SECONDS` and `rust_columns ROWS SECONDS`, rows = samples
//! + uevents, as bench/arrays.py does for Python.
use std::time::Instant;
use uevent::perf::Record;
use uevent::PerfData;

fn records(path: &str) -> std::io::Result<usize> {
    let mut n = 0;
    for r in PerfData::open(path)? {
        if matches!(r?, Record::Sample(_) | Record::UEvent(_)) {
            n += 1;
        }
    }
    Ok(n)
}

fn columns(path: &str) -> std::io::Result<usize> {
    Ok(PerfData::open(path)?.read_all_columns()?.len())
}

fn best(f: fn(&str) -> std::io::Result<usize>, path: &str, rounds: usize) -> std::io::Result<(usize, f64)> {
    let (mut n, mut b) = (0, f64::MAX);
    for _ in 0..rounds {
        let t0 = Instant::now();
        n = f(path)?;
        b = b.min(t0.elapsed().as_secs_f64());
    }
    Ok((n, b))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: columns FILE [ROUNDS]");
        std::process::exit(2);
    }
    let rounds = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let run = || -> std::io::Result<()> {
        columns(&args[1])?; // the page cache, once
        for (name, f, k) in [("rust_records", records as fn(&str) -> _, 1), ("rust_columns", columns, 5)] {
            let (n, s) = best(f, &args[1], rounds * k)?;
            println!("{} {} {:.6}", name, n, s);
        }
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("columns: {}: {}", args[1], e);
        std::process::exit(1);
    }
}
