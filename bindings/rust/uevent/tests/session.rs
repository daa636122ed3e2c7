//! session.rs - live Sessions reading the marks this process makes through the usdt
//! transport (needs perf_event_open and uprobes: root here), and the errors of bad options.
//! Tests that cannot run say SKIP with the reason, which cargo.test reports as TAP SKIP.
mod common;
use common::{skip, cannot_run};
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Mutex;
use std::time::Duration;
use uevent::perf::{self, Record, Transport};
use uevent::{Payload, Session};

// Every session here watches this process: one at a time, or each sees the others' marks.
static LOCK: Mutex<()> = Mutex::new(());

fn tid() -> u32 {
    let l = std::fs::read_link("/proc/thread-self").unwrap();
    l.file_name().unwrap().to_str().unwrap().parse().unwrap()
}

/// Lines of uprobe_events holding `prefix`, once two reads in a row agree: the kernel
/// gives the list a page at a time, and a line another process removes before the page
/// being read moves the lines after it back, so one read can miss lines that are there
/// all along (tests run side by side add and remove uprobe events).
fn uprobe_events(prefix: &str) -> usize {
    let read = || {
        ["/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"]
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
    };
    let mut text = read();
    for _ in 0..50 {
        let again = read();
        if again == text {
            break;
        }
        text = again;
    }
    text.map_or(0, |s| s.lines().filter(|l| l.contains(prefix)).count())
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Reads until nothing came for three waits of 200 ms.
fn drain(s: &mut Session) -> Vec<Record> {
    let mut out = Vec::new();
    let mut idle = 0;
    while idle < 3 {
        match s.next_timeout(Duration::from_millis(200)).unwrap() {
            Some(r) => {
                idle = 0;
                out.push(r);
            }
            None => idle += 1,
        }
    }
    out
}

const N_MAIN: usize = 300;
const N_THR: usize = 100;

#[test]
fn live_session_reads_this_process() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        return skip("live_session_reads_this_process", &why);
    }
    let pid = std::process::id();
    let prefix = format!("libuevent_{}_", pid);
    let fds_before = open_fds();
    let mut s = Session::builder().transports(&[Transport::Usdt]).usdt_max_payload(256).open().unwrap();
    assert_eq!(s.transports(), vec![Transport::Usdt], "{}", s.reason());
    assert!(uevent::enabled(), "the uprobe's semaphore turned the enabled word on");
    assert!(s.as_raw_fd() >= 0 && s.as_fd().as_raw_fd() == s.as_raw_fd());
    // one uprobe event per size class of the libuevent:emitN probes (16 .. 4096 bytes)
    assert_eq!(uprobe_events(&prefix), 5, "a uprobe event per probe size class while the session is open");

    let main_tid = tid();
    let threads: Vec<_> = (0..2)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..N_THR {
                    uevent::mark(&format!("thread {} mark {}", t, i)).unwrap();
                }
                tid()
            })
        })
        .collect();
    for i in 0..N_MAIN {
        uevent::mark(&format!("main mark {}", i)).unwrap();
        if i == N_MAIN / 2 {
            uevent::counter("queue_depth", -42).unwrap();
            uevent::emit(uevent::TYPE_USER + 7, &[0xde, 0xad, 0xbe, 0xef, 0, 1]).unwrap();
        }
    }
    let long = "L".repeat(1000);
    uevent::mark(&long).unwrap();
    let thread_tids: Vec<u32> = threads.into_iter().map(|t| t.join().unwrap()).collect();

    let recs = drain(&mut s);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut last_time: HashMap<u32, u64> = HashMap::new();
    let (mut counters, mut users, mut cut) = (0, 0, 0);
    for r in &recs {
        let Record::UEvent(u) = r else { panic!("a session without all_records returns uevents only: {:?}", r.name()) };
        assert_eq!(u.transport, Some(Transport::Usdt));
        assert_eq!(u.sample_id.pid, Some(pid));
        let t = u.sample_id.tid.unwrap();
        let time = u.sample_id.time.unwrap();
        assert!(time >= *last_time.get(&t).unwrap_or(&0), "each thread's marks in time order");
        last_time.insert(t, time);
        match &u.body.payload {
            Payload::Text(x) if x.starts_with("main mark ") => {
                assert_eq!(t, main_tid);
                *seen.entry(x.clone()).or_default() += 1;
            }
            Payload::Text(x) if x.starts_with("thread ") => {
                assert!(thread_tids.contains(&t), "{} from tid {}", x, t);
                *seen.entry(x.clone()).or_default() += 1;
            }
            Payload::Counter { name, value } => {
                assert_eq!((name.as_str(), *value), ("queue_depth", -42));
                counters += 1;
            }
            Payload::Raw { ty, data } if *ty == uevent::TYPE_USER + 7 => {
                assert_eq!(data.as_slice(), &[0xde, 0xad, 0xbe, 0xef, 0, 1][..]);
                users += 1;
            }
            // the 1000-byte mark, cut to the 256 bytes the session fetches: without its
            // NUL it is not valid text, so it comes as bytes
            Payload::Raw { ty: 0, data } => {
                assert_eq!(data.as_slice(), &long.as_bytes()[..256]);
                cut += 1;
            }
            other => panic!("unexpected {:?}", other),
        }
    }
    assert_eq!(seen.len(), N_MAIN + 2 * N_THR, "every mark arrived");
    assert!(seen.values().all(|&c| c == 1), "each exactly once");
    assert_eq!((counters, users, cut), (1, 1, 1));
    assert_eq!(recs.len(), N_MAIN + 2 * N_THR + 3);
    let st = s.stats().unwrap();
    assert_eq!((st.lost, st.lost_samples, st.corrupt), (0, 0, 0), "{:?}", st);
    assert_eq!(st.truncated, 1, "the long mark is counted as truncated");
    assert_eq!((st.records, st.uevents), (recs.len() as u64, recs.len() as u64));

    // zero copy: the payload is borrowed from the session's buffer
    uevent::mark("borrowed").unwrap();
    let r = s.next_ref(Some(Duration::from_secs(5))).unwrap().expect("the mark within 5 s");
    assert_eq!(r.uevent_payload(), Some((0, &b"borrowed\0"[..])));
    assert_eq!(r.sample_id().tid, Some(main_tid));
    assert!(matches!(r.to_record(), Record::UEvent(_)));
    assert!(s.next_ref(Some(Duration::ZERO)).unwrap().is_none(), "nothing else waiting");

    // snapshot is for overwrite sessions only
    assert_eq!(s.snapshot().unwrap_err().kind(), ErrorKind::InvalidInput);

    // disable stops recording, enable resumes it
    s.disable().unwrap();
    uevent::mark("while disabled").unwrap();
    s.enable().unwrap();
    uevent::mark("enabled again").unwrap();
    let texts: Vec<_> = drain(&mut s)
        .iter()
        .filter_map(|r| match &r.uevent()?.payload {
            Payload::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["enabled again"]);

    drop(s);
    assert_eq!(uprobe_events(&prefix), 0, "dropping the session removed the uprobe event");
    assert_eq!(open_fds(), fds_before, "dropping the session closed its fds");
    // Other tests' sessions (cargo runs them in parallel) and system-wide usdt tracers
    // of other test programs raise the same semaphore, so only our own share is known
    // to be gone: the uprobe event count above says so.
    uevent::mark("nobody listens").unwrap();
}

#[test]
fn live_session_is_send_and_overwrite_snapshots() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        return skip("live_session_is_send_and_overwrite_snapshots", &why);
    }
    // 64-byte fetches keep each sample small: the 20 marks fit the 16-page rings whole
    let mut s = Session::builder()
        .transports(&[Transport::Usdt])
        .overwrite(true)
        // only our threads: a tree's usdt rings also take other processes' marks
        .no_inherit(true)
        .ring_pages(16)
        .usdt_max_payload(64)
        .open()
        .unwrap();
    for i in 0..20 {
        uevent::mark(&format!("flight {}", i)).unwrap();
    }
    assert!(s.next_timeout(Duration::from_millis(50)).unwrap().is_none(), "an overwrite ring is read on demand");
    // the session moves to a reader thread
    let got = std::thread::spawn(move || {
        let n = s.snapshot().unwrap();
        let recs = drain(&mut s);
        (n, recs)
    })
    .join()
    .unwrap();
    let texts: Vec<String> = got
        .1
        .iter()
        .filter_map(|r| match &r.uevent()?.payload {
            Payload::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    // the count includes side-band records (the reader thread's FORK) that next() filters
    assert!(got.0 >= 20, "snapshot queued the 20 marks ({})", got.0);
    assert_eq!(texts, (0..20).map(|i| format!("flight {}", i)).collect::<Vec<_>>());
}

#[test]
fn live_session_records_what_it_reads() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        return skip("live_session_records_what_it_reads", &why);
    }
    let dir = std::env::temp_dir().join(format!("uevent-rs-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.perf.data");
    let mut s = Session::builder().transports(&[Transport::Usdt]).open().unwrap();
    s.record_to(std::fs::File::create(&path).unwrap()).unwrap();
    let e = s.record_to(std::fs::File::create(dir.join("second")).unwrap()).unwrap_err();
    assert_eq!(perf::errno(&e), Some(16), "EBUSY: {}", e);
    for i in 0..50 {
        uevent::mark(&format!("recorded {}", i)).unwrap();
    }
    uevent::counter("recorded_counter", 50).unwrap();
    let live = drain(&mut s);
    assert_eq!(live.len(), 51);
    drop(s); // flushes and closes the file
    let from_file: Vec<Record> = uevent::PerfData::open(&path)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
        .into_iter()
        .filter(|r| r.uevent().is_some())
        .collect();
    assert_eq!(from_file, live, "the recorded perf.data holds the records the session returned");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn session_options_errors() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // refused before any kernel call: an interior NUL in a path
    let e = Session::builder().usdt_path("bad\0path").open().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    if let Some(why) = cannot_run() {
        return skip("session_options_errors", &why);
    }
    let usdt = [Transport::Usdt];
    let e = Session::builder().transports(&usdt).ring_pages(3).open().unwrap_err();
    assert_eq!((e.kind(), perf::errno(&e)), (ErrorKind::InvalidInput, Some(22)), "{}", e);
    // a CPU list that names no CPU of this system
    let e = Session::builder().transports(&usdt).cpus("0-4095").open().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{}", e);
    assert!(e.to_string().contains("cpus"), "{}", e);
    let s = Session::builder().transports(&usdt).cpus("0").open().expect("a session on CPU 0");
    drop(s);
    // a usdt object that is missing or has no probe: no transport left (ENODEV), and the
    // message says why
    let e = Session::builder().transports(&usdt).usdt_path("/nonexistent/libx.so").open().unwrap_err();
    assert_eq!(perf::errno(&e), Some(19), "{}", e);
    assert!(e.to_string().contains("usdt: No such file or directory"), "{}", e);
    assert!(uevent::reason().contains("usdt"), "the reason channel says why: {}", uevent::reason());
    let e = Session::builder().transports(&usdt).usdt_path("/bin/true").open().unwrap_err();
    assert_eq!(perf::errno(&e), Some(19), "{}", e);
    assert!(e.to_string().contains("no libuevent:emit16..emit4096 probes"), "{}", e);
    // a pid that does not exist (pid_max is at most 2^22): its /proc entry is not found
    let e = Session::builder().transports(&usdt).pid(0x7fff_fff0).open().unwrap_err();
    assert_eq!(perf::errno(&e), Some(3), "a missing pid is ESRCH: {}", e);
    // a session on no usable transport
    let e = Session::builder().transports(&[Transport::File]).open().unwrap_err();
    assert_eq!(perf::errno(&e), Some(19), "ENODEV: {}", e);
}
