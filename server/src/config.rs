//! What holds for a whole run and for one call: the [`Config`] (limits and switches) and a call's
//! [`Cancel`] signal. Plain values, read by every layer from the tools down to the sinks.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};

/// Limits and switches that hold for a whole server or CLI run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Largest file `read_file` returns whole, without `offset`/`limit`.
    pub max_read_bytes: u64,
    /// Files larger than this are skipped by `grep`.
    pub max_grep_file_bytes: u64,
    /// Only tools that change nothing are served.
    pub read_only: bool,
    /// The programs an allow-listed command runner may start, replacing its profile's own list
    /// (`None`: the profile's list).
    pub allowed_commands: Option<Vec<String>>,
    /// An editor runs tether (`tether lsp`, or a `tether mcp` attached to one), so the tools that
    /// answer from its knowledge (diagnostics, selection, symbols) are served.
    pub editor: bool,
    /// Where applied changes are recorded (`None`: not recorded, and the journal's tools are not
    /// served).
    pub journal: Option<JournalSettings>,
}

/// Where the change journal lives and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalSettings {
    /// The directory holding one journal per workspace root.
    pub dir: PathBuf,
    /// The most bytes one root's journal keeps; the oldest changesets are dropped beyond it.
    pub max_bytes: u64,
}

impl JournalSettings {
    /// The default bound of one root's journal: 256 MiB.
    pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_read_bytes: 10 * 1024 * 1024,
            max_grep_file_bytes: 50 * 1024 * 1024,
            read_only: false,
            allowed_commands: None,
            editor: false,
            journal: None,
        }
    }
}

/// A cancellation signal for one tool call, shared between the frontend (which sets it) and the
/// tool (which polls it).
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks the call to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the call was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The underlying flag, for code that polls an `AtomicBool` (such as `exec::run`).
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }

    /// Fails with `cancelled` once the call was asked to stop.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::new(ErrorKind::Cancelled, "the call was cancelled"))
        } else {
            Ok(())
        }
    }
}
