//! The disk sink: applies a plan to files on disk, each file atomically and the plan all or
//! nothing.
//!
//! How each operation is made safe:
//! - **Text edits** re-read the file just before writing and compare it, byte for byte, with the
//!   base the plan was computed against, encoded as it was decoded (UTF-8, plus the BOM when it
//!   had one). A file changed meanwhile fails with `conflict` and keeps the other writer's
//!   text. Bases read from an editor buffer are not compared with the disk: the editor sink
//!   checks those by document version.
//! - **Atomic writes**: new contents go to a temp file in the same directory
//!   (`.tether-XXXXXX.tmp`), which gets the old file's permission bits and (where permitted: as
//!   root, or a group the user is in) its owner and group, is fsynced, renamed over the file, and
//!   the directory fsynced. A reader, or a crash, sees the old file or the new one, whole.
//! - **Symlinks**: an edit or a create writes the file the link points to (the sandbox proved it
//!   is inside the roots), so the link stays a link. A rename or a delete acts on the link itself.
//! - **Hard links**: a file with more than one link is written in place, as helix does, so that
//!   every name keeps naming the same, edited file (a rename would silently split them). An
//!   in-place write is not atomic against a crash, so a copy of the old bytes is kept beside the
//!   file (`.tether-XXXXXX.bak`) until the whole plan has been applied. Another name may lie
//!   outside the roots and sees the change too; the `guarded` profile refuses such files before
//!   a plan gets here ([`super::refuse_hard_links`]).
//! - **All or nothing**: every step records how to undo it (an edited file's old bytes and mode,
//!   files and directories created, renames, entries moved aside). When a step fails, the steps
//!   before it are undone in reverse order, leaving every file byte for byte as it was. A delete,
//!   and a rename over an existing destination, first move the old entry to a hidden backup name
//!   in its directory (`.tether-XXXXXX.bak`) and remove it only once every step has succeeded.
//! - **One change at a time per file**: a plan claims its paths (`disk/claims.rs`) before its first
//!   check and holds them until it is committed or rolled back, so concurrent calls in one process
//!   (the lsp runs several) never interleave their base checks and renames on one file.
//! - **Other processes**: the plan's files are also locked against every other tether process
//!   (`disk/locks.rs`) from the first check through commit or rollback.
//! - **Checked before written**: a plan over several files checks every file's base before it
//!   writes any, so a change refused on its second file is never seen half-applied by a reader.
//! - **Two phases**: [`TwoPhaseSink::prepare`] takes the plan's files and checks them, writing
//!   nothing; the [`Prepared`] change is applied later or dropped. The editor sink uses it for a
//!   plan with both disk and buffer parts: the disk part is prepared, the buffer part sent to the
//!   editor, and the disk part written only once the editor took its part (so no reader ever sees
//!   a disk part that is then taken back because the editor refused).
//! - **Crashes**: each file is always whole, but a plan over several files is not atomic against a
//!   crash (or SIGKILL) part-way: files already renamed into place stay changed. A killed process
//!   may leave `.tether-*.tmp` or `.tether-*.bak` entries behind; no other names are ever created.

mod claims;
mod files;
mod held;
mod locks;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use self::files::{parent, Owner};
use super::{Applied, Destination, Sink, TwoPhaseSink};
use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::{Error, ErrorKind, Result};
use crate::sys;
use crate::text::SharedText;
use crate::vfs::{Origin, Vfs};
use crate::workspace::SandboxPath;

pub use self::files::{BACKUP_SUFFIX, TEMP_PREFIX, TEMP_SUFFIX};
pub use self::held::{hold, hold_all, hold_more, keep_on_stale, take_kept, Held, KeepOnStale};

/// Replaces (or creates) `target` with `bytes` atomically, keeping an existing file's owner and
/// permission bits: for a file tether writes outside any plan (an assistant's settings, by
/// `tether setup`).
pub fn replace_file(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let owner = match fs::metadata(target) {
        Ok(m) => Some(Owner::of(&m, target)?),
        Err(_) => None,
    };
    files::write_atomic(target, &[bytes], owner, true)
}

/// Applies plans to files on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskSink;

impl Sink for DiskSink {
    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        // A plan over several files checks every base before writing any, so that a change that
        // fails on its second file never shows its first to a reader meanwhile.
        self.prepare_with(vfs, plan, plan.ops.len() > 1)?.apply()
    }
}

impl TwoPhaseSink for DiskSink {
    /// The first phase of a change: excludes every other change to `plan`'s files (in this
    /// process and others) and checks that each file an edit changes still holds the text the
    /// plan was computed against, writing nothing. The caller then applies the [`Prepared`]
    /// change, or drops it, which lets the files go untouched. Unlike [`crate::sink::apply`],
    /// this does no read-only or plan checks: the caller made them for the whole change.
    fn prepare<'p>(&self, vfs: &Vfs, plan: &'p EditPlan) -> Result<Prepared<'p>> {
        self.prepare_with(vfs, plan, true)
    }
}

impl DiskSink {
    fn prepare_with<'p>(&self, vfs: &Vfs, plan: &'p EditPlan, check: bool) -> Result<Prepared<'p>> {
        let exclusion = exclude_others(plan)?;
        let tx = Transaction {
            roots: vfs.workspace().roots().to_vec(),
            undo: Vec::new(),
            cleanup: Vec::new(),
            exclusion: Some(exclusion),
        };
        if check {
            // A path an earlier step creates, moves or deletes is checked by its own step only.
            let mut moved: Vec<PathBuf> = Vec::new();
            for op in &plan.ops {
                if !claimed(op).iter().any(|p| moved.contains(p)) {
                    if let Err(e) = precheck(op) {
                        return Err(tx.rollback(e));
                    }
                }
                if !matches!(op, FileOp::Edit { .. }) {
                    moved.extend(claimed(op));
                }
            }
        }
        Ok(Prepared { plan, tx })
    }

    /// Applies `plan` (all of it, or nothing when a step fails) and keeps what is needed to
    /// take it back: the caller commits or rolls back the [`Pending`] change; dropping it rolls
    /// it back.
    pub fn begin(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Pending> {
        self.prepare_with(vfs, plan, plan.ops.len() > 1)?.begin()
    }
}

/// A change whose files are held against every other change and whose bases were checked, not
/// yet written: [`Prepared::apply`] writes it; dropping it writes nothing.
#[derive(Debug)]
#[must_use = "a prepared change writes nothing until applied"]
pub struct Prepared<'p> {
    plan: &'p EditPlan,
    tx: Transaction,
}

impl Prepared<'_> {
    /// Writes the change, all of it or nothing, and says where each operation went.
    pub fn apply(self) -> Result<Applied> {
        Ok(self.begin()?.commit())
    }

    /// Writes the change (all of it, or nothing when a step fails) and keeps what is needed to
    /// take it back until committed.
    fn begin(self) -> Result<Pending> {
        let Prepared { plan, mut tx } = self;
        for op in &plan.ops {
            if let Err(e) = tx.apply(op) {
                return Err(tx.rollback(e));
            }
        }
        let files = plan.ops.iter().map(|op| (op.path().given().to_owned(), Destination::Disk)).collect();
        Ok(Pending {
            tx: Some(tx),
            applied: Applied { files, unversioned: false, reviewed: None, buffer_stamps: Vec::new() },
        })
    }
}

/// Refuses `op`, before anything is written, when its file no longer holds the text it was
/// computed against, or a file it would create now exists: the checks each step makes again
/// right before it writes, made for every step first.
fn precheck(op: &FileOp) -> Result<()> {
    match op {
        FileOp::Edit { path, base, .. } if base.origin == Origin::Disk => {
            let given = path.given();
            match fs::metadata(path.real()) {
                Ok(m) if !m.is_file() => return Err(not_a_file(given, &m)),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(conflict(given, "was deleted since it was read"));
                }
                Err(e) => return Err(Error::io(&e, given)),
            }
            if !files::holds(path.real(), &base_segments(base)).map_err(|e| Error::io(&e, given))? {
                return Err(stale(given, path.real()));
            }
            Ok(())
        }
        FileOp::Create { path, overwrite: false, .. } if fs::symlink_metadata(path.real()).is_ok() => {
            Err(conflict(path.given(), "already exists, and the change was to create it"))
        }
        _ => Ok(()),
    }
}

/// The bytes `base` was decoded from: the BOM when it had one, then its text.
fn base_segments(base: &Base) -> Vec<&[u8]> {
    std::iter::once(bom_bytes(base.bom)).chain(base.text.chunks(0..base.text.len()).map(str::as_bytes)).collect()
}

/// Claims `plan`'s paths against this process's other changes, then locks them against other
/// processes' ([`held::exclude`]); a path found busy while this thread holds others (a call run
/// again after a conflict) is a stale conflict, and the call runs again.
fn exclude_others(plan: &EditPlan) -> Result<held::Exclusion> {
    let paths: Vec<PathBuf> = plan.ops.iter().flat_map(claimed).collect();
    held::exclude(&paths).map_err(|real| {
        let given = plan
            .ops
            .iter()
            .find(|op| claimed(op).contains(&real))
            .map_or_else(|| real.display().to_string(), |op| op.path().given().to_owned());
        Error::stale(
            &given,
            &real,
            format!("{given}: another change to it is being written; nothing was changed, try the change again"),
        )
    })
}

/// A plan applied to disk and not yet committed: its files are changed, and its undo log and
/// backups are kept until [`Pending::commit`] or [`Pending::rollback`].
#[derive(Debug)]
#[must_use = "a pending change is rolled back when dropped"]
pub struct Pending {
    tx: Option<Transaction>,
    applied: Applied,
}

impl Pending {
    /// Keeps the change: removes its backups and says where each operation went.
    pub fn commit(mut self) -> Applied {
        if let Some(tx) = self.tx.take() {
            tx.commit();
        }
        std::mem::take(&mut self.applied)
    }

    /// Takes the change back, leaving every file it touched as it was before [`DiskSink::begin`].
    /// A file changed meanwhile by someone else gets its pre-plan bytes back too. Fails when a
    /// step cannot be undone; the backups are then kept beside the files.
    pub fn rollback(mut self) -> Result<()> {
        match self.tx.take() {
            Some(tx) => tx.undo_all().map_err(|failed| {
                Error::new(
                    ErrorKind::IoError,
                    format!(
                        "undoing the change on disk failed, so some files are changed ({}); old contents are \
                         kept in {TEMP_PREFIX}*{BACKUP_SUFFIX} files beside them",
                        failed.join("; ")
                    ),
                )
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            if let Err(failed) = tx.undo_all() {
                tracing::error!(failed = %failed.join("; "), "rolling back an abandoned change on disk failed");
            }
        }
    }
}

/// How to take back one completed step.
#[derive(Debug)]
enum Undo {
    /// Put the old bytes back (in place for a hard-linked file), with the old mode and owner.
    Restore { path: PathBuf, bytes: OldBytes, owner: Owner, in_place: bool },
    /// Remove a file the plan created.
    RemoveFile(PathBuf),
    /// Remove a directory the plan created.
    RemoveDir(PathBuf),
    /// Move `to` back to `from`.
    RenameBack { from: PathBuf, to: PathBuf },
}

impl Undo {
    fn run(&self) -> io::Result<()> {
        match self {
            Undo::Restore { path, bytes, in_place: true, .. } => files::write_in_place(path, &bytes.segments()),
            Undo::Restore { path, bytes, owner, in_place: false } => {
                files::write_atomic(path, &bytes.segments(), Some(owner.clone()), true)
            }
            Undo::RemoveFile(p) => fs::remove_file(p).and_then(|()| files::sync_dir(parent(p))),
            Undo::RemoveDir(p) => fs::remove_dir(p).and_then(|()| files::sync_dir(parent(p))),
            Undo::RenameBack { from, to } => files::rename_noclobber(to, from).and_then(|()| {
                files::sync_dir(parent(from))?;
                files::sync_dir(parent(to))
            }),
        }
    }
}

/// A file's bytes before a step changed them: read from disk, or (when the step checked that the
/// file still held its base text) that base text itself, so no second copy is kept.
#[derive(Debug)]
enum OldBytes {
    Read(Vec<u8>),
    Base { text: SharedText, bom: bool },
}

impl OldBytes {
    fn segments(&self) -> Vec<&[u8]> {
        match self {
            OldBytes::Read(b) => vec![b],
            OldBytes::Base { text, bom } => {
                std::iter::once(bom_bytes(*bom)).chain(text.chunks(0..text.len()).map(str::as_bytes)).collect()
            }
        }
    }
}

fn bom_bytes(bom: bool) -> &'static [u8] {
    if bom {
        b"\xEF\xBB\xBF"
    } else {
        b""
    }
}

/// The steps of one plan applied so far, and what to tidy once it has all succeeded.
#[derive(Debug)]
struct Transaction {
    roots: Vec<PathBuf>,
    /// Completed steps, each with the path as the user gave it, for messages.
    undo: Vec<(String, Undo)>,
    /// Backups (entries moved aside, copies of old bytes), removed once the plan has succeeded.
    cleanup: Vec<PathBuf>,
    /// The plan's paths, held against other changes in this process and locked against other
    /// tether processes until the transaction is committed or undone; after a stale conflict,
    /// kept for the call's next run when it asked for that ([`held::keep`]).
    exclusion: Option<held::Exclusion>,
}

/// The paths an operation writes, both as named (what a rename or delete acts on) and resolved
/// (what an edit writes through a symlink).
fn claimed(op: &FileOp) -> Vec<PathBuf> {
    let paths = match op {
        FileOp::Rename { from, to, .. } => vec![from, to],
        FileOp::Edit { path, .. }
        | FileOp::Create { path, .. }
        | FileOp::Delete { path, .. }
        | FileOp::Mkdir { path } => {
            vec![path]
        }
    };
    paths.into_iter().flat_map(|p| [p.path().to_owned(), p.real().to_owned()]).collect()
}

impl Transaction {
    fn apply(&mut self, op: &FileOp) -> Result<()> {
        match op {
            FileOp::Edit { path, base, changes } => self.edit(path, base, changes),
            FileOp::Create { path, text, overwrite, mode } => self.create(path, text, *overwrite, *mode),
            FileOp::Rename { from, to, overwrite } => self.rename(from, to, *overwrite),
            FileOp::Delete { path, recursive } => self.delete(path, *recursive),
            FileOp::Mkdir { path } => self.mkdir(path),
        }
    }

    fn edit(&mut self, path: &SandboxPath, base: &Base, changes: &[TextChange]) -> Result<()> {
        let given = path.given();
        match fs::metadata(path.real()) {
            // Checked before reading: reading a fifo put in the file's place would block.
            Ok(m) if !m.is_file() => return Err(not_a_file(given, &m)),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound && base.origin == Origin::Disk => {
                return Err(conflict(given, "was deleted since it was read"));
            }
            Err(e) => return Err(Error::io(&e, given)),
        }
        let old = if base.origin == Origin::Disk {
            if !files::holds(path.real(), &base_segments(base)).map_err(|e| Error::io(&e, given))? {
                return Err(stale(given, path.real()));
            }
            OldBytes::Base { text: base.text.clone(), bom: base.bom }
        } else {
            OldBytes::Read(sys::read(path.real()).map_err(|e| Error::io(&e, given))?)
        };
        self.replace(path, old, &new_segments(base, changes))
    }

    /// Replaces the contents of the existing file `path` (whose current bytes are `old`).
    fn replace(&mut self, path: &SandboxPath, old: OldBytes, new: &[&[u8]]) -> Result<()> {
        let (target, given) = (path.real(), path.given());
        let meta = fs::metadata(target).map_err(|e| Error::io(&e, given))?;
        if !meta.is_file() {
            return Err(not_a_file(given, &meta));
        }
        let owner = Owner::of(&meta, target).map_err(|e| Error::io(&e, given))?;
        if sys::links(&meta, target).map_err(|e| Error::io(&e, given))? > 1 {
            let backup = files::write_backup(target, &old.segments(), &owner).map_err(|e| Error::io(&e, given))?;
            self.cleanup.push(backup);
            // Recorded before writing: a write that fails half-way must be undone too.
            self.undo
                .push((given.to_owned(), Undo::Restore { path: target.into(), bytes: old, owner, in_place: true }));
            files::write_in_place(target, new).map_err(|e| Error::io(&e, given))
        } else {
            files::write_atomic(target, new, Some(owner.clone()), true).map_err(|e| Error::io(&e, given))?;
            self.undo
                .push((given.to_owned(), Undo::Restore { path: target.into(), bytes: old, owner, in_place: false }));
            Ok(())
        }
    }

    fn create(&mut self, path: &SandboxPath, text: &str, overwrite: bool, mode: Option<u32>) -> Result<()> {
        let (target, given) = (path.real(), path.given());
        match fs::metadata(target) {
            Ok(m) if !m.is_file() => Err(not_a_file(given, &m)),
            Ok(_) if !overwrite => Err(conflict(given, "already exists, and the change was to create it")),
            Ok(_) => {
                let old = sys::read(target).map_err(|e| Error::io(&e, given))?;
                self.replace(path, OldBytes::Read(old), &[text.as_bytes()])
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.create_dirs(parent(target), given)?;
                files::write_new(target, &[text.as_bytes()], mode).map_err(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        conflict(given, "was created by someone else meanwhile")
                    } else {
                        Error::io(&e, given)
                    }
                })?;
                self.undo.push((given.to_owned(), Undo::RemoveFile(target.into())));
                Ok(())
            }
            Err(e) => Err(Error::io(&e, given)),
        }
    }

    fn rename(&mut self, from: &SandboxPath, to: &SandboxPath, overwrite: bool) -> Result<()> {
        let (src, dst) = (from.path(), to.path());
        self.refuse_root(from)?;
        let meta = fs::symlink_metadata(src).map_err(|e| Error::io(&e, from.given()))?;
        if src == dst {
            return Err(Error::invalid(format!("{from}: source and destination are the same path")));
        }
        if meta.is_dir() && dst.starts_with(src) {
            return Err(Error::invalid(format!("{from}: cannot move a directory into itself ({to})")));
        }
        self.create_dirs(parent(dst), to.given())?;
        match fs::symlink_metadata(dst) {
            Ok(_) if !overwrite => return Err(conflict(to.given(), "already exists")),
            Ok(m) if m.is_dir() => {
                return Err(Error::new(
                    ErrorKind::NotAFile,
                    format!("{to}: is a directory; tether replaces files, not directories"),
                )
                .with_path(to.given()));
            }
            Ok(_) => self.move_aside(dst, to.given())?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&e, to.given())),
        }
        files::rename_noclobber(src, dst).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => conflict(to.given(), "was created by someone else meanwhile"),
            io::ErrorKind::CrossesDevices => {
                Error::new(ErrorKind::IoError, format!("{from}: cannot move to {to}, which is on another file system"))
                    .with_path(from.given())
            }
            _ => Error::io(&e, from.given()),
        })?;
        self.undo.push((from.given().to_owned(), Undo::RenameBack { from: src.into(), to: dst.into() }));
        files::sync_dir(parent(src)).and_then(|()| files::sync_dir(parent(dst))).map_err(|e| Error::io(&e, to.given()))
    }

    fn delete(&mut self, path: &SandboxPath, recursive: bool) -> Result<()> {
        let (target, given) = (path.path(), path.given());
        self.refuse_root(path)?;
        let meta = fs::symlink_metadata(target).map_err(|e| Error::io(&e, given))?;
        if meta.is_dir() && !recursive {
            let mut entries = fs::read_dir(target).map_err(|e| Error::io(&e, given))?;
            if entries.next().is_some() {
                return Err(Error::invalid(format!(
                    "{path}: directory is not empty; pass `recursive: true` to delete it with everything in it"
                ))
                .with_path(given));
            }
        }
        self.move_aside(target, given)
    }

    fn mkdir(&mut self, path: &SandboxPath) -> Result<()> {
        let given = path.given();
        match fs::metadata(path.real()) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => {
                Err(Error::new(ErrorKind::NotADirectory, format!("{path}: exists and is not a directory"))
                    .with_path(given))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.create_dirs(path.real(), given),
            Err(e) => Err(Error::io(&e, given)),
        }
    }

    /// Moves an existing entry to a backup name, removed on commit and moved back on rollback.
    fn move_aside(&mut self, target: &Path, given: &str) -> Result<()> {
        let backup = files::move_aside(target).map_err(|e| Error::io(&e, given))?;
        self.undo.push((given.to_owned(), Undo::RenameBack { from: target.into(), to: backup.clone() }));
        self.cleanup.push(backup);
        Ok(())
    }

    /// Creates `dir` and its missing parents, recording each one created.
    fn create_dirs(&mut self, dir: &Path, given: &str) -> Result<()> {
        let not_dir = || {
            Error::new(ErrorKind::NotADirectory, format!("{given}: a parent of this path is a file, not a directory"))
                .with_path(given)
        };
        let mut missing = Vec::new();
        let mut p = dir;
        loop {
            match fs::metadata(p) {
                Ok(m) if m.is_dir() => break,
                Ok(_) => return Err(not_dir()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    missing.push(p);
                    match p.parent() {
                        Some(up) => p = up,
                        None => break,
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotADirectory => return Err(not_dir()),
                Err(e) => return Err(Error::io(&e, given)),
            }
        }
        for d in missing.into_iter().rev() {
            match fs::create_dir(d) {
                Ok(()) => {
                    self.undo.push((given.to_owned(), Undo::RemoveDir(d.into())));
                    files::sync_dir(parent(d)).map_err(|e| Error::io(&e, given))?;
                }
                // Someone else made it meanwhile: fine, and not ours to remove.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => return Err(Error::io(&e, given)),
            }
        }
        Ok(())
    }

    /// Refuses to move or delete a workspace root (or a directory holding one).
    fn refuse_root(&self, path: &SandboxPath) -> Result<()> {
        if self.roots.iter().any(|r| r.starts_with(path.path())) {
            return Err(Error::invalid(format!(
                "{path}: is a workspace root (or contains one); tether does not move or delete roots"
            ))
            .with_path(path.given()));
        }
        Ok(())
    }

    /// Undoes every completed step, newest first, and returns `cause` with any step that could
    /// not be undone added to its message.
    fn rollback(mut self, cause: Error) -> Error {
        let exclusion = self.exclusion.take();
        if let Err(failed) = self.undo_all() {
            // Backups may now hold the only copy of something: keep every one.
            let message = format!(
                "{}; undoing the earlier changes of this plan also failed, so some files are changed \
                 ({}); old contents are kept in {TEMP_PREFIX}*{BACKUP_SUFFIX} files beside them",
                cause.message(),
                failed.join("; ")
            );
            let err = Error::new(cause.kind(), message);
            return match cause.path() {
                Some(p) => err.with_path(p),
                None => err,
            };
        }
        // Every step is undone: a call that runs again on the newer text may go on holding the files.
        if let Some(exclusion) = exclusion.filter(|_| cause.stale_path().is_some()) {
            held::keep(exclusion);
        }
        cause
    }

    /// Undoes every completed step, last first, then removes the backups; on failure, says which
    /// steps could not be undone (as `path: error`) and keeps every backup, since they may now
    /// hold the only copy of something.
    fn undo_all(self) -> std::result::Result<(), Vec<String>> {
        let mut failed = Vec::new();
        for (given, undo) in self.undo.iter().rev() {
            if let Err(e) = undo.run() {
                failed.push(format!("{given}: {e}"));
            }
        }
        if !failed.is_empty() {
            return Err(failed);
        }
        for backup in &self.cleanup {
            // Entries moved aside are back in place by now; what remains are copies.
            if fs::symlink_metadata(backup).is_ok() {
                let _ = files::remove_any(backup);
            }
        }
        Ok(())
    }

    /// Removes the backups once every step has succeeded. The plan is applied either way: a
    /// backup that cannot be removed is only logged.
    fn commit(self) {
        for backup in &self.cleanup {
            match files::remove_any(backup).and_then(|()| files::sync_dir(parent(backup))) {
                // Inside a directory the plan then deleted, whose backup went first.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!("could not remove backup {}: {e}", backup.display()),
                Ok(()) => {}
            }
        }
    }
}

/// Whether `bytes` are exactly what `base` was decoded from.
fn conflict(given: &str, what: &str) -> Error {
    Error::new(ErrorKind::Conflict, format!("{given}: {what}; nothing was changed, read it again and redo the change"))
        .with_path(given)
}

/// The `conflict` of an edit whose file changed on disk after the tool read it: running the tool
/// again on the newer text may resolve it ([`Error::stale`]).
fn stale(given: &str, real: &Path) -> Error {
    Error::stale(
        given,
        real,
        format!("{given}: changed on disk since it was read; nothing was changed, read it again and redo the change"),
    )
}

fn not_a_file(given: &str, meta: &fs::Metadata) -> Error {
    let what = if meta.is_dir() { "is a directory, not a file" } else { "is not a regular file" };
    Error::new(ErrorKind::NotAFile, format!("{given}: {what}")).with_path(given)
}

#[cfg(all(test, unix))]
mod tests;

/// The new bytes of an edited file, as slices of its base text and of the changes: BOM first
/// when the file had one.
fn new_segments<'a>(base: &'a Base, changes: &'a [TextChange]) -> Vec<&'a [u8]> {
    let text = &base.text;
    let mut out = Vec::with_capacity(changes.len() * 2 + 2);
    out.push(bom_bytes(base.bom));
    let mut at = 0;
    for c in changes {
        out.extend(text.chunks(at..c.range.start.get()).map(str::as_bytes));
        out.push(c.text.as_bytes());
        at = c.range.end.get();
    }
    out.extend(text.chunks(at..text.len()).map(str::as_bytes));
    out
}
