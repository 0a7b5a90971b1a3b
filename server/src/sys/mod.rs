//! What differs between Unix and Windows, behind one small API of plain values: who the user
//! is, what a file's permission bits and identity are, private directories and files, locks
//! between processes, and whether a process lives. Every other module is written once against
//! this API; each platform's half keeps its own system calls (`unix.rs` through rustix,
//! `windows.rs` through windows-sys).

#[cfg(unix)]
#[path = "unix.rs"]
mod imp;
#[cfg(windows)]
#[path = "windows.rs"]
mod imp;

pub use imp::*;

use std::path::PathBuf;

/// The user's home directory: `HOME`, or on Windows `USERPROFILE` (what the assistants' own
/// `os.homedir()` reads), `None` when unset or not absolute.
pub fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute())
}
