//! Turning changesets back into a plan: the undo.
//!
//! The changesets are reversed newest first, record by record, on a model of the files as they
//! are now (an open buffer's text, else the disk): an edit is reversed by a three-way merge
//! (`merge.rs`), so later changes to the same files stay; a created file must still be as it was
//! created to be deleted; a deleted file or tree comes back with its bytes and permission bits;
//! a rename goes back (and what it replaced comes back). The model then becomes one plan:
//! renames, directories to create, one operation per file (an edit from its text now to its
//! text after the undo, a create or a delete), directories to remove, deepest first. So an
//! undo is all or nothing and goes through the normal sinks like any change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::merge::{self, Overlap};
use super::record::UNDID;
use super::{Changeset, FileRecord, Journal, Op, Side};
use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::Vfs;
use crate::workspace::SandboxPath;

/// The plan that takes back `changesets` (any order), and the summary an undo shows: one
/// `undid changeset ...` line per changeset.
pub fn plan_undo(journal: &Journal, vfs: &Vfs, changesets: &[Changeset]) -> Result<(EditPlan, String)> {
    let mut order: Vec<&Changeset> = changesets.iter().collect();
    order.sort_by_key(|c| std::cmp::Reverse(c.time_ms));
    let mut model = Model { journal, vfs, slots: Vec::new(), at: HashMap::new(), renames: Vec::new() };
    for c in &order {
        for r in c.files.iter().rev() {
            model.reverse(c, r)?;
        }
    }
    let plan = model.into_plan()?;
    let summary = order
        .iter()
        .map(|c| {
            let files: Vec<String> = c.files.iter().map(|f| display(vfs, &f.path)).collect();
            format!("{UNDID}{} ({} by {}): {}", c.id, c.tool, c.client, files.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    Ok((plan, summary))
}

/// A path for messages: relative to its root.
fn display(vfs: &Vfs, real: &Path) -> String {
    vfs.workspace().relative(real)
}

/// One file or directory of the model: where it is now, and what the undo leaves there.
struct Slot {
    /// Where it is before the undo (`None`: nothing is there now); when something is, it is a
    /// directory (`dir`) or a file with `now` bytes.
    origin: Option<PathBuf>,
    now: Option<Vec<u8>>,
    /// What the undo leaves: whether it exists, and a file's bytes and permission bits.
    exists: bool,
    bytes: Option<Vec<u8>>,
    mode: Option<u32>,
    dir: bool,
}

impl Slot {
    /// Whether something is there before the undo.
    fn existed(&self) -> bool {
        self.origin.is_some()
    }
}

struct Model<'a> {
    journal: &'a Journal,
    vfs: &'a Vfs,
    slots: Vec<Slot>,
    /// The slot at each path, as the undo so far leaves it.
    at: HashMap<PathBuf, usize>,
    /// Renames back, in order: (where it is, where it goes).
    renames: Vec<(PathBuf, PathBuf)>,
}

impl Model<'_> {
    /// The slot at `path`, read from the view the first time.
    fn slot(&mut self, path: &Path) -> usize {
        if let Some(&i) = self.at.get(path) {
            return i;
        }
        let (existed, dir, now) = match self.current(path) {
            Some(Current::Dir) => (true, true, None),
            Some(Current::File(bytes)) => (true, false, Some(bytes)),
            None => (false, false, None),
        };
        self.slots.push(Slot {
            origin: existed.then(|| path.to_owned()),
            now: now.clone(),
            exists: existed,
            bytes: now,
            mode: None,
            dir,
        });
        self.at.insert(path.to_owned(), self.slots.len() - 1);
        self.slots.len() - 1
    }

    /// A file's bytes as tether sees it now (an open buffer, else the disk), or a directory.
    fn current(&self, real: &Path) -> Option<Current> {
        if let Some(doc) = self.vfs.overlay().get(real) {
            return Some(Current::File(doc.bytes()));
        }
        let meta = std::fs::symlink_metadata(real).ok()?;
        if meta.is_dir() {
            Some(Current::Dir)
        } else {
            Some(Current::File(std::fs::read(real).unwrap_or_default()))
        }
    }

    fn blob(&self, c: &Changeset, side: Option<&Side>, r: &FileRecord) -> Result<Vec<u8>> {
        match side {
            Some(s) if s.kept => self.journal.blob(c.root, &s.hash),
            _ => Err(self.cannot(c, r, "the journal did not keep the file's contents")),
        }
    }

    fn cannot(&self, c: &Changeset, r: &FileRecord, why: &str) -> Error {
        Error::invalid(format!("changeset {} cannot be undone: {}: {why}", c.id, display(self.vfs, &r.path)))
    }

    fn conflict(&self, c: &Changeset, r: &FileRecord, what: &str) -> Error {
        let path = display(self.vfs, &r.path);
        Error::new(
            ErrorKind::Conflict,
            format!("{path}: {what}; undoing changeset {} would lose that, so nothing was changed", c.id),
        )
        .with_path(path)
    }

    /// Takes back one record of `c`.
    fn reverse(&mut self, c: &Changeset, r: &FileRecord) -> Result<()> {
        if let Some(why) = &r.not_reversible {
            return Err(self.cannot(c, r, why));
        }
        match r.op {
            Op::Edit | Op::Overwrite => {
                let after = self.blob(c, r.after.as_ref(), r)?;
                let before = if r.op == Op::Edit {
                    super::apply_hunks(&after, &r.reverse)
                        .ok_or_else(|| self.cannot(c, r, "its record does not fit the file's contents"))?
                } else {
                    self.blob(c, r.before.as_ref(), r)?
                };
                let i = self.slot(&r.path);
                let slot = &self.slots[i];
                let Some(current) = slot.bytes.clone().filter(|_| slot.exists && !slot.dir) else {
                    return Err(self.conflict(c, r, "no longer exists"));
                };
                let new = if current == after {
                    before
                } else {
                    let (Ok(a), Ok(n), Ok(b)) =
                        (std::str::from_utf8(&after), std::str::from_utf8(&current), std::str::from_utf8(&before))
                    else {
                        return Err(self.conflict(c, r, "changed since, and is not text that can be merged"));
                    };
                    merge::reverse(a, n, b).map_err(|overlaps| self.overlap(c, r, &overlaps))?.into_bytes()
                };
                self.slots[i].bytes = Some(new);
            }
            Op::Create => {
                let i = self.slot(&r.path);
                let slot = &self.slots[i];
                let after = r.after.as_ref().map(|s| s.hash.as_str());
                match &slot.bytes {
                    Some(b) if slot.exists && Some(super::hash_of(b).as_str()) == after => {}
                    Some(_) if slot.exists => {
                        return Err(self.conflict(c, r, "changed since this changeset created it"));
                    }
                    _ => return Err(self.conflict(c, r, "no longer exists")),
                }
                self.slots[i].exists = false;
                self.slots[i].bytes = None;
            }
            Op::Delete => {
                self.put_back(c, r)?;
                for e in &r.entries {
                    self.put_back(c, e)?;
                }
            }
            Op::Rename => {
                let from = r.from.clone().ok_or_else(|| self.cannot(c, r, "its record has no source"))?;
                let i = self.slot(&r.path);
                if !self.slots[i].exists {
                    return Err(self.conflict(c, r, "no longer exists where it was moved"));
                }
                let j = self.slot(&from);
                if self.slots[j].exists {
                    return Err(self.conflict(c, r, &format!("{} exists again", display(self.vfs, &from))));
                }
                // The slot moves; the source's empty slot takes the destination's place.
                self.at.insert(from.clone(), i);
                self.at.insert(r.path.clone(), j);
                self.renames.push((r.path.clone(), from));
                if r.before.is_some() {
                    self.restore(c, j, r)?;
                }
            }
            Op::Mkdir => {
                let i = self.slot(&r.path);
                if self.slots[i].exists && self.slots[i].dir {
                    self.slots[i].exists = false;
                }
            }
        }
        Ok(())
    }

    /// Puts back what delete record `r` removed, unless this undo already did: a plan that
    /// deleted a file and then its directory recorded the file with both.
    fn put_back(&mut self, c: &Changeset, r: &FileRecord) -> Result<()> {
        let i = self.slot(&r.path);
        let slot = &self.slots[i];
        if slot.exists {
            let same = if r.dir {
                slot.dir
            } else {
                slot.bytes.as_deref().map(super::hash_of).as_deref() == r.before.as_ref().map(|s| s.hash.as_str())
            };
            return if same { Ok(()) } else { Err(self.conflict(c, r, "exists again")) };
        }
        self.restore(c, i, r)
    }

    /// Puts back a deleted (or replaced) file or directory in slot `i`.
    fn restore(&mut self, c: &Changeset, i: usize, r: &FileRecord) -> Result<()> {
        if r.dir && r.op != Op::Rename {
            let slot = &mut self.slots[i];
            slot.exists = true;
            slot.dir = true;
            return Ok(());
        }
        let bytes = self.blob(c, r.before.as_ref(), r)?;
        let slot = &mut self.slots[i];
        slot.exists = true;
        slot.dir = false;
        slot.mode = r.before.as_ref().and_then(|s| s.mode);
        slot.bytes = Some(bytes);
        Ok(())
    }

    fn overlap(&self, c: &Changeset, r: &FileRecord, overlaps: &[Overlap]) -> Error {
        let lines: Vec<String> = overlaps.iter().map(Overlap::describe).collect();
        self.conflict(
            c,
            r,
            &format!(
                "{} changed after changeset {} ({} by {}) in the lines the undo would change",
                lines.join(", "),
                c.id,
                c.tool,
                c.client
            ),
        )
    }

    /// The model as one plan.
    fn into_plan(self) -> Result<EditPlan> {
        let vfs = self.vfs;
        let sandbox = |real: &Path| -> Result<SandboxPath> {
            match vfs.workspace().root_of(real) {
                Some(0) => vfs.resolve(&vfs.workspace().relative(real)),
                _ => vfs.resolve(&real.to_string_lossy()),
            }
        };
        let mut ops = Vec::new();
        for (from, to) in &self.renames {
            ops.push(FileOp::Rename { from: sandbox(from)?, to: sandbox(to)?, overwrite: false });
        }
        let mut by_path: Vec<(&PathBuf, &Slot)> = self.at.iter().map(|(p, &i)| (p, &self.slots[i])).collect();
        by_path.sort_by(|a, b| a.0.cmp(b.0));
        for (path, slot) in &by_path {
            if slot.dir && slot.exists && !slot.existed() {
                ops.push(FileOp::Mkdir { path: sandbox(path)? });
            }
        }
        for (path, slot) in &by_path {
            if slot.dir {
                continue;
            }
            match (slot.existed(), slot.exists) {
                (true, true) if slot.now != slot.bytes => {
                    let origin = slot.origin.as_deref().unwrap_or(path);
                    let bytes = slot.bytes.clone().unwrap_or_default();
                    let text = text_of(vfs, path, bytes)?;
                    let current = vfs.read_text(&sandbox(origin)?)?;
                    let (bom, body) = match text.strip_prefix('\u{feff}') {
                        Some(rest) => (true, rest),
                        None => (false, text.as_str()),
                    };
                    if bom == current.bom {
                        ops.extend(EditPlan::edit_to(sandbox(path)?, Base::from(current), body).ops);
                    } else {
                        // The byte order mark differs: only a whole write restores it.
                        ops.push(FileOp::Create { path: sandbox(path)?, text, overwrite: true, mode: None });
                    }
                }
                (true, false) => ops.push(FileOp::Delete { path: sandbox(path)?, recursive: false }),
                (false, true) => {
                    let text = text_of(vfs, path, slot.bytes.clone().unwrap_or_default())?;
                    ops.push(FileOp::Create { path: sandbox(path)?, text, overwrite: false, mode: slot.mode });
                }
                _ => {}
            }
        }
        // A directory the undone change made goes only when nothing else is in it now: what is
        // there must all be going too (removed with it, as `recursive`, since a file deleted
        // before it waits beside its old name until the plan commits). One the user has put
        // something in since stays.
        let going = |p: &Path| self.at.get(p).is_some_and(|&i| !self.slots[i].exists);
        let mut gone: Vec<&PathBuf> =
            by_path.iter().filter(|(_, s)| s.dir && s.existed() && !s.exists).map(|(p, _)| *p).collect();
        gone.retain(|dir| {
            let mut stack = vec![dir.to_path_buf()];
            while let Some(d) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&d) else { return false };
                for e in entries.filter_map(|e| e.ok()) {
                    let p = e.path();
                    if !going(&p) {
                        return false;
                    }
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(p);
                    }
                }
            }
            true
        });
        // Outermost last; one inside another that goes is removed with it.
        gone.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        let outer: Vec<&PathBuf> = gone.clone();
        for p in gone.into_iter().filter(|p| !outer.iter().any(|o| p != o && p.starts_with(o))) {
            ops.push(FileOp::Delete { path: sandbox(p)?, recursive: true });
        }
        Ok(EditPlan { ops })
    }
}

enum Current {
    Dir,
    File(Vec<u8>),
}

/// `bytes` as text to write back; binary contents are refused (tether writes text only).
fn text_of(vfs: &Vfs, path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        Error::new(
            ErrorKind::IsBinary,
            format!("{}: its old contents are not UTF-8 text, which tether does not write back", display(vfs, path)),
        )
    })
}
