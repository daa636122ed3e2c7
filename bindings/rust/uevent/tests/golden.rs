//! golden.rs - every file in t/data/ decodes to the values t/codec.c checks.
use std::collections::BTreeSet;
use std::path::PathBuf;
use uevent::{decode, decode_record, ByteOrder, FileReader, JitDebugEntry, Payload};

fn data_dir() -> PathBuf {
    match std::env::var("top_srcdir") {
        Ok(d) => PathBuf::from(d).join("t/data"),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../t/data"),
    }
}

fn gold(seen: &mut BTreeSet<String>, name: &str, tag: &str) -> Vec<u8> {
    let f = format!("{}.{}.{}", name, tag, if name == "capture" { "perf.data" } else { "bin" });
    seen.insert(f.clone());
    std::fs::read(data_dir().join(&f)).unwrap_or_else(|e| panic!("{}: {}", f, e))
}

const TID_TIME: u64 = (1 << 1) | (1 << 2);

#[test]
fn golden_files_agree_with_c() {
    let mut seen = BTreeSet::new();
    let trace_id: [u8; 16] = core::array::from_fn(|i| i as u8);
    let span_id: [u8; 8] = core::array::from_fn(|i| 0xa0 + i as u8);
    for (tag, bo) in [("le", ByteOrder::Little), ("be", ByteOrder::Big)] {
        let d = |t: u32, b: Vec<u8>| decode(t, &b, bo).unwrap();
        let mut g = |n: &str| gold(&mut seen, n, tag);
        assert_eq!(d(0, g("text")), Payload::Text("hello, perf".into()), "{}", tag);
        assert_eq!(
            d(1, g("range_begin")),
            Payload::RangeBegin { id: 0x1122334455667788, parent: 0x42, flags: 1, name: "parse".into() }
        );
        assert_eq!(d(2, g("range_end")), Payload::RangeEnd { id: 0x1122334455667788, flags: 1 });
        assert_eq!(d(3, g("counter")), Payload::Counter { name: "queue_depth".into(), value: -12345 });
        assert_eq!(
            d(4, g("jit_code_load")),
            Payload::JitCodeLoad { code_addr: 0x7f0000001000, code_size: 0x80, code_index: 7, name: "TRACE_12 app.lua:34".into() }
        );
        assert_eq!(
            d(5, g("jit_code_move")),
            Payload::JitCodeMove { code_index: 7, old_addr: 0x7f0000001000, new_addr: 0x7f0000002000, code_size: 0x80 }
        );
        assert_eq!(d(6, g("jit_code_unload")), Payload::JitCodeUnload { code_addr: 0x7f0000002000, code_size: 0x80, code_index: 7 });
        assert_eq!(
            d(7, g("jit_debug_info")),
            Payload::JitDebugInfo {
                code_addr: 0x7f0000001000,
                entries: vec![
                    JitDebugEntry { addr: 0x7f0000001000, line: 34, discrim: 0, file: "app.lua".into() },
                    JitDebugEntry { addr: 0x7f0000001010, line: 35, discrim: 1, file: "app.lua".into() },
                ]
            }
        );
        assert_eq!(d(8, g("trace_context")), Payload::TraceContext { trace_id, span_id, flags: 1 });

        let r = decode_record(&g("record_v1"), bo, TID_TIME, false).unwrap();
        assert_eq!((r.record_type, r.format, r.ty), (63, 1, 0));
        assert_eq!(r.data, b"hello, perf\0");
        assert_eq!(r.payload, Payload::Text("hello, perf".into()));
        assert_eq!((r.pid, r.tid, r.time, r.cpu), (Some(100), Some(101), Some(123456789), None));
        let r = decode_record(&g("record_v0"), bo, TID_TIME, true).unwrap();
        assert_eq!((r.record_type, r.format, r.tid), (11, 0, Some(101)));
        assert_eq!(r.data, b"hello, perf\0");

        g("capture");
        let recs: Vec<_> = FileReader::open(data_dir().join(format!("capture.{}.perf.data", tag)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs.iter().map(|r| r.time.unwrap()).collect::<Vec<_>>(), vec![1000, 2000, 3000]);
        assert_eq!(recs[0].payload, Payload::Text("hello, perf".into()));
        assert_eq!(recs[1].tid, Some(102));
        assert_eq!(recs[1].payload, Payload::Counter { name: "queue_depth".into(), value: -12345 });
        assert_eq!(
            recs[2].payload,
            Payload::RangeBegin { id: 0x1122334455667788, parent: 0x42, flags: 1, name: "parse".into() }
        );
    }
    let all: BTreeSet<String> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin") || n.starts_with("capture."))
        .collect();
    // perf_records.*.bin and ring.le.bin are the reader API's: tests/perfdata.rs decodes them.
    let left: Vec<_> =
        all.difference(&seen).filter(|n| !n.starts_with("perf_records.") && !n.starts_with("ring.")).collect();
    assert!(left.is_empty(), "golden files not decoded: {:?}", left);
}

#[test]
fn corrupt_input_is_refused() {
    let mut seen = BTreeSet::new();
    let rec = gold(&mut seen, "record_v1", "le");
    let e = decode_record(&rec, ByteOrder::Little, 0, false).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(22));
    let mut bad = rec.clone();
    bad[8] = 9;
    assert_eq!(decode_record(&bad, ByteOrder::Little, TID_TIME, false).unwrap_err().raw_os_error(), Some(71));
    let e = decode(3, b"abc", ByteOrder::Host).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    for n in 0..rec.len() {
        assert!(decode_record(&rec[..n], ByteOrder::Little, TID_TIME, false).is_err(), "prefix {}", n);
    }
}
