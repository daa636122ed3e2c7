//! common - what the integration tests share: the source and build trees, SKIP reports
//! (cargo.test turns them into TAP SKIP lines), and whether a live session can run here.
#![allow(dead_code)] // each test file uses its own part of it
use std::path::{Path, PathBuf};

/// The tree `var` (top_srcdir, top_builddir) names, or the one this crate sits in.
pub fn top(var: &str) -> PathBuf {
    std::env::var(var)
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.."))
}

/// Reports a skip: cargo.test turns the file it leaves into `ok N - NAME # SKIP reason`.
pub fn skip(test: &str, reason: &str) {
    eprintln!("SKIP {}: {}", test, reason);
    if let Ok(dir) = std::env::var("UEVENT_TAP_SKIP_DIR") {
        std::fs::write(Path::new(&dir).join(test), reason).unwrap();
    }
}

/// Why uprobe events cannot be added here (not root, no uprobes), if they cannot.
pub fn no_uprobes() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2));
    if uid != Some("0") {
        return Some("needs root to add uprobe events".into());
    }
    if !Path::new("/sys/bus/event_source/devices/uprobe").exists() {
        return Some("kernel without uprobes".into());
    }
    None
}

/// Why a live usdt session cannot run here, if it cannot.
pub fn cannot_run() -> Option<String> {
    no_uprobes().or_else(|| {
        uevent::open("usdt", None, true)
            .err()
            .map(|e| format!("usdt transport unavailable here: {}", e))
    })
}
