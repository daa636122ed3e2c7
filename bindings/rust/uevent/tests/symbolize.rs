//! symbolize.rs - the Symbolizer from Rust: made-up kallsyms and perf map files (no
//! privileges), errors, and a recording's names where t/report.test's files exist.
use std::fs;
use std::path::PathBuf;
use uevent::symbolize::Source;
use uevent::{Symbolizer, SymbolizerOpts};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("uevent-rs-sym-{}-{}", tag, std::process::id()));
    fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn kernel_and_perf_map() {
    let d = tmpdir("k");
    fs::write(d.join("kallsyms"), "ffffffff81000000 T _stext\nffffffff81000100 T kfunc\n").unwrap();
    fs::write(d.join("perf-4242.map"), "7f0000100000 40 jitted thing\n").unwrap();
    let opts = SymbolizerOpts { kallsyms: Some(d.join("kallsyms")), perf_map_dir: Some(d.clone()), ..Default::default() };
    let mut s = Symbolizer::new(&opts).unwrap();
    let k = s.lookup(1, 0xffff_ffff_8100_0108, 10).unwrap();
    assert_eq!(k.name.as_deref(), Some("kfunc"));
    assert_eq!(k.offset, 8);
    assert_eq!(k.dso.as_deref(), Some("[kernel.kallsyms]"));
    assert_eq!(k.source, Source::Kernel);
    let m = s.lookup(4242, 0x7f00_0010_0004, u64::MAX).unwrap();
    assert_eq!(m.name.as_deref(), Some("jitted thing"));
    assert_eq!(m.source, Source::PerfMap);
    let none = s.lookup(4243, 0x1000, 5).unwrap();
    assert_eq!(none.name, None);
    assert_eq!(none.source, Source::None);
    assert_eq!(s.comm(1, 5), None);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn demangled_unless_asked() {
    let d = tmpdir("dm");
    fs::write(d.join("perf-4244.map"), "7f0000100000 40 _ZN2at8internal15invoke_parallelEl\n").unwrap();
    let opts = SymbolizerOpts { perf_map_dir: Some(d.clone()), ..Default::default() };
    let c = Symbolizer::new(&opts).unwrap().lookup(4244, 0x7f00_0010_0004, u64::MAX).unwrap();
    assert_eq!(c.name.as_deref(), Some("at::internal::invoke_parallel(long)"));
    let raw = SymbolizerOpts { no_demangle: true, ..opts };
    let r = Symbolizer::new(&raw).unwrap().lookup(4244, 0x7f00_0010_0004, u64::MAX).unwrap();
    assert_eq!(r.name.as_deref(), Some("_ZN2at8internal15invoke_parallelEl"));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn errors() {
    let mut s = Symbolizer::new(&SymbolizerOpts::default()).unwrap();
    let e = s.feed_file("/nonexistent/perf.data").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    let bad = SymbolizerOpts { debug_dir: Some(PathBuf::from("a\0b")), ..Default::default() };
    assert_eq!(Symbolizer::new(&bad).err().map(|e| e.kind()), Some(std::io::ErrorKind::InvalidInput));
}

#[test]
fn golden_perf_data_feeds() {
    // every golden perf.data reads through the symbolizer without an error
    let top = std::env::var("top_srcdir")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.."));
    let mut n = 0;
    for e in fs::read_dir(top.join("t/data")).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().ends_with(".perf.data") {
            let mut s = Symbolizer::new(&SymbolizerOpts::default()).unwrap();
            let whole = s.feed_file(&p).unwrap();
            // the same records one by one, as a reading loop feeds them
            let mut one = Symbolizer::new(&SymbolizerOpts::default()).unwrap();
            let mut f = uevent::PerfData::open(&p).unwrap();
            let mut used = 0;
            while let Some(r) = f.next_ref().unwrap() {
                used += one.feed(&r).unwrap() as u64;
            }
            assert_eq!(used, whole, "{}", p.display());
            n += 1;
        }
    }
    assert!(n > 0, "no golden perf.data files");
}
