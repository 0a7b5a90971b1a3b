//! Every fuzz target on its seed corpus (`corpus/<target>/`) and on generated inputs: the smoke
//! pass of every test run. AFL++'s long runs (`scripts/fuzz`) use the same check functions.

use std::path::Path;
use std::time::Instant;

use tether_fuzz::input::Rng;
use tether_fuzz::TARGETS;

/// Generated inputs per target on top of its corpus: random bytes, and mutations of the seeds.
const GENERATED: usize = 1500;

/// One test per target, so that they run in parallel and a failure names its target.
macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(#[test]
        fn $name() {
            smoke(stringify!($name));
        })*

        #[test]
        fn every_target_has_a_test() {
            let tested = [$(stringify!($name)),*];
            let all: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
            assert_eq!(tested.as_slice(), all.as_slice());
        }
    };
}

targets!(patch, edit_file, json, transport, lsp_sync, decode);

/// Runs target `name` on every seed of its corpus and on [`GENERATED`] generated inputs.
fn smoke(name: &str) {
    let (k, &(_, check)) = TARGETS.iter().enumerate().find(|(_, (n, _))| *n == name).expect("a target");
    let started = Instant::now();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(name);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("a directory entry").path();
            let bytes = std::fs::read(&path).expect("a seed");
            (path.display().to_string(), bytes)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{name}: no seeds in {}", dir.display());
    for (path, bytes) in &seeds {
        run(name, path, check, bytes);
    }
    let mut rng = Rng::new(0x7e7e_0000 + k as u64);
    for i in 0..GENERATED {
        let bytes = if i % 2 == 0 {
            let n = rng.below(400);
            rng.bytes(n)
        } else {
            let seed = &seeds[rng.below(seeds.len())].1;
            rng.mutate(seed)
        };
        run(name, &format!("generated input {i}"), check, &bytes);
    }
    eprintln!("{name}: {} seeds and {GENERATED} generated inputs in {:.1?}", seeds.len(), started.elapsed());
}

/// Runs `check` on one input, saying which one when it fails (and writing it to
/// `target/fuzz-failure-TARGET` for `cargo run -p tether-fuzz --example replay`).
fn run(target: &str, what: &str, check: fn(&[u8]), bytes: &[u8]) {
    if let Err(panic) = std::panic::catch_unwind(|| check(bytes)) {
        let saved = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../target/fuzz-failure-{target}"));
        let _ = std::fs::write(&saved, bytes);
        eprintln!("{target}: {what} fails; its bytes are in {}: {bytes:?}", saved.display());
        std::panic::resume_unwind(panic);
    }
}
