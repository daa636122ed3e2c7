//! build.rs - find libuevent and link it, without outside crates.
//!
//! Where: `$UEVENT_LIB_DIR` if set; else `pkg-config libuevent` (an installed libuevent;
//! `PKG_CONFIG_PATH` is honoured); else the source tree's `libuevent/.libs`.
//! How: the shared library; `libuevent.a` with the `static` feature, and for the source
//! tree's library, which nothing would find at run time (a build script cannot give a
//! dependent's executable an rpath). `libuevent.a` comes with its private dependencies
//! (libdw, libtraceevent...), as `pkg-config --static` lists them: from the installed
//! libuevent.pc, else the one beside the library (the build tree's, or `lib/pkgconfig`),
//! else libtool's `libuevent.la`.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config(args: &[&str], pkg: &std::ffi::OsStr) -> Option<String> {
    let out = Command::new("pkg-config").args(args).arg(pkg).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The private dependencies of libuevent.a in `dirs`: link flags, without -luevent.
fn private_libs(dirs: &[String], installed: bool) -> Vec<String> {
    let split = |s: String| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    if installed {
        if let Some(libs) = pkg_config(&["--static", "--libs"], "libuevent".as_ref()) {
            return split(libs);
        }
    }
    for d in dirs {
        let d = Path::new(d);
        for pc in [d.join("pkgconfig/libuevent.pc"), d.join("../libuevent.pc")] {
            if !pc.exists() {
                continue;
            }
            println!("cargo:rerun-if-changed={}", pc.display());
            if let Some(libs) = pkg_config(&["--static", "--libs"], pc.as_os_str()) {
                return split(libs);
            }
        }
        for la in [d.join("libuevent.la"), d.join("../libuevent.la")] {
            if let Ok(text) = std::fs::read_to_string(&la) {
                println!("cargo:rerun-if-changed={}", la.display());
                let deps = text.lines().find_map(|l| l.strip_prefix("dependency_libs="));
                let deps = deps.unwrap_or("").trim_matches(|c| c == '\'' || c == ' ');
                // a libtool library by its .la path: its directory and name
                return deps.split_whitespace().flat_map(|t| {
                    let p = Path::new(t);
                    match (t.ends_with(".la"), p.parent(), p.file_stem()) {
                        (true, Some(dir), Some(stem)) => vec![
                            format!("-L{}", dir.display()),
                            format!("-l{}", stem.to_string_lossy().trim_start_matches("lib")),
                        ],
                        _ => vec![t.to_string()],
                    }
                }).collect();
            }
        }
    }
    println!("cargo:warning=feature static: no libuevent.pc or libuevent.la beside {:?}: \
              linking libuevent.a without its private dependencies (libdw, libtraceevent)", dirs);
    Vec::new()
}

/// Tells rustc to link flags (-L, -l, -pthread); what is not one of them is left out.
fn link_flags(flags: &[String]) {
    let mut seen = std::collections::HashSet::new();
    for f in flags {
        if let Some(d) = f.strip_prefix("-L") {
            if seen.insert(f.clone()) {
                println!("cargo:rustc-link-search=native={}", d);
            }
        } else if let Some(l) = f.strip_prefix("-l") {
            if l != "uevent" && seen.insert(f.clone()) {
                println!("cargo:rustc-link-lib={}", l);
            }
        } else if f == "-pthread" && seen.insert("-lpthread".into()) {
            println!("cargo:rustc-link-lib=pthread");
        }
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=UEVENT_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let want_static = env::var_os("CARGO_FEATURE_STATIC").is_some();
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let intree = manifest.join("../../../libuevent/.libs");
    let mut dirs: Vec<String> = Vec::new();
    let mut from_tree = false;
    let mut installed = false;
    if let Ok(d) = env::var("UEVENT_LIB_DIR") {
        dirs.extend(d.split(':').filter(|s| !s.is_empty()).map(String::from));
    } else if let Some(libs) = pkg_config(&["--libs-only-L"], "libuevent".as_ref()) {
        dirs.extend(libs.split_whitespace().filter_map(|f| f.strip_prefix("-L")).map(String::from));
        installed = true;
        if let Some(libdir) = pkg_config(&["--variable=libdir"], "libuevent".as_ref()) {
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
        link_flags(&private_libs(&dirs, installed));
        println!("cargo:lib_dirs=");
    } else {
        println!("cargo:rustc-link-lib=dylib=uevent");
        // Dependents (the safe crate) read this as DEP_UEVENT_LIB_DIRS for their own rpath.
        println!("cargo:lib_dirs={}", dirs.join(":"));
    }
}
