//! Undoing the disk part of a mixed plan when its editor part fails.
//!
//! A stopgap until the disk sink offers a two-phase apply: before the disk part runs, every path
//! it can touch is saved (file bytes and mode bits, directories with their contents, symlink
//! targets, or absence), and a rollback puts each back as it was. Saved state is capped at
//! [`MAX_SAVED_BYTES`]; a plan that would need more is refused before anything is written.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::edit::{EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};

/// The most file bytes kept to undo one plan's disk part.
pub const MAX_SAVED_BYTES: u64 = 256 * 1024 * 1024;

/// The state of one path before the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Saved {
    Absent,
    File { bytes: Vec<u8>, mode: u32 },
    Symlink { target: PathBuf },
    Dir { mode: u32, entries: Vec<(OsString, Saved)> },
}

/// What is needed to put the disk back as it was before a plan's disk part.
#[derive(Debug, Default)]
pub(crate) struct DiskUndo {
    saved: Vec<(PathBuf, Saved)>,
}

impl DiskUndo {
    /// Saves the state of every path `plan` can touch.
    pub fn capture(plan: &EditPlan) -> Result<DiskUndo> {
        let mut paths: Vec<PathBuf> = Vec::new();
        for op in &plan.ops {
            match op {
                FileOp::Edit { path, .. } => paths.push(path.real().to_path_buf()),
                FileOp::Create { path, .. } | FileOp::Mkdir { path } => paths.push(topmost_missing(path.real())),
                FileOp::Rename { from, to, .. } => {
                    paths.push(from.path().to_path_buf());
                    paths.push(topmost_missing(to.path()));
                }
                FileOp::Delete { path, .. } => paths.push(path.path().to_path_buf()),
            }
        }
        let mut budget = MAX_SAVED_BYTES;
        let mut undo = DiskUndo::default();
        for p in paths {
            let shown = p.display().to_string();
            let saved = save(&p, &mut budget).map_err(|e| match e {
                SaveError::Io(e) => Error::io(&e, &shown),
                SaveError::TooLarge => Error::new(
                    ErrorKind::TooLarge,
                    format!(
                        "the change touches more than {} MiB on disk together with open editor buffers; \
                         apply the disk and the buffer changes in separate calls",
                        MAX_SAVED_BYTES / (1024 * 1024)
                    ),
                ),
            })?;
            undo.saved.push((p, saved));
        }
        Ok(undo)
    }

    /// Puts every saved path back as it was, last first; keeps going past a failure and reports
    /// the first.
    pub fn restore(self) -> io::Result<()> {
        let mut first_err = None;
        for (p, saved) in self.saved.into_iter().rev() {
            if let Err(e) = restore(&p, &saved) {
                tracing::error!(path = %p.display(), error = %e, "rolling back a disk change failed");
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// `p` if it exists, else its highest missing ancestor: removing that undoes every directory a
/// create made on the way.
fn topmost_missing(p: &Path) -> PathBuf {
    let mut top = p.to_path_buf();
    let mut cur = p;
    while let Some(parent) = cur.parent() {
        if fs::symlink_metadata(parent).is_ok() {
            break;
        }
        top = parent.to_path_buf();
        cur = parent;
    }
    top
}

enum SaveError {
    Io(io::Error),
    TooLarge,
}

fn save(p: &Path, budget: &mut u64) -> std::result::Result<Saved, SaveError> {
    let meta = match fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Saved::Absent),
        Err(e) => return Err(SaveError::Io(e)),
    };
    let mode = meta.permissions().mode() & 0o7777;
    if meta.file_type().is_symlink() {
        return Ok(Saved::Symlink { target: fs::read_link(p).map_err(SaveError::Io)? });
    }
    if meta.is_dir() {
        let mut entries = Vec::new();
        for entry in fs::read_dir(p).map_err(SaveError::Io)? {
            let entry = entry.map_err(SaveError::Io)?;
            entries.push((entry.file_name(), save(&entry.path(), budget)?));
        }
        return Ok(Saved::Dir { mode, entries });
    }
    *budget = budget.checked_sub(meta.len()).ok_or(SaveError::TooLarge)?;
    Ok(Saved::File { bytes: fs::read(p).map_err(SaveError::Io)?, mode })
}

fn restore(p: &Path, saved: &Saved) -> io::Result<()> {
    let current = fs::symlink_metadata(p).ok();
    // A file that is still a file is rewritten in place, keeping its inode (and hard links).
    if let (Saved::File { bytes, mode }, Some(m)) = (saved, &current) {
        if m.is_file() {
            fs::write(p, bytes)?;
            return fs::set_permissions(p, fs::Permissions::from_mode(*mode));
        }
    }
    match current {
        Some(m) if m.is_dir() => fs::remove_dir_all(p)?,
        Some(_) => fs::remove_file(p)?,
        None => {}
    }
    put(p, saved)
}

fn put(p: &Path, saved: &Saved) -> io::Result<()> {
    match saved {
        Saved::Absent => Ok(()),
        Saved::File { bytes, mode } => {
            fs::write(p, bytes)?;
            fs::set_permissions(p, fs::Permissions::from_mode(*mode))
        }
        Saved::Symlink { target } => std::os::unix::fs::symlink(target, p),
        Saved::Dir { mode, entries } => {
            fs::create_dir(p)?;
            for (name, child) in entries {
                put(&p.join(name), child)?;
            }
            fs::set_permissions(p, fs::Permissions::from_mode(*mode))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;

    /// Applies `plan` with plain file operations, standing in for the disk sink.
    fn apply(plan: &EditPlan) {
        for op in &plan.ops {
            match op {
                FileOp::Edit { path, base, changes } => {
                    fs::write(path.real(), crate::edit::apply_changes(&base.text, changes)).expect("edit");
                }
                FileOp::Create { path, text, .. } => {
                    fs::create_dir_all(path.real().parent().expect("parent")).expect("mkdir");
                    fs::write(path.real(), text).expect("create");
                }
                FileOp::Rename { from, to, .. } => fs::rename(from.path(), to.path()).expect("rename"),
                FileOp::Delete { path, .. } => {
                    fs::remove_dir_all(path.path()).or_else(|_| fs::remove_file(path.path())).expect("delete")
                }
                FileOp::Mkdir { path } => fs::create_dir_all(path.real()).expect("mkdir"),
            }
        }
    }

    /// Every file under `dir` with its bytes and mode, sorted.
    fn tree(dir: &Path) -> Vec<(String, Vec<u8>, u32)> {
        let mut out = Vec::new();
        for entry in walk(dir) {
            let m = fs::symlink_metadata(&entry).expect("meta");
            let rel = entry.strip_prefix(dir).expect("inside").display().to_string();
            let bytes = if m.is_file() { fs::read(&entry).expect("read") } else { Vec::new() };
            out.push((rel, bytes, m.permissions().mode() & 0o7777));
        }
        out.sort();
        out
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            if fs::symlink_metadata(&p).expect("meta").is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
        out
    }

    #[test]
    fn restores_every_kind_of_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::write(root.join("a.txt"), "alpha\n").expect("write");
        fs::set_permissions(root.join("a.txt"), fs::Permissions::from_mode(0o640)).expect("chmod");
        fs::create_dir_all(root.join("gone/deep")).expect("mkdir");
        fs::write(root.join("gone/deep/x"), "x").expect("write");
        fs::write(root.join("from.txt"), "moving\n").expect("write");
        std::os::unix::fs::symlink("a.txt", root.join("link")).expect("symlink");
        let ws = Workspace::new([root]).expect("ws");
        let p = |s: &str| ws.resolve(s).expect("inside");
        let base = crate::edit::Base {
            text: std::sync::Arc::new("alpha\n".to_owned()),
            encoding: crate::text::Encoding::Utf8,
            bom: false,
            origin: crate::vfs::Origin::Disk,
        };
        let plan = EditPlan {
            ops: vec![
                FileOp::Edit { path: p("a.txt"), base, changes: vec![crate::edit::TextChange::new(0, 5, "ALPHA")] },
                FileOp::Create { path: p("new/dir/file.txt"), text: "new\n".into(), overwrite: false },
                FileOp::Rename { from: p("from.txt"), to: p("to/moved.txt"), overwrite: false },
                FileOp::Delete { path: p("gone"), recursive: true },
                FileOp::Delete { path: p("link"), recursive: false },
                FileOp::Mkdir { path: p("made/here") },
            ],
        };
        let before = tree(root);
        let undo = DiskUndo::capture(&plan).expect("capture");
        fs::create_dir_all(root.join("to")).expect("mkdir");
        apply(&plan);
        assert_ne!(tree(root), before);
        undo.restore().expect("restore");
        assert_eq!(tree(root), before);
        assert_eq!(fs::read_link(root.join("link")).expect("link"), PathBuf::from("a.txt"));
    }
}
