//! build.rs - let this crate's tests and examples find the library uevent-sys linked.
fn main() {
    if let Ok(dirs) = std::env::var("DEP_UEVENT_LIB_DIRS") {
        for d in dirs.split(':').filter(|s| !s.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d);
        }
    }
}
