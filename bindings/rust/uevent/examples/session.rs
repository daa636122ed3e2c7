//! session.rs - a profiler's reading loop: print the uevents of a live process, or of a
//! perf.data file.
//!
//!   session PID [SECONDS]     watch process PID (needs root for the usdt uprobe)
//!   session --self            watch this process while it makes a few marks
//!   session --file perf.data  decode a `perf record` / `uevent record` file
//!
//! Build tree: bindings/rust/target/debug/examples/session --self
use std::time::{Duration, Instant};
use uevent::perf::Record;
use uevent::{Payload, PerfData, Session};

fn show(r: &Record) {
    let id = r.sample_id();
    let at = format!(
        "{:>10}.{:09} {}/{}",
        id.time.unwrap_or(0) / 1_000_000_000,
        id.time.unwrap_or(0) % 1_000_000_000,
        id.pid.unwrap_or(0),
        id.tid.unwrap_or(0)
    );
    match r {
        Record::UEvent(u) => {
            let via = u.transport.map(|t| t.name()).unwrap_or_default();
            match &u.body.payload {
                Payload::Text(t) => println!("{} [{}] mark {:?}", at, via, t),
                Payload::Counter { name, value } => println!("{} [{}] counter {}={}", at, via, name, value),
                Payload::RangeBegin { id, name, .. } => println!("{} [{}] begin {} #{}", at, via, name, id),
                Payload::RangeEnd { id, .. } => println!("{} [{}] end #{}", at, via, id),
                other => println!("{} [{}] {:?}", at, via, other),
            }
        }
        // Lost records are how the kernel says the ring overflowed: never ignore them.
        Record::Lost(l) => eprintln!("{} LOST {} records", at, l.body.lost),
        Record::Comm(c) => println!("{} comm {}", at, c.body.comm),
        Record::Sample(s) => println!("{} sample ip={:#x} callchain {:x?}", at, s.body.ip, s.body.callchain),
        other => println!("{} {}", at, other.name()),
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--file") => {
            let path = args.get(1).expect("--file PATH");
            let mut n = 0;
            for r in PerfData::open(path)? {
                match r {
                    Ok(r) => {
                        if r.header().ty < 64 {
                            show(&r); // 64 and up are perf's own bookkeeping
                        }
                        n += 1;
                    }
                    Err(e) if uevent::perf::is_eproto(&e) => continue, // a uevent format we do not know
                    Err(e) => return Err(e),
                }
            }
            eprintln!("{} records", n);
            Ok(())
        }
        Some("--self") => {
            // Open first: the session's uprobe is what turns this process's marks on.
            let mut s = Session::builder().open()?;
            eprintln!("listening on {:?}: {}", s.transports(), s.reason());
            let t = std::thread::spawn(|| {
                for i in 0..5 {
                    let _r = uevent::Range::new("work");
                    uevent::markf(format_args!("step {}", i)).unwrap();
                    uevent::counter("queue_depth", i).unwrap();
                }
            });
            t.join().unwrap();
            // Records come in time order; stop when none came for half a second.
            while let Some(r) = s.next_timeout(Duration::from_millis(500))? {
                show(&r);
            }
            eprintln!("{:?}", s.stats()?);
            Ok(())
        }
        Some(pid) => {
            let pid: u32 = pid.parse().expect("session PID [SECONDS] | --self | --file PATH");
            let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
            // The usdt probe is found in the libuevent this program loaded; if the target
            // runs another copy, name it with .usdt_path("/path/to/libuevent.so.0").
            let mut s = Session::builder().pid(pid).open()?;
            eprintln!("watching {} on {:?} for {} s", pid, s.transports(), secs);
            let end = Instant::now() + Duration::from_secs(secs);
            // next_ref lends the record without copying; to_record() when you keep it.
            // (To wait in your own event loop instead, poll s.as_fd() for readability.)
            while let Some(left) = end.checked_duration_since(Instant::now()) {
                match s.next_ref(Some(left))? {
                    Some(r) => show(&r.to_record()),
                    None => break, // timed out, or every watched task exited
                }
            }
            eprintln!("{:?}", s.stats()?);
            Ok(())
        }
        None => {
            eprintln!("usage: session PID [SECONDS] | --self | --file PERF.DATA");
            std::process::exit(2);
        }
    }
}
