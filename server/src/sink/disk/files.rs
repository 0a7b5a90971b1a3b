//! The file-system steps the disk sink is built from, each one durable (fsynced) and, where the
//! OS allows it, atomic. Paths here are real, absolute paths the sandbox already approved.

use std::fs::{self, File};
use std::io::{self, Read as _, Write};
use std::path::{Path, PathBuf};

use crate::sys;

/// Every temp or backup name tether creates starts with [`TEMP_PREFIX`], so that a file left
/// behind by a killed process is recognisably tether's; a temp file holding new contents before
/// it is renamed into place ends with [`TEMP_SUFFIX`]. Both are the workspace's, whose walks skip
/// such temp files.
pub use crate::workspace::{TEMP_PREFIX, TEMP_SUFFIX};
/// The suffix of an entry moved aside (deleted or replaced) or of a copy of old contents, kept
/// until the whole plan has been applied.
pub const BACKUP_SUFFIX: &str = ".bak";

/// The permission bits and owner of a file, carried over when it is rewritten.
#[cfg(unix)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    mode: u32,
    uid: u32,
    gid: u32,
}

#[cfg(unix)]
impl Owner {
    /// The permission bits and owner of the file `m` is the metadata of.
    pub fn of(m: &fs::Metadata, _path: &Path) -> io::Result<Owner> {
        use std::os::unix::fs::MetadataExt as _;
        Ok(Owner { mode: m.mode() & 0o7777, uid: m.uid(), gid: m.gid() })
    }

    /// The current user, with the permission bits `mode`.
    fn mine(mode: u32) -> Owner {
        Owner { mode: mode & 0o7777, uid: sys::uid(), gid: rustix::process::getegid().as_raw() }
    }

    /// Whether a write clears bits of this mode that must be put back after it (set-id bits).
    fn after_write(&self) -> bool {
        self.mode & 0o6000 != 0
    }

    /// Gives `file` (named `_path`) this owner (where permitted) and these permission bits.
    fn apply(&self, file: &File, _path: &Path) -> io::Result<()> {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let m = file.metadata()?;
        // Only root may give a file to another user, and only a member may give it to a group;
        // anyone else ends up owning the rewritten file, as with any editor's safe save. So a
        // refusal is expected and ignored, and owner and group are tried separately.
        if m.uid() != self.uid {
            let _ = std::os::unix::fs::fchown(file, Some(self.uid), None);
        }
        if m.gid() != self.gid {
            let _ = std::os::unix::fs::fchown(file, None, Some(self.gid));
        }
        // After the chown, which clears the set-id bits.
        file.set_permissions(fs::Permissions::from_mode(self.mode))
    }
}

/// What Windows keeps of a file's permissions across a rewrite: the read-only, hidden, system
/// and not-indexed attributes, and the file's own DACL (the entries set on it rather than given
/// by its folder, or all of them when it takes nothing from the folder). The owner is whoever
/// rewrites it, as on Unix without root.
#[cfg(windows)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    read_only: bool,
    /// Of [`sys::KEPT_ATTRIBUTES`].
    attributes: u32,
    dacl: Option<std::sync::Arc<sys::OwnDacl>>,
}

#[cfg(windows)]
impl Owner {
    /// The attributes of `m` and the own DACL of the file `path`.
    pub fn of(m: &fs::Metadata, path: &Path) -> io::Result<Owner> {
        let attributes = std::os::windows::fs::MetadataExt::file_attributes(m) & sys::KEPT_ATTRIBUTES;
        let dacl = sys::own_dacl(path)?.map(std::sync::Arc::new);
        Ok(Owner { read_only: m.permissions().readonly(), attributes, dacl })
    }

    fn mine(mode: u32) -> Owner {
        Owner { read_only: sys::is_read_only(mode), attributes: 0, dacl: None }
    }

    fn after_write(&self) -> bool {
        false
    }

    /// Gives `file` (named `path`) this DACL and these attributes.
    fn apply(&self, file: &File, path: &Path) -> io::Result<()> {
        if let Some(dacl) = &self.dacl {
            sys::set_own_dacl(path, dacl)?;
        }
        if self.attributes != 0 {
            sys::add_attributes(path, self.attributes)?;
        }
        let mut p = file.metadata()?.permissions();
        if p.readonly() != self.read_only {
            #[allow(clippy::permissions_set_readonly_false)]
            p.set_readonly(self.read_only);
            file.set_permissions(p)?;
        }
        Ok(())
    }
}

/// The directory holding `p` (`/` for the root, which never holds a file tether writes).
pub fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("/"))
}

/// Writes `bytes` to `target` so that a reader (or a crash) sees the old file or the new one,
/// never a mix: a temp file in the same directory is written, given `owner` (or, for a new file,
/// the default mode of 0666 less the umask), fsynced, and renamed over `target` (or, when
/// `clobber` is false, linked at `target` only if nothing is there yet); then the directory is
/// fsynced so that the rename itself survives a crash.
pub fn write_atomic(target: &Path, bytes: &[&[u8]], owner: Option<Owner>, clobber: bool) -> io::Result<()> {
    let dir = parent(target);
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    if owner.is_none() {
        use std::os::unix::fs::PermissionsExt as _;
        // Created with mode 0666, which the kernel masks with the umask, as `open(2)` would.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    // The owner and mode go on before the contents, so that a private file's new text is never
    // readable by others, not even for a moment.
    if let Some(o) = &owner {
        o.apply(tmp.as_file(), tmp.path())?;
    }
    write_segments(tmp.as_file_mut(), bytes)?;
    if let Some(o) = owner.filter(Owner::after_write) {
        // A write by a process without CAP_FSETID clears the set-id bits; put them back.
        o.apply(tmp.as_file(), tmp.path())?;
    }
    tmp.as_file().sync_all()?;
    sys::persist(tmp, target, clobber)?;
    sync_dir(dir)
}

/// Writes `bytes` to the new file `target` (failing if something is there already), with the
/// permission bits `mode` when given, else the default mode of 0666 less the umask.
pub fn write_new(target: &Path, bytes: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
    let owner = mode.map(Owner::mine);
    write_atomic(target, bytes, owner, false)
}

/// Overwrites `target`'s contents in place, keeping its inode (and so every hard link to it):
/// not atomic against a crash, which is why callers keep a copy of the old bytes first.
pub fn write_in_place(target: &Path, bytes: &[&[u8]]) -> io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).open(target)?;
    // Writing before truncating means the file is never seen empty.
    write_segments(&mut f, bytes)?;
    f.set_len(bytes.iter().map(|b| b.len() as u64).sum())?;
    f.sync_all()
}

/// Writes `bytes` with `owner` to a new backup file beside `target` and returns its path.
pub fn write_backup(target: &Path, bytes: &[&[u8]], owner: &Owner) -> io::Result<PathBuf> {
    let dir = parent(target);
    let mut tmp = tempfile::Builder::new().prefix(TEMP_PREFIX).suffix(BACKUP_SUFFIX).tempfile_in(dir)?;
    owner.apply(tmp.as_file(), tmp.path())?;
    write_segments(tmp.as_file_mut(), bytes)?;
    tmp.as_file().sync_all()?;
    let (_, path) = tmp.keep().map_err(|e| e.error)?;
    sync_dir(dir)?;
    Ok(path)
}

/// Moves `target` (a file, a directory, or a symlink, which is not followed) to a fresh backup
/// name in the same directory and returns that name.
pub fn move_aside(target: &Path) -> io::Result<PathBuf> {
    let dir = parent(target);
    // `make_in` picks a random unused name and retries when the rename finds it taken; the
    // backup is never deleted by the temp-file machinery (cleanup disabled): only the sink
    // removes it, once the plan has succeeded.
    let named = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(BACKUP_SUFFIX)
        .disable_cleanup(true)
        .make_in(dir, |p| rename_noclobber(target, p))?;
    let path = named.path().to_path_buf();
    sync_dir(dir)?;
    Ok(path)
}

/// Renames `from` to `to`, failing with `AlreadyExists` instead of replacing anything at `to`.
pub fn rename_noclobber(from: &Path, to: &Path) -> io::Result<()> {
    // tempfile's no-clobber persist is `renameat2(RENAME_NOREPLACE)` (falling back to link and
    // unlink); borrowing it through a `TempPath` whose cleanup is disabled renames any entry.
    let mut p = tempfile::TempPath::try_from_path(from)?;
    p.disable_cleanup(true);
    match p.persist_noclobber(to) {
        Ok(()) => Ok(()),
        // A file system without RENAME_NOREPLACE cannot hard-link a directory either: check,
        // then rename (a race here needs another process creating the very same name).
        Err(e)
            if e.error.kind() != io::ErrorKind::AlreadyExists
                && fs::symlink_metadata(from).is_ok_and(|m| m.is_dir())
                && fs::symlink_metadata(to).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) =>
        {
            fs::rename(from, to)
        }
        Err(e) => Err(e.error),
    }
}

/// Removes a file, a symlink (not followed) or a directory with everything in it.
pub fn remove_any(p: &Path) -> io::Result<()> {
    if fs::symlink_metadata(p)?.is_dir() {
        fs::remove_dir_all(p)
    } else {
        fs::remove_file(p)
    }
}

/// Flushes a directory's entries to disk, so that a rename or a new name in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    sys::sync_dir(dir)
}

/// Writes the concatenation of `segments`. A new text is written as slices of the old one and
/// the changed parts, so a one-line edit of a large file never builds the whole new text.
fn write_segments(w: &mut impl Write, segments: &[&[u8]]) -> io::Result<()> {
    segments.iter().try_for_each(|s| w.write_all(s))
}

/// Whether the file at `path` holds exactly the concatenation of `segments`, compared in chunks
/// so that checking a large file costs no copy of it.
pub fn holds(path: &Path, segments: &[&[u8]]) -> io::Result<bool> {
    let mut f = sys::open_read(path)?;
    let want: u64 = segments.iter().map(|s| s.len() as u64).sum();
    if f.metadata()?.len() != want {
        return Ok(false);
    }
    let mut buf = vec![0u8; 256 * 1024];
    for seg in segments {
        let mut rest: &[u8] = seg;
        while !rest.is_empty() {
            let n = rest.len().min(buf.len());
            f.read_exact(&mut buf[..n])?;
            if buf[..n] != rest[..n] {
                return Ok(false);
            }
            rest = &rest[n..];
        }
    }
    // Nothing may follow (the file could have grown since the length was read).
    Ok(f.read(&mut buf[..1])? == 0)
}
