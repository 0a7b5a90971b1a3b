//! [`Recording`]: a sink that applies a plan through another and records what it applied.
//!
//! What a plan replaces or removes (an overwritten file, a deleted file or tree, a destination
//! a rename replaces) is read before the plan is applied, since afterwards it is gone; the rest
//! comes from the plan itself (an edit carries its base and its changes). A recording that fails
//! never fails the change, which has happened: it is logged.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::store::{Delta, DELTA_DEPTH_MAX};
use super::{client, hash_pieces, lines, now_ms, CallInfo, Changeset, Durable, FileRecord, Hunk, Journal, Op, Side};
use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::Result;
use crate::sink::{Applied, Sink};
use crate::sys;
use crate::vfs::{Origin, Vfs};

/// Files larger than this are recorded without their bytes (their change cannot be undone).
const KEEP_MAX: u64 = 16 * 1024 * 1024;

/// Entries of a deleted directory recorded at most; a larger tree's delete cannot be undone.
const TREE_MAX_ENTRIES: usize = 2000;

/// The prefix of each line of an undo's summary: `undid changeset 12 (...)`. The recording reads
/// the undone ids back from it ([`undone_ids`]).
pub const UNDID: &str = "undid changeset ";

/// A sink that records every plan it applies through `inner` in `journal`.
pub struct Recording<'a> {
    inner: &'a dyn Sink,
    journal: Journal,
    call: CallInfo,
    summary: Mutex<Option<String>>,
}

impl<'a> Recording<'a> {
    /// Records the changes of `call` that `inner` applies.
    pub fn new(inner: &'a dyn Sink, journal: Journal, call: CallInfo) -> Recording<'a> {
        Recording { inner, journal, call, summary: Mutex::new(None) }
    }
}

impl Sink for Recording<'_> {
    fn describe(&self, summary: &str) {
        *self.summary.lock().unwrap_or_else(|e| e.into_inner()) = Some(summary.to_owned());
        self.inner.describe(summary);
    }

    fn apply(&self, vfs: &Vfs, plan: &EditPlan) -> Result<Applied> {
        let before = Before::capture(vfs, plan);
        // An edit's record depends on the plan alone: on a large text, or while an editor
        // applies the plan (milliseconds), it is worked out (both sides hashed, the new text
        // kept) on another thread meanwhile, so that the answer does not wait for it.
        let edit_bytes: usize =
            plan.ops.iter().map(|op| if let FileOp::Edit { base, .. } = op { base.text.len() } else { 0 }).sum();
        let parallel = edit_bytes >= PARALLEL_MIN || (edit_bytes > 0 && self.inner.waits_on_another_process());
        let journal = &self.journal;
        let (applied, early) = std::thread::scope(|s| {
            let early = parallel.then(|| s.spawn(|| edit_records(journal, plan)));
            let applied = self.inner.apply(vfs, plan);
            (applied, early.and_then(|h| h.join().ok()))
        });
        let applied = applied?;
        let done = applied.reviewed.as_ref().unwrap_or(plan);
        // Worked out for `plan`: a plan the user changed in review is recorded as it was applied.
        let mut early = early.filter(|_| applied.reviewed.is_none()).unwrap_or_default();
        let summary = self.summary.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
        let mut files = Vec::new();
        for (i, op) in done.ops.iter().enumerate() {
            // Parent directories the operation created come first, so an undo removes them last.
            for dir in new_entry(op).and_then(Path::parent).map(|p| before.missing_parents(p)).unwrap_or_default() {
                if dir.is_dir() && !files.iter().any(|f: &FileRecord| f.path == dir) {
                    let mut r = blank(Op::Mkdir, &dir);
                    r.dir = true;
                    files.push(r);
                }
            }
            let record = match (op, early.get_mut(i).and_then(Option::take)) {
                (FileOp::Edit { path, .. }, Some(mut r)) => {
                    with_mode(&mut r, path.real());
                    Some(r)
                }
                _ => self.record(op, &before),
            };
            if let (Some(r), Some(&Some(stamp))) = (&record, applied.buffer_stamps.get(i)) {
                if let Some(after) = &r.after {
                    known::remember(&r.path, stamp, &after.hash);
                }
            }
            files.extend(record);
        }
        if files.is_empty() {
            return Ok(applied);
        }
        let changeset = Changeset {
            id: String::new(),
            time_ms: now_ms(),
            tool: self.call.tool.clone(),
            profile: self.call.profile.clone(),
            client: if self.call.client.is_empty() { client::UNKNOWN.to_owned() } else { self.call.client.clone() },
            undoes: undone_ids(&summary),
            summary,
            args: self.call.args.clone(),
            files,
            root: 0,
        };
        // A change that lives in editor buffers only is lost with the machine whatever is on
        // disk: its record is made durable just after the answer, not before it.
        let durable = if applied.files.iter().all(|(_, d)| d.in_memory_only()) && !applied.files.is_empty() {
            Durable::Soon
        } else {
            Durable::Now
        };
        if let Err(e) = self.journal.record(changeset, durable) {
            tracing::warn!("the change was applied but not recorded in the journal: {e}");
        }
        Ok(applied)
    }
}

/// Plans whose edits hold less text than this are recorded on the calling thread: for them a
/// thread would cost more than it saves.
const PARALLEL_MIN: usize = 256 * 1024;

/// The records of `plan`'s edits, by operation (`None` for the other operations), permission
/// bits left out: they are read once the plan is applied.
fn edit_records(journal: &Journal, plan: &EditPlan) -> Vec<Option<FileRecord>> {
    plan.ops
        .iter()
        .map(|op| match op {
            FileOp::Edit { path, base, changes } => Some(edit_record(journal, path.real(), base, changes)),
            _ => None,
        })
        .collect()
}

/// Sets the permission bits of both sides of an edit's record to the file's on disk now.
fn with_mode(r: &mut FileRecord, real: &Path) {
    let mode = fs::metadata(real).ok().map(|m| sys::mode(&m));
    for side in [&mut r.before, &mut r.after].into_iter().flatten() {
        side.mode = mode;
    }
}

/// The record of an edit of `real` from `base` by `changes` (permission bits left out). The new
/// text is taken as pieces of the buffer and of the changes: it is materialised only when the
/// blob store keeps it, and the old text never is (only its hash is kept, and not even that is
/// computed when this process knows it: a buffer still holding the text of an earlier change).
/// On a large text the two sides are hashed on two threads.
fn edit_record(journal: &Journal, real: &Path, base: &Base, changes: &[TextChange]) -> FileRecord {
    let bom: &[u8] = if base.bom { b"\xEF\xBB\xBF" } else { b"" };
    let len = base.text.len();
    let chunks = |range| base.text.chunks(range).map(str::as_bytes);
    let mut pieces: Vec<&[u8]> = vec![bom];
    let mut reverse = Vec::with_capacity(changes.len());
    let (mut at, mut new_len, mut removed, mut added) = (0, bom.len(), 0, 0);
    for c in changes {
        let (s, e) = (c.range.start.get(), c.range.end.get());
        pieces.extend(chunks(at..s));
        new_len += s - at;
        let old_text = base.text.slice(s..e).into_owned();
        removed += lines(old_text.as_bytes());
        added += lines(c.text.as_bytes());
        reverse.push(Hunk { at: new_len, len: c.text.len(), text: old_text });
        pieces.push(c.text.as_bytes());
        new_len += c.text.len();
        at = e;
    }
    pieces.extend(chunks(at..len));
    new_len += len - at;
    let known_before = match base.origin {
        Origin::Buffer { stamp, .. } => known::recall(real, stamp),
        Origin::Disk => None,
    };
    let hash_old = || hash_pieces(std::iter::once(bom).chain(chunks(0..len)));
    let old_hash = || known_before.clone().unwrap_or_else(hash_old);
    // The new text is kept whole, or as what the edit changed when the journal keeps the old
    // text already (the file's last recorded change, most often): then it is only hashed.
    // `new_hash`: the new text's hash, when known already.
    let new_side = |old_hash: &str, new_hash: Option<String>| {
        let hash_new = || new_hash.clone().unwrap_or_else(|| hash_pieces(pieces.iter().copied()));
        if new_len as u64 > KEEP_MAX {
            return Side { hash: hash_new(), size: new_len as u64, mode: None, kept: false };
        }
        if let Some(depth) = journal.has_blob(real, old_hash).filter(|&d| d < DELTA_DEPTH_MAX) {
            let hash = hash_new();
            let hunks = changes
                .iter()
                .map(|c| Hunk {
                    at: bom.len() + c.range.start.get(),
                    len: c.range.end.get() - c.range.start.get(),
                    text: c.text.clone(),
                })
                .collect();
            let delta = Delta { base: old_hash.to_owned(), depth: depth + 1, hunks };
            match journal.keep_delta(real, &hash, &delta) {
                Ok(()) => return Side { hash, size: new_len as u64, mode: None, kept: true },
                Err(e) => tracing::warn!("journal: {e}"),
            }
        }
        // Kept whole: the store names it by its hash, computed as it is written.
        side(journal, real, &pieces.concat(), None, true)
    };
    let (old_hash, after) = match &known_before {
        Some(h) => (h.clone(), new_side(h, None)),
        // Both sides hashed at once: whether the new text is kept as a delta waits for the old
        // text's hash (which names the delta's base), its own hash does not.
        None if len >= PARALLEL_MIN => std::thread::scope(|s| {
            let old = s.spawn(old_hash);
            let new_hash = hash_pieces(pieces.iter().copied());
            let old = old.join().unwrap_or_else(|_| hash_old());
            let after = new_side(&old, Some(new_hash));
            (old, after)
        }),
        None => {
            let old = old_hash();
            let after = new_side(&old, None);
            (old, after)
        }
    };
    let mut r = blank(Op::Edit, real);
    r.before = Some(Side { hash: old_hash, size: (bom.len() + len) as u64, mode: None, kept: false });
    if !after.kept {
        r.not_reversible = Some(too_large(new_len));
    }
    r.after = Some(after);
    r.reverse = reverse;
    r.added = added;
    r.removed = removed;
    r
}

/// The hashes of texts this process recorded as the result of a change that an editor buffer
/// then held exactly, by the buffer's change stamp (which names one text of one buffer: see
/// [`Origin::Buffer`]). The next change to that buffer starts from that text more often than
/// not, and its old side's hash is then known without reading 20 MiB again.
mod known {
    use std::collections::VecDeque;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    /// Buffers remembered at most (the most recent).
    const MAX: usize = 64;

    static KNOWN: Mutex<VecDeque<(PathBuf, u64, String)>> = Mutex::new(VecDeque::new());

    /// Remembers that the buffer of `real` at change stamp `stamp` holds the text of hash `hash`.
    pub fn remember(real: &Path, stamp: u64, hash: &str) {
        let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        known.retain(|(p, ..)| p != real);
        if known.len() >= MAX {
            known.pop_front();
        }
        known.push_back((real.to_owned(), stamp, hash.to_owned()));
    }

    /// The hash of the text of `real`'s buffer at change stamp `stamp`, when remembered.
    pub fn recall(real: &Path, stamp: u64) -> Option<String> {
        let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        known.iter().find(|(p, s, _)| p == real && *s == stamp).map(|(.., h)| h.clone())
    }
}

/// The ids an undo's summary names.
fn undone_ids(summary: &str) -> Vec<String> {
    summary.lines().filter_map(|l| l.strip_prefix(UNDID)?.split_whitespace().next().map(str::to_owned)).collect()
}

/// The entry `op` puts in place, whose missing parent directories it creates: a create's file,
/// a rename's destination.
fn new_entry(op: &FileOp) -> Option<&Path> {
    match op {
        FileOp::Create { path, .. } => Some(path.real()),
        FileOp::Rename { to, .. } => Some(to.path()),
        _ => None,
    }
}

/// A record of `op` on `path` with nothing else known yet.
fn blank(op: Op, path: &Path) -> FileRecord {
    FileRecord {
        op,
        path: path.to_owned(),
        from: None,
        dir: false,
        before: None,
        after: None,
        reverse: Vec::new(),
        entries: Vec::new(),
        not_reversible: None,
        added: 0,
        removed: 0,
    }
}

impl Recording<'_> {
    /// The record of one applied operation, or `None` when it changed nothing (a directory that
    /// was already there).
    fn record(&self, op: &FileOp, before: &Before) -> Option<FileRecord> {
        match op {
            FileOp::Edit { path, base, changes } => {
                let mut r = edit_record(&self.journal, path.real(), base, changes);
                with_mode(&mut r, path.real());
                Some(r)
            }
            FileOp::Create { path, text, .. } => {
                let mode = fs::metadata(path.real()).ok().map(|m| sys::mode(&m));
                let replaced = before.of(path.real());
                let mut r = blank(if replaced.is_some() { Op::Overwrite } else { Op::Create }, path.real());
                r.after = Some(self.side(path.real(), text.as_bytes(), mode, true));
                r.added = lines(text.as_bytes());
                if let Some(old) = replaced {
                    r.removed = old.bytes.as_deref().map_or(0, lines);
                    r.before = old.side(self, path.real());
                    r.not_reversible = old.why_not.clone();
                }
                if r.after.as_ref().is_some_and(|s| !s.kept) {
                    r.not_reversible = Some(too_large(text.len()));
                }
                Some(r)
            }
            FileOp::Delete { path, .. } => {
                let mut r = blank(Op::Delete, path.path());
                let Some(old) = before.of(path.path()) else {
                    r.not_reversible = Some("what was deleted could not be read first".to_owned());
                    return Some(r);
                };
                r.dir = old.dir;
                r.removed = old.bytes.as_deref().map_or(0, lines);
                r.before = old.side(self, path.path());
                r.not_reversible = old.why_not.clone();
                r.entries = flatten(&old.entries).into_iter().map(|e| self.entry(e)).collect();
                Some(r)
            }
            FileOp::Rename { from, to, .. } => {
                let mut r = blank(Op::Rename, to.path());
                r.from = Some(from.path().to_owned());
                r.dir = fs::symlink_metadata(to.path()).is_ok_and(|m| m.is_dir());
                if let Some(old) = before.of(to.path()) {
                    r.before = old.side(self, to.path());
                    r.not_reversible = old.why_not.clone();
                }
                Some(r)
            }
            FileOp::Mkdir { path } => {
                if before.existed.contains(&path.real().to_path_buf()) {
                    return None;
                }
                let mut r = blank(Op::Mkdir, path.real());
                r.dir = true;
                Some(r)
            }
        }
    }

    /// The record of one entry of a deleted directory.
    fn entry(&self, e: &Old) -> FileRecord {
        FileRecord {
            op: Op::Delete,
            path: e.path.clone(),
            from: None,
            dir: e.dir,
            before: e.side(self, &e.path),
            after: None,
            reverse: Vec::new(),
            entries: Vec::new(),
            not_reversible: e.why_not.clone(),
            added: 0,
            removed: e.bytes.as_deref().map_or(0, lines),
        }
    }

    fn side(&self, real: &Path, bytes: &[u8], mode: Option<u32>, keep: bool) -> Side {
        side(&self.journal, real, bytes, mode, keep)
    }
}

/// A side of `bytes`, kept in the blob store when `keep` and not too large (the store names the
/// blob by the hash, so a kept side is hashed once).
fn side(journal: &Journal, real: &Path, bytes: &[u8], mode: Option<u32>, keep: bool) -> Side {
    let stored = (keep && (bytes.len() as u64) <= KEEP_MAX)
        .then(|| journal.keep_blob(real, bytes))
        .and_then(|r| r.map_err(|e| tracing::warn!("journal: {e}")).ok());
    let kept = stored.is_some();
    let hash = stored.unwrap_or_else(|| super::hash_of(bytes));
    Side { hash, size: bytes.len() as u64, mode, kept }
}

/// `entries` and everything below them, parents first.
fn flatten(entries: &[Old]) -> Vec<&Old> {
    let mut out = Vec::new();
    for e in entries {
        out.push(e);
        out.extend(flatten(&e.entries));
    }
    out
}

fn too_large(len: usize) -> String {
    format!("the file is {len} bytes, more than the journal keeps ({KEEP_MAX} bytes)")
}

/// What a plan is about to replace or remove, read before it is applied.
#[derive(Default)]
struct Before {
    old: Vec<Old>,
    /// Directories a `Mkdir` names that already exist.
    existed: Vec<PathBuf>,
    /// Directories that did not exist, which a create or a rename may make as parents.
    missing: Vec<PathBuf>,
}

/// A file or directory as it was before the plan.
struct Old {
    path: PathBuf,
    dir: bool,
    /// A file's bytes (none for a directory, or when they could not be kept).
    bytes: Option<Vec<u8>>,
    mode: Option<u32>,
    /// Why it could not be kept whole.
    why_not: Option<String>,
    /// A directory's entries, parents first.
    entries: Vec<Old>,
}

impl Old {
    /// Leaves out of this entry (and says whether to keep it at all) what `taken` names.
    fn without(&mut self, taken: &[PathBuf]) -> bool {
        if taken.contains(&self.path) {
            return false;
        }
        self.entries.retain_mut(|e| e.without(taken));
        true
    }

    fn side(&self, rec: &Recording<'_>, real: &Path) -> Option<Side> {
        self.bytes.as_deref().map(|b| rec.side(real, b, self.mode, true))
    }
}

impl Before {
    fn capture(vfs: &Vfs, plan: &EditPlan) -> Before {
        let mut out = Before::default();
        // What earlier operations of the plan take away: a directory deleted after them no longer
        // holds it, so its record must not bring it back.
        let mut taken: Vec<PathBuf> = Vec::new();
        for op in &plan.ops {
            match op {
                FileOp::Delete { path, .. } => {
                    let mut old = tree(path.path());
                    old.entries.retain_mut(|e| e.without(&taken));
                    out.old.push(old);
                    taken.push(path.path().to_owned());
                    continue;
                }
                FileOp::Rename { from, .. } => taken.push(from.path().to_owned()),
                _ => {}
            }
            match op {
                FileOp::Create { path, overwrite: true, .. } => {
                    if let Some(old) = current(vfs, path.real()) {
                        out.old.push(old);
                    }
                }
                FileOp::Rename { to, overwrite: true, .. } if fs::symlink_metadata(to.path()).is_ok() => {
                    out.old.push(tree(to.path()));
                }
                FileOp::Mkdir { path } if path.real().is_dir() => out.existed.push(path.real().to_owned()),
                _ => {}
            }
            let mut dir = new_entry(op).and_then(Path::parent);
            while let Some(d) = dir.filter(|d| fs::symlink_metadata(d).is_err()) {
                if !out.missing.iter().any(|m| m == d) {
                    out.missing.push(d.to_owned());
                }
                dir = d.parent();
            }
        }
        out
    }

    /// The directories above `dir` (itself included) that did not exist before the plan,
    /// outermost first.
    fn missing_parents(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> =
            dir.ancestors().filter(|a| self.missing.iter().any(|m| m == a)).map(Path::to_owned).collect();
        out.reverse();
        out
    }

    fn of(&self, path: &Path) -> Option<&Old> {
        self.old.iter().find(|o| o.path == path)
    }
}

/// A file's current bytes as tether sees them (an open buffer's text, else the disk).
fn current(vfs: &Vfs, real: &Path) -> Option<Old> {
    let mode = fs::metadata(real).ok().map(|m| sys::mode(&m));
    if let Some(doc) = vfs.overlay().get(real) {
        return Some(Old {
            path: real.to_owned(),
            dir: false,
            bytes: Some(doc.bytes()),
            mode,
            why_not: None,
            entries: Vec::new(),
        });
    }
    fs::symlink_metadata(real).ok().map(|_| tree(real))
}

/// A file, or a directory with everything in it, as it is on disk now (symlinks not followed).
fn tree(path: &Path) -> Old {
    let mut count = 0;
    read_entry(path, &mut count)
}

fn read_entry(path: &Path, count: &mut usize) -> Old {
    let mut old =
        Old { path: path.to_owned(), dir: false, bytes: None, mode: None, why_not: None, entries: Vec::new() };
    *count += 1;
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => {
            old.why_not = Some(format!("{}: could not be read first ({e})", path.display()));
            return old;
        }
    };
    old.mode = Some(sys::mode(&meta));
    if meta.is_dir() {
        old.dir = true;
        let mut names: Vec<PathBuf> = match fs::read_dir(path) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => {
                old.why_not = Some(format!("{}: could not be listed first ({e})", path.display()));
                return old;
            }
        };
        names.sort();
        for p in names {
            if *count >= TREE_MAX_ENTRIES {
                old.why_not = Some(format!(
                    "the directory had more than {TREE_MAX_ENTRIES} entries, more than the journal keeps"
                ));
                break;
            }
            let e = read_entry(&p, count);
            if old.why_not.is_none() {
                old.why_not.clone_from(&e.why_not);
            }
            old.entries.push(e);
        }
    } else if meta.is_file() {
        if meta.len() > KEEP_MAX {
            old.why_not = Some(too_large(usize::try_from(meta.len()).unwrap_or(usize::MAX)));
        } else {
            match fs::read(path) {
                Ok(b) => old.bytes = Some(b),
                Err(e) => old.why_not = Some(format!("{}: could not be read first ({e})", path.display())),
            }
        }
    } else {
        old.why_not =
            Some(format!("{}: is not a regular file or directory (a symlink or a special file)", path.display()));
    }
    old
}
