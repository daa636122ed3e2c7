//! batch.rs - the columnar readers (PerfData::read_batch, read_all_columns,
//! Session::read_batch) give row for row what per-record iteration gives, on every
//! t/data/*.perf.data, in batches of any size; cut, empty and garbage files give errors.
mod common;
use common::{top, skip, cannot_run};
use std::io::ErrorKind;
use std::path::PathBuf;
use std::time::Duration;
use uevent::perf::{self, Columns, Record, Transport};
use uevent::{PerfData, Session};

fn golden() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(top("top_srcdir").join("t/data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".perf.data"))
        .collect();
    v.sort();
    assert!(v.len() >= 4, "the golden perf.data files are there: {:?}", v);
    v
}

/// One row of either kind, as a tuple to compare.
type SRow = (u64, u32, u32, u32, i32, u64, u64, Vec<u64>);
type URow = (u64, u32, u32, u32, i32, u32, u32, u32, Vec<u8>);

/// The samples and uevents of `path` record by record, and the error that ended it.
fn per_record(path: &PathBuf) -> (Vec<SRow>, Vec<URow>, Option<i32>) {
    let (mut s, mut u) = (Vec::new(), Vec::new());
    for r in PerfData::open(path).unwrap() {
        let r = match r {
            Ok(r) => r,
            Err(e) if perf::is_eproto(&e) => continue, // the batch reader skips them too
            Err(e) => return (s, u, perf::errno(&e)),
        };
        match r {
            Record::Sample(x) => {
                let b = &x.body;
                s.push((b.time, b.pid, b.tid, b.cpu, b.event_index, b.ip, b.period, b.callchain.clone()));
            }
            Record::UEvent(x) => {
                let id = &x.sample_id;
                u.push((
                    id.time.unwrap_or(0),
                    id.pid.unwrap_or(0),
                    id.tid.unwrap_or(0),
                    id.cpu.unwrap_or(0),
                    x.body.event_index,
                    x.body.ty,
                    x.body.flags,
                    x.transport.map_or(0, Transport::raw),
                    x.body.data.clone(),
                ));
            }
            _ => {}
        }
    }
    (s, u, None)
}

fn rows(c: &Columns) -> (Vec<SRow>, Vec<URow>) {
    let s = &c.samples;
    let u = &c.uevents;
    assert_eq!(s.len(), s.chain_len.len());
    assert_eq!(u.len(), u.data_len.len());
    let sr = (0..s.len())
        .map(|i| (s.time[i], s.pid[i], s.tid[i], s.cpu[i], s.event_index[i], s.ip[i], s.period[i], s.callchain(i).to_vec()))
        .collect();
    let ur = (0..u.len())
        .map(|i| {
            (
                u.time[i],
                u.pid[i],
                u.tid[i],
                u.cpu[i],
                u.event_index[i],
                u.ty[i],
                u.flags[i],
                u.transport[i],
                u.payload(i).to_vec(),
            )
        })
        .collect();
    (sr, ur)
}

/// Every batch of `n` rows until the end or an error, appended; and that error's errno.
fn by_batches(path: &PathBuf, n: usize) -> (Columns, usize, Option<i32>) {
    let mut f = PerfData::open(path).unwrap();
    let (mut all, mut calls) = (Columns::default(), 0);
    loop {
        match f.read_batch(n) {
            Ok(Some(c)) => {
                assert!(!c.is_empty() && c.samples.len() <= n && c.uevents.len() <= n, "{} rows for {}", c.len(), n);
                all.append(c);
                calls += 1;
            }
            Ok(None) => return (all, calls, None),
            Err(e) => return (all, calls, perf::errno(&e)),
        }
    }
}

#[test]
fn columns_equal_per_record_on_golden_files() {
    let (mut samples, mut uevents, mut chains) = (0, 0, 0);
    for p in golden() {
        let (ws, wu, werr) = per_record(&p);
        assert_eq!(werr, None, "{}: the golden file reads to its end", p.display());
        let all = PerfData::open(&p).unwrap().read_all_columns().unwrap();
        assert_eq!(rows(&all), (ws.clone(), wu.clone()), "{}: read_all_columns", p.display());
        let (b, calls, err) = by_batches(&p, 3);
        assert_eq!(err, None);
        assert_eq!(rows(&b), (ws.clone(), wu.clone()), "{}: in batches of 3", p.display());
        assert!(calls >= ws.len().max(wu.len()).div_ceil(3), "{}: {} calls", p.display(), calls);
        let (b1, _, _) = by_batches(&p, 1);
        assert_eq!(rows(&b1), (ws.clone(), wu.clone()), "{}: one row at a time", p.display());
        samples += ws.len();
        uevents += wu.len();
        chains += ws.iter().filter(|s| !s.7.is_empty()).count();
    }
    assert!(samples > 0 && uevents > 0 && chains > 0, "{} samples ({} with callchains), {} uevents", samples, chains, uevents);
}

#[test]
fn bad_max_rows_is_invalid_input() {
    let p = &golden()[0];
    let mut f = PerfData::open(p).unwrap();
    let e = f.read_batch(0).unwrap_err();
    assert_eq!((e.kind(), perf::errno(&e)), (ErrorKind::InvalidInput, Some(22)), "{}", e);
    let e = f.read_batch(1 << 31).unwrap_err();
    assert_eq!(perf::errno(&e), Some(22));
    // nothing was lost: the file reads whole after the refusals
    let (ws, wu, _) = per_record(p);
    assert_eq!(rows(&f.read_all_columns().unwrap()), (ws, wu));
}

fn tmpfile(name: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("uevent-batch-{}-{}", std::process::id(), name));
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn cut_file_gives_its_rows_then_enodata() {
    let mut tried = 0;
    for p in golden() {
        let bytes = std::fs::read(&p).unwrap();
        let (ws, wu, _) = per_record(&p);
        if ws.len() + wu.len() < 4 {
            continue;
        }
        // cut 3 bytes into the record halfway through: per-record iteration says how
        let mut offsets = Vec::new();
        let mut f = PerfData::open(&p).unwrap();
        loop {
            let at = f.offset();
            match f.next_ref() {
                Ok(Some(_)) => offsets.push(at),
                Ok(None) => break,
                Err(e) if perf::is_eproto(&e) => offsets.push(at),
                Err(e) => panic!("{}: {}", p.display(), e),
            }
        }
        let cut = tmpfile("cut", &bytes[..offsets[offsets.len() / 2] as usize + 3]);
        let (cs, cu, cerr) = per_record(&cut);
        if cerr != Some(61) || cs.len() + cu.len() == 0 {
            let _ = std::fs::remove_file(&cut);
            continue; // the cut fell where this file cannot show it (a header, say)
        }
        tried += 1;
        let (b, _, err) = by_batches(&cut, 3);
        assert_eq!(err, Some(61), "{}: ENODATA after the rows", p.display());
        assert_eq!(rows(&b), (cs.clone(), cu.clone()), "{}: the whole rows first", p.display());
        let e = PerfData::open(&cut).unwrap().read_all_columns().unwrap_err();
        assert!(perf::is_cut(&e), "{}", e);
        assert!(e.to_string().contains("offset"), "the error says where: {}", e);
        let partial = perf::partial_columns(&e).expect("the rows before the cut come with the error");
        assert_eq!(rows(partial), (cs, cu));
        let _ = std::fs::remove_file(&cut);
    }
    assert!(tried > 0, "at least one golden file shows a cut");
}

#[test]
fn empty_and_garbage_files_are_clear_errors() {
    for (name, bytes) in [("empty", &b""[..]), ("garbage", &b"this is not a perf.data file at all, no PERFILE2 magic"[..])] {
        let p = tmpfile(name, bytes);
        let e = PerfData::open(&p).map(|_| ()).unwrap_err();
        assert!(perf::errno(&e).is_some(), "{}: an errno: {}", name, e);
        assert!(e.to_string().contains(p.to_str().unwrap()), "{}: the error names the file: {}", name, e);
        let _ = std::fs::remove_file(&p);
    }
}

// ---- a live session ------------------------------------------------------------------

#[test]
fn session_read_batch_takes_this_process_marks() {
    if let Some(why) = cannot_run() {
        return skip("session_read_batch_takes_this_process_marks", &why);
    }
    let mut s = Session::builder().transports(&[Transport::Usdt]).open().unwrap();
    const N: usize = 200;
    for i in 0..N {
        uevent::mark(&format!("batch mark {}", i)).unwrap();
    }
    uevent::emit(uevent::TYPE_USER + 3, &[1, 2, 3, 4, 5]).unwrap();
    let (mut all, mut idle, mut calls) = (Columns::default(), 0, 0);
    while idle < 3 {
        match s.read_batch(7, Some(Duration::from_millis(200))).unwrap() {
            Some(c) => {
                assert!(c.uevents.len() <= 7 && c.samples.is_empty(), "{} uevents, {} samples", c.uevents.len(), c.samples.len());
                all.append(c);
                calls += 1;
                idle = 0;
            }
            None => idle += 1,
        }
    }
    let u = &all.uevents;
    assert_eq!(u.len(), N + 1, "every mark, once");
    // all were waiting: each batch full but the last, or close (not a row a call)
    assert!(calls >= (N + 1).div_ceil(7) && 2 * calls <= N, "{} calls", calls);
    let pid = std::process::id();
    for i in 0..N {
        let text = u.payload(i).strip_suffix(b"\0").unwrap_or(u.payload(i));
        assert_eq!(text, format!("batch mark {}", i).as_bytes(), "row {}", i);
        assert_eq!((u.ty[i], u.pid[i], u.transport[i]), (uevent::sys::UEVENT_TYPE_TEXT, pid, Transport::Usdt.raw()));
        assert!(i == 0 || u.time[i] >= u.time[i - 1], "in time order");
    }
    assert_eq!((u.ty[N], u.payload(N)), (uevent::TYPE_USER + 3, &[1, 2, 3, 4, 5][..]));
    // nothing waiting: None after the timeout; a bad max_rows is refused
    assert!(s.read_batch(7, Some(Duration::ZERO)).unwrap().is_none());
    assert_eq!(s.read_batch(0, None).unwrap_err().kind(), ErrorKind::InvalidInput);
}
