//! The paths that changes in flight in this process are writing. A change claims every path it
//! touches before its first check and keeps the claim until it is committed or rolled back, so two
//! changes to one file run one after the other: neither can pass its base check while the other is
//! about to rename its own text over the file (which would lose the other's change, answered
//! applied), and a rollback never puts back bytes over another change that landed meanwhile.
//!
//! All of a change's paths are claimed at once, waiting while any of them is held, so changes
//! over several files cannot deadlock each other. Writers in other processes are kept out by the
//! file locks (`disk/locks.rs`), taken after the claim.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard};

/// The claimed paths, and the signal that some were released.
struct Claims {
    held: Mutex<HashSet<PathBuf>>,
    released: Condvar,
}

static CLAIMS: LazyLock<Claims> = LazyLock::new(|| Claims { held: Mutex::default(), released: Condvar::new() });

fn held() -> MutexGuard<'static, HashSet<PathBuf>> {
    // The set is only changed whole, under the lock, so a panic elsewhere cannot leave it torn.
    CLAIMS.held.lock().unwrap_or_else(|e| e.into_inner())
}

/// Paths claimed by one change; dropping it releases them.
#[derive(Debug)]
pub struct Claim {
    paths: Vec<PathBuf>,
}

impl Claim {
    /// Claims every one of `paths` (real paths, as the change writes them), waiting while another
    /// change in this process holds any of them.
    pub fn new(mut paths: Vec<PathBuf>) -> Claim {
        paths.sort();
        paths.dedup();
        let mut held = held();
        while paths.iter().any(|p| held.contains(p)) {
            held = CLAIMS.released.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        held.extend(paths.iter().cloned());
        Claim { paths }
    }

    /// Claims every one of `paths` when none is held by another change, without waiting.
    pub fn try_new(mut paths: Vec<PathBuf>) -> Option<Claim> {
        paths.sort();
        paths.dedup();
        let mut held = held();
        if paths.iter().any(|p| held.contains(p)) {
            return None;
        }
        held.extend(paths.iter().cloned());
        Some(Claim { paths })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut held = held();
        for p in &self.paths {
            held.remove(p);
        }
        drop(held);
        CLAIMS.released.notify_all();
    }
}
