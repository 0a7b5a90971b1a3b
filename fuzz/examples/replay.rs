//! Runs one target on input files: `cargo run -p tether-fuzz --example replay -- TARGET FILE...`,
//! to reproduce and minimise what a fuzzer found. With `TETHER_FUZZ_DEBUG` set, the patch and
//! edit_file targets also print the case they generated.

fn main() {
    let mut args = std::env::args().skip(1);
    let target = args.next().expect("usage: replay TARGET FILE...");
    let (_, check) =
        tether_fuzz::TARGETS.iter().find(|(name, _)| *name == target).unwrap_or_else(|| panic!("no target {target}"));
    for file in args {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        check(&bytes);
        eprintln!("{file}: ok");
    }
}
