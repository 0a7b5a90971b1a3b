//! Files a thread holds across a whole call, not only while a plan is written: a call whose change
//! met a file changed since it was read runs again holding the plan's files from its read to its
//! write, and the editor sink holds the buffers it sends an edit for until the edit landed.
//!
//! A thread that holds some files takes any others only if they are free, never waiting: waiting
//! while holding could deadlock with a change that holds those and waits for ours. Everything a
//! thread holds is recorded here, so that the plans it applies do not take those paths again.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use super::claims::Claim;
use super::locks::FileLocks;

thread_local! {
    /// The real paths this thread holds.
    static HELD: RefCell<Vec<PathBuf>> = const { RefCell::new(Vec::new()) };
}

/// Claims `reals` against this process's other changes, then locks them against other processes'
/// (the claim makes the threads of one process take the file locks one at a time). Paths this
/// thread holds are left out; while it holds any, the others are only tried, and a busy one is
/// the error.
pub(super) fn exclude(reals: &[PathBuf]) -> Result<(Claim, FileLocks), PathBuf> {
    let held = HELD.with(|h| h.borrow().clone());
    let mut paths: Vec<PathBuf> = reals.iter().filter(|p| !held.contains(p)).cloned().collect();
    paths.sort();
    paths.dedup();
    if held.is_empty() {
        let claim = Claim::new(paths.clone());
        return Ok((claim, FileLocks::acquire(&paths)));
    }
    let claim = Claim::try_new(paths.clone()).ok_or_else(|| paths[0].clone())?;
    Ok((claim, FileLocks::try_acquire(&paths)?))
}

/// Files held against every other change, in this process and in others, for as long as the
/// value lives.
#[derive(Debug)]
pub struct Held {
    reals: Vec<PathBuf>,
    _locks: FileLocks,
    _claim: Claim,
}

impl Held {
    fn record(reals: Vec<PathBuf>, (claim, locks): (Claim, FileLocks)) -> Held {
        HELD.with(|h| h.borrow_mut().extend(reals.iter().cloned()));
        Held { reals, _locks: locks, _claim: claim }
    }
}

/// Holds the file at the real path `real` (see [`Held`]), waiting for it; the calling thread's
/// changes to it go ahead while others wait. Hold nothing else on this thread when calling it.
pub fn hold(real: &Path) -> Held {
    hold_all(&[real.to_owned()])
}

/// Holds every one of `reals` (see [`Held`]), waiting for them, all at once and in the one order
/// every change takes them in, so that it cannot deadlock. Hold nothing else on this thread when
/// calling it.
pub fn hold_all(reals: &[PathBuf]) -> Held {
    let mut paths = reals.to_vec();
    paths.sort();
    paths.dedup();
    let claim = Claim::new(paths.clone());
    let locks = FileLocks::acquire(&paths);
    Held::record(paths, (claim, locks))
}

/// Holds every one of `reals` this thread does not hold yet: waiting for them when
/// it holds nothing, else only trying. A path found busy is returned as the error.
pub fn hold_more(reals: &[PathBuf]) -> Result<Held, PathBuf> {
    let held = HELD.with(|h| h.borrow().clone());
    let mut paths: Vec<PathBuf> = reals.iter().filter(|p| !held.contains(p)).cloned().collect();
    paths.sort();
    paths.dedup();
    let taken = exclude(&paths)?;
    Ok(Held::record(paths, taken))
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.with(|h| {
            let mut h = h.borrow_mut();
            for real in &self.reals {
                if let Some(i) = h.iter().position(|p| p == real) {
                    h.remove(i);
                }
            }
        });
    }
}
