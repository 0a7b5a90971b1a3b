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

/// Paths claimed against this process's other changes and locked against other processes'.
/// Dropped, the locks go first, then the claim.
#[derive(Debug)]
pub(super) struct Exclusion {
    reals: Vec<PathBuf>,
    _locks: FileLocks,
    _claim: Claim,
}

/// Claims `reals` against this process's other changes, then locks them against other processes'
/// (the claim makes the threads of one process take the file locks one at a time). Paths this
/// thread holds are left out; while it holds any, the others are only tried, and a busy one is
/// the error.
pub(super) fn exclude(reals: &[PathBuf]) -> Result<Exclusion, PathBuf> {
    let held = HELD.with(|h| h.borrow().clone());
    let mut paths: Vec<PathBuf> = reals.iter().filter(|p| !held.contains(p)).cloned().collect();
    paths.sort();
    paths.dedup();
    if held.is_empty() {
        return Ok(wait_for(paths));
    }
    let claim = Claim::try_new(paths.clone()).ok_or_else(|| paths[0].clone())?;
    let locks = FileLocks::try_acquire(&paths)?;
    Ok(Exclusion { reals: paths, _locks: locks, _claim: claim })
}

/// Claims and locks `paths` (sorted, deduplicated), waiting for them.
fn wait_for(paths: Vec<PathBuf>) -> Exclusion {
    let claim = Claim::new(paths.clone());
    let locks = FileLocks::acquire(&paths);
    Exclusion { reals: paths, _locks: locks, _claim: claim }
}

/// Files held against every other change, in this process and in others, for as long as the
/// value lives.
#[derive(Debug)]
pub struct Held(Exclusion);

impl Held {
    fn record(taken: Exclusion) -> Held {
        HELD.with(|h| h.borrow_mut().extend(taken.reals.iter().cloned()));
        Held(taken)
    }

    /// Whether it holds every one of `reals`.
    pub fn covers(&self, reals: &[PathBuf]) -> bool {
        reals.iter().all(|r| self.0.reals.contains(r))
    }
}

thread_local! {
    /// Whether a change on this thread that meets a file changed since it was read keeps its
    /// files ([`keep_on_stale`]).
    static KEEPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The files such a change kept.
    static KEPT: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// While the returned guard lives, a change on this thread that finds a file changed since it was
/// read keeps holding its files instead of letting them go: the call runs again on the newer text
/// at once, holding them ([`take_kept`]), rather than waiting behind every other writer a second
/// time. Dropping the guard lets go of whatever was kept and not taken.
pub fn keep_on_stale() -> KeepOnStale {
    KEEPING.with(|k| k.set(true));
    KeepOnStale(())
}

/// See [`keep_on_stale`].
#[derive(Debug)]
#[must_use = "files are kept only while the guard lives"]
pub struct KeepOnStale(());

impl Drop for KeepOnStale {
    fn drop(&mut self) {
        KEEPING.with(|k| k.set(false));
        drop(take_kept());
    }
}

/// Keeps `taken` (the files of a change that met a file changed since its read) for the call to
/// run again with, when [`keep_on_stale`] asked for it; else lets them go.
pub(super) fn keep(taken: Exclusion) {
    if KEEPING.with(std::cell::Cell::get) {
        let held = Held::record(taken);
        KEPT.with(|k| *k.borrow_mut() = Some(held));
    }
}

/// The files the last change on this thread kept after meeting a file changed since its read.
pub fn take_kept() -> Option<Held> {
    KEPT.with(|k| k.borrow_mut().take())
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
    Held::record(wait_for(paths))
}

/// Holds every one of `reals` this thread does not hold yet: waiting for them when
/// it holds nothing, else only trying. A path found busy is returned as the error.
pub fn hold_more(reals: &[PathBuf]) -> Result<Held, PathBuf> {
    Ok(Held::record(exclude(reals)?))
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.with(|h| {
            let mut h = h.borrow_mut();
            for real in &self.0.reals {
                if let Some(i) = h.iter().position(|p| p == real) {
                    h.remove(i);
                }
            }
        });
    }
}
