//! spawn.rs - a program started under a session (SessionBuilder::spawn) loses none of its
//! first marks; a sample's event_index names its event (PerfData, Session).
//! Tests that cannot run say SKIP with the reason, which cargo.test reports as TAP SKIP.
mod common;
use common::{top, skip, no_uprobes};
use std::io::ErrorKind;
use std::time::Duration;
use uevent::perf::Record;
use uevent::{Payload, PerfData, Session};

extern "C" {
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn dup(fd: i32) -> i32;
    fn dup2(fd: i32, fd2: i32) -> i32;
    fn close(fd: i32) -> i32;
}

#[test]
fn perf_data_samples_name_their_event() {
    let mut f = PerfData::open(top("top_srcdir").join("t/data/clock.perf.data")).unwrap();
    let mut n = 0;
    for r in f.by_ref() {
        if let Record::Sample(s) = r.unwrap() {
            assert_eq!(s.body.event_index, 0);
            n += 1;
        }
    }
    assert!(n > 0);
    assert_eq!(f.event_name(0).as_deref(), Some("task-clock"));
    assert_eq!(f.event_name(-1), None, "event_index -1 names no event");
    assert_eq!(f.event_name(1), None);
}

#[test]
fn raw_fields_by_name() {
    let mut f = PerfData::open(top("top_srcdir").join("t/data/clock.perf.data")).unwrap();
    let Some(Record::Sample(smp)) = f.by_ref().map(|r| r.unwrap()).find(|r| matches!(r, Record::Sample(_))) else {
        panic!("clock.perf.data has samples")
    };
    assert_eq!(f.raw_fields(&smp.body, false).unwrap_err().kind(), ErrorKind::NotFound);
    // a tracepoint's fields (perf record, root; libtraceevent at configure)
    let perf = std::env::var("PERF").unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("uevent-rs-spawn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("sw.data");
    let recorded = no_uprobes().is_none()
        && !perf.is_empty()
        && std::process::Command::new(&perf)
            .args(["record", "-q", "-N", "-e", "sched:sched_switch", "-o"])
            .arg(&data)
            .args(["--", "sleep", "0.01"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !recorded {
        std::fs::remove_dir_all(&dir).ok();
        return skip("raw_fields_by_name", "needs root and perf record -e sched:sched_switch");
    }
    let f = PerfData::open(&data).unwrap();
    let sw: Vec<_> = PerfData::open(&data)
        .unwrap()
        .filter_map(|r| match r.unwrap() {
            Record::Sample(s) => Some(s),
            _ => None,
        })
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    assert!(!sw.is_empty());
    for s in &sw {
        match f.raw_fields(&s.body, false) {
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                return skip("raw_fields_by_name", "libuevent built without libtraceevent")
            }
            r => {
                let t = r.unwrap();
                assert!(t.contains(&format!(" prev_pid={} ", s.body.pid)), "{}", t);
                let j = f.raw_fields(&s.body, true).unwrap();
                assert!(j.contains(&format!("\"prev_pid\": {},", s.body.pid)), "{}", j);
            }
        }
    }
}

#[test]
fn spawn_missing_program_or_pid_is_an_error() {
    let e = Session::builder().spawn(&["/nonexistent/program"]).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{}", e);
    let e = Session::builder().pid(1).spawn(&["true"]).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{}", e);
    let none: [&str; 0] = [];
    assert_eq!(Session::builder().spawn(&none).err().unwrap().kind(), ErrorKind::InvalidInput);
}

#[test]
fn spawn_hears_every_mark() {
    if let Some(why) = no_uprobes() {
        return skip("spawn_hears_every_mark", &why);
    }
    // an ELF that marks first thing (libtool's t/mark-loop is a wrapper script, slower to start)
    let mut prog = top("top_builddir").join("t/mark-loop-static");
    if !prog.exists() {
        prog = top("top_builddir").join("t/mark-loop");
    }
    // the child's "enabled N of 22" line would land in the test harness's report
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null").unwrap();
    let saved = unsafe { dup(1) };
    unsafe { dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 1) };
    let spawned = Session::builder().spawn(&[prog.as_os_str(), "22".as_ref(), "spawned right away".as_ref()]);
    unsafe {
        dup2(saved, 1);
        close(saved);
    }
    let mut s = spawned.unwrap();
    let pid = s.pid().unwrap();
    let (mut marks, mut idle, mut status, mut exited) = (0, 0, -1, false);
    while idle < 3 {
        match s.next_timeout(Duration::from_millis(200)).unwrap() {
            None => {
                exited = exited || unsafe { waitpid(pid as i32, &mut status, 1) } == pid as i32;
                idle += exited as i32;
            }
            Some(Record::UEvent(u)) => {
                marks += (u.sample_id.pid == Some(pid)
                    && matches!(&u.body.payload, Payload::Text(t) if t == "spawned right away"))
                    as i32;
            }
            Some(_) => {}
        }
    }
    if !exited {
        unsafe { waitpid(pid as i32, &mut status, 0) };
    }
    assert_eq!((marks, status), (22, 0), "a program marking at once: {} of 22 marks", marks);
    let names = s.event_names();
    assert!(names.iter().any(|n| n.ends_with(":emit16")), "{:?}", names);
    assert_eq!(s.event_name(0).as_deref(), Some(names[0].as_str()));
    assert_eq!(s.event_name(names.len() as i32), None);
}
