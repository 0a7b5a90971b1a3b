//! Applying an [`EditPlan`]: the one place where tether's changes reach the world.
//!
//! Tools compute plans; a [`Sink`] applies them, all or nothing. The disk sink writes files
//! atomically; the editor sink (in `tether lsp`) sends open documents to the editor as one
//! versioned workspace edit and hands the rest to the disk sink.

pub mod disk;

use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::config::Config;
use crate::edit::{EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::Vfs;
use crate::workspace::SandboxPath;

pub use disk::{hold, hold_all, hold_more, DiskSink, Held, Pending, Prepared};
use disk::{keep_on_stale, take_kept};

/// Where one file's change went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// Written to the file on disk.
    Disk,
    /// Applied to an open editor buffer, which was then saved.
    BufferSaved,
    /// Applied to an open editor buffer that had unsaved changes; it stays unsaved.
    BufferUnsaved,
    /// Applied to an open editor buffer that was clean, and not saved because saving is off.
    BufferNotSaved,
    /// Applied to an open editor buffer at positions the user's typing had shifted, then moved
    /// where it belongs; the buffer has the user's unsaved changes.
    BufferRepaired,
    /// Taken by the editor (it answered that it applied it), which had not reported the change
    /// when the call answered; tether follows it on and saves or repairs it when it shows.
    BufferUnconfirmed,
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Destination::Disk => "written to disk",
            Destination::BufferSaved => "applied to the open editor buffer and saved",
            Destination::BufferUnsaved => "applied to the open editor buffer, which has unsaved changes (not saved)",
            Destination::BufferNotSaved => "applied to the open editor buffer, not saved (saving is off)",
            Destination::BufferRepaired => {
                "applied to the open editor buffer, which had changed meanwhile: the editor put it at the old \
                 position and tether moved it to its place (not saved: the buffer has your unsaved changes)"
            }
            Destination::BufferUnconfirmed => {
                "sent to the open editor buffer; the editor reports it applied, and has not yet reported the \
                 changed text (tether checks it when it does)"
            }
        })
    }
}

impl Destination {
    /// Whether the change is in an editor's memory only, not on disk: a crash of the machine
    /// loses it whatever else is durable.
    pub fn in_memory_only(self) -> bool {
        !matches!(self, Destination::Disk | Destination::BufferSaved)
    }
}

/// What a sink did with a plan: one entry per operation, in plan order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// The path (as the user gave it) and where its change went.
    pub files: Vec<(String, Destination)>,
    /// Whether editor buffers were sent unversioned edits (the editor takes no versions), so
    /// only its change notifications could show where they landed.
    pub unversioned: bool,
    /// The plan as applied, when it is not the plan the sink was given: the user reviewed it
    /// and took only part of it, or changed it (`files` then follows this plan).
    pub reviewed: Option<EditPlan>,
    /// For each operation of the plan as applied: the store's change stamp of the editor buffer
    /// that then held exactly the operation's new text, when one did (see `Origin::Buffer`), so
    /// that the next change to it knows that text's hash. Empty when no buffer was changed.
    pub buffer_stamps: Vec<Option<u64>>,
}

impl Applied {
    /// The lines a result adds to say where changes went: one per change that did not simply
    /// go to disk, or (`disk`) one per change that did.
    pub fn report(&self, disk: bool) -> String {
        let mut out = String::new();
        for (path, dest) in &self.files {
            match (disk, *dest == Destination::Disk) {
                (false, false) => out.push_str(&format!("\n{path}: {dest}")),
                (true, true) => out.push_str(&format!("\n{path}: {dest} (not open in the editor)")),
                _ => {}
            }
        }
        if !disk && self.unversioned && self.files.iter().any(|(_, d)| *d != Destination::Disk) {
            out.push_str(
                "\n(this editor takes no versioned edits: the change was sent unversioned and checked against the \
                 editor's change notifications)",
            );
        }
        out
    }
}

/// Something that applies plans.
pub trait Sink: Send + Sync {
    /// Applies `plan`, computed against `vfs`, completely or not at all.
    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied>;

    /// Says, before `apply`, what the plan does in the tool's words (`edited a.py: 1
    /// replacement`), for a sink that shows changes to someone first; the others ignore it.
    fn describe(&self, _summary: &str) {}

    /// Whether `apply` waits on another process's answer (an editor applying the change), so
    /// that a caller's own work for the plan is better done meanwhile, on another thread.
    fn waits_on_another_process(&self) -> bool {
        false
    }
}

/// A sink whose changes can be prepared first: their files held against every other change and
/// checked, nothing written, then applied or dropped. The editor sink prepares the disk part of a
/// plan this way and writes it only once the editor took the buffer part.
pub trait TwoPhaseSink: Sink {
    /// Holds and checks `plan`'s files, writing nothing.
    fn prepare<'p>(&self, vfs: &Vfs, plan: &'p EditPlan) -> Result<Prepared<'p>>;
}

/// Applies `plan` through `sink` after the checks every sink shares: read-only mode refuses any
/// plan, however it was reached, and the plan must be well formed.
pub fn apply(sink: &dyn Sink, config: &Config, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
    if config.read_only {
        return Err(Error::new(ErrorKind::ReadOnly, "tether is running read-only; no change was made"));
    }
    plan.validate()?;
    if plan.is_empty() {
        return Ok(Applied::default());
    }
    sink.apply(vfs, plan)
}

/// Refuses `plan` (`path_escape`, naming the path) when it would write, replace, move or delete a
/// regular file with more than one name (hard link): another name of the same file may be outside
/// the workspace, and a write in place would change it there. Every path of the plan is looked up
/// through `vfs` before anything is applied, so a refused plan changes nothing; an open buffer is
/// judged by its file on disk, which saving it changes. The `guarded` profile applies its plans
/// only after this check; the other profiles write such files in place, as editors do.
pub fn refuse_hard_links(vfs: &Vfs, plan: &EditPlan) -> Result<()> {
    for op in &plan.ops {
        // A write changes the file a final symlink names; a move or a delete acts on the entry.
        let (paths, verb): (&[(&SandboxPath, bool)], _) = match op {
            FileOp::Edit { path, .. } | FileOp::Create { path, .. } => (&[(path, true)], "change"),
            FileOp::Rename { from, to, .. } => (&[(from, false), (to, false)], "move or replace"),
            FileOp::Delete { path, .. } => (&[(path, false)], "delete"),
            FileOp::Mkdir { .. } => (&[], ""),
        };
        for &(path, follow) in paths {
            if let Some(n) = vfs.file_links(path, follow)?.filter(|&n| n > 1) {
                return Err(Error::new(
                    ErrorKind::PathEscape,
                    format!(
                        "{path}: the file has {n} hard links, and another name of the same file may be outside the \
                         workspace, so tether does not {verb} it; nothing was written"
                    ),
                )
                .with_path(path.given()));
            }
        }
    }
    Ok(())
}

/// How many times in all a call runs while its change meets a file changed since it was read.
pub const FRESH_ATTEMPTS: u32 = 4;

/// Runs `call` (a tool call that applies its plans through the sink it is given) on `sink`, and
/// runs it again on the newer text while its change met a file that changed after the tool read
/// it ([`Error::stale_path`]): the tool reads again, so a change whose own text nobody touched
/// (an `edit_file` whose `old_string` is still unique, a patch whose hunks still apply at their
/// context) lands, and one whose text changed fails as the tool says. Each run after the first
/// holds that file and the plan's others from its read to its write ([`hold_all`]), so other
/// writers cannot make them stale again;
/// at most [`FRESH_ATTEMPTS`] runs. A run that failed changed nothing (sinks apply all or
/// nothing), so running again is safe. Returns the last run's result and the real paths of
/// every file a run's plan met changed (and the plan's other files): empty when the first run
/// went through, else what a failed last run overlapped (`journal::who_changed` names it).
pub fn on_fresh_text<R>(sink: &dyn Sink, mut call: impl FnMut(&dyn Sink) -> R) -> (R, Vec<PathBuf>) {
    let mut held: Option<Held> = None;
    let mut met = Vec::new();
    let mut attempt = 1;
    loop {
        let watch = StaleWatch { inner: sink, stale: Mutex::new(Vec::new()), held: Mutex::new(held.take()) };
        let keeping = (attempt < FRESH_ATTEMPTS).then(keep_on_stale);
        let result = call(&watch);
        // The files the stale change found changed, still held: the next run reads and writes
        // them without waiting behind the other writers again.
        let kept = take_kept();
        drop(keeping);
        held = watch.held.into_inner().unwrap_or_else(|e| e.into_inner());
        let stale = watch.stale.into_inner().unwrap_or_else(|e| e.into_inner());
        met.extend(stale.iter().cloned());
        if stale.is_empty() || attempt >= FRESH_ATTEMPTS {
            met.sort();
            met.dedup();
            return (result, met);
        }
        tracing::debug!(attempt, "a file changed since it was read; running the call again");
        held = match kept {
            // Kept on the first run, when nothing else was held: every file of the plan.
            Some(kept) if held.is_none() && kept.covers(&stale) => Some(kept),
            // Else let go of everything before waiting again (holding some files while waiting
            // for others could deadlock), then take every file of the plan at once, in the
            // global order.
            kept => {
                drop(kept);
                drop(held.take());
                Some(hold_all(&stale))
            }
        };
        attempt += 1;
    }
}

/// A sink that notes the files of a plan that met a stale conflict: the changed file and every
/// other file the plan writes. It holds what the run was given to hold until a plan is applied,
/// so that what the call does after its write (recording it in the journal) keeps no other
/// writer waiting.
struct StaleWatch<'a> {
    inner: &'a dyn Sink,
    stale: Mutex<Vec<PathBuf>>,
    held: Mutex<Option<Held>>,
}

impl Sink for StaleWatch<'_> {
    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let result = self.inner.apply(vfs, plan);
        if result.is_ok() {
            drop(self.held.lock().unwrap_or_else(|e| e.into_inner()).take());
        }
        if let Some(real) = result.as_ref().err().and_then(Error::stale_path) {
            let mut stale = self.stale.lock().unwrap_or_else(|e| e.into_inner());
            stale.push(real.to_owned());
            stale.extend(plan.ops.iter().flat_map(|op| [op.path().path().to_owned(), op.path().real().to_owned()]));
        }
        result
    }

    fn describe(&self, summary: &str) {
        self.inner.describe(summary);
    }
}
