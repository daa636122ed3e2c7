//! mark.rs - the smallest user: `cargo run --example mark -- [text] [count]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let text = args.next().unwrap_or_else(|| "hi".to_string());
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    for _ in 0..n {
        if let Err(e) = uevent::mark(&text) {
            eprintln!("mark: {}", e);
            std::process::exit(1);
        }
    }
    eprintln!("{} mark(s) through {} ({})", n, uevent::transport(),
              if uevent::enabled() { "enabled" } else { "nobody listens" });
}
