//! context.rs - the OpenTelemetry context columns of `SampleColumns` (context_trace_hi,
//! context_trace_lo, context_span: the ids as big-endian numbers, 0 without a context)
//! on a capture with known spans: t/context-data.py writes it from the layouts alone
//! (trace A: span A1 40 samples on tid 201, then A2 20; trace B: span B1 30 on tid 202;
//! 10 samples of a cleared or half-written record on tids 203 and 204).
mod common;
use common::{skip, top};
use std::collections::BTreeMap;
use std::process::Command;
use uevent::PerfData;

/// (trace_hi, trace_lo, span) of a trace id and span id in hex, as the columns hold them.
fn ids(trace: &str, span: &str) -> (u64, u64, u64) {
    let h = |s: &str| u64::from_str_radix(s, 16).unwrap();
    (h(&trace[..16]), h(&trace[16..]), h(span))
}

#[test]
fn context_columns_carry_each_samples_span() {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = top("top_srcdir").join("t/context-data.py");
    let out = match Command::new(&py).arg(&script).arg("-").arg("--ids").output() {
        Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap(),
        _ => return skip("context_columns_carry_each_samples_span", "no python3 to write the capture"),
    };
    let v: Vec<&str> = out.split_whitespace().collect();
    let (a, a1, a2, b, b1) = (v[0], v[1], v[2], v[3], v[4]);
    let dir = std::env::temp_dir().join(format!("uevent-context-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.data");
    let st = Command::new(&py).arg(&script).arg(&path).status().unwrap();
    assert!(st.success(), "t/context-data.py wrote the capture");
    let c = PerfData::open(&path).unwrap().read_all_columns().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let s = &c.samples;
    assert_eq!(s.len(), 100, "every sample read");
    assert_eq!((s.context_trace_hi.len(), s.context_trace_lo.len(), s.context_span.len()), (100, 100, 100));

    // samples per (tid, ids): each thread's samples carry its span alone
    let mut got: BTreeMap<(u32, (u64, u64, u64)), usize> = BTreeMap::new();
    for i in 0..s.len() {
        *got.entry((s.tid[i], (s.context_trace_hi[i], s.context_trace_lo[i], s.context_span[i]))).or_default() += 1;
    }
    let want: BTreeMap<(u32, (u64, u64, u64)), usize> = [
        ((201, ids(a, a1)), 40),
        ((201, ids(a, a2)), 20),
        ((202, ids(b, b1)), 30),
        ((203, (0, 0, 0)), 5), // cleared: valid 0
        ((204, (0, 0, 0)), 5), // being written: valid 2, never a torn id
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);

    // the spans change where the thread's samples say: A1 for the first 40 ms, then A2
    let t201: Vec<usize> = (0..s.len()).filter(|&i| s.tid[i] == 201).collect();
    assert!(t201.windows(2).all(|w| s.time[w[0]] < s.time[w[1]]), "tid 201 in time order");
    assert!(t201[..40].iter().all(|&i| s.context_span[i] == ids(a, a1).2));
    assert!(t201[40..].iter().all(|&i| s.context_span[i] == ids(a, a2).2));
    // big-endian: the id's first byte is the number's high byte
    assert_eq!(s.context_trace_hi[t201[0]] >> 56, 0x0a);
    assert_eq!(s.context_span[t201[0]] & 0xff, 0x31);
}
