//! emit.rs - emit through the file transport and read back; errors. One test function,
//! because the transport is process-wide.
use std::io::ErrorKind;
use uevent::{FileReader, Payload, Range};

/// The usdt semaphore: the enabled word's low 16 bits, which the kernel raises.
fn usdt_semaphore() -> u32 {
    // SAFETY: a constant pointer to the library's aligned enabled word.
    unsafe { std::ptr::read_volatile(uevent::sys::uevent_enabled_ptr) & 0xffff }
}

#[test]
fn emit_read_back_and_errors() {
    let dir = std::env::temp_dir().join(format!("uevent-rs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("emit.perf.data");
    assert_eq!(uevent::open("file", Some(&path), true).unwrap(), "file");
    assert!(uevent::enabled());
    assert_eq!(uevent::max_payload(), uevent::MAX_PAYLOAD);
    uevent::stats_reset();
    uevent::mark("hello from rust").unwrap();
    uevent::markf(format_args!("rows={}", 42)).unwrap();
    let long = "x".repeat(1000);
    uevent::mark(&long).unwrap();
    uevent::counter("queue_depth", -7).unwrap();
    uevent::emit(uevent::TYPE_USER + 1, &[1, 2, 3]).unwrap();
    {
        let r = Range::new("outer");
        assert_ne!(r.id(), 0);
        uevent::mark("inside").unwrap();
    }
    Range::new("explicit").end().unwrap();
    drop(uevent::AsyncRange::new("async-op"));
    uevent::trace_context(&[7; 16], &[9; 8], 1).unwrap();
    let st = uevent::stats().unwrap();
    assert_eq!((st.emitted, st.dropped), (13, 0), "{:?}", st);

    let recs: Vec<_> = FileReader::open(&path).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 13);
    let pid = std::process::id();
    assert!(recs.iter().all(|r| r.pid == Some(pid) && r.tid.is_some()));
    assert!(recs.windows(2).all(|w| w[0].time <= w[1].time));
    assert_eq!(recs[0].payload, Payload::Text("hello from rust".into()));
    assert_eq!(recs[1].payload, Payload::Text("rows=42".into()));
    assert_eq!(recs[2].payload, Payload::Text(long.clone()));
    assert_eq!(recs[3].payload, Payload::Counter { name: "queue_depth".into(), value: -7 });
    assert_eq!(recs[4].payload, Payload::Raw { ty: uevent::TYPE_USER + 1, data: vec![1, 2, 3] });
    match (&recs[5].payload, &recs[6].payload, &recs[7].payload) {
        (Payload::RangeBegin { id, name, parent: 0, .. }, Payload::Text(t), Payload::RangeEnd { id: end, .. }) => {
            assert_eq!((name.as_str(), t.as_str(), id), ("outer", "inside", end));
        }
        other => panic!("range records: {:?}", other),
    }
    assert!(matches!(&recs[10].payload, Payload::RangeBegin { name, flags: 1, .. } if name == "async-op"));
    assert_eq!(recs[12].payload, Payload::TraceContext { trace_id: [7; 16], span_id: [9; 8], flags: 1 });

    // disabled: nothing is formatted or emitted
    uevent::open("none", None, true).unwrap();
    // a usdt tracer attached system-wide (a parallel test's) raises the word's low bits
    assert!(!uevent::enabled() || usdt_semaphore() != 0);
    struct Boom;
    impl std::fmt::Display for Boom {
        fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            panic!("formatted while disabled")
        }
    }
    // (with a tracer attached the probe fires under any transport: it formats and counts)
    let traced = usdt_semaphore() != 0;
    if !traced {
        uevent::markf(format_args!("{}", Boom)).unwrap();
    }
    uevent::mark("off").unwrap();
    if !traced {
        assert_eq!(uevent::stats().unwrap().emitted, 13);
    }

    // errors
    uevent::open("file", Some(&path), true).unwrap();
    uevent::stats_reset();
    let e = uevent::emit(uevent::TYPE_USER, &vec![0u8; uevent::MAX_PAYLOAD + 1]).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(7), "E2BIG: {}", e);
    // refused before the library: not a drop; the library's own refusal is one
    assert_eq!(uevent::stats().unwrap().dropped, 0);
    let big = vec![0u8; uevent::MAX_PAYLOAD + 1];
    assert_eq!(unsafe { uevent::sys::uevent_emit(uevent::TYPE_USER, big.as_ptr().cast(), big.len() as _) }, -7);
    assert_eq!(uevent::stats().unwrap().dropped_for("too_big"), 1);
    let e = uevent::open("carrier-pigeon", None, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{}", e);
    assert_eq!(uevent::transport(), "file");
    let e = FileReader::open(dir.join("missing.perf.data")).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    std::fs::write(dir.join("bad.perf.data"), b"NOTAFILE-but-long-enough-for-a-header").unwrap();
    let e = FileReader::open(dir.join("bad.perf.data")).err().unwrap();
    assert_eq!(e.raw_os_error(), Some(22));
    let cap = std::fs::read(
        std::env::var("top_srcdir").map(std::path::PathBuf::from)
            .unwrap_or_else(|_| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.."))
            .join("t/data/capture.le.perf.data"),
    )
    .unwrap();
    std::fs::write(dir.join("trunc.perf.data"), &cap[..cap.len() - 5]).unwrap();
    let mut rd = FileReader::open(dir.join("trunc.perf.data")).unwrap();
    assert!(rd.next().unwrap().is_ok() && rd.next().unwrap().is_ok());
    // cut inside its last record: ENODATA (61), not a corrupt record
    let e = rd.next().unwrap().unwrap_err();
    assert_eq!(e.kind(), std::io::Error::from_raw_os_error(61).kind(), "{}", e);
    assert!(e.to_string().contains("at offset"), "{}", e);
    assert!(rd.next().is_none());

    argument_checks(&dir);

    // Drop closes: many readers opened and dropped leave no descriptor behind.
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let before = fds();
    for _ in 0..10000 {
        let mut r = FileReader::open(dir.join("trunc.perf.data")).unwrap();
        r.next();
    }
    assert_eq!(fds(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bad call: what it is, the call, the errno it must fail with.
type BadCall<'a> = (&'a str, Box<dyn Fn() -> std::io::Result<()> + 'a>, i32);

/// What a call returned: Ok, or the errno it failed with.
fn outcome(r: std::io::Result<()>) -> Result<(), Option<i32>> {
    r.map_err(|e| e.raw_os_error())
}

/// Bad arguments get an error with the file transport (always on) and write nothing;
/// with nobody listening (transport none) a mark, emit or counter is a silent no-op as
/// in C (its enabled check comes first), and a range is refused the same either way.
/// Calls at the limits pass both ways.
fn argument_checks(dir: &std::path::Path) {
    let max = uevent::MAX_PAYLOAD;
    let t = uevent::TYPE_USER;
    // The name limits are what the C encoders leave of a payload around an empty name.
    let empty = b"\0";
    let c = uevent::sys::uevent_counter { value: 0, name: empty.as_ptr().cast(), name_len: 0 };
    let rb = uevent::sys::uevent_range_begin { id: 1, parent: 0, flags: 0, name: empty.as_ptr().cast(), name_len: 0 };
    let mut buf = [0u8; 64];
    let n = unsafe { uevent::sys::uevent_counter_encode(buf.as_mut_ptr().cast(), buf.len() as _, &c) };
    assert_eq!(uevent::COUNTER_NAME_MAX, max - n as usize);
    let n = unsafe { uevent::sys::uevent_range_begin_encode(buf.as_mut_ptr().cast(), buf.len() as _, &rb) };
    assert_eq!(uevent::RANGE_NAME_MAX, max - n as usize);
    assert_eq!(uevent::TEXT_MAX, max - 1);

    let long_text = "x".repeat(uevent::TEXT_MAX + 1);
    let long_counter = "n".repeat(uevent::COUNTER_NAME_MAX + 1);
    let long_range = "r".repeat(uevent::RANGE_NAME_MAX + 1);
    let long_cstr = std::ffi::CString::new(long_text.clone()).unwrap();
    let big = vec![0u8; max + 1];
    let bad: Vec<BadCall> = vec![
        ("mark with a NUL", Box::new(|| uevent::mark("a\0b")), 22),
        ("mark past TEXT_MAX", Box::new(|| uevent::mark(&long_text)), 7),
        ("mark_cstr past TEXT_MAX", Box::new(|| uevent::mark_cstr(&long_cstr)), 7),
        ("emit past MAX_PAYLOAD", Box::new(|| uevent::emit(t, &big)), 7),
        ("counter name with a NUL", Box::new(|| uevent::counter("a\0b", 1)), 22),
        ("counter name past COUNTER_NAME_MAX", Box::new(|| uevent::counter(&long_counter, 1)), 7),
        ("Range::try_new name with a NUL", Box::new(|| uevent::Range::try_new("a\0b").map(drop)), 22),
        ("Range::try_new past RANGE_NAME_MAX", Box::new(|| uevent::Range::try_new(&long_range).map(drop)), 7),
        ("AsyncRange::try_new name with a NUL", Box::new(|| uevent::AsyncRange::try_new("\0").map(drop)), 22),
        ("AsyncRange::try_new past RANGE_NAME_MAX", Box::new(|| uevent::AsyncRange::try_new(&long_range).map(drop)), 7),
    ];
    let checks = dir.join("checks.perf.data");
    uevent::open("none", None, true).unwrap();
    let quiet = !uevent::enabled();
    let off: Vec<_> = bad.iter().map(|(_, f, _)| outcome(f())).collect();
    let no_range = (uevent::Range::new("a\0b").id(), uevent::AsyncRange::new("a\0b").id());
    uevent::open("file", Some(&checks), true).unwrap();
    let header = std::fs::metadata(&checks).unwrap().len();
    uevent::stats_reset();
    let on: Vec<_> = bad.iter().map(|(_, f, _)| outcome(f())).collect();
    assert_eq!((uevent::Range::new("a\0b").id(), uevent::AsyncRange::new("a\0b").id()), (0, 0));
    assert_eq!(no_range, (0, 0), "a refused name begins no range");
    for ((desc, _, errno), (a, b)) in bad.iter().zip(off.iter().zip(on.iter())) {
        assert_eq!(*b, Err(Some(*errno)), "{} with the file transport", desc);
        if quiet && desc.contains("Range") {
            assert_eq!(a, b, "{}: the same with nobody listening", desc);
        } else if quiet {
            assert_eq!(*a, Ok(()), "{}: a no-op with nobody listening", desc);
        }
    }
    let st = uevent::stats().unwrap();
    assert_eq!((st.emitted, st.dropped), (0, 0), "{:?}", st);
    assert_eq!(std::fs::metadata(&checks).unwrap().len(), header, "refused calls write nothing");

    // at the limits
    let text = "x".repeat(uevent::TEXT_MAX);
    let cname = "n".repeat(uevent::COUNTER_NAME_MAX);
    let rname = "r".repeat(uevent::RANGE_NAME_MAX);
    let good = || -> std::io::Result<()> {
        uevent::mark(&text)?;
        uevent::mark_cstr(&std::ffi::CString::new(text.clone()).unwrap())?;
        uevent::emit(t, &vec![1u8; max])?;
        uevent::counter(&cname, i64::MIN)?;
        uevent::Range::try_new(&rname)?.end()?;
        drop(uevent::AsyncRange::try_new(&rname)?);
        Ok(())
    };
    uevent::open("none", None, true).unwrap();
    good().unwrap();
    uevent::open("file", Some(&checks), true).unwrap();
    good().unwrap();
    let recs: Vec<_> = FileReader::open(&checks).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 8);
    assert_eq!(recs[0].payload, Payload::Text(text.clone()));
    assert_eq!(recs[1].payload, Payload::Text(text));
    assert_eq!(recs[2].payload, Payload::Raw { ty: t, data: vec![1u8; max] });
    assert_eq!(recs[3].payload, Payload::Counter { name: cname, value: i64::MIN });
    assert!(matches!(&recs[4].payload, Payload::RangeBegin { name, .. } if *name == rname));
    assert!(matches!(&recs[6].payload, Payload::RangeBegin { name, flags: 1, .. } if *name == rname));
}

/// The thread context lands in this thread's OTEP 4947 record, on any kernel; another
/// thread's is its own; a guard brings the previous context back.
#[test]
fn thread_context_record() {
    // The library writes the record: read it by volatile copies, never hold a reference.
    let ptr = unsafe { uevent::sys::uevent_thread_context_get() };
    // SAFETY: the calling thread's record, valid and aligned while the thread lives.
    let read = || unsafe { std::ptr::read_volatile(ptr) };
    uevent::thread_context(&[7; 16], &[9; 8], 1).unwrap();
    let a = read();
    assert_eq!((a.trace_id, a.span_id, a.trace_flags, a.valid), ([7; 16], [9; 8], 1, 1));
    assert_eq!((std::mem::size_of_val(&a), a.attrs_data_size), (256, 0));
    {
        let g = uevent::ThreadContext::enter(&[7; 16], &[5; 8], 0).unwrap();
        g.attr(0, "/orders").unwrap().attr(1, "alice").unwrap();
        let a = read();
        assert_eq!((a.span_id, a.attrs_data_size), ([5; 8], 9 + 7));
        assert_eq!(&a.attrs_data[..9], b"\x00\x07/orders");
        {
            let _inner = uevent::ThreadContext::enter(&[7; 16], &[6; 8], 0).unwrap();
            assert_eq!((read().span_id, read().attrs_data_size), ([6; 8], 0));
        }
        let a = read();
        assert_eq!((a.span_id, a.attrs_data_size), ([5; 8], 9 + 7), "inner guard restores");
    }
    let a = read();
    assert_eq!((a.span_id, a.valid, a.attrs_data_size), ([9; 8], 1, 0), "outer restored");
    let registered = uevent::thread_context_registered();
    let other = std::thread::spawn(|| {
        let p = unsafe { uevent::sys::uevent_thread_context_get() };
        // SAFETY: as above, for the spawned thread.
        (unsafe { std::ptr::read_volatile(p) }.valid, p as usize)
    })
    .join()
    .unwrap();
    assert_eq!(other.0, 0);
    assert_ne!(other.1, ptr as usize);
    uevent::thread_context_clear().unwrap();
    assert_eq!(read().valid, 0);
    assert!(uevent::thread_context_attr(0, "x").is_err());
    assert_eq!(uevent::thread_context_registered(), registered);
}

/// The process context appears as an OTEL_CTX mapping.
#[test]
fn process_context_published() {
    uevent::process_context(Some("rust-test"), None, &["http.route"]).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(maps.contains("OTEL_CTX"), "{maps}");
    assert!(uevent::process_context(None, None, &[]).is_err(), "the key map is append-only");
}
