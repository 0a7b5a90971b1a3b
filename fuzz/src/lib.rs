//! tether's fuzz targets: one `check(data)` per target that turns arbitrary bytes into a case and
//! asserts the target's invariants (not just "no panic"), panicking when one fails.
//!
//! The same functions serve two drivers: the AFL++ binaries in `src/bin/` (built by `cargo afl`
//! through `scripts/fuzz`, coverage-guided, for millions of executions), and the `corpus` test,
//! which replays every file of `corpus/<target>/` and a few thousand generated inputs on every
//! test run. `FUZZING.md` at the repository root records the runs and what they found.

pub mod input;
pub mod model;

pub mod decode;
pub mod edit_file;
pub mod json;
pub mod lsp_sync;
pub mod patch;
pub mod transport;

/// A target's check: panics when an invariant fails on the case `data` decodes to.
pub type Check = fn(&[u8]);

/// Every target: its name (a `src/bin/` binary and a `corpus/` directory) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("patch", patch::check),
    ("edit_file", edit_file::check),
    ("json", json::check),
    ("transport", transport::check),
    ("lsp_sync", lsp_sync::check),
    ("decode", decode::check),
];
