//! build.rs - find libuevent and link it, without outside crates.
//!
//! Where: `$UEVENT_LIB_DIR` if set; else `pkg-config libuevent` (an installed libuevent;
//! `PKG_CONFIG_PATH` is honoured); else the source tree's `libuevent/.libs`.
//! How: the shared library; `libuevent.a` with the `static` feature, and for the source
//! tree's library, which nothing would find at run time (a build script cannot give a
//! dependent's executable an rpath).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config(args: &[&str]) -> Option<String> {
    let out = Command::new("pkg-config").args(args).arg("libuevent").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=UEVENT_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let want_static = env::var_os("CARGO_FEATURE_STATIC").is_some();
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let intree = manifest.join("../../../libuevent/.libs");
    let mut dirs: Vec<String> = Vec::new();
    let mut from_tree = false;
    if let Ok(d) = env::var("UEVENT_LIB_DIR") {
        dirs.extend(d.split(':').filter(|s| !s.is_empty()).map(String::from));
    } else if let Some(libs) = pkg_config(&["--libs-only-L"]) {
        dirs.extend(libs.split_whitespace().filter_map(|f| f.strip_prefix("-L")).map(String::from));
        if let Some(libdir) = pkg_config(&["--variable=libdir"]) {
            if !libdir.is_empty() && !dirs.contains(&libdir) {
                dirs.push(libdir);
            }
        }
    } else if intree.join("libuevent.so").exists() || intree.join("libuevent.a").exists() {
        dirs.push(intree.canonicalize().unwrap().display().to_string());
        from_tree = true;
    } else {
        println!("cargo:warning=libuevent not found: set UEVENT_LIB_DIR or PKG_CONFIG_PATH");
    }
    let archive = dirs.iter().map(|d| Path::new(d).join("libuevent.a")).find(|a| a.exists());
    let link_static = (want_static || from_tree) && archive.is_some();
    if want_static && archive.is_none() {
        println!("cargo:warning=feature static: no libuevent.a in {:?}; linking the shared library", dirs);
    }
    for d in &dirs {
        println!("cargo:rustc-link-search=native={}", d);
    }
    if link_static {
        println!("cargo:rerun-if-changed={}", archive.unwrap().display());
        println!("cargo:rustc-link-lib=static=uevent");
        println!("cargo:lib_dirs=");
    } else {
        println!("cargo:rustc-link-lib=dylib=uevent");
        // Dependents (the safe crate) read this as DEP_UEVENT_LIB_DIRS for their own rpath.
        println!("cargo:lib_dirs={}", dirs.join(":"));
    }
}
