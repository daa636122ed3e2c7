//! build.rs - find libuevent without outside crates: $UEVENT_LIB_DIR, the source tree's
//! libuevent/.libs, or what `pkg-config --libs libuevent` says.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=UEVENT_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let mut dirs: Vec<String> = Vec::new();
    if let Ok(d) = env::var("UEVENT_LIB_DIR") {
        dirs.extend(d.split(':').filter(|s| !s.is_empty()).map(String::from));
    } else {
        let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
        let intree = manifest.join("../../../libuevent/.libs");
        if intree.join("libuevent.so").exists() {
            dirs.push(intree.canonicalize().unwrap().display().to_string());
        } else if let Ok(out) = Command::new("pkg-config").args(["--libs-only-L", "libuevent"]).output() {
            if out.status.success() {
                let s = String::from_utf8_lossy(&out.stdout).to_string();
                dirs.extend(s.split_whitespace().filter_map(|f| f.strip_prefix("-L")).map(String::from));
            }
        }
    }
    for d in &dirs {
        println!("cargo:rustc-link-search=native={}", d);
    }
    println!("cargo:rustc-link-lib=dylib=uevent");
    // Dependents (the safe crate) read this as DEP_UEVENT_LIB_DIRS for their own rpath.
    println!("cargo:lib_dirs={}", dirs.join(":"));
}
